//! Fuzz target: the microc parser must never panic or overflow the stack,
//! and rendering its diagnostics must not panic either.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (_program, diags) = apc::syntax::parse(&text);
    let _ = apc::syntax::diagnostic::render("fuzz.mc", &text, &diags);
});

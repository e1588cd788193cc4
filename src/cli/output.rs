//! Writing the output. A closed pipe (`apc … | head`) ends the output
//! quietly; any other failure to write (a full disk, `> /dev/full`) is
//! remembered, and the command ends with a message and exit status 2
//! instead of a result that was silently lost.

use std::io::Write;
use std::sync::Mutex;

/// The first failure to write stdout, other than a closed pipe.
static FAILED: Mutex<Option<String>> = Mutex::new(None);

/// Writes formatted text to stdout (the `out!` and `outln!` macros).
pub fn write(args: std::fmt::Arguments) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_fmt(args) {
        note(e);
    }
}

fn note(e: std::io::Error) {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        return;
    }
    let mut failed = FAILED.lock().unwrap_or_else(|p| p.into_inner());
    failed.get_or_insert_with(|| e.to_string());
}

/// Flushes stdout; the failure to write, if there was one.
pub fn finish() -> Result<(), String> {
    if let Err(e) = std::io::stdout().lock().flush() {
        note(e);
    }
    match FAILED.lock().unwrap_or_else(|p| p.into_inner()).take() {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

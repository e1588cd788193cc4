//! Name resolution and TIP-style type inference.
//!
//! Every variable, parameter, return value and expression gets one type,
//! found by unification over `int`, `pointer-to-T`, `array-of-T`,
//! `record{fields}` and functions. Records follow TIP: a record type has a
//! slot for every field name of the program, absent ones marked absent, so
//! `e.f` is an ordinary unification constraint. Types may be recursive
//! (`p = alloc {next: p}`): unification links before it recurses, so cycles
//! terminate. A conflict is reported naming both uses that produced it.
//!
//! microc additions handled here: `e.f` on a pointer to a record reads
//! through the pointer (resolved after the other constraints), and the
//! parameters of `main` are inputs: integers or (nested) input arrays.
//!
//! Knows the AST; knows nothing of the IR, the interpreter or the analysis.

mod resolve;
mod unify;

pub use unify::{FunctionTypes, ProgramTypes, Type, check_program};

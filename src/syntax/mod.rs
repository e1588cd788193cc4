//! The front end: lexer, parser, AST with spans, diagnostics.
//!
//! Knows nothing about types, semantics or analysis.

pub mod ast;
pub mod diagnostic;
pub mod lexer;
pub mod parser;
pub mod pretty;

pub use diagnostic::{Diagnostic, LineIndex, Severity, Span};
pub use parser::parse;

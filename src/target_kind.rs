//! The five kinds of target (places where a run can go wrong), shared by the
//! interpreter (which reports them) and the IR (which makes them explicit).

use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TargetKind {
    Assert,
    DivByZero,
    NullDeref,
    OutOfBounds,
    Uninitialized,
}

impl TargetKind {
    /// The name used on the command line and in JSON (`div-by-zero`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            TargetKind::Assert => "assert",
            TargetKind::DivByZero => "div-by-zero",
            TargetKind::NullDeref => "null-deref",
            TargetKind::OutOfBounds => "out-of-bounds",
            TargetKind::Uninitialized => "uninitialized",
        }
    }

    pub fn parse(s: &str) -> Option<TargetKind> {
        Some(match s {
            "assert" => TargetKind::Assert,
            "div-by-zero" => TargetKind::DivByZero,
            "null-deref" => TargetKind::NullDeref,
            "out-of-bounds" => TargetKind::OutOfBounds,
            "uninitialized" => TargetKind::Uninitialized,
            _ => return None,
        })
    }
}

impl std::fmt::Display for TargetKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

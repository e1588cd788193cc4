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
    /// Every kind, in the order above.
    pub const ALL: [TargetKind; 5] = [
        TargetKind::Assert,
        TargetKind::DivByZero,
        TargetKind::NullDeref,
        TargetKind::OutOfBounds,
        TargetKind::Uninitialized,
    ];

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
}

impl std::fmt::Display for TargetKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

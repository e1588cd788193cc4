//! The ranges of the numeric flags, checked when the command line is read:
//! a value outside is a bad command line with a message that names the
//! range, never a panic deep inside (a duration that overflows an
//! `Instant`, an unfolding bound that asks for 100 GB).

use std::time::Duration;

/// Longest `--timeout` (and the benchmarks' limits), in seconds: 11.6 days.
pub const MAX_SECONDS: f64 = 1_000_000.0;

/// Largest unfolding bound `--k`. Each ∀ unfolds into K + 1 instances;
/// past this the unfolding is bounded by its size budget anyway.
pub const MAX_K: i64 = 100_000;

/// Most targets checked in parallel.
pub const MAX_JOBS: i64 = 256;

/// Most models a query may give (`--max-models`) and runs per measurement.
pub const MAX_COUNT: i64 = 10_000;

/// Largest source file read: microc programs are small; a larger file is
/// more likely a mistake (`/dev/zero`) than a program.
pub const MAX_SOURCE_BYTES: u64 = 16 << 20;

/// A duration in seconds, in (0, MAX_SECONDS]: the value parser of the
/// `--timeout`-like flags.
pub fn seconds(s: &str) -> Result<Duration, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("expected a number of seconds, such as 30 or 0.5 (got `{s}`)"))?;
    if v.is_finite() && v > 0.0 && v <= MAX_SECONDS {
        Ok(Duration::from_secs_f64(v))
    } else {
        Err(format!(
            "expected a number of seconds greater than 0 and at most {MAX_SECONDS} (got {s})"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_are_positive_finite_and_bounded() {
        assert_eq!(seconds("0.5"), Ok(Duration::from_millis(500)));
        assert_eq!(seconds("1000000"), Ok(Duration::from_secs(1_000_000)));
        for bad in [
            "-1",
            "0",
            "1e300",
            "2e19",
            "1e19",
            "inf",
            "NaN",
            "",
            "abc",
            "1000000.5",
        ] {
            assert!(seconds(bad).is_err(), "{bad}");
        }
    }
}

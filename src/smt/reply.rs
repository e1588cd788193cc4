//! Reading solver replies: integer values, alone or in a `get-value`
//! answer. Parsed with rsmt2's SMT-LIB parser (the one the sessions read
//! answers with), never by hand. easy-smt, which builds the scripts, keeps
//! its parser private to its own solver processes.

use num_bigint::BigInt;
use rsmt2::parse::SmtParser;

/// An SMT-LIB integer value: `5`, `(- 5)`.
pub fn int(value: &str) -> Option<BigInt> {
    let mut p = SmtParser::of_str(value);
    let n = p
        .try_int(|digits, positive| {
            digits
                .parse::<BigInt>()
                .map(|n| if positive { n } else { -n })
        })
        .ok()??;
    // The whole value, nothing after it.
    p.spc_cmt();
    p.buff_rest().trim().is_empty().then_some(n)
}

/// The pairs of a `get-value` answer, `((a 3) (b (- 12)))`, as integers.
pub fn int_values(text: &str) -> Result<Vec<(String, BigInt)>, String> {
    let mut p = SmtParser::of_str(text);
    let pairs: Vec<(String, String)> = p
        .get_values((), ())
        .map_err(|e| format!("get-value: {}", one_line(&e.to_string())))?;
    pairs
        .into_iter()
        .map(|(name, v)| match int(&v) {
            Some(n) => Ok((name, n)),
            None => Err(format!("get-value: `{v}` is not an integer")),
        })
        .collect()
}

/// The s-expressions of `text`, in order, up to its end or to the first
/// text that is not one.
pub fn sexprs(text: &str) -> Vec<String> {
    let mut p = SmtParser::of_str(text);
    let mut out = Vec::new();
    while let Ok(e) = p.get_sexpr() {
        out.push(e.to_string());
    }
    out
}

/// A message on one line, at most 200 bytes.
pub(super) fn one_line(s: &str) -> String {
    let s: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if s.len() > 200 {
        format!("{}…", &s[..s.floor_char_boundary(200)])
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_printed_values() {
        assert_eq!(sexprs("3\n(- 12)\n  7 "), ["3", "(- 12)", "7"]);
        assert_eq!(sexprs(""), Vec::<String>::new());
        assert_eq!(sexprs("(error \"x\")\n"), ["(error \"x\")"]);
    }

    #[test]
    fn parses_smtlib_integers() {
        assert_eq!(int("5"), Some(5.into()));
        assert_eq!(int("(- 12)"), Some((-12).into()));
        assert_eq!(int("( -  3 )"), Some((-3).into()));
        assert_eq!(
            int("123456789012345678901234567890"),
            Some("123456789012345678901234567890".parse().unwrap())
        );
        assert_eq!(int("x"), None);
        assert_eq!(int("(- x)"), None);
        assert_eq!(int("5 6"), None);
    }

    #[test]
    fn parses_get_value_answers() {
        let v = int_values("((a 3)\n (b (- 12)))").unwrap();
        assert_eq!(v, vec![("a".into(), 3.into()), ("b".into(), (-12).into())]);
        assert!(int_values("((a true))").is_err());
        assert!(int_values("(error \"x\")").is_err());
    }
}

//! Parsing witnesses from the command line: `--args n=3,s=[1,2]` and
//! `--input 5,-2`.

use crate::interp::{ArgValue, MAX_INPUT_VALUES};
use num_bigint::BigInt;

/// Parses `name=value,…` where a value is an integer or a (nested) list.
pub fn parse_args(s: &str) -> Result<Vec<(String, ArgValue)>, String> {
    let mut p = P {
        s: s.as_bytes(),
        i: 0,
    };
    let mut out: Vec<(String, ArgValue)> = Vec::new();
    p.ws();
    if p.done() {
        return Ok(out);
    }
    loop {
        p.ws();
        let start = p.i;
        while p.i < p.s.len() && (p.s[p.i] == b'_' || p.s[p.i].is_ascii_alphanumeric()) {
            p.i += 1;
        }
        let name = String::from_utf8_lossy(&p.s[start..p.i]).to_string();
        if name.is_empty() || name.as_bytes()[0].is_ascii_digit() {
            return Err(format!(
                "expected a parameter name at position {} of `{s}`",
                start + 1
            ));
        }
        p.ws();
        if !p.eat(b'=') {
            return Err(format!(
                "expected `=` after `{name}` in `{s}` (write {name}=VALUE)"
            ));
        }
        let v = p.value(0)?;
        if out.iter().any(|(n, _)| *n == name) {
            return Err(format!("parameter `{name}` is given twice"));
        }
        out.push((name, v));
        p.ws();
        if p.done() {
            return Ok(out);
        }
        if !p.eat(b',') {
            return Err(format!("expected `,` at position {} of `{s}`", p.i + 1));
        }
    }
}

/// Parses `5,-2` (spaces allowed; empty means no input). A run `0*1999994`
/// stands for its value repeated that many times, so that a witness of a
/// long loop fits on a command line.
pub fn parse_input(s: &str) -> Result<Vec<BigInt>, String> {
    let mut out: Vec<BigInt> = Vec::new();
    if s.trim().is_empty() {
        return Ok(out);
    }
    for item in s.split(',') {
        let (value, count) = match item.split_once('*') {
            Some((v, n)) => (v.trim(), run_length(item.trim(), n.trim())?),
            None => (item.trim(), 1),
        };
        let value = (value.parse::<BigInt>()).map_err(|_| match value {
            "" => format!("`{}` in --input has no value", item.trim()),
            _ => format!("`{value}` in --input is not an integer"),
        })?;
        if out.len() + count > MAX_INPUT_VALUES {
            return Err(format!(
                "the input stream is longer than {MAX_INPUT_VALUES} values"
            ));
        }
        out.extend(std::iter::repeat_n(value, count));
    }
    Ok(out)
}

/// The count `n` of a run `item` (`v*n`).
fn run_length(item: &str, n: &str) -> Result<usize, String> {
    n.parse::<usize>()
        .map_err(|_| format!("`{item}` in --input has no count (write VALUE*COUNT, e.g. 0*1000)"))
}

struct P<'a> {
    s: &'a [u8],
    i: usize,
}

impl P<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }
    fn done(&self) -> bool {
        self.i >= self.s.len()
    }
    fn eat(&mut self, c: u8) -> bool {
        if self.s.get(self.i) == Some(&c) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn value(&mut self, depth: usize) -> Result<ArgValue, String> {
        if depth > 16 {
            return Err("lists nested too deeply in --args".into());
        }
        self.ws();
        if self.eat(b'[') {
            let mut items = Vec::new();
            self.ws();
            if self.eat(b']') {
                return Ok(ArgValue::List(items));
            }
            loop {
                items.push(self.value(depth + 1)?);
                self.ws();
                if self.eat(b']') {
                    return Ok(ArgValue::List(items));
                }
                if !self.eat(b',') {
                    return Err(format!(
                        "expected `,` or `]` at position {} in --args",
                        self.i + 1
                    ));
                }
            }
        }
        let start = self.i;
        if self.s.get(self.i) == Some(&b'-') {
            self.i += 1;
        }
        while self.i < self.s.len() && self.s[self.i].is_ascii_digit() {
            self.i += 1;
        }
        let text = String::from_utf8_lossy(&self.s[start..self.i]).to_string();
        text.parse::<BigInt>().map(ArgValue::Int).map_err(|_| {
            format!(
                "expected an integer or a list at position {} in --args",
                start + 1
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_runs_stand_for_repeated_values() {
        let v = parse_input("5, 0*3 ,-1*2").unwrap();
        let want: Vec<BigInt> = [5, 0, 0, 0, -1, -1].into_iter().map(BigInt::from).collect();
        assert_eq!(v, want);
        assert_eq!(parse_input("7*0").unwrap(), Vec::<BigInt>::new());
        let refused = [
            ("1*x", "`1*x` in --input has no count"),
            ("1*-2", "has no count"),
            ("5*", "`5*` in --input has no count"),
            ("*3", "`*3` in --input has no value"),
            ("1,,2", "has no value"),
            ("0*99999999999", "longer than"),
        ];
        for (input, why) in refused {
            let error = parse_input(input).unwrap_err();
            assert!(error.contains(why), "{input}: {error}");
        }
    }

    #[test]
    fn nested_lists_and_negatives() {
        let a = parse_args("n=3, s=[1,-2], M=[[1],[]]").unwrap();
        assert_eq!(a.len(), 3);
        assert_eq!(
            a[1].1,
            ArgValue::List(vec![ArgValue::Int(1.into()), ArgValue::Int((-2).into())])
        );
        assert!(parse_args("n=").is_err());
        assert!(parse_args("n=1,n=2").is_err());
        assert_eq!(
            parse_input(" 5, -2 ").unwrap(),
            vec![BigInt::from(5), BigInt::from(-2)]
        );
        assert!(parse_input("5,x").is_err());
    }
}

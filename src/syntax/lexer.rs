//! The lexer: source text to tokens with absolute byte spans.
//!
//! Comments (`// …`, `/* … */`) and whitespace are skipped. Unknown
//! characters and unterminated comments become diagnostics; lexing always
//! continues, so the parser sees the rest of the file.

use super::diagnostic::{Diagnostic, Span};

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Tok {
    Num(String),
    Ident(String),
    // keywords
    Var,
    Return,
    If,
    Else,
    While,
    Output,
    Input,
    Alloc,
    Null,
    Assert,
    Assume,
    // punctuation
    LParen,
    RParen,
    LBrace,
    RBrace,
    LBracket,
    RBracket,
    Comma,
    Semi,
    Colon,
    Dot,
    Assign,
    // operators
    OrOr,
    AndAnd,
    EqEq,
    NotEq,
    Lt,
    Le,
    Gt,
    Ge,
    Plus,
    Minus,
    Star,
    Slash,
    Amp,
    Bang,
    Eof,
}

impl Tok {
    /// How the token reads in a message: "`;`", "identifier", "number".
    pub fn describe(&self) -> String {
        match self {
            Tok::Num(n) => format!("number `{n}`"),
            Tok::Ident(n) => format!("identifier `{n}`"),
            Tok::Eof => "end of file".to_string(),
            other => format!("`{}`", other.text()),
        }
    }

    pub fn text(&self) -> &str {
        match self {
            Tok::Num(s) | Tok::Ident(s) => s,
            Tok::Var => "var",
            Tok::Return => "return",
            Tok::If => "if",
            Tok::Else => "else",
            Tok::While => "while",
            Tok::Output => "output",
            Tok::Input => "input",
            Tok::Alloc => "alloc",
            Tok::Null => "null",
            Tok::Assert => "assert",
            Tok::Assume => "assume",
            Tok::LParen => "(",
            Tok::RParen => ")",
            Tok::LBrace => "{",
            Tok::RBrace => "}",
            Tok::LBracket => "[",
            Tok::RBracket => "]",
            Tok::Comma => ",",
            Tok::Semi => ";",
            Tok::Colon => ":",
            Tok::Dot => ".",
            Tok::Assign => "=",
            Tok::OrOr => "||",
            Tok::AndAnd => "&&",
            Tok::EqEq => "==",
            Tok::NotEq => "!=",
            Tok::Lt => "<",
            Tok::Le => "<=",
            Tok::Gt => ">",
            Tok::Ge => ">=",
            Tok::Plus => "+",
            Tok::Minus => "-",
            Tok::Star => "*",
            Tok::Slash => "/",
            Tok::Amp => "&",
            Tok::Bang => "!",
            Tok::Eof => "",
        }
    }
}

#[derive(Clone, Debug)]
pub struct Token {
    pub tok: Tok,
    pub span: Span,
}

fn keyword(s: &str) -> Option<Tok> {
    Some(match s {
        "var" => Tok::Var,
        "return" => Tok::Return,
        "if" => Tok::If,
        "else" => Tok::Else,
        "while" => Tok::While,
        "output" => Tok::Output,
        "input" => Tok::Input,
        "alloc" => Tok::Alloc,
        "null" => Tok::Null,
        "assert" => Tok::Assert,
        "assume" => Tok::Assume,
        _ => return None,
    })
}

/// Splits `text` into tokens, ending with `Tok::Eof`.
pub fn lex(text: &str, diags: &mut Vec<Diagnostic>) -> Vec<Token> {
    let bytes = text.as_bytes();
    let mut toks = Vec::new();
    let mut i = 0usize;
    let sp = |a: usize, b: usize| Span::new(a as u32, b as u32);
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if c == b'/' && bytes.get(i + 1) == Some(&b'/') {
            while i < bytes.len() && bytes[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if c == b'/' && bytes.get(i + 1) == Some(&b'*') {
            let start = i;
            i += 2;
            loop {
                if i + 1 >= bytes.len() {
                    diags.push(Diagnostic::error("unterminated block comment").primary(
                        sp(start, start + 2),
                        "this comment is never closed with `*/`",
                    ));
                    i = bytes.len();
                    break;
                }
                if bytes[i] == b'*' && bytes[i + 1] == b'/' {
                    i += 2;
                    break;
                }
                i += 1;
            }
            continue;
        }
        let start = i;
        if c.is_ascii_digit() {
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
            toks.push(Token {
                tok: Tok::Num(text[start..i].to_string()),
                span: sp(start, i),
            });
            continue;
        }
        if c == b'_' || c.is_ascii_alphabetic() {
            while i < bytes.len() && (bytes[i] == b'_' || bytes[i].is_ascii_alphanumeric()) {
                i += 1;
            }
            let word = &text[start..i];
            let tok = keyword(word).unwrap_or_else(|| Tok::Ident(word.to_string()));
            toks.push(Token {
                tok,
                span: sp(start, i),
            });
            continue;
        }
        let two = |a: u8, b: u8| c == a && bytes.get(i + 1) == Some(&b);
        let (tok, len) = if two(b'|', b'|') {
            (Tok::OrOr, 2)
        } else if two(b'&', b'&') {
            (Tok::AndAnd, 2)
        } else if two(b'=', b'=') {
            (Tok::EqEq, 2)
        } else if two(b'!', b'=') {
            (Tok::NotEq, 2)
        } else if two(b'<', b'=') {
            (Tok::Le, 2)
        } else if two(b'>', b'=') {
            (Tok::Ge, 2)
        } else {
            let t = match c {
                b'(' => Tok::LParen,
                b')' => Tok::RParen,
                b'{' => Tok::LBrace,
                b'}' => Tok::RBrace,
                b'[' => Tok::LBracket,
                b']' => Tok::RBracket,
                b',' => Tok::Comma,
                b';' => Tok::Semi,
                b':' => Tok::Colon,
                b'.' => Tok::Dot,
                b'=' => Tok::Assign,
                b'<' => Tok::Lt,
                b'>' => Tok::Gt,
                b'+' => Tok::Plus,
                b'-' => Tok::Minus,
                b'*' => Tok::Star,
                b'/' => Tok::Slash,
                b'&' => Tok::Amp,
                b'!' => Tok::Bang,
                _ => {
                    // Skip a whole UTF-8 character so the span stays on a char boundary.
                    let ch = text[i..].chars().next().unwrap_or('?');
                    let end = i + ch.len_utf8();
                    let hint = match ch {
                        '|' => " (microc has `||`, not `|`)",
                        '%' => " (microc has no remainder operator)",
                        _ => "",
                    };
                    diags.push(
                        Diagnostic::error(format!(
                            "unexpected character `{}`{hint}",
                            ch.escape_default()
                        ))
                        .primary(sp(i, end), "not part of microc"),
                    );
                    i = end;
                    continue;
                }
            };
            (t, 1)
        };
        toks.push(Token {
            tok,
            span: sp(start, start + len),
        });
        i += len;
    }
    toks.push(Token {
        tok: Tok::Eof,
        span: sp(bytes.len(), bytes.len()),
    });
    toks
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(s: &str) -> Vec<Tok> {
        let mut d = vec![];
        lex(s, &mut d).into_iter().map(|t| t.tok).collect()
    }

    #[test]
    fn two_char_operators_and_comments() {
        assert_eq!(
            kinds("a<=b // c\n /* x */ && !=!"),
            vec![
                Tok::Ident("a".into()),
                Tok::Le,
                Tok::Ident("b".into()),
                Tok::AndAnd,
                Tok::NotEq,
                Tok::Bang,
                Tok::Eof
            ]
        );
    }

    #[test]
    fn bad_characters_are_reported_and_skipped() {
        let mut d = vec![];
        let t = lex("x = 1 % 2 é;", &mut d);
        assert_eq!(d.len(), 2);
        assert_eq!(t.len(), 6);
    }
}

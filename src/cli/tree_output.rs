//! `--tree`: where an execution tree is drawn, and in which format (`apc
//! explore`, `apc compact`; docs/explanations.md §4). Graphviz's `dot`
//! renders every format but DOT itself.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// What `--tree` names: a format for standard output, or a file whose
/// extension says its format.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TreeOutput {
    /// `dot`, `svg`, `png` or `pdf`.
    pub format: String,
    /// `None`: standard output, in place of the report.
    pub path: Option<PathBuf>,
}

const FORMATS: [&str; 4] = ["dot", "svg", "png", "pdf"];

/// `--tree`'s value: `dot`, `svg`, `png`, `pdf`, or a file ending in one of
/// them (or `.gv`).
pub fn parse(s: &str) -> Result<TreeOutput, String> {
    if FORMATS.contains(&s) {
        return Ok(TreeOutput {
            format: s.to_string(),
            path: None,
        });
    }
    let path = PathBuf::from(s);
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    let format = match ext.as_str() {
        "gv" => "dot".to_string(),
        e if FORMATS.contains(&e) => e.to_string(),
        _ => {
            return Err(format!(
                "expected dot, svg, png, pdf, or a file ending in .dot, .gv, .svg, .png or .pdf (got `{s}`)"
            ));
        }
    };
    Ok(TreeOutput {
        format,
        path: Some(path),
    })
}

impl TreeOutput {
    /// Writes the tree `dot` (Graphviz text) where and as asked.
    pub fn write(&self, dot: &str) -> Result<(), String> {
        let bytes = match self.format.as_str() {
            "dot" => dot.as_bytes().to_vec(),
            f => render(dot, f)?,
        };
        match &self.path {
            Some(p) => std::fs::write(p, bytes).map_err(|e| format!("{}: {e}", p.display())),
            None => {
                let mut out = std::io::stdout().lock();
                out.write_all(&bytes)
                    .and_then(|_| out.flush())
                    .map_err(|e| format!("standard output: {e}"))
            }
        }
    }

    /// Whether the tree takes the report's place on standard output.
    pub fn replaces_report(&self) -> bool {
        self.path.is_none()
    }
}

/// `dot` rendered by Graphviz as `format`.
fn render(dot: &str, format: &str) -> Result<Vec<u8>, String> {
    let missing = |e: std::io::Error| {
        format!(
            "drawing {format} needs Graphviz's `dot` ({e}): install graphviz, or ask for --tree FILE.dot"
        )
    };
    let mut child = Command::new("dot")
        .arg(format!("-T{format}"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(missing)?;
    let mut stdin = child.stdin.take().expect("piped");
    let text = dot.to_string();
    // Written from a thread of its own: a large picture fills the pipe
    // before `dot` has read it all.
    let writer = std::thread::spawn(move || stdin.write_all(text.as_bytes()));
    let out = child.wait_with_output().map_err(|e| format!("dot: {e}"))?;
    let _ = writer.join();
    if !out.status.success() {
        return Err(format!(
            "dot could not render the tree: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(out.stdout)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_format_goes_to_standard_output_and_a_file_says_its_format() {
        assert_eq!(parse("svg").unwrap().path, None);
        let f = parse("out/tree.SVG").unwrap();
        assert_eq!((f.format.as_str(), f.path.is_some()), ("svg", true));
        assert_eq!(parse("t.gv").unwrap().format, "dot");
        assert!(parse("tree.txt").unwrap_err().contains("expected dot"));
        assert!(parse("tree").is_err());
    }
}

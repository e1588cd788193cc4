//! The layers hold their own rules (in the spirit of rust-analyzer's tidy
//! tests): every `crate::…` path in a module of `src/` must lead to a layer
//! that ARCHITECTURE.md's "may use" table allows for it, every module must
//! be in that table, and the table itself must have no cycle.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

/// The "may use" table of ARCHITECTURE.md, between its layer markers:
/// rows `| `layer` | `a`, `b` |` (or `—` for none).
fn allowed() -> BTreeMap<String, BTreeSet<String>> {
    let text = std::fs::read_to_string(root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let start = text
        .find("<!-- layers:begin -->")
        .expect("the layers table's begin marker");
    let end = text
        .find("<!-- layers:end -->")
        .expect("the layers table's end marker");
    let mut table = BTreeMap::new();
    for row in text[start..end].lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let names = |cell: &str| -> Vec<String> {
            cell.split('`')
                .skip(1)
                .step_by(2)
                .map(str::to_string)
                .collect()
        };
        let layer = names(cells[1]).pop().expect("a layer name");
        table.insert(layer, names(cells[2]).into_iter().collect());
    }
    table
}

/// The top-level modules of the crate (`src/x.rs` or `src/x/`).
fn modules() -> BTreeSet<String> {
    std::fs::read_dir(root().join("src"))
        .expect("src")
        .filter_map(|e| {
            let e = e.ok()?;
            let name = e.file_name().to_string_lossy().into_owned();
            if e.path().is_dir() {
                Some(name)
            } else {
                let stem = name.strip_suffix(".rs")?;
                (stem != "lib" && stem != "main").then(|| stem.to_string())
            }
        })
        .collect()
}

/// The crate root's re-exports: `pub use m::Name;` makes `crate::Name`
/// mean module `m`.
fn reexports() -> BTreeMap<String, String> {
    let lib = std::fs::read_to_string(root().join("src/lib.rs")).expect("src/lib.rs");
    lib.lines()
        .filter_map(|l| {
            let path = l.trim().strip_prefix("pub use ")?.strip_suffix(';')?;
            let (module, name) = path.split_once("::")?;
            Some((name.to_string(), module.to_string()))
        })
        .collect()
}

/// Source without comments and string literals (so that prose and
/// messages never count as imports).
fn code_only(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let mut in_string = false;
        let mut escaped = false;
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            if in_string {
                match c {
                    '\\' if !escaped => escaped = true,
                    '"' if !escaped => in_string = false,
                    _ => escaped = false,
                }
                continue;
            }
            match c {
                '/' if chars.peek() == Some(&'/') => break,
                '"' => in_string = true,
                _ => out.push(c),
            }
        }
        out.push('\n');
    }
    out
}

/// The layers a piece of code names: `crate::x…` and the names inside
/// `crate::{x, y::z}` groups.
fn named_layers(code: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (n, line) in code.lines().enumerate() {
        let mut rest = line;
        while let Some(i) = rest.find("crate::") {
            rest = &rest[i + "crate::".len()..];
            if let Some(group) = rest.strip_prefix('{') {
                let inner = &group[..group.find('}').unwrap_or(group.len())];
                for item in inner.split(',') {
                    let head: String = item
                        .trim()
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    if !head.is_empty() {
                        out.push((n + 1, head));
                    }
                }
            } else {
                let head: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                out.push((n + 1, head));
            }
        }
    }
    out
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir)
        .expect("a source directory")
        .flatten()
    {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Every `crate::` path of every module, checked against the table.
fn violations(table: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let src = root().join("src");
    let reexports = reexports();
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let rel = f.strip_prefix(&src).expect("under src");
        let first = rel.components().next().expect("a path");
        let layer = first
            .as_os_str()
            .to_string_lossy()
            .trim_end_matches(".rs")
            .to_string();
        if layer == "lib" || layer == "main" {
            continue;
        }
        let code = code_only(&std::fs::read_to_string(&f).expect("a source file"));
        for (line, name) in named_layers(&code) {
            let target = reexports.get(&name).cloned().unwrap_or(name);
            let ok = target == layer || table.get(&layer).is_some_and(|a| a.contains(&target));
            if !ok {
                out.push(format!(
                    "src/{}:{line}: `{layer}` uses `{target}`, which ARCHITECTURE.md does not allow",
                    rel.display()
                ));
            }
        }
    }
    out
}

#[test]
fn every_import_follows_the_layer_table() {
    let table = allowed();
    let v = violations(&table);
    assert!(v.is_empty(), "layer violations:\n{}", v.join("\n"));
}

#[test]
fn every_module_is_a_layer_of_the_table() {
    let table = allowed();
    let mods = modules();
    let missing: Vec<&String> = mods.iter().filter(|m| !table.contains_key(*m)).collect();
    assert!(
        missing.is_empty(),
        "modules without a row in ARCHITECTURE.md: {missing:?}"
    );
    let stale: Vec<&String> = table.keys().filter(|l| !mods.contains(*l)).collect();
    assert!(stale.is_empty(), "rows without a module: {stale:?}");
    for (layer, uses) in &table {
        for u in uses {
            assert!(
                table.contains_key(u),
                "`{layer}` may use `{u}`, which is not a layer"
            );
        }
    }
}

#[test]
fn the_layer_table_has_no_cycle() {
    let table = allowed();
    // Kahn's algorithm: a layer is placed once all it may use are.
    let mut placed: BTreeSet<&String> = BTreeSet::new();
    loop {
        let next: Vec<&String> = table
            .iter()
            .filter(|(l, uses)| !placed.contains(l) && uses.iter().all(|u| placed.contains(u)))
            .map(|(l, _)| l)
            .collect();
        if next.is_empty() {
            break;
        }
        placed.extend(next);
    }
    let cyclic: Vec<&String> = table.keys().filter(|l| !placed.contains(l)).collect();
    assert!(cyclic.is_empty(), "layers on a cycle: {cyclic:?}");
}

#[test]
fn the_checker_catches_an_upward_import() {
    // The scanner must see every form of path, or the test above proves
    // nothing: a `use`, a group, and a path inside an expression.
    let code = code_only(
        "use crate::smt::Profile;\nuse crate::{db::Target, nc};\nlet x = crate::check::run(); // crate::cli\nlet s = \"crate::bench\";\n",
    );
    let names: Vec<String> = named_layers(&code).into_iter().map(|(_, n)| n).collect();
    assert_eq!(names, ["smt", "db", "nc", "check"]);
}

/// The names a layer defines: its files and folders, and every item,
/// field, variant and `use` alias its code declares (a coarse index: a
/// name is known if it is defined anywhere in the layer).
fn defined_names(layer: &str) -> BTreeSet<String> {
    let src = root().join("src");
    let mut files = Vec::new();
    let dir = src.join(layer);
    if dir.is_dir() {
        rust_files(&dir, &mut files);
    } else {
        files.push(src.join(format!("{layer}.rs")));
    }
    let mut names = BTreeSet::new();
    for f in files {
        let stem = f.file_stem().map(|s| s.to_string_lossy().into_owned());
        names.extend(stem);
        if let Some(parent) = f.parent().and_then(|p| p.file_name()) {
            names.insert(parent.to_string_lossy().into_owned());
        }
        let code = code_only(&std::fs::read_to_string(&f).expect("a source file"));
        let words: Vec<&str> = code
            .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '!'))
            .filter(|w| !w.is_empty())
            .collect();
        for pair in words.windows(2) {
            let keyword = matches!(
                pair[0],
                "fn" | "struct" | "enum" | "trait" | "type" | "const" | "static" | "mod" | "as"
            );
            if keyword || pair[0] == "macro_rules!" {
                names.insert(pair[1].to_string());
            }
        }
        // Fields, variants and re-exported names: any `name:` or `Name,`
        // would be too coarse; a `pub` declaration's next word is enough,
        // with variants taken from enum bodies by their capital.
        for w in &words {
            if w.chars().next().is_some_and(char::is_uppercase) {
                names.insert(w.to_string());
            }
        }
    }
    names
}

/// Every `layer::name::…` path in backticks in `text`, whose first segment
/// is a layer of the crate.
fn layer_paths(text: &str, layers: &BTreeSet<String>) -> Vec<Vec<String>> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .filter(|s| s.contains("::") && !s.contains(' '))
        .map(|s| {
            s.trim_end_matches("()")
                .split("::")
                .map(|p| {
                    p.chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect::<String>()
                })
                .collect::<Vec<String>>()
        })
        .filter(|segs| segs.len() > 1 && layers.contains(&segs[0]))
        .collect()
}

/// The backticked `layer::…` paths of `text` that name nothing the layer
/// defines.
fn stale_paths(text: &str, index: &mut BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let layers = modules();
    let mut out = Vec::new();
    for segs in layer_paths(text, &layers) {
        let names = index
            .entry(segs[0].clone())
            .or_insert_with(|| defined_names(&segs[0]));
        if let Some(missing) = segs[1..]
            .iter()
            .find(|s| !s.is_empty() && !names.contains(*s))
        {
            out.push(format!("`{}` ({missing} is not defined)", segs.join("::")));
        }
    }
    out
}

/// Module heads and ARCHITECTURE.md name only what exists: a renamed or
/// removed module, type or function leaves no stale description behind.
#[test]
fn module_heads_and_the_map_name_only_what_exists() {
    let src = root().join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut index = BTreeMap::new();
    let mut stale = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).expect("a source file");
        let head: String = (text.lines())
            .take_while(|l| l.starts_with("//!"))
            .map(|l| format!("{}\n", l.trim_start_matches("//!")))
            .collect();
        if head.is_empty() {
            stale.push(format!("{}: no `//!` head", f.display()));
        }
        for s in stale_paths(&head, &mut index) {
            stale.push(format!("{}: {s}", f.display()));
        }
    }
    let map = std::fs::read_to_string(root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    for s in stale_paths(&map, &mut index) {
        stale.push(format!("ARCHITECTURE.md: {s}"));
    }
    assert!(stale.is_empty(), "stale names:\n{}", stale.join("\n"));
}

#[test]
fn the_name_check_catches_a_stale_path() {
    let mut index = BTreeMap::new();
    let found = stale_paths("see `nc::queries` and `check::ENGINES`", &mut index);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].contains("queries"), "{found:?}");
}

//! Slots the predicates need not carry (docs/horn-clauses.md §2): a slot
//! is dead at a loop header when every path from it writes the slot
//! before reading it. Most are lowering's temporaries, read only in the
//! block that writes them; the generated programs have hundreds.

use super::encode::{Rule, StateVar};
use crate::ir::NodeId;
use std::collections::{HashMap, HashSet};

/// At each loop header, the slots that no path from it reads before it
/// writes them are dead (lowering's temporaries, mostly): the rules into
/// the header pass an unknown `dead.k` for them instead of a value, so
/// that Spacer's invariants need not carry what the program no longer
/// reads. Reads are found in the text, so a slot is dead only if no rule
/// out of the header mentions it where it matters. Returns which slots
/// are live at some header.
pub(super) fn forget_dead(rules: &mut [Rule], decls: &[(String, String)]) -> Vec<bool> {
    let slot_of: HashMap<&str, usize> = (decls.iter().enumerate())
        .map(|(k, (n, _))| (n.as_str(), k))
        .collect();
    let slots = |text: &str| -> Vec<usize> {
        (free_symbols(text).into_iter())
            .filter_map(|s| slot_of.get(s).copied())
            .collect()
    };
    // Per rule: the slots its guards read, and those each argument reads.
    let reads: Vec<(Vec<usize>, Vec<Vec<usize>>)> = (rules.iter())
        .map(|r| {
            let guards = r.guards.iter().flat_map(|g| slots(g)).collect();
            (guards, r.args.iter().map(|a| slots(a)).collect())
        })
        .collect();
    let mut live: HashMap<NodeId, Vec<bool>> = HashMap::new();
    loop {
        let mut changed = false;
        for (r, (guards, args)) in rules.iter().zip(&reads) {
            let Some(from) = r.from else { continue };
            let after = r.to.and_then(|t| live.get(&t)).cloned();
            let mut read: Vec<usize> = guards.clone();
            for (k, arg) in args.iter().enumerate() {
                if after.as_ref().is_some_and(|l| l[k]) {
                    read.extend(arg);
                }
            }
            let at = live.entry(from).or_insert_with(|| vec![false; decls.len()]);
            for k in read {
                changed |= !at[k];
                at[k] = true;
            }
        }
        if !changed {
            break;
        }
    }
    for r in rules.iter_mut() {
        let Some(at) = r.to.map(|t| live.get(&t)) else {
            continue;
        };
        for (k, (_, sort)) in decls.iter().enumerate() {
            if at.is_none_or(|l| !l[k]) {
                r.args[k] = format!("dead.{k}");
                r.vars.push((format!("dead.{k}"), sort.clone()));
            }
        }
    }
    (0..decls.len())
        .map(|k| live.values().any(|l| l[k]))
        .collect()
}

/// Takes out of the state the slots no predicate needs: dead at every
/// header (a temporary read only in the block that writes it) and not
/// read by a fact, whose variables are the first state a counterexample's
/// inputs are read from (`unroll`). Returns the state left.
pub(super) fn drop_unread_slots(
    rules: &mut [Rule],
    state: &[StateVar],
    live: &[bool],
) -> Vec<StateVar> {
    let slot_of: HashMap<&str, usize> = (state.iter().enumerate())
        .map(|(k, v)| (v.name.as_str(), k))
        .collect();
    let mut keep = live.to_vec();
    for r in rules.iter().filter(|r| r.from.is_none()) {
        for text in r.guards.iter().chain(&r.args) {
            for k in free_symbols(text)
                .into_iter()
                .filter_map(|s| slot_of.get(s))
            {
                keep[*k] = true;
            }
        }
    }
    // The slots dropped, and the unknowns `forget_dead` passed for them.
    let dropped: HashSet<String> = (0..state.len())
        .filter(|k| !keep[*k])
        .flat_map(|k| [state[k].name.clone(), format!("dead.{k}")])
        .collect();
    for r in rules.iter_mut() {
        if r.to.is_some() {
            r.args = (r.args.iter().zip(&keep))
                .filter(|(_, k)| **k)
                .map(|(a, _)| a.clone())
                .collect();
        }
        r.vars.retain(|(n, _)| !dropped.contains(n));
    }
    (state.iter().zip(&keep))
        .filter(|(_, k)| **k)
        .map(|(v, _)| v.clone())
        .collect()
}

/// The symbols an SMT-LIB text reads free: not those a `let` of the text
/// binds, within its body (a composed clause binds the slots a step
/// changed, under their own names). The `let`s may nest deeply, so the
/// scan keeps its own stack.
pub(super) fn free_symbols(text: &str) -> HashSet<&str> {
    let mut stack: Vec<Frame> = Vec::new();
    let mut bound: HashMap<&str, u32> = HashMap::new();
    let mut free = HashSet::new();
    for token in tokens(text) {
        match token {
            "(" => {
                let kind = match stack.last() {
                    Some(f) if f.kind == Kind::Let && !f.in_body => Kind::Bindings,
                    Some(f) if f.kind == Kind::Bindings => Kind::Binding,
                    _ => Kind::Plain,
                };
                stack.push(Frame::new(kind));
            }
            ")" => {
                let Some(closed) = stack.pop() else { continue };
                close(closed, &mut stack, &mut bound);
            }
            atom => {
                if let Some(top) = stack.last_mut() {
                    let first = std::mem::replace(&mut top.fresh, false);
                    if first && top.kind == Kind::Plain && atom == "let" {
                        top.kind = Kind::Let;
                        continue;
                    }
                    if first && top.kind == Kind::Binding {
                        let at = stack.len() - 3;
                        stack[at].names.push(atom);
                        continue;
                    }
                }
                if !bound.contains_key(atom) {
                    free.insert(atom);
                }
            }
        }
    }
    free
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Plain,
    /// `(let (bindings) body)`.
    Let,
    /// The list of a `let`'s bindings.
    Bindings,
    /// `(name value)`.
    Binding,
}

struct Frame<'a> {
    kind: Kind,
    /// No token read inside yet.
    fresh: bool,
    /// A `let`'s names, and whether its body is being read.
    names: Vec<&'a str>,
    in_body: bool,
}

impl Frame<'_> {
    fn new(kind: Kind) -> Self {
        Frame {
            kind,
            fresh: true,
            names: Vec::new(),
            in_body: false,
        }
    }
}

/// A closed parenthesis: a `let`'s names go out of scope; the end of its
/// bindings brings them in.
fn close<'a>(closed: Frame<'a>, stack: &mut [Frame<'a>], bound: &mut HashMap<&'a str, u32>) {
    match closed.kind {
        Kind::Let if closed.in_body => {
            for n in closed.names {
                if let Some(c) = bound.get_mut(n) {
                    *c -= 1;
                    if *c == 0 {
                        bound.remove(n);
                    }
                }
            }
        }
        Kind::Bindings => {
            if let Some(the_let) = stack.last_mut() {
                the_let.in_body = true;
                for n in &the_let.names {
                    *bound.entry(n).or_insert(0) += 1;
                }
            }
        }
        _ => {}
    }
    if let Some(parent) = stack.last_mut() {
        parent.fresh = false;
    }
}

/// Parentheses and atoms.
pub(super) fn tokens(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        rest = rest.trim_start();
        let first = rest.chars().next()?;
        let len = if first == '(' || first == ')' {
            1
        } else {
            rest.find(|c: char| c == '(' || c == ')' || c.is_whitespace())
                .unwrap_or(rest.len())
        };
        let (token, after) = rest.split_at(len);
        rest = after;
        Some(token)
    })
}

#[cfg(test)]
mod tests {
    use super::free_symbols;

    /// The free symbols that name slots (`x…`), sorted.
    fn slots(text: &str) -> Vec<&str> {
        let mut free: Vec<&str> = (free_symbols(text).into_iter())
            .filter(|s| s.starts_with('x'))
            .collect();
        free.sort();
        free
    }

    #[test]
    fn let_bound_names_are_not_read_in_the_body_but_are_in_the_values() {
        // x3 is read by its own binding's value; x4 only after the `let`.
        let text = "(and (let ((x3 (+ x1 x3)) (x4 2)) (< x3 x4)) (> x4 x5))";
        assert_eq!(slots(text), ["x1", "x3", "x4", "x5"]);
        let text = "(and (let ((x3 (+ x1 1)) (x4 2)) (< x3 x4)) (> x2 x5))";
        assert_eq!(slots(text), ["x1", "x2", "x5"]);
        let nested = "(let ((x3 (let ((x2 (+ x1 1))) (* x2 2)))) (<= x3 100))";
        assert_eq!(slots(nested), ["x1"]);
    }
}

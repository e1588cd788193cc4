//! Which array and record variables may share cells.
//!
//! Arrays and records hold references to cells (docs/microc.md, "Memory
//! model"): after `b = a`, `b = a[0]`, `m = [a]`, `r = {f: a}`, passing `a`
//! to a function or returning it, a write into `b`'s elements is a write
//! into `a`'s. The necessary conditions model an array variable as a
//! λ-term of its own, which is exact only while no two variables reach the
//! same cells. This pass over a whole (inlined) flowgraph groups the
//! variables that may share cells, flow-insensitively, with a union-find:
//! every instruction that copies a reference from one variable into
//! another unites their groups. A group may also reach *memory*: a heap
//! cell (`alloc`, `*p = e`), a variable whose address is taken, or a call
//! that is not inlined (which may store or write what it is given).
//!
//! The analyses forget (⋆) the other members of a group when one is
//! written into; see `nc::state`. A variable alone in its group, which is
//! every array of the papers' benchmarks, keeps its exact λ-term.
//!
//! Input arrays (parameters of `main`) are values, never written: they
//! share nothing.

use super::{Body, Expr, Instr, Place, VarId};
use crate::types::Type;

/// The groups of variables that may share cells, computed once per
/// flowgraph: the analyses ask on every element write.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Sharing {
    /// The group of each variable; the last entry stands for memory.
    group: Vec<u32>,
    /// The variables of each group, by group.
    members: Vec<Vec<VarId>>,
    /// Variables written with references to their own cells
    /// (`m[0] = m[1]`): their rows may share cells with each other.
    self_shared: Vec<bool>,
}

/// The union-find the groups are built with.
struct Builder {
    /// Parents, by variable; the last entry stands for memory.
    parent: Vec<u32>,
    self_shared: Vec<bool>,
}

impl Sharing {
    /// The groups of `body`'s variables.
    pub fn of(body: &Body) -> Sharing {
        let mut b = Builder {
            parent: (0..=body.vars.len() as u32).collect(),
            self_shared: vec![false; body.vars.len()],
        };
        for e in &body.edges {
            b.instr(body, &e.instr);
        }
        let group: Vec<u32> = (0..b.parent.len() as u32).map(|x| b.find(x)).collect();
        let mut members = vec![Vec::new(); group.len()];
        for v in 0..body.vars.len() {
            members[group[v] as usize].push(v as VarId);
        }
        Sharing {
            group,
            members,
            self_shared: b.self_shared,
        }
    }

    fn memory_group(&self) -> u32 {
        self.group[self.group.len() - 1]
    }

    /// The variables other than `v` whose cells a write into `v`'s
    /// elements or fields may change.
    pub fn others(&self, v: VarId) -> impl Iterator<Item = VarId> + '_ {
        self.members[self.group[v as usize] as usize]
            .iter()
            .copied()
            .filter(move |&w| w != v)
    }

    /// Whether two elements of `v` may be the same cells (`m = [c, c]`,
    /// `m = [c, d]` after `d = c`, `m[0] = m[1]`): then a write into one
    /// row may change another.
    pub fn rows_may_share(&self, v: VarId) -> bool {
        self.self_shared[v as usize]
            || self.others(v).next().is_some()
            || self.group[v as usize] == self.memory_group()
    }

    /// The variables whose cells memory may reach: a write through a
    /// pointer into an array or record may change them.
    pub fn in_memory(&self) -> &[VarId] {
        &self.members[self.memory_group() as usize]
    }

    /// Every group of more than one variable, or that memory reaches, by
    /// variable names (for the notes shown with a condition).
    pub fn groups(&self, body: &Body) -> Vec<Vec<String>> {
        let memory = self.memory_group();
        (self.members.iter().enumerate())
            .filter(|(g, vs)| vs.len() > 1 || (*g as u32 == memory && !vs.is_empty()))
            .map(|(g, vs)| {
                let mut names: Vec<String> = vs.iter().map(|&v| body.var(v).name.clone()).collect();
                if g as u32 == memory {
                    names.push("memory".into());
                }
                names
            })
            .collect()
    }
}

impl Builder {
    fn memory(&self) -> u32 {
        self.parent.len() as u32 - 1
    }

    fn find(&self, mut x: u32) -> u32 {
        while self.parent[x as usize] != x {
            x = self.parent[x as usize];
        }
        x
    }

    fn union(&mut self, a: u32, b: u32) {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra != rb {
            self.parent[ra.max(rb) as usize] = ra.min(rb);
        }
    }

    fn instr(&mut self, body: &Body, i: &Instr) {
        let memory = self.memory();
        match i {
            Instr::Assign(place, e) => {
                let to = place.root_var().unwrap_or(memory);
                for r in refs(body, e, memory) {
                    if r == to && to != memory && !matches!(place, Place::Var(_)) {
                        self.self_shared[to as usize] = true;
                    }
                    self.union(to, r);
                }
                self.addresses(body, e);
            }
            Instr::Alloc(_, e) => {
                for r in refs(body, e, memory) {
                    self.union(memory, r);
                }
                self.addresses(body, e);
            }
            Instr::Call { dst, args, .. } => {
                for a in args {
                    for r in refs(body, a, memory) {
                        self.union(memory, r);
                    }
                    self.addresses(body, a);
                }
                if holds_refs(&body.var(*dst).ty) {
                    self.union(memory, *dst);
                }
            }
            Instr::Output(e) => self.addresses(body, e),
            Instr::Assume(_) | Instr::Assert(..) | Instr::Skip | Instr::Enter(_) => {}
        }
    }

    /// `&v` of an array or record variable: `*p` reaches v's cells.
    fn addresses(&mut self, body: &Body, e: &Expr) {
        let memory = self.memory();
        e.walk(&mut |x| {
            if let Expr::AddrOf(v) = x
                && !body.var(*v).input_array
                && holds_refs(&body.var(*v).ty)
            {
                self.union(memory, *v);
            }
        });
    }
}

/// Whether values of this type hold references to cells (arrays and
/// records; a type not known is taken to).
fn holds_refs(ty: &Type) -> bool {
    !matches!(ty, Type::Int | Type::Ptr(_))
}

/// The type of an expression's value, where the variables' types say it.
pub fn type_of(body: &Body, e: &Expr) -> Option<Type> {
    match e {
        Expr::Var(v) => Some(body.var(*v).ty.clone()),
        Expr::Index(a, _) => match type_of(body, a)? {
            Type::Array(t) => Some(*t),
            _ => None,
        },
        Expr::Field(r, f) => match type_of(body, r)? {
            Type::Record(fs) => fs.into_iter().find(|(n, _)| n == f).map(|(_, t)| t),
            _ => None,
        },
        Expr::Load(p) => match type_of(body, p)? {
            Type::Ptr(t) => Some(*t),
            _ => None,
        },
        Expr::Array(_) | Expr::Record(_) => None,
        Expr::Int(_) | Expr::Unary(..) | Expr::Binary(..) | Expr::Cmp(..) => Some(Type::Int),
        Expr::Null | Expr::AddrOf(_) => Some(Type::Ptr(Box::new(Type::Unknown))),
    }
}

/// The variables (or memory) whose cells the value of `e` may hold
/// references to: what an assignment of `e` shares.
fn refs(body: &Body, e: &Expr, memory: u32) -> Vec<u32> {
    if type_of(body, e).is_some_and(|t| !holds_refs(&t)) {
        return vec![];
    }
    let mut out = Vec::new();
    reachable(body, e, memory, &mut out);
    out
}

fn reachable(body: &Body, e: &Expr, memory: u32, out: &mut Vec<u32>) {
    match e {
        Expr::Var(v) if !body.var(*v).input_array => out.push(*v),
        Expr::Index(a, _) | Expr::Field(a, _) => reachable(body, a, memory, out),
        Expr::Load(_) => out.push(memory),
        Expr::Array(xs) => xs.iter().for_each(|x| out.extend(refs(body, x, memory))),
        Expr::Record(fs) => fs
            .iter()
            .for_each(|(_, x)| out.extend(refs(body, x, memory))),
        _ => {}
    }
}

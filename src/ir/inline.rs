//! The whole-program flowgraph: `main` with every call inlined.
//!
//! Each call edge `u --[v := f(args)]--> w` becomes: `u --params := args-->`
//! a fresh copy of f's flowgraph (variables renamed `f#k.x`; the input
//! stream and position stay shared) `--v := f#k.$ret--> w`. Targets of the
//! copies remember their origin, so a target of f is reached when any copy
//! of it is. Loops are recomputed as natural loops, so a loop of f called
//! inside a loop of main nests in it.
//!
//! Recursion is cut: a call of a function already being inlined stays a
//! `call` edge (the analysis makes its result ⋆), and since the cut-off
//! runs could hit any target of the callee (or of what it calls), the call
//! vertex gets a `skip` edge to a copy of each such target: its condition
//! then includes "this call was reached" — sound, if imprecise. The same
//! happens past a size limit.

use super::*;
use std::collections::{BTreeMap, BTreeSet};

/// Where a target of the whole-program graph comes from.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TargetOrigin {
    pub function: String,
    pub target: TargetId,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Program {
    pub body: Body,
    /// For each target of `body`: the function and target it copies.
    pub origins: Vec<TargetOrigin>,
    /// Calls that were not inlined (recursion or size), as "f (why)".
    pub cut_calls: Vec<String>,
}

impl Program {
    /// Whether a call was cut because it recurses.
    pub fn recurses(&self) -> bool {
        let suffix = format!("({RECURSIVE})");
        self.cut_calls.iter().any(|c| c.ends_with(&suffix))
    }

    /// The error vertices of every copy of a function's target.
    pub fn copies_of(&self, function: &str, target: TargetId) -> Vec<NodeId> {
        self.origins
            .iter()
            .enumerate()
            .filter(|(_, o)| o.function == function && o.target == target)
            .map(|(i, _)| self.body.targets[i].node)
            .collect()
    }
}

/// Why a call that recurses was cut, as [`Program::cut_calls`] says it.
const RECURSIVE: &str = "recursive";

/// Vertices beyond which calls are no longer inlined.
const MAX_NODES: u32 = 200_000;

/// Inlines every call reachable from `main`. `bodies` maps each function's
/// name to its flowgraph and its offset in the file: spans in the program
/// graph are absolute (its parts come from different functions).
pub fn inline_program(bodies: &BTreeMap<String, (&Body, u32)>) -> Option<Program> {
    inline_function(bodies, "main")
}

/// [`inline_program`] from `root` instead of `main`: its calls inlined,
/// those that recurse into a function being inlined (`root` among them)
/// cut. The Horn clauses summarise a recursive function from it.
pub fn inline_function(bodies: &BTreeMap<String, (&Body, u32)>, root: &str) -> Option<Program> {
    let main = bodies.get(root)?.0;
    let mut b = Builder {
        bodies,
        out: Body {
            name: root.into(),
            ..empty(main)
        },
        origins: vec![],
        cut: vec![],
        copies: 0,
    };
    // main's own variables keep their names and ids.
    b.out.vars = main.vars.clone();
    let map: Vec<VarId> = (0..main.vars.len() as VarId).collect();
    let (entry, exit) = b.copy(main, &map, &mut vec![root.to_string()]);
    b.out.entry = entry;
    b.out.exit = exit;
    b.out.node_kinds[entry as usize] = NodeKind::Entry;
    b.out.node_kinds[exit as usize] = NodeKind::Exit;
    natural_loops(&mut b.out);
    Some(Program {
        body: b.out,
        origins: b.origins,
        cut_calls: b.cut,
    })
}

/// Appends `other` to `into` as a disjoint part: its vertices, edges,
/// loops and variables renumbered after `into`'s (its variables' names
/// prefixed `prefix`, so that names stay unique), its entry and exit plain
/// vertices and its targets left out. Returns the offsets of its vertices
/// and of its variables.
pub fn append(into: &mut Body, other: &Body, prefix: &str) -> (NodeId, VarId) {
    let (nodes, vars) = (into.node_count, into.vars.len() as VarId);
    let edges = into.edges.len() as EdgeId;
    let loops = into.loops.len() as LoopId;
    let map: Vec<VarId> = (0..other.vars.len() as VarId).map(|v| v + vars).collect();
    into.vars.extend(other.vars.iter().map(|v| VarInfo {
        name: format!("{prefix}{}", v.name),
        ..v.clone()
    }));
    into.edges.extend(other.edges.iter().map(|e| Edge {
        from: e.from + nodes,
        to: e.to + nodes,
        instr: rename_instr(&e.instr, &map),
        span: e.span,
    }));
    into.node_kinds
        .extend(other.node_kinds.iter().map(|k| match k {
            NodeKind::LoopHeader(l) => NodeKind::LoopHeader(l + loops),
            _ => NodeKind::Plain,
        }));
    into.loops.extend(other.loops.iter().map(|l| Loop {
        id: l.id + loops,
        header: l.header + nodes,
        nodes: l.nodes.iter().map(|n| n + nodes).collect(),
        back_edges: l.back_edges.iter().map(|e| e + edges).collect(),
        exit_edges: l.exit_edges.iter().map(|e| e + edges).collect(),
        parent: l.parent.map(|p| p + loops),
        span: l.span,
    }));
    into.node_count += other.node_count;
    (nodes, vars)
}

fn empty(template: &Body) -> Body {
    Body {
        name: template.name.clone(),
        vars: vec![],
        params: template.params,
        node_count: 0,
        edges: vec![],
        entry: 0,
        exit: 0,
        targets: vec![],
        loops: vec![],
        node_kinds: vec![],
    }
}

/// The vertices, destination and place of a call edge.
struct Call {
    from: NodeId,
    to: NodeId,
    dst: VarId,
    span: Span,
}

struct Builder<'a> {
    bodies: &'a BTreeMap<String, (&'a Body, u32)>,
    out: Body,
    origins: Vec<TargetOrigin>,
    cut: Vec<String>,
    copies: u32,
}

impl Builder<'_> {
    fn node(&mut self, kind: NodeKind) -> NodeId {
        self.out.add_vertex(kind)
    }

    fn edge(&mut self, from: NodeId, to: NodeId, instr: Instr, span: Span) {
        self.out.edges.push(Edge {
            from,
            to,
            instr,
            span,
        });
    }

    fn target(&mut self, kind: TargetKind, span: Span, function: &str, target: TargetId) -> NodeId {
        let id = self.out.targets.len() as TargetId;
        let node = self.node(NodeKind::Error(id));
        self.out.targets.push(Target {
            id,
            kind,
            span,
            node,
        });
        self.origins.push(TargetOrigin {
            function: function.to_string(),
            target,
        });
        node
    }

    /// Copies `f` with its variables mapped by `map`; returns (entry, exit).
    fn copy(&mut self, f: &Body, map: &[VarId], stack: &mut Vec<String>) -> (NodeId, NodeId) {
        let base = self.out.node_count;
        let offset = self.bodies.get(&f.name).map(|(_, o)| *o).unwrap_or(0);
        for k in &f.node_kinds {
            match k {
                NodeKind::Error(t) => {
                    let src = &f.targets[*t as usize];
                    self.target(src.kind, src.span.shift(offset), &f.name, *t);
                }
                _ => {
                    self.node(NodeKind::Plain);
                }
            }
        }
        for e in &f.edges {
            let (from, to) = (base + e.from, base + e.to);
            let span = e.span.shift(offset);
            match &e.instr {
                Instr::Call { dst, func, args } => {
                    self.call(from, to, map[*dst as usize], func, args, map, span, stack)
                }
                i => {
                    let i = rename_instr(i, map);
                    self.edge(from, to, i, span);
                }
            }
        }
        (base + f.entry, base + f.exit)
    }

    /// A call edge `from --[dst := func(args)]--> to`: the callee's copy,
    /// or the call kept (and cut) when it cannot be inlined.
    #[allow(clippy::too_many_arguments)]
    fn call(
        &mut self,
        from: NodeId,
        to: NodeId,
        dst: VarId,
        func: &str,
        args: &[Expr],
        map: &[VarId],
        span: Span,
        stack: &mut Vec<String>,
    ) {
        let args: Vec<Expr> = args.iter().map(|a| rename_expr(a, map)).collect();
        let callee = self.bodies.get(func).map(|(b, _)| *b);
        // Not inlined: undefined (rejected earlier by name resolution; the
        // graph stays total), recursive, or past the size limit.
        let why = if callee.is_none() {
            Some("undefined")
        } else if stack.iter().any(|s| s == func) {
            Some(RECURSIVE)
        } else if self.out.node_count > MAX_NODES {
            Some("program too large to inline")
        } else {
            None
        };
        match (callee, why) {
            (Some(callee), None) => {
                let call = Call {
                    from,
                    to,
                    dst,
                    span,
                };
                self.inline(call, callee, func, args, stack);
            }
            (_, why) => {
                let instr = Instr::Call {
                    dst,
                    func: func.to_string(),
                    args,
                };
                self.edge(from, to, instr, span);
                if let Some(why) = why {
                    self.cut(from, func, why, span);
                }
            }
        }
    }

    /// A call that stays a call: the runs it cuts off may hit any target of
    /// the callee's closure, so the call vertex may-reaches a copy of each.
    fn cut(&mut self, from: NodeId, func: &str, why: &str, span: Span) {
        self.cut.push(format!("{func} ({why})"));
        for (g, t) in self.closure_targets(func) {
            let (gb, goff) = self.bodies[&g];
            let kind = gb.targets[t as usize].kind;
            let tspan = gb.targets[t as usize].span.shift(goff);
            let err = self.target(kind, tspan, &g, t);
            self.edge(from, err, Instr::Skip, span);
        }
    }

    /// The callee's copy between the call's vertices: its parameters bound
    /// to the arguments, `enter` (its locals are new cells), its body, and
    /// its return value assigned to `dst`.
    fn inline(
        &mut self,
        call: Call,
        callee: &Body,
        func: &str,
        args: Vec<Expr>,
        stack: &mut Vec<String>,
    ) {
        let cmap = self.copy_vars(callee, func);
        // The callee's own locals (not its parameters, bound below).
        let locals: Vec<VarId> = callee
            .vars
            .iter()
            .zip(&cmap)
            .filter(|(v, _)| matches!(v.kind, VarKind::Local | VarKind::Temp))
            .map(|(_, id)| *id)
            .collect();
        stack.push(func.to_string());
        let (centry, cexit) = self.copy(callee, &cmap, stack);
        stack.pop();
        // Bind the parameters, one edge each (the arguments speak of the caller only).
        let mut cur = call.from;
        for (i, a) in args.into_iter().enumerate() {
            let next = self.node(NodeKind::Plain);
            self.edge(cur, next, Instr::Assign(Place::Var(cmap[i]), a), call.span);
            cur = next;
        }
        self.edge(cur, centry, Instr::Enter(locals), call.span);
        let ret = cmap[callee.var_id(RETURN_VAR).unwrap_or(0) as usize];
        let assign = Instr::Assign(Place::Var(call.dst), Expr::Var(ret));
        self.edge(cexit, call.to, assign, call.span);
    }

    /// Fresh variables for a copy of `callee` (`func#k.x`); globals stay
    /// shared. The map from the callee's variable ids to the copy's.
    fn copy_vars(&mut self, callee: &Body, func: &str) -> Vec<VarId> {
        self.copies += 1;
        let k = self.copies;
        let mut cmap = Vec::new();
        for v in &callee.vars {
            if v.kind == VarKind::Global {
                let id = self
                    .out
                    .vars
                    .iter()
                    .position(|w| w.name == v.name)
                    .map(|i| i as VarId)
                    .unwrap_or_else(|| {
                        self.out.vars.push(v.clone());
                        (self.out.vars.len() - 1) as VarId
                    });
                cmap.push(id);
            } else {
                let mut w = v.clone();
                w.name = format!("{func}#{k}.{}", v.name);
                w.input_array = false;
                // Parameters are assigned on entry: they become locals of main.
                if w.kind == VarKind::Param {
                    w.kind = VarKind::Local;
                }
                self.out.vars.push(w);
                cmap.push((self.out.vars.len() - 1) as VarId);
            }
        }
        cmap
    }

    /// Targets of `func` and of every function it (transitively) calls.
    fn closure_targets(&self, func: &str) -> Vec<(String, TargetId)> {
        let mut seen = BTreeSet::new();
        let mut stack = vec![func.to_string()];
        let mut out = Vec::new();
        while let Some(f) = stack.pop() {
            if !seen.insert(f.clone()) {
                continue;
            }
            let Some((b, _)) = self.bodies.get(&f) else {
                continue;
            };
            out.extend(b.targets.iter().map(|t| (f.clone(), t.id)));
            for e in &b.edges {
                if let Instr::Call { func, .. } = &e.instr {
                    stack.push(func.clone());
                }
            }
        }
        out
    }
}

fn rename_expr(e: &Expr, m: &[VarId]) -> Expr {
    let r = |x: &Expr| Box::new(rename_expr(x, m));
    match e {
        Expr::Int(_) | Expr::Null => e.clone(),
        Expr::Var(v) => Expr::Var(m[*v as usize]),
        Expr::AddrOf(v) => Expr::AddrOf(m[*v as usize]),
        Expr::Unary(op, a) => Expr::Unary(*op, r(a)),
        Expr::Binary(op, a, b) => Expr::Binary(*op, r(a), r(b)),
        Expr::Cmp(op, a, b) => Expr::Cmp(*op, r(a), r(b)),
        Expr::Load(a) => Expr::Load(r(a)),
        Expr::Index(a, b) => Expr::Index(r(a), r(b)),
        Expr::Field(a, f) => Expr::Field(r(a), f.clone()),
        Expr::Array(xs) => Expr::Array(xs.iter().map(|x| rename_expr(x, m)).collect()),
        Expr::Record(fs) => Expr::Record(
            fs.iter()
                .map(|(f, x)| (f.clone(), rename_expr(x, m)))
                .collect(),
        ),
    }
}

fn rename_place(p: &Place, m: &[VarId]) -> Place {
    match p {
        Place::Var(v) => Place::Var(m[*v as usize]),
        Place::Deref(e) => Place::Deref(rename_expr(e, m)),
        Place::Index(b, i) => Place::Index(Box::new(rename_place(b, m)), rename_expr(i, m)),
        Place::Field(b, f) => Place::Field(Box::new(rename_place(b, m)), f.clone()),
    }
}

fn rename_cond(c: &Cond, m: &[VarId]) -> Cond {
    match c {
        Cond::Cmp(op, a, b) => Cond::Cmp(*op, rename_expr(a, m), rename_expr(b, m)),
        Cond::Initialized { place, positive } => Cond::Initialized {
            place: rename_place(place, m),
            positive: *positive,
        },
        Cond::InBounds {
            array,
            index,
            positive,
        } => Cond::InBounds {
            array: rename_expr(array, m),
            index: rename_expr(index, m),
            positive: *positive,
        },
    }
}

fn rename_instr(i: &Instr, m: &[VarId]) -> Instr {
    match i {
        Instr::Assign(p, e) => Instr::Assign(rename_place(p, m), rename_expr(e, m)),
        Instr::Alloc(v, e) => Instr::Alloc(m[*v as usize], rename_expr(e, m)),
        Instr::Call { dst, func, args } => Instr::Call {
            dst: m[*dst as usize],
            func: func.clone(),
            args: args.iter().map(|a| rename_expr(a, m)).collect(),
        },
        Instr::Output(e) => Instr::Output(rename_expr(e, m)),
        Instr::Assume(c) => Instr::Assume(rename_cond(c, m)),
        // The target id is renumbered with the error vertex's copy; the
        // continuing edge keeps a pointer only for printing.
        Instr::Assert(c, t) => Instr::Assert(rename_cond(c, m), *t),
        Instr::Skip => Instr::Skip,
        Instr::Enter(vs) => Instr::Enter(vs.iter().map(|v| m[*v as usize]).collect()),
    }
}

/// Recomputes loops as natural loops: a header is the target of an edge
/// that closes a cycle; its loop is the header plus every vertex that
/// reaches the back edge without passing the header.
pub fn natural_loops(b: &mut Body) {
    let n = b.node_count as usize;
    let succ = b.successors();
    // Back edges by depth-first search from the entry (iterative).
    let mut state = vec![0u8; n]; // 0 new, 1 on stack, 2 done
    let mut back: Vec<EdgeId> = Vec::new();
    let mut stack: Vec<(NodeId, usize)> = vec![(b.entry, 0)];
    state[b.entry as usize] = 1;
    while let Some((v, i)) = stack.pop() {
        if i < succ[v as usize].len() {
            stack.push((v, i + 1));
            let e = succ[v as usize][i];
            let t = b.edges[e as usize].to;
            match state[t as usize] {
                0 => {
                    state[t as usize] = 1;
                    stack.push((t, 0));
                }
                1 => back.push(e),
                _ => {}
            }
        } else {
            state[v as usize] = 2;
        }
    }
    let mut by_header: BTreeMap<NodeId, Vec<EdgeId>> = BTreeMap::new();
    for e in back {
        by_header.entry(b.edges[e as usize].to).or_default().push(e);
    }
    let mut preds: Vec<Vec<NodeId>> = vec![vec![]; n];
    for e in &b.edges {
        preds[e.to as usize].push(e.from);
    }
    let mut loops: Vec<Loop> = Vec::new();
    for (h, backs) in by_header {
        let mut nodes = BTreeSet::new();
        nodes.insert(h);
        let mut work: Vec<NodeId> = backs.iter().map(|e| b.edges[*e as usize].from).collect();
        while let Some(v) = work.pop() {
            if nodes.insert(v) {
                work.extend(preds[v as usize].iter().copied());
            }
        }
        let span = backs
            .first()
            .map(|e| b.edges[*e as usize].span)
            .unwrap_or_default();
        let exit_edges = b
            .edges
            .iter()
            .enumerate()
            .filter(|(_, e)| {
                nodes.contains(&e.from)
                    && !nodes.contains(&e.to)
                    && !matches!(b.node_kinds[e.to as usize], NodeKind::Error(_))
            })
            .map(|(i, _)| i as EdgeId)
            .collect();
        loops.push(Loop {
            id: 0,
            header: h,
            nodes: nodes.into_iter().collect(),
            back_edges: backs,
            exit_edges,
            parent: None,
            span,
        });
    }
    // Nesting: the parent is the smallest other loop containing the header.
    loops.sort_by_key(|l| std::cmp::Reverse(l.nodes.len()));
    for (i, l) in loops.iter_mut().enumerate() {
        l.id = i as LoopId;
    }
    let snapshot: Vec<(LoopId, Vec<NodeId>)> =
        loops.iter().map(|l| (l.id, l.nodes.clone())).collect();
    for l in &mut loops {
        l.parent = snapshot
            .iter()
            .filter(|(id, nodes)| {
                *id != l.id && nodes.len() > l.nodes.len() && nodes.binary_search(&l.header).is_ok()
            })
            .min_by_key(|(_, nodes)| nodes.len())
            .map(|(id, _)| *id);
    }
    for l in &loops {
        b.node_kinds[l.header as usize] = NodeKind::LoopHeader(l.id);
    }
    b.loops = loops;
}

//! The program generator of the soundness tests: random, well-typed microc
//! programs over `main(n, A)` with the features [`Knobs`] switches, and
//! random witnesses for them.

use apc::interp::{ArgValue, Witness};
use num_bigint::BigInt;
use std::collections::BTreeMap;
use std::fmt::Write;

pub(super) use crate::common::Rng;

// ---------------------------------------------------------------------------
// Knobs: the probabilities of the generator's features.
// ---------------------------------------------------------------------------

/// Feature probabilities, in percent. Per program: `calls`, `recursion`,
/// `pointers`, `records`, `arrays`, `nested`, `unassigned` switch a feature
/// on. Per site: `sidefx` (an int expression is a read followed by a call
/// that may change what was read: `x + inc(&x)`, `B[0] + wra(&B, 1)`),
/// `null` (a pointer assignment or argument is `null`), `call` (an int
/// atom is a call), `input` (an int atom is `input`), `recaddr` (a pointer
/// to a record is `&r` of a record variable), `localaddr` (`mkp` returns
/// the address of its own local), `assume` (the weight of `assume(c);`
/// among statements), `inputcopy` (an array expression in main is the
/// input array `A`: copies and arguments that are unbounded),
/// `branchlocal` (a helper's local `u` is assigned on one branch only),
/// `ptrstore` (with pointers: pointers stored in a record field and in an
/// array, `*hr.h = e`, `*P[i] = e`), `guard` (a statement of main runs
/// only for some inputs: `if (A[3] > 1) { … }`), `boxed` (with arrays: a
/// record `bx = {f: C}` whose field holds an array's references, written
/// and read through `bx.f[i]` and through the array), `copies` (with
/// arrays: `D = a; D[k] = e; assert(a[k] != c);`, a write through a copy
/// probed through the original).
///
/// Patterns that found a bug still open are lowered, so that campaigns
/// find other bugs too; each says so next to its value.
#[derive(Clone, Debug)]
pub(super) struct Knobs(BTreeMap<&'static str, u32>);

const KNOBS: &[(&str, u32)] = &[
    ("calls", 60),
    ("recursion", 35),
    ("pointers", 50),
    ("records", 35),
    ("arrays", 50),
    ("nested", 25),
    ("unassigned", 40),
    ("sidefx", 12),
    ("null", 8),
    ("call", 20),
    ("input", 3),
    // The next four found bugs (tests/programs/record_write_through_pointer.mc,
    // local_address_per_call.mc, input_array_copy.mc, callee_local_per_call.mc);
    // the campaigns ran with them at 8, 10, 1 and 10 until the fixes landed.
    ("recaddr", 40),
    ("localaddr", 50),
    ("inputcopy", 3),
    ("branchlocal", 30),
    ("assume", 2),
    ("ptrstore", 30),
    ("guard", 25),
    ("boxed", 30),
    ("copies", 30),
    ("polyloop", 6),
    ("lists", 30),
];

impl Knobs {
    pub(super) fn defaults() -> Knobs {
        Knobs(KNOBS.iter().copied().collect())
    }

    /// The defaults with some knobs set.
    pub(super) fn with(knobs: &[(&str, u32)]) -> Knobs {
        let mut k = Knobs::defaults();
        for (name, v) in knobs {
            let key = KNOBS.iter().map(|(n, _)| *n).find(|n| n == name);
            k.0.insert(key.expect("a knob of KNOBS"), *v);
        }
        k
    }

    /// The defaults, overridden by `SOUNDNESS_KNOBS=name=pct,…`.
    pub(super) fn from_env() -> Knobs {
        let mut k = Knobs::defaults();
        if let Ok(s) = std::env::var("SOUNDNESS_KNOBS") {
            for item in s.split(',').filter(|s| !s.trim().is_empty()) {
                let (name, v) = item
                    .split_once('=')
                    .unwrap_or_else(|| panic!("SOUNDNESS_KNOBS: `{item}` is not name=pct"));
                let key = KNOBS
                    .iter()
                    .map(|(n, _)| *n)
                    .find(|n| *n == name.trim())
                    .unwrap_or_else(|| panic!("SOUNDNESS_KNOBS: no knob `{name}`"));
                let v = v.trim().parse().expect("SOUNDNESS_KNOBS: a percentage");
                k.0.insert(key, v);
            }
        }
        k
    }

    fn get(&self, name: &str) -> u32 {
        self.0[name]
    }
}

// ---------------------------------------------------------------------------
// Helper functions: fixed signatures, generated bodies.
// ---------------------------------------------------------------------------

/// The helper functions a program may define. Their signatures are fixed
/// (so that every call is well-typed); their bodies are partly generated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum H {
    /// `add2(a, b)`: int, int → int.
    Add2,
    /// `inc(p)`: ptr(int) → int; writes `*p`.
    Inc,
    /// `ha(a, k)`: array, int → int; reads and writes `a`.
    Ha,
    /// `ta(a, k)`: array, int → array.
    Ta,
    /// `mk(k)`: int → array.
    Mk,
    /// `setr(q)`: ptr(record) → int; writes a field through `q`.
    Setr,
    /// `getf(r)`: record → int.
    Getf,
    /// `wra(q, k)`: ptr(array) → int; writes `(*q)[k]`.
    Wra,
    /// `rec(k, p)`: recursive on k (depth ≤ 5), writes `*p`.
    Rec,
    /// `rsa(a, k)`: recursive on k (depth ≤ 3) over an array.
    Rsa,
    /// `rin(k)`: recursive on k (depth ≤ 4), reads the input stream.
    Rin,
    /// `mkp(k)`: int → ptr(int): `&t` of its own local, or `alloc`.
    Mkp,
}

const HELPERS: [H; 12] = [
    H::Add2,
    H::Inc,
    H::Ha,
    H::Ta,
    H::Mk,
    H::Setr,
    H::Getf,
    H::Wra,
    H::Rec,
    H::Rsa,
    H::Rin,
    H::Mkp,
];

impl H {
    fn name(self) -> &'static str {
        match self {
            H::Add2 => "add2",
            H::Inc => "inc",
            H::Ha => "ha",
            H::Ta => "ta",
            H::Mk => "mk",
            H::Setr => "setr",
            H::Getf => "getf",
            H::Wra => "wra",
            H::Rec => "rec",
            H::Rsa => "rsa",
            H::Rin => "rin",
            H::Mkp => "mkp",
        }
    }
    fn returns_array(self) -> bool {
        matches!(self, H::Ta | H::Mk)
    }
    fn returns_int(self) -> bool {
        !self.returns_array() && self != H::Mkp
    }
    fn recursive(self) -> bool {
        matches!(self, H::Rec | H::Rsa | H::Rin)
    }
    fn allowed(self, f: &Feat) -> bool {
        match self {
            H::Add2 | H::Rin => true,
            H::Inc | H::Rec | H::Mkp => f.pointers,
            H::Ha | H::Ta | H::Mk | H::Rsa => f.arrays,
            H::Getf => f.records,
            H::Setr => f.records && f.pointers,
            H::Wra => f.arrays && f.pointers,
        }
    }
}

/// The features of one program.
#[derive(Clone, Debug, Default)]
struct Feat {
    pointers: bool,
    records: bool,
    arrays: bool,
    nested: bool,
    unassigned: bool,
}

/// What a function body may use: its variables by type, and the helpers it
/// may call.
#[derive(Clone, Debug, Default)]
struct Cx {
    /// Integer variables that may be read (some possibly unassigned).
    ints: Vec<&'static str>,
    /// Integer variables that statements assign.
    wints: Vec<&'static str>,
    /// Integer variables whose address may be taken.
    addr: Vec<&'static str>,
    /// `array(int)` variables.
    arrs: Vec<&'static str>,
    /// `array(array(int))` variables.
    mats: Vec<&'static str>,
    /// Records `{f, g}`.
    recs: Vec<&'static str>,
    /// `ptr(int)`, `ptr(ptr(int))`, `ptr(record)`, `ptr(array(int))`.
    iptrs: Vec<&'static str>,
    pptrs: Vec<&'static str>,
    rptrs: Vec<&'static str>,
    aptrs: Vec<&'static str>,
    /// Records `{v: int, h: ptr(int)}` and arrays of `ptr(int)`.
    hrecs: Vec<&'static str>,
    parrs: Vec<&'static str>,
    /// Records `{f: array(int)}`, and the array whose references the
    /// field was given.
    boxes: Vec<&'static str>,
    boxed: Option<&'static str>,
    /// An array variable `D` for copies that are written (`D = C; D[k] =
    /// e;`), then probed through the original.
    copies: bool,
    /// Whether main has the list pointers `lh` and `lp`.
    lists: bool,
    /// `main`: the input array `A` and the loop counter `i`.
    main: bool,
    /// Loops: the counter and the condition (`i < n` in main; a
    /// constant bound in helpers).
    looping: Option<(&'static str, String)>,
    calls: Vec<H>,
}

impl Cx {
    fn int_calls(&self) -> Vec<H> {
        self.calls
            .iter()
            .copied()
            .filter(|h| h.returns_int())
            .collect()
    }
    fn arr_calls(&self) -> Vec<H> {
        self.calls
            .iter()
            .copied()
            .filter(|h| h.returns_array())
            .collect()
    }
}

/// Picks one of the alternatives with positive weight.
fn weighted<T: Copy>(r: &mut Rng, alts: &[(u32, T)]) -> T {
    let total: u32 = alts.iter().map(|(w, _)| w).sum();
    let mut x = r.below(u64::from(total.max(1))) as u32;
    for &(w, t) in alts {
        if x < w {
            return t;
        }
        x -= w;
    }
    alts.iter().find(|(w, _)| *w > 0).expect("an alternative").1
}

struct Gen<'a> {
    r: &'a mut Rng,
    k: &'a Knobs,
    f: Feat,
}

#[derive(Clone, Copy)]
enum Atom {
    Lit,
    Var,
    Input,
    InputArr,
    Elem,
    Mat,
    Field,
    PField,
    Deref,
    DDeref,
    AElem,
    HField,
    PElem,
    Call,
}

#[derive(Clone, Copy)]
enum St {
    Assign,
    Input,
    IfAssert,
    IfElse,
    Loop,
    Toggle,
    ElemWrite,
    InputIndexWrite,
    ArrAssign,
    MatWrite,
    MatRow,
    PtrAssign,
    PtrWrite,
    PtrNull,
    PPtr,
    RecAssign,
    FieldWrite,
    RPtrAssign,
    PFieldWrite,
    RPtrWhole,
    APtrAssign,
    APtrWrite,
    APtrWhole,
    MaybeAssign,
    Output,
    Assume,
    HRec,
    PArr,
    BoxWrite,
    BoxRead,
    CopyProbe,
    PolyLoop,
    ListWalk,
}

impl Gen<'_> {
    fn chance(&mut self, knob: &str) -> bool {
        let p = self.k.get(knob);
        self.r.chance(p)
    }

    /// An integer variable to read: the possibly unassigned `w` and `u`
    /// less often than the others.
    fn var(&mut self, cx: &Cx) -> String {
        loop {
            let v = self.r.pick(&cx.ints);
            if !matches!(v, "w" | "u") || self.r.below(3) == 0 {
                return v.to_string();
            }
        }
    }

    fn lit(&mut self) -> String {
        self.r.int(-3, 5).to_string()
    }

    /// A small index: mostly in bounds of the programs' arrays (length 1–4).
    fn idx(&mut self, cx: &Cx, d: u32) -> String {
        match self.r.below(20) {
            0..=12 => self.r.int(0, 2).to_string(),
            13 => self.r.int(-1, 3).to_string(),
            14 | 15 => self.var(cx),
            16 | 17 if cx.main => "i".to_string(),
            18 if d > 0 && !cx.int_calls().is_empty() => self.call_int(cx, d - 1),
            _ => self.int_e(cx, d.min(1)),
        }
    }

    fn int_atom(&mut self, cx: &Cx, d: u32) -> String {
        let calls = if d > 0 && !cx.int_calls().is_empty() {
            self.k.get("call")
        } else {
            0
        };
        let has = |v: &Vec<&str>, w: u32| if v.is_empty() { 0 } else { w };
        let alts = [
            (20, Atom::Lit),
            (35, Atom::Var),
            (self.k.get("input"), Atom::Input),
            (if cx.main { 8 } else { 0 }, Atom::InputArr),
            (has(&cx.arrs, 10), Atom::Elem),
            (has(&cx.mats, 6), Atom::Mat),
            (has(&cx.recs, 6), Atom::Field),
            (has(&cx.rptrs, 6), Atom::PField),
            (has(&cx.iptrs, 8), Atom::Deref),
            (has(&cx.pptrs, 2), Atom::DDeref),
            (has(&cx.aptrs, 5), Atom::AElem),
            (has(&cx.hrecs, 5), Atom::HField),
            (has(&cx.parrs, 5), Atom::PElem),
            (calls, Atom::Call),
        ];
        let d1 = d.saturating_sub(1);
        match weighted(self.r, &alts) {
            Atom::Lit => self.lit(),
            Atom::Var => self.var(cx),
            Atom::Input => "input".to_string(),
            Atom::InputArr => match self.r.below(3) {
                0 => "A[1]".to_string(),
                _ => "A[i]".to_string(),
            },
            Atom::Elem => {
                let a = self.r.pick(&cx.arrs);
                format!("{a}[{}]", self.idx(cx, d1))
            }
            Atom::Mat => {
                let m = self.r.pick(&cx.mats);
                format!("{m}[{}][{}]", self.idx(cx, d1), self.idx(cx, d1))
            }
            Atom::Field => {
                let rv = self.r.pick(&cx.recs);
                format!("{rv}.{}", self.r.pick(&["f", "g"]))
            }
            Atom::PField => {
                let p = self.r.pick(&cx.rptrs);
                let f = self.r.pick(&["f", "g"]);
                if self.r.below(2) == 0 {
                    format!("{p}.{f}")
                } else {
                    format!("(*{p}).{f}")
                }
            }
            Atom::Deref => format!("*{}", self.r.pick(&cx.iptrs)),
            Atom::DDeref => format!("**{}", self.r.pick(&cx.pptrs)),
            Atom::HField => {
                let e = self.r.pick(&cx.hrecs);
                if self.r.below(3) == 0 {
                    format!("{e}.v")
                } else {
                    format!("*{e}.h")
                }
            }
            Atom::PElem => {
                let a = self.r.pick(&cx.parrs);
                format!("*{a}[{}]", self.idx(cx, d1))
            }
            Atom::AElem => {
                let p = self.r.pick(&cx.aptrs);
                format!("(*{p})[{}]", self.idx(cx, d1))
            }
            Atom::Call => self.call_int(cx, d1),
        }
    }

    fn int_e(&mut self, cx: &Cx, d: u32) -> String {
        if d == 0 || self.r.below(3) == 0 {
            return self.int_atom(cx, d);
        }
        if self.chance("sidefx")
            && let Some(e) = self.side_effect(cx, d)
        {
            return e;
        }
        let op = self.r.pick(&["+", "-", "*", "+", "-"]);
        if self.r.below(8) == 0 {
            return format!("({} / {})", self.int_e(cx, d - 1), self.int_e(cx, d - 1));
        }
        format!("({} {op} {})", self.int_e(cx, d - 1), self.int_e(cx, d - 1))
    }

    /// A read followed, in the same expression, by a call that may change
    /// what was read (or the index it was read at).
    fn side_effect(&mut self, cx: &Cx, d: u32) -> Option<String> {
        let has = |h: H| cx.calls.contains(&h);
        let mut alts: Vec<(u32, u8)> = Vec::new();
        if has(H::Inc) && !cx.addr.is_empty() {
            alts.push((4, 0));
        }
        if has(H::Inc) && !cx.iptrs.is_empty() {
            alts.push((2, 1));
        }
        if has(H::Wra) && !cx.arrs.is_empty() {
            alts.push((3, 2));
        }
        if has(H::Setr) && !cx.recs.is_empty() && self.chance("recaddr") {
            alts.push((2, 3));
        }
        if has(H::Rec) && !cx.addr.is_empty() {
            alts.push((2, 4));
        }
        if (has(H::Ha) || has(H::Rsa)) && !cx.arrs.is_empty() {
            alts.push((2, 5));
        }
        if has(H::Rin) {
            alts.push((1, 6));
        }
        if has(H::Setr) && !cx.rptrs.is_empty() {
            alts.push((1, 7));
        }
        if has(H::Wra) && !cx.aptrs.is_empty() {
            alts.push((1, 8));
        }
        if alts.is_empty() {
            return None;
        }
        let d1 = d - 1;
        let op = self.r.pick(&["+", "-", "*"]);
        Some(match weighted(self.r, &alts) {
            0 => {
                let v = self.r.pick(&cx.addr);
                match self.r.below(5) {
                    0 if has(H::Add2) => format!("add2({v}, inc(&{v}))"),
                    1 => format!("(10 / ({v} + inc(&{v}) - {}))", self.r.int(0, 3)),
                    2 => format!("(inc(&{v}) {op} {v})"),
                    _ => format!("({v} {op} inc(&{v}))"),
                }
            }
            1 => {
                let p = self.r.pick(&cx.iptrs);
                match self.r.below(3) {
                    0 => format!("(inc({p}) {op} *{p})"),
                    _ => format!("(*{p} {op} inc({p}))"),
                }
            }
            2 => {
                let a = self.r.pick(&cx.arrs);
                let (i, j) = (self.idx(cx, 0), self.idx(cx, 0));
                match self.r.below(4) {
                    0 => format!("{a}[wra(&{a}, {i})]"),
                    1 => format!("(wra(&{a}, {i}) {op} {a}[{j}])"),
                    _ => format!("({a}[{j}] {op} wra(&{a}, {i}))"),
                }
            }
            3 => {
                let rv = self.r.pick(&cx.recs);
                let f = self.r.pick(&["f", "g"]);
                match self.r.below(3) {
                    0 => format!("(setr(&{rv}) {op} {rv}.{f})"),
                    _ => format!("({rv}.{f} {op} setr(&{rv}))"),
                }
            }
            4 => {
                let v = self.r.pick(&cx.addr);
                let k = self.idx(cx, 0);
                format!("({v} {op} rec({k}, &{v}))")
            }
            5 => {
                let a = self.r.pick(&cx.arrs);
                let h = if has(H::Ha) && (!has(H::Rsa) || self.r.below(2) == 0) {
                    "ha"
                } else {
                    "rsa"
                };
                let (i, j) = (self.idx(cx, 0), self.idx(cx, 0));
                match self.r.below(3) {
                    0 => format!("{a}[{h}({a}, {i})]"),
                    _ => format!("({a}[{j}] {op} {h}({a}, {i}))"),
                }
            }
            6 => {
                let k = self.idx(cx, d1);
                format!("(input - rin({k}))")
            }
            7 => {
                let p = self.r.pick(&cx.rptrs);
                let f = self.r.pick(&["f", "g"]);
                format!("({p}.{f} {op} setr({p}))")
            }
            _ => {
                let p = self.r.pick(&cx.aptrs);
                let (i, j) = (self.idx(cx, 0), self.idx(cx, 0));
                format!("((*{p})[{j}] {op} wra({p}, {i}))")
            }
        })
    }

    /// A call of an int-returning helper of `cx`.
    fn call_int(&mut self, cx: &Cx, d: u32) -> String {
        let hs = cx.int_calls();
        let h = hs[self.r.below(hs.len() as u64) as usize];
        let name = h.name();
        match h {
            H::Add2 => format!("{name}({}, {})", self.int_e(cx, d), self.int_e(cx, d)),
            H::Inc => format!("{name}({})", self.iptr_arg(cx, d)),
            H::Ha | H::Rsa => format!("{name}({}, {})", self.arr_e(cx, d), self.idx(cx, d)),
            H::Setr => format!("{name}({})", self.rptr_e(cx, d)),
            H::Getf => format!("{name}({})", self.rec_e(cx, d)),
            H::Wra => format!("{name}({}, {})", self.aptr_e(cx, d), self.idx(cx, d)),
            H::Rec => format!("{name}({}, {})", self.idx(cx, d), self.iptr_arg(cx, d)),
            H::Rin => format!("{name}({})", self.idx(cx, d)),
            H::Ta | H::Mk | H::Mkp => unreachable!("not an int helper"),
        }
    }

    /// A `ptr(int)` expression: `&v`, a pointer variable, `alloc e`, `null`.
    fn iptr_arg(&mut self, cx: &Cx, d: u32) -> String {
        if self.chance("null") {
            return "null".to_string();
        }
        if d > 0 && cx.calls.contains(&H::Mkp) && self.r.below(3) == 0 {
            return format!("mkp({})", self.idx(cx, d - 1));
        }
        match self.r.below(8) {
            0..=2 if !cx.addr.is_empty() => format!("&{}", self.r.pick(&cx.addr)),
            3 | 4 if !cx.iptrs.is_empty() => self.r.pick(&cx.iptrs).to_string(),
            5 if !cx.pptrs.is_empty() => format!("*{}", self.r.pick(&cx.pptrs)),
            6 if !cx.hrecs.is_empty() => format!("{}.h", self.r.pick(&cx.hrecs)),
            7 if !cx.parrs.is_empty() => {
                let a = self.r.pick(&cx.parrs);
                format!("{a}[{}]", self.idx(cx, 0))
            }
            _ => format!("(alloc {})", self.int_e(cx, d.min(1))),
        }
    }

    fn rptr_e(&mut self, cx: &Cx, d: u32) -> String {
        if self.chance("null") {
            return "null".to_string();
        }
        if !cx.recs.is_empty() && self.chance("recaddr") {
            return format!("&{}", self.r.pick(&cx.recs));
        }
        match self.r.below(3) {
            0 | 1 if !cx.rptrs.is_empty() => self.r.pick(&cx.rptrs).to_string(),
            _ => format!("(alloc {})", self.rec_lit(cx, d.min(1))),
        }
    }

    fn aptr_e(&mut self, cx: &Cx, d: u32) -> String {
        if self.chance("null") {
            return "null".to_string();
        }
        match self.r.below(5) {
            0 | 1 if !cx.arrs.is_empty() => format!("&{}", self.r.pick(&cx.arrs)),
            2 | 3 if !cx.aptrs.is_empty() => self.r.pick(&cx.aptrs).to_string(),
            _ => format!("(alloc {})", self.arr_lit(cx, d.min(1))),
        }
    }

    fn rec_lit(&mut self, cx: &Cx, d: u32) -> String {
        let (a, b) = (self.int_e(cx, d), self.int_e(cx, d));
        if self.r.below(4) == 0 {
            format!("{{g: {b}, f: {a}}}")
        } else {
            format!("{{f: {a}, g: {b}}}")
        }
    }

    fn rec_e(&mut self, cx: &Cx, d: u32) -> String {
        match self.r.below(5) {
            0 | 1 if !cx.recs.is_empty() => self.r.pick(&cx.recs).to_string(),
            2 if !cx.rptrs.is_empty() => format!("*{}", self.r.pick(&cx.rptrs)),
            _ => self.rec_lit(cx, d.min(1)),
        }
    }

    fn arr_lit(&mut self, cx: &Cx, d: u32) -> String {
        let len = if self.r.below(4) == 0 {
            self.r.int(1, 4)
        } else {
            3
        };
        let xs: Vec<String> = (0..len).map(|_| self.int_e(cx, d)).collect();
        format!("[{}]", xs.join(", "))
    }

    /// An `array(int)` expression.
    fn arr_e(&mut self, cx: &Cx, d: u32) -> String {
        let calls = cx.arr_calls();
        if cx.main && self.chance("inputcopy") {
            // A copy of the input array: unbounded, like the input.
            return "A".to_string();
        }
        match self.r.below(10) {
            0..=3 if !cx.arrs.is_empty() => self.r.pick(&cx.arrs).to_string(),
            4 if !cx.mats.is_empty() => {
                format!("{}[{}]", self.r.pick(&cx.mats), self.idx(cx, 0))
            }
            5 if !cx.aptrs.is_empty() => format!("*{}", self.r.pick(&cx.aptrs)),
            6 | 7 if d > 0 && !calls.is_empty() => {
                let h = calls[self.r.below(calls.len() as u64) as usize];
                match h {
                    H::Mk => format!("mk({})", self.int_e(cx, d - 1)),
                    _ => format!("ta({}, {})", self.arr_e(cx, d - 1), self.idx(cx, d - 1)),
                }
            }
            _ => self.arr_lit(cx, d.min(1)),
        }
    }

    fn cond(&mut self, cx: &Cx) -> String {
        let op = self.r.pick(&["<", "<=", "==", "!=", ">", ">="]);
        let c = match self.r.below(12) {
            0 if !cx.iptrs.is_empty() => {
                let p = self.r.pick(&cx.iptrs);
                if self.r.below(2) == 0 {
                    format!("{p} != null && *{p} {op} {}", self.int_e(cx, 1))
                } else {
                    format!("{p} == {}", self.iptr_arg(cx, 0))
                }
            }
            1 if !cx.rptrs.is_empty() => {
                let p = self.r.pick(&cx.rptrs);
                format!("{p} != null && {p}.f {op} {}", self.int_e(cx, 1))
            }
            _ => format!("{} {op} {}", self.int_e(cx, 1), self.int_e(cx, 1)),
        };
        if self.r.below(4) == 0 {
            format!("({c}) && {} > 0", self.var(cx))
        } else {
            c
        }
    }

    fn stmts(&mut self, cx: &Cx, depth: u32, in_loop: bool, out: &mut String, indent: usize) {
        for _ in 0..self.r.int(1, 4) {
            self.stmt(cx, depth, in_loop, out, indent);
        }
    }

    fn stmt(&mut self, cx: &Cx, depth: u32, in_loop: bool, out: &mut String, indent: usize) {
        if cx.main && self.chance("guard") {
            // Runs with different inputs take different statements, and
            // get past the ones that fail on every input.
            let pad = "  ".repeat(indent);
            let (j, c) = (self.r.int(0, 5), self.r.int(-1, 3));
            let op = self.r.pick(&["<", "==", ">"]);
            let _ = writeln!(out, "{pad}if (A[{j}] {op} {c}) {{");
            self.stmt(cx, depth, in_loop, out, indent + 1);
            let _ = writeln!(out, "{pad}}}");
            return;
        }
        let pad = "  ".repeat(indent);
        let has = |v: &Vec<&str>, w: u32| if v.is_empty() { 0 } else { w };
        let deep = |w: u32| if depth > 0 { w } else { 0 };
        let null = self.k.get("null");
        let alts = [
            (if cx.wints.is_empty() { 0 } else { 30 }, St::Assign),
            (has(&cx.wints, 8), St::Input),
            (15, St::IfAssert),
            (deep(15), St::IfElse),
            (
                if cx.looping.is_some() && !in_loop {
                    deep(10)
                } else {
                    0
                },
                St::Loop,
            ),
            (self.k.get("assume"), St::Assume),
            (
                if cx.main && !in_loop && depth > 0 {
                    self.k.get("polyloop")
                } else {
                    0
                },
                St::PolyLoop,
            ),
            (
                if cx.lists && !in_loop && depth > 0 {
                    8
                } else {
                    0
                },
                St::ListWalk,
            ),
            (has(&cx.wints, 3), St::Toggle),
            (has(&cx.arrs, 10), St::ElemWrite),
            (
                if cx.main && !cx.arrs.is_empty() { 3 } else { 0 },
                St::InputIndexWrite,
            ),
            (has(&cx.arrs, 5), St::ArrAssign),
            (has(&cx.mats, 4), St::MatWrite),
            (has(&cx.mats, 3), St::MatRow),
            (has(&cx.iptrs, 5), St::PtrAssign),
            (has(&cx.iptrs, 6), St::PtrWrite),
            (
                if cx.iptrs.is_empty() && cx.rptrs.is_empty() && cx.aptrs.is_empty() {
                    0
                } else {
                    null.div_ceil(2)
                },
                St::PtrNull,
            ),
            (has(&cx.pptrs, 2), St::PPtr),
            (has(&cx.hrecs, 6), St::HRec),
            (has(&cx.parrs, 6), St::PArr),
            (has(&cx.boxes, 6), St::BoxWrite),
            (
                if cx.copies && !cx.arrs.is_empty() {
                    6
                } else {
                    0
                },
                St::CopyProbe,
            ),
            (
                if cx.wints.is_empty() {
                    0
                } else {
                    has(&cx.boxes, 4)
                },
                St::BoxRead,
            ),
            (has(&cx.recs, 5), St::RecAssign),
            (has(&cx.recs, 5), St::FieldWrite),
            (has(&cx.rptrs, 3), St::RPtrAssign),
            (has(&cx.rptrs, 5), St::PFieldWrite),
            (has(&cx.rptrs, 2), St::RPtrWhole),
            (has(&cx.aptrs, 3), St::APtrAssign),
            (has(&cx.aptrs, 5), St::APtrWrite),
            (has(&cx.aptrs, 2), St::APtrWhole),
            (if self.f.unassigned { deep(5) } else { 0 }, St::MaybeAssign),
            (2, St::Output),
        ];
        let line = match weighted(self.r, &alts) {
            St::Assign => {
                let v = self.r.pick(&cx.wints);
                format!("{v} = {};", self.int_e(cx, 2))
            }
            St::Input => format!("{} = input;", self.r.pick(&cx.wints)),
            St::BoxWrite => {
                let b = self.r.pick(&cx.boxes);
                let (k, e) = (self.r.int(0, 2), self.int_e(cx, 1));
                match cx.boxed {
                    // A probe through the array the field shares.
                    Some(a) if self.r.below(2) == 0 => {
                        let lit = self.r.int(-1, 3);
                        format!("{b}.f[{k}] = {e}; assert({a}[{k}] != {lit});")
                    }
                    _ => format!("{b}.f[{}] = {e};", self.idx(cx, 1)),
                }
            }
            St::CopyProbe => {
                // Written through the copy, probed through the original.
                let a = self.r.pick(&cx.arrs);
                let (k, e, lit) = (self.r.int(0, 2), self.int_e(cx, 1), self.r.int(-1, 3));
                format!("D = {a}; D[{k}] = {e}; assert({a}[{k}] != {lit});")
            }
            St::BoxRead => {
                let (v, b) = (self.r.pick(&cx.wints), self.r.pick(&cx.boxes));
                format!("{v} = {b}.f[{}];", self.idx(cx, 1))
            }
            St::IfAssert => format!("if ({}) {{ assert({}); }}", self.cond(cx), self.cond(cx)),
            St::IfElse => {
                let _ = writeln!(out, "{pad}if ({}) {{", self.cond(cx));
                self.stmts(cx, depth - 1, in_loop, out, indent + 1);
                let _ = writeln!(out, "{pad}}} else {{");
                self.stmts(cx, depth - 1, in_loop, out, indent + 1);
                let _ = writeln!(out, "{pad}}}");
                return;
            }
            St::Loop => {
                // A loop over i, bounded by the input n (which the
                // witness keeps small); in helpers over j, bounded by 3.
                let (i, c) = cx.looping.clone().expect("a loop counter");
                let _ = writeln!(out, "{pad}{i} = 0;");
                let _ = writeln!(out, "{pad}while ({c}) {{");
                self.stmts(cx, depth - 1, true, out, indent + 1);
                let _ = writeln!(out, "{pad}  {i} = {i} + 1;");
                let _ = writeln!(out, "{pad}}}");
                return;
            }
            St::Toggle => {
                // Overwrites chosen by the variable's own value (Table 1
                // chains whose writers' guards read the chain).
                let v = self.r.pick(&cx.wints);
                let (a, b, c) = (self.r.int(-1, 3), self.r.int(-1, 3), self.r.int(-1, 3));
                format!("if ({v} == {a}) {{ {v} = {b}; }} else {{ {v} = {c}; }}")
            }
            St::ElemWrite => {
                let a = self.r.pick(&cx.arrs);
                let e = self.int_e(cx, 1);
                format!("{a}[{}] = {e};", self.idx(cx, 1))
            }
            St::InputIndexWrite => {
                // Indices from the input: writes at data-dependent cells.
                let a = self.r.pick(&cx.arrs);
                let i = self.r.pick(&["0", "1", "x", "y", "i", "A[i]", "A[i + 1]"]);
                format!("{a}[{i}] = {};", self.int_e(cx, 1))
            }
            St::ArrAssign => {
                let a = self.r.pick(&cx.arrs);
                format!("{a} = {};", self.arr_e(cx, 1))
            }
            St::MatWrite => {
                let m = self.r.pick(&cx.mats);
                let e = self.int_e(cx, 1);
                format!("{m}[{}][{}] = {e};", self.idx(cx, 0), self.idx(cx, 0))
            }
            St::MatRow => {
                let m = self.r.pick(&cx.mats);
                if !cx.arrs.is_empty() && self.r.below(2) == 0 {
                    let a = self.r.pick(&cx.arrs);
                    format!("{a} = {m}[{}];", self.idx(cx, 0))
                } else {
                    let e = self.arr_e(cx, 1);
                    format!("{m}[{}] = {e};", self.idx(cx, 0))
                }
            }
            St::PtrAssign => {
                let p = self.r.pick(&cx.iptrs);
                format!("{p} = {};", self.iptr_arg(cx, 1))
            }
            St::PtrWrite => {
                let p = self.r.pick(&cx.iptrs);
                format!("*{p} = {};", self.int_e(cx, 1))
            }
            St::PtrNull => {
                let mut ps: Vec<&str> = Vec::new();
                ps.extend(&cx.iptrs);
                ps.extend(&cx.rptrs);
                ps.extend(&cx.aptrs);
                let p = self.r.pick(&ps);
                format!("if ({}) {{ {p} = null; }}", self.cond(cx))
            }
            St::PPtr => {
                let pp = self.r.pick(&cx.pptrs);
                match self.r.below(3) {
                    0 => format!("**{pp} = {};", self.int_e(cx, 1)),
                    1 if !cx.addr.is_empty() => format!("*{pp} = &{};", self.r.pick(&cx.addr)),
                    _ => format!("{pp} = &{};", self.r.pick(&cx.iptrs)),
                }
            }
            St::HRec => {
                let e = self.r.pick(&cx.hrecs);
                match self.r.below(4) {
                    0 => format!("{e}.h = {};", self.iptr_arg(cx, 1)),
                    1 => {
                        let (v, h) = (self.int_e(cx, 1), self.iptr_arg(cx, 1));
                        format!("{e} = {{v: {v}, h: {h}}};")
                    }
                    2 => format!("{e}.v = {};", self.int_e(cx, 1)),
                    _ => format!("*{e}.h = {};", self.int_e(cx, 1)),
                }
            }
            St::PArr => {
                let a = self.r.pick(&cx.parrs);
                match self.r.below(4) {
                    0 => {
                        let i = self.idx(cx, 0);
                        format!("{a}[{i}] = {};", self.iptr_arg(cx, 1))
                    }
                    1 => {
                        let (p, q) = (self.iptr_arg(cx, 1), self.iptr_arg(cx, 1));
                        format!("{a} = [{p}, {q}];")
                    }
                    _ => {
                        let i = self.idx(cx, 0);
                        format!("*{a}[{i}] = {};", self.int_e(cx, 1))
                    }
                }
            }
            St::RecAssign => {
                let rv = self.r.pick(&cx.recs);
                format!("{rv} = {};", self.rec_e(cx, 1))
            }
            St::FieldWrite => {
                let rv = self.r.pick(&cx.recs);
                let f = self.r.pick(&["f", "g"]);
                format!("{rv}.{f} = {};", self.int_e(cx, 1))
            }
            St::RPtrAssign => {
                let p = self.r.pick(&cx.rptrs);
                format!("{p} = {};", self.rptr_e(cx, 1))
            }
            St::PFieldWrite => {
                let p = self.r.pick(&cx.rptrs);
                let f = self.r.pick(&["f", "g"]);
                let e = self.int_e(cx, 1);
                if self.r.below(2) == 0 {
                    format!("{p}.{f} = {e};")
                } else {
                    format!("(*{p}).{f} = {e};")
                }
            }
            St::RPtrWhole => {
                let p = self.r.pick(&cx.rptrs);
                if !cx.recs.is_empty() && self.r.below(2) == 0 {
                    format!("{} = *{p};", self.r.pick(&cx.recs))
                } else {
                    format!("*{p} = {};", self.rec_e(cx, 1))
                }
            }
            St::APtrAssign => {
                let p = self.r.pick(&cx.aptrs);
                format!("{p} = {};", self.aptr_e(cx, 1))
            }
            St::APtrWrite => {
                let p = self.r.pick(&cx.aptrs);
                let e = self.int_e(cx, 1);
                format!("(*{p})[{}] = {e};", self.idx(cx, 1))
            }
            St::APtrWhole => {
                let p = self.r.pick(&cx.aptrs);
                if !cx.arrs.is_empty() && self.r.below(2) == 0 {
                    format!("{} = *{p};", self.r.pick(&cx.arrs))
                } else {
                    format!("*{p} = {};", self.arr_e(cx, 1))
                }
            }
            St::MaybeAssign => {
                // A variable (or cell) assigned on one branch only.
                let mut alts: Vec<String> = Vec::new();
                if let Some(v) = cx.wints.iter().find(|v| **v == "w") {
                    alts.push(format!("{v} = {};", self.int_e(cx, 1)));
                    if !cx.iptrs.is_empty() {
                        alts.push(format!("{} = &{v};", self.r.pick(&cx.iptrs)));
                    }
                }
                if cx.arrs.contains(&"C") {
                    alts.push(format!("C = {};", self.arr_e(cx, 1)));
                }
                if cx.recs.contains(&"s") {
                    alts.push(format!("s = {};", self.rec_e(cx, 1)));
                }
                if alts.is_empty() {
                    alts.push(format!("{} = {};", self.r.pick(&cx.wints), self.lit()));
                }
                let a = alts[self.r.below(alts.len() as u64) as usize].clone();
                format!("if ({}) {{ {a} }}", self.cond(cx))
            }
            St::Output => format!("output {};", self.int_e(cx, 1)),
            St::Assume => format!("assume({});", self.cond(cx)),
            St::PolyLoop => {
                self.poly_loop(&pad, out);
                return;
            }
            St::ListWalk => {
                self.list_walk(cx, &pad, out);
                return;
            }
        };
        let _ = writeln!(out, "{pad}{line}");
    }

    /// A loop that sums a polynomial in its counter, and an assert of the
    /// sum's closed form, true or off by a little (a nonlinear invariant
    /// proves the first; every run that gets there hits the second).
    fn poly_loop(&mut self, pad: &str, out: &mut String) {
        if self.r.chance(50) {
            return self.euclid_loop(pad, out);
        }
        let v = self.r.pick(&["x", "y", "z"]);
        let (a, b, c, c0) = (
            self.r.int(0, 2),
            self.r.int(-2, 3),
            self.r.int(-1, 2),
            self.r.int(-2, 2),
        );
        let off = if self.r.chance(60) {
            0
        } else {
            self.r.int(1, 2)
        };
        let _ = writeln!(out, "{pad}{v} = {c0};");
        let step = format!("{v} = {v} + {a} * i * i + {b} * i + {c};");
        counted_loop(out, pad, &step);
        // 6·Σ_{k<i} (a·k² + b·k + c) = a·(i−1)·i·(2i−1) + 3b·i·(i−1) + 6c·i
        let _ = writeln!(
            out,
            "{pad}assert(6 * {v} == {} + {a} * (i - 1) * i * (2 * i - 1) + {} * i * (i - 1) + {} * i);",
            6 * (c0 + off),
            3 * b,
            6 * c
        );
    }

    /// Euclid's loop by subtraction from `i` (main's `n`, clamped to
    /// 1..40) and a constant, then an assert that the gcd divides one of
    /// them: true, or off by 1–2 (docs/horn-clauses.md, "Bézout ghosts").
    fn euclid_loop(&mut self, pad: &str, out: &mut String) {
        let pair = self.r.pick(&["x y", "y z", "z x"]);
        let (p, q) = pair.split_once(' ').expect("two names");
        let c = self.r.int(1, 12);
        let off = if self.r.chance(60) {
            0
        } else {
            self.r.int(1, 2)
        };
        let _ = writeln!(out, "{pad}i = n;");
        let _ = writeln!(out, "{pad}if (i < 1) {{ i = 1; }}");
        let _ = writeln!(out, "{pad}if (i > 40) {{ i = 40; }}");
        let _ = writeln!(out, "{pad}{p} = i;");
        let _ = writeln!(out, "{pad}{q} = {c};");
        let _ = writeln!(out, "{pad}while ({p} != {q}) {{");
        let _ = writeln!(
            out,
            "{pad}  if ({p} > {q}) {{ {p} = {p} - {q}; }} else {{ {q} = {q} - {p}; }}"
        );
        let _ = writeln!(out, "{pad}}}");
        let _ = match self.r.chance(50) {
            true => writeln!(out, "{pad}assert(i / {p} * {p} == i + {off});"),
            false => writeln!(out, "{pad}assert({c} / {q} * {q} == {c} + {off});"),
        };
    }

    /// A list of `n` cells built by `alloc`, then walked: summed, and
    /// sometimes with a dereference past its end or before its first cell
    /// (null dereferences that only some lengths reach).
    fn list_walk(&mut self, cx: &Cx, pad: &str, out: &mut String) {
        let v = self.r.pick(&["x", "y", "z"]);
        let e = self.int_e(cx, 1);
        let _ = writeln!(out, "{pad}lh = null;");
        counted_loop(out, pad, &format!("lh = alloc({{val: {e}, next: lh}});"));
        let _ = writeln!(out, "{pad}lp = lh;");
        let _ = writeln!(out, "{pad}while (lp != null) {{");
        let _ = writeln!(out, "{pad}  {v} = {v} + (*lp).val;");
        let _ = writeln!(out, "{pad}  lp = (*lp).next;");
        match self.r.below(4) {
            // Past the end: the last cell's `next` is null.
            0 => {
                let _ = writeln!(out, "{pad}  {v} = {v} + (*lp).val;");
            }
            // The second cell of a list that may have one.
            1 => {
                let _ = writeln!(out, "{pad}  if (lp != null) {{ {v} = (*(*lp).next).val; }}");
            }
            _ => {}
        }
        let _ = writeln!(out, "{pad}}}");
    }

    /// The definition of helper `h`, which may call the helpers `callable`.
    fn helper(&mut self, h: H, callable: &[H]) -> String {
        let mut cx = Cx {
            ints: vec!["t", "u"],
            wints: vec!["t", "u"],
            addr: if self.f.pointers {
                vec!["t", "u"]
            } else {
                vec![]
            },
            calls: callable.to_vec(),
            ..Cx::default()
        };
        let params = match h {
            H::Add2 => {
                cx.ints.extend(["a", "b"]);
                cx.wints.extend(["a", "b"]);
                "a, b"
            }
            H::Inc => {
                cx.iptrs.push("p");
                "p"
            }
            H::Ha | H::Ta | H::Rsa => {
                cx.arrs.push("a");
                cx.ints.push("k");
                "a, k"
            }
            H::Mk | H::Rin | H::Mkp => {
                cx.ints.push("k");
                "k"
            }
            H::Setr => {
                cx.rptrs.push("q");
                "q"
            }
            H::Getf => {
                cx.recs.push("r");
                "r"
            }
            H::Wra => {
                cx.aptrs.push("q");
                cx.ints.push("k");
                "q, k"
            }
            H::Rec => {
                cx.iptrs.push("p");
                cx.ints.push("k");
                "k, p"
            }
        };
        let name = h.name();
        let mut body = String::new();
        // t is often assigned first; u only sometimes (reads of u may be
        // `uninitialized` targets inside the callee).
        if self.r.below(8) != 0 {
            let _ = writeln!(body, "  t = {};", self.lit());
        }
        if self.chance("branchlocal") {
            // Assigned on one branch only: each call starts it unassigned.
            let c = self.cond(&cx);
            let _ = writeln!(body, "  if ({c}) {{ u = {}; }}", self.int_e(&cx, 1));
        } else if self.r.below(3) != 0 {
            let _ = writeln!(body, "  u = {};", self.int_e(&cx, 1));
        }
        let bound = if cx.ints.contains(&"k") && self.r.below(2) == 0 {
            "j < k && j < 3"
        } else {
            "j < 3"
        };
        cx.looping = Some(("j", bound.to_string()));
        let extras = |g: &mut Gen, body: &mut String| {
            if g.r.below(2) == 0 {
                g.stmts(&cx, 1, false, body, 1);
            }
        };
        let core = |g: &mut Gen, body: &mut String| {
            let e = g.int_e(&cx, 1);
            let line = match h {
                H::Add2 => match g.r.below(3) {
                    0 => format!("t = a / b + {e};"),
                    _ => format!("t = a - b + {e};"),
                },
                H::Inc => match g.r.below(4) {
                    0 => format!("if (*p > {}) {{ *p = {e}; }}", g.lit()),
                    1 => "*p = input;".to_string(),
                    _ => format!("*p = *p + {};", g.r.int(1, 3)),
                },
                H::Ha => match g.r.below(3) {
                    0 => format!("a[k] = {e};"),
                    1 => format!("t = a[k] + {e};"),
                    _ => format!("a[0] = a[k] + 1; t = a[0] - {e};"),
                },
                H::Ta => match g.r.below(2) {
                    0 => format!("a[k] = {e};"),
                    _ => format!("a[0] = a[k] * {e};"),
                },
                H::Mk | H::Mkp => format!("t = k + {e};"),
                H::Setr => match g.r.below(3) {
                    0 => format!("q.f = {e};"),
                    1 => format!("(*q).g = q.f + {e};"),
                    _ => format!("(*q).f = (*q).g - {e};"),
                },
                H::Getf => match g.r.below(3) {
                    0 => format!("t = r.f / r.g + {e};"),
                    1 => format!("r.f = r.g + {e}; t = r.f;"),
                    _ => format!("t = r.f - r.g * {e};"),
                },
                H::Wra => match g.r.below(3) {
                    0 => format!("(*q)[k] = {e};"),
                    1 => format!("(*q)[k] = (*q)[0] + {e};"),
                    _ => format!("t = (*q)[k]; (*q)[0] = {e};"),
                },
                H::Rec => {
                    let base = match g.r.below(3) {
                        0 => "t = *p;".to_string(),
                        1 => format!("t = {e};"),
                        _ => format!("t = 10 / (*p + {});", g.r.int(-2, 2)),
                    };
                    let step = match g.r.below(3) {
                        0 => "*p = *p + k; t = rec(k - 1, p) + k;".to_string(),
                        1 => "t = *p + rec(k - 1, p);".to_string(),
                        _ => format!("*p = k; t = rec(k - 1, p) - *p; assert(t != {});", g.lit()),
                    };
                    format!("if (k <= 0 || k > 5) {{ {base} }} else {{ {step} }}")
                }
                H::Rsa => {
                    let step = match g.r.below(3) {
                        0 => "a[k - 1] = a[k] + 1; t = rsa(a, k - 1) + a[k];".to_string(),
                        1 => "t = a[k] + rsa(a, k - 1);".to_string(),
                        _ => "t = rsa(a, k - 1); a[k] = t;".to_string(),
                    };
                    format!("if (k <= 0 || k > 3) {{ t = a[0]; }} else {{ {step} }}")
                }
                H::Rin => {
                    let step = match g.r.below(3) {
                        0 => "t = rin(k - 1) + input;".to_string(),
                        1 => "t = input; t = t - rin(k - 1);".to_string(),
                        _ => format!(
                            "t = input; if (t == {}) {{ assert(k != 2); }} t = rin(k - 1) * t;",
                            g.lit()
                        ),
                    };
                    format!("if (k <= 0 || k > 4) {{ t = input; }} else {{ {step} }}")
                }
            };
            let _ = writeln!(body, "  {line}");
        };
        if self.r.below(2) == 0 {
            extras(self, &mut body);
            core(self, &mut body);
        } else {
            core(self, &mut body);
            extras(self, &mut body);
        }
        let ret = match h {
            H::Ta => {
                if self.r.below(3) == 0 {
                    format!("[a[0], {}]", self.int_e(&cx, 1))
                } else {
                    "a".to_string()
                }
            }
            H::Mk => match self.r.below(3) {
                0 => format!("[k, {}]", self.int_e(&cx, 1)),
                1 => format!("[t, k, {}]", self.int_e(&cx, 1)),
                _ => "[k]".to_string(),
            },
            H::Inc if self.r.below(2) == 0 => "*p".to_string(),
            H::Mkp if self.chance("localaddr") => {
                // A pointer to the callee's own local: a new cell per call.
                format!("&{}", self.r.pick(&["t", "t", "u"]))
            }
            H::Mkp => format!("(alloc {})", self.int_e(&cx, 1)),
            H::Rec | H::Rsa | H::Rin => "t".to_string(),
            _ => self.int_e(&cx, 1),
        };
        format!("{name}({params}) {{\n  var t, u, j;\n{body}  return {ret};\n}}\n\n")
    }

    fn program(&mut self) -> String {
        self.f = Feat {
            pointers: self.chance("pointers"),
            records: self.chance("records"),
            arrays: self.chance("arrays"),
            nested: self.chance("nested"),
            unassigned: self.chance("unassigned"),
        };
        // Helpers: a few, in an order; each may call those before it.
        let mut helpers: Vec<H> = Vec::new();
        if self.chance("calls") {
            let mut pool: Vec<H> = HELPERS
                .iter()
                .copied()
                .filter(|h| h.allowed(&self.f) && !h.recursive())
                .collect();
            let want = self.r.int(1, 4) as usize;
            while helpers.len() < want && !pool.is_empty() {
                let h = pool.remove(self.r.below(pool.len() as u64) as usize);
                helpers.push(h);
            }
            if self.chance("recursion") {
                let rec: Vec<H> = HELPERS
                    .iter()
                    .copied()
                    .filter(|h| h.allowed(&self.f) && h.recursive())
                    .collect();
                let h = rec[self.r.below(rec.len() as u64) as usize];
                let at = self.r.below(helpers.len() as u64 + 1) as usize;
                helpers.insert(at, h);
            }
        }
        let mut text = String::new();
        for (k, &h) in helpers.iter().enumerate() {
            let def = self.helper(h, &helpers[..k]);
            text.push_str(&def);
        }

        // main's variables, by feature.
        let f = self.f.clone();
        let mut cx = Cx {
            ints: vec!["x", "y", "z", "i", "n"],
            wints: vec!["x", "y", "z"],
            arrs: vec!["B"],
            main: true,
            looping: Some(("i", "i < n".to_string())),
            calls: helpers.clone(),
            ..Cx::default()
        };
        let mut vars = vec!["x", "y", "z", "i", "B"];
        let mut init = String::new();
        // The initialisations read only what is assigned before them.
        let mut ready = Cx {
            ints: vec!["i", "n"],
            arrs: vec!["B"],
            main: true,
            ..Cx::default()
        };
        for v in ["x", "y", "z"] {
            // Unassigned only sometimes, and mostly when `w` is not there.
            if self.r.below(if f.unassigned { 24 } else { 8 }) != 0 {
                let _ = writeln!(init, "  {v} = {};", self.r.int(-2, 3));
                ready.ints.push(v);
            }
        }
        if f.unassigned {
            vars.push("w");
            cx.ints.push("w");
            cx.wints.push("w");
        }
        if f.pointers {
            cx.addr = cx.wints.clone();
            ready.addr = cx.wints.clone();
            vars.extend(["p", "q"]);
            cx.iptrs.extend(["p", "q"]);
            for p in ["p", "q"] {
                if self.r.below(10) != 0 {
                    let e = self.iptr_arg(&ready, 0);
                    let _ = writeln!(init, "  {p} = {e};");
                    ready.iptrs.push(p);
                }
            }
            if self.r.below(4) == 0 {
                vars.push("pp");
                cx.pptrs.push("pp");
                let _ = writeln!(init, "  pp = &p;");
            }
            if self.chance("ptrstore") {
                // Pointers stored in a record field and in an array.
                vars.extend(["hr", "P"]);
                cx.hrecs.push("hr");
                cx.parrs.push("P");
                let (v, h) = (self.int_e(&ready, 0), self.iptr_arg(&ready, 0));
                let _ = writeln!(init, "  hr = {{v: {v}, h: {h}}};");
                let (a, b) = (self.iptr_arg(&ready, 0), self.iptr_arg(&ready, 0));
                let _ = writeln!(init, "  P = [{a}, {b}];");
            }
        }
        if f.arrays {
            vars.push("C");
            cx.arrs.push("C");
            if !f.unassigned || self.r.below(4) != 0 {
                let e = self.arr_lit(&ready, 0);
                let _ = writeln!(init, "  C = {e};");
                ready.arrs.push("C");
            }
            if f.pointers {
                vars.push("pa");
                cx.aptrs.push("pa");
                // &C of a C that may be unassigned: writes through pa fail.
                let e = self.aptr_e(
                    &Cx {
                        arrs: vec!["B", "C"],
                        ..ready.clone()
                    },
                    0,
                );
                let _ = writeln!(init, "  pa = {e};");
            }
            if self.chance("boxed") {
                // The field holds C's (or B's) references: writes through
                // bx.f are writes into the array.
                vars.push("bx");
                cx.boxes.push("bx");
                let a = self.r.pick(&ready.arrs);
                cx.boxed = Some(a);
                let _ = writeln!(init, "  bx = {{f: {a}}};");
            }
            if self.chance("copies") {
                vars.push("D");
                cx.copies = true;
            }
        }
        if f.nested {
            vars.push("M");
            cx.mats.push("M");
            let (a, b) = (self.arr_lit(&ready, 0), self.arr_lit(&ready, 0));
            let _ = writeln!(init, "  M = [{a}, {b}];");
        }
        if f.records {
            vars.extend(["r", "s"]);
            cx.recs.extend(["r", "s"]);
            let e = self.rec_lit(&ready, 0);
            let _ = writeln!(init, "  r = {e};");
            ready.recs.push("r");
            if !f.unassigned || self.r.below(4) != 0 {
                let _ = writeln!(init, "  s = r;");
            }
            if f.pointers && self.chance("lists") {
                vars.extend(["lh", "lp"]);
                cx.lists = true;
            }
            if f.pointers {
                vars.push("pr");
                cx.rptrs.push("pr");
                let e = self.rptr_e(
                    &Cx {
                        recs: vec!["r", "s"],
                        ..ready.clone()
                    },
                    0,
                );
                let _ = writeln!(init, "  pr = {e};");
            }
        }
        let mut body = String::new();
        for _ in 0..self.r.int(1, 2) {
            self.stmts(&cx, 2, false, &mut body, 1);
        }
        let _ = write!(
            text,
            "main(n, A) {{\n  var {};\n  i = 0;\n  B = [1, 2, 3];\n{init}{body}  assert(x != 99);\n  return 0;\n}}\n",
            vars.join(", ")
        );
        text
    }
}

/// `i = 0; while (i < n) { step i = i + 1; }` at indentation `pad`.
fn counted_loop(out: &mut String, pad: &str, step: &str) {
    let _ = writeln!(out, "{pad}i = 0;");
    let _ = writeln!(out, "{pad}while (i < n) {{");
    let _ = writeln!(out, "{pad}  {step}");
    let _ = writeln!(out, "{pad}  i = i + 1;");
    let _ = writeln!(out, "{pad}}}");
}

pub(super) fn program(r: &mut Rng, k: &Knobs) -> String {
    Gen {
        r,
        k,
        f: Feat::default(),
    }
    .program()
}

pub(super) fn witness(r: &mut Rng) -> Witness {
    scaled_witness(r, 1)
}

/// [`witness`] with every integer value times `k`: runs past the values
/// that runs from small inputs see.
pub(super) fn scaled_witness(r: &mut Rng, k: i64) -> Witness {
    let a: Vec<ArgValue> = (0..r.int(0, 6))
        .map(|_| ArgValue::Int(BigInt::from(k * r.int(-2, 4))))
        .collect();
    Witness {
        args: vec![
            ("n".into(), ArgValue::Int(BigInt::from(k * r.int(-1, 4)))),
            ("A".into(), ArgValue::List(a)),
        ],
        input: (0..r.int(0, 6))
            .map(|_| BigInt::from(k * r.int(-3, 5)))
            .collect(),
    }
}

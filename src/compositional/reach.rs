//! Check(a, m, pc) = SAT(int(a, glob(a, m, pc))) (`docs/compositional-se.md`
//! §5): the leaf's pc globalised through the invocation graph to a formula
//! over main's inputs, the rc/rv symbols interpreted from the current
//! finished leaves, one query in one warm solver session.
//!
//! The interpretations are `define-fun`s, callee first, inside the
//! query's `push`/`pop` scope: a call's rc/rv is applied by name, so the
//! callee's leaves are printed once per query, not once per call. They are
//! printed again only when the callee gains a finished leaf.

use super::program::Subject;
use super::state::{Analysis, Stat};
use crate::smt::smtlib;
use crate::smt::{Answer, Profile, Warm};
use crate::term::{Subst, TermId, Terms};
use std::time::Instant;

pub(crate) struct Reach {
    warm: Warm,
    /// The printed interpretation of each function, until it gains a
    /// finished leaf.
    defs: Vec<Option<String>>,
    /// Checks answered without the solver: no invocation reaches the
    /// function yet (glob = false).
    pub trivial: u64,
}

impl Reach {
    pub(crate) fn start(
        profile: &Profile,
        subject: &Subject,
        terms: &Terms,
        deadline: Option<Instant>,
    ) -> Result<Reach, String> {
        // The queries are quantifier-free ite chains: the profile's options
        // for those (solvers/README.md).
        let mut head = profile.options(false).join("\n");
        head.push('\n');
        head.push_str(&smtlib::set_logic("ALL"));
        head.push('\n');
        head.push_str(&smtlib::declaration(terms, subject.stream));
        for i in &subject.main_inputs {
            head.push_str(&smtlib::declaration(terms, i.symbol));
        }
        if subject.divides() {
            head.push_str(&smtlib::truncating_division_command());
        }
        Ok(Reach {
            warm: Warm::start(profile, deadline, &head)?,
            defs: vec![None; subject.funcs.len()],
            trivial: 0,
        })
    }

    /// Whether the session was stopped (the deadline passed).
    pub(crate) fn cancelled(&self) -> bool {
        self.warm.is_stopped()
    }

    /// What the session was asked.
    pub(crate) fn stats(&self) -> crate::smt::WarmStats {
        self.warm.stats
    }

    /// Function `f`'s interpretation is out of date (a new finished leaf).
    pub(crate) fn forget(&mut self, f: usize) {
        self.defs[f] = None;
    }

    /// Check(a, f, pc). With `keep`, a `sat` scope stays open for
    /// [`Reach::values`] until [`Reach::close`].
    pub(crate) fn check(
        &mut self,
        subject: &Subject,
        a: &Analysis,
        terms: &mut Terms,
        f: usize,
        pc: TermId,
        keep: bool,
    ) -> Answer {
        let formula = globalise(subject, a, terms, f, pc);
        if terms.as_bool(formula) == Some(false) {
            self.trivial += 1;
            return Answer::Unsat;
        }
        self.warm.push();
        for &g in &subject.callee_first {
            if g != subject.main && !a.into[g].is_empty() {
                let defs = self.interpretation(subject, a, terms, g).to_string();
                self.warm.raw(&defs);
            }
        }
        self.warm
            .raw(&smtlib::scoped_assertion(terms, formula, true));
        let answer = self.warm.check();
        if !(keep && answer == Answer::Sat) {
            self.close();
        }
        answer
    }

    pub(crate) fn close(&mut self) {
        self.warm.pop(1);
    }

    /// The session, after a kept `sat` (for the values of its model).
    pub(crate) fn warm(&mut self) -> &mut Warm {
        &mut self.warm
    }

    /// rc_g, rv_{g,ret}, rv_{g,ic} from g's finished leaves (Fig. 9):
    /// rc ≡ ⋁ pcᵢ (as 1/0), rv ≡ ite(pc₁, v₁, ite(pc₂, v₂, … default)).
    fn interpretation(
        &mut self,
        subject: &Subject,
        a: &Analysis,
        terms: &mut Terms,
        g: usize,
    ) -> &str {
        if self.defs[g].is_none() {
            self.defs[g] = Some(interpretation_text(subject, a, terms, g));
        }
        self.defs[g].as_deref().unwrap_or_default()
    }
}

fn interpretation_text(subject: &Subject, a: &Analysis, terms: &mut Terms, g: usize) -> String {
    let func = &subject.funcs[g];
    let ret_var = func.body.var_id(crate::ir::RETURN_VAR);
    let fins: Vec<_> = a.sums[g].iter().filter(|l| l.stat == Stat::Fin).collect();
    let pcs: Vec<TermId> = fins.iter().map(|l| l.pc).collect();
    let any = terms.or(pcs);
    let (one, zero) = (terms.int(1), terms.int(0));
    let rc = terms.ite(any, one, zero);
    let mut ret = zero;
    let last = *func.entry.last().expect("an entry symbol for $ic");
    let mut ic = terms.var(last);
    for l in fins.iter().rev() {
        let value = match ret_var.map(|v| l.vals[v as usize]) {
            Some(super::state::Val::Int(t)) => t,
            _ => zero,
        };
        ret = terms.ite(l.pc, value, ret);
        ic = terms.ite(l.pc, l.ic, ic);
    }
    let mut out = smtlib::define_fun(terms, func.rc, &func.entry, rc);
    out.push_str(&smtlib::define_fun(terms, func.rv_ret, &func.entry, ret));
    out.push_str(&smtlib::define_fun(terms, func.rv_ic, &func.entry, ic));
    out
}

/// glob(a, f, pc): `pc` for main; otherwise the disjunction over the
/// invocations ⟨s, f, ς_G, pc′⟩ of glob(a, s, pc′ ∧ pc[ς⁰ ↦ ς_G]); `false`
/// while nothing invokes f. Terminates: the invocation graph is acyclic.
pub(crate) fn globalise(
    subject: &Subject,
    a: &Analysis,
    terms: &mut Terms,
    f: usize,
    pc: TermId,
) -> TermId {
    let mut disjuncts = Vec::new();
    let mut stack = vec![(f, pc)];
    while let Some((g, c)) = stack.pop() {
        crate::deadline::tick();
        if g == subject.main {
            disjuncts.push(c);
            continue;
        }
        for &i in &a.into[g] {
            let inv = &a.invs[i];
            let mut s = Subst::new();
            for (v, t) in subject.funcs[g].entry.iter().zip(&inv.args) {
                s.bind(*v, *t);
            }
            let local = s.apply(terms, c);
            let both = terms.and2(inv.pc, local);
            stack.push((inv.caller, both));
        }
    }
    terms.or(disjuncts)
}

use super::state::{Value, rename_vars};
use crate::term::{Terms, VarKind};
use rustc_hash::FxHashMap as HashMap;

#[test]
fn renaming_a_bound_variable_renames_its_binder() {
    let mut t = Terms::new();
    let tau = t.new_var(VarKind::Bound, "τ");
    let kappa = t.new_var(VarKind::Counter, "κ");
    let (tt, kt) = (t.var(tau), t.var(kappa));
    let lt = t.lt(tt, kt);
    let all = t.forall(vec![tau], lt);
    let (tau2, kappa2) = (
        t.new_var(VarKind::Bound, "τ"),
        t.new_var(VarKind::Counter, "κ"),
    );
    let map: HashMap<_, _> = [(tau, tau2), (kappa, kappa2)].into_iter().collect();
    let r = rename_vars(&mut t, all, &map);
    assert_eq!(t.free_vars(r), vec![kappa2]);
    assert!(!t.mentions(r, tau));
    assert_ne!(Value::Int(r), Value::Int(all));
}

//! Name resolution: every name refers to something declared, exactly once,
//! and assignments have places on their left. Runs before unification.

use crate::syntax::ast::*;
use crate::syntax::{Diagnostic, Span};
use std::collections::HashMap;

/// Checks names and places; returns the diagnostics (absolute spans).
pub fn resolve(program: &Program) -> Vec<Diagnostic> {
    let mut diags = Vec::new();
    let mut functions: HashMap<&str, &Function> = HashMap::new();
    for f in &program.functions {
        if let Some(prev) = functions.get(f.name.name.as_str()) {
            diags.push(
                Diagnostic::error(format!("function `{}` is defined twice", f.name.name))
                    .primary(f.abs(f.name.span), "second definition")
                    .secondary(prev.abs(prev.name.span), "first definition"),
            );
        } else {
            functions.insert(&f.name.name, f);
        }
    }
    if !functions.contains_key("main") {
        diags.push(
            Diagnostic::error("the program has no `main` function")
                .note("execution starts at `main(...)`; its parameters are the program's inputs"),
        );
    }
    for f in &program.functions {
        Resolver {
            f,
            functions: &functions,
            scope: HashMap::new(),
            diags: &mut diags,
        }
        .function();
    }
    diags
}

struct Resolver<'a> {
    f: &'a Function,
    functions: &'a HashMap<&'a str, &'a Function>,
    scope: HashMap<&'a str, Span>,
    diags: &'a mut Vec<Diagnostic>,
}

impl<'a> Resolver<'a> {
    fn err(&mut self, d: Diagnostic) {
        self.diags.push(d);
    }

    fn function(&mut self) {
        let f = self.f;
        for id in f.params.iter().chain(&f.locals) {
            if let Some(prev) = self.scope.get(id.name.as_str()) {
                let prev = f.abs(*prev);
                self.err(
                    Diagnostic::error(format!(
                        "`{}` is declared twice in `{}`",
                        id.name, f.name.name
                    ))
                    .primary(f.abs(id.span), "declared again here")
                    .secondary(prev, "first declared here"),
                );
            } else {
                self.scope.insert(&id.name, id.span);
            }
        }
        for s in &f.body {
            s.walk(&mut |s| {
                if let StmtKind::Assign { lhs, .. } = &s.kind {
                    self.place(lhs);
                }
                for e in s.exprs() {
                    self.expr(e);
                }
            });
        }
        self.expr(&f.ret);
    }

    /// The left side of an assignment must denote a storage place.
    fn place(&mut self, e: &Expr) {
        let ok = match &e.kind {
            ExprKind::Var(_) | ExprKind::Deref(_) => true,
            ExprKind::Index(base, _) | ExprKind::Field(base, _) => {
                self.place(base);
                return;
            }
            _ => false,
        };
        if !ok {
            let span = self.f.abs(e.span);
            self.err(
                Diagnostic::error("cannot assign to this expression")
                    .primary(span, "not a variable, `*e`, `e[i]` or `e.f`"),
            );
        }
    }

    fn expr(&mut self, e: &'a Expr) {
        e.walk(&mut |e| match &e.kind {
            ExprKind::Var(name) => self.variable(name, e.span),
            ExprKind::AddrOf(id) => self.variable(&id.name, id.span),
            ExprKind::Call(callee, args) => self.call(callee, args.len(), e.span),
            ExprKind::Record(fields) => {
                let mut seen: HashMap<&str, Span> = HashMap::new();
                for (name, _) in fields {
                    if let Some(prev) = seen.insert(&name.name, name.span) {
                        let (a, b) = (self.f.abs(name.span), self.f.abs(prev));
                        self.err(
                            Diagnostic::error(format!(
                                "field `{}` appears twice in a record",
                                name.name
                            ))
                            .primary(a, "repeated here")
                            .secondary(b, "first here"),
                        );
                    }
                }
            }
            _ => {}
        });
    }

    fn variable(&mut self, name: &str, span: Span) {
        if self.scope.contains_key(name) {
            return;
        }
        let span = self.f.abs(span);
        let d = if self.functions.contains_key(name) {
            Diagnostic::error(format!("function `{name}` used as a value"))
                .primary(span, "functions can only be called")
                .note("microc has no function values")
        } else {
            Diagnostic::error(format!("undeclared variable `{name}`"))
                .primary(span, "not declared in this function")
                .note(format!(
                    "declare it at the start of `{}` with `var {name};`",
                    self.f.name.name
                ))
        };
        self.err(d);
    }

    fn call(&mut self, callee: &Ident, argc: usize, span: Span) {
        let span = self.f.abs(span);
        if self.scope.contains_key(callee.name.as_str()) {
            self.err(
                Diagnostic::error(format!("`{}` is a variable, not a function", callee.name))
                    .primary(span, "cannot call a variable")
                    .note("microc has no function values"),
            );
            return;
        }
        match self.functions.get(callee.name.as_str()) {
            None => self.err(
                Diagnostic::error(format!("call of undefined function `{}`", callee.name))
                    .primary(span, "no function of this name"),
            ),
            Some(g) if g.params.len() != argc => {
                let def = g.abs(g.name.span);
                self.err(
                    Diagnostic::error(format!(
                        "`{}` takes {} argument{}, but {} {} given",
                        callee.name,
                        g.params.len(),
                        if g.params.len() == 1 { "" } else { "s" },
                        argc,
                        if argc == 1 { "is" } else { "are" }
                    ))
                    .primary(span, "wrong number of arguments")
                    .secondary(def, "defined here"),
                )
            }
            Some(_) => {}
        }
    }
}

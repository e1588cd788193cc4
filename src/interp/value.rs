//! Runtime values of the interpreter.
//!
//! The memory model of the thesis that defines microc's extensions (see
//! docs/microc.md, "Memory model"): arrays and records hold *references*
//! to store cells, one per element or field. Copying an array or record
//! value (assignment, argument passing, `return`, `alloc`) copies the
//! references, so the copies share their elements. A pointer is a cell
//! index. Input arrays are the exception: they are the witness's read-only
//! data, held by value (see [`InputArray`]).

use super::InputReads;
use num_bigint::BigInt;
use num_traits::{ToPrimitive, Zero};
use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::collections::btree_map::Entry;
use std::rc::Rc;

/// The index of a store cell.
pub(crate) type CellId = usize;

#[derive(Clone, Debug)]
pub(crate) enum Value {
    Int(BigInt),
    Null,
    /// A pointer to a store cell.
    Ptr(CellId),
    /// A fixed-length array: the cells of its elements (only array
    /// literals create them).
    Array(Rc<[CellId]>),
    /// A record: the cells of its fields, in the order of the literal that
    /// made it.
    Record(Rc<[(String, CellId)]>),
    /// An input array (a parameter of `main`, or an element of one).
    Input(InputArray),
}

impl Value {
    /// What kind of value this is, for messages about ill-typed programs.
    pub(crate) fn describe(&self) -> &'static str {
        match self {
            Value::Int(_) => "an integer",
            Value::Null => "null",
            Value::Ptr(_) => "a pointer",
            Value::Array(_) => "an array",
            Value::Record(_) => "a record",
            Value::Input(_) => "an input array",
        }
    }
}

/// An unbounded input array: the finite list the witness gave, plus the
/// elements the program wrote to this copy.
///
/// Input arrays keep value semantics: they are the witness's data, and
/// nothing a program does changes what a parameter of `main` reads. A
/// local that receives one (`b = A`, or a callee's parameter) may write
/// into it; the writes go to that holder's copy only.
///
/// Reading an index the witness did not give (negative, or beyond the list)
/// yields the default element: `0` if the elements are integers, an empty
/// input array if they are arrays. Whether they are arrays is `dims > 1`,
/// where `dims` was fixed from the witness list and from how the program
/// indexes the parameter (see `main_args.rs`); in addition, a read that is
/// immediately indexed again (`p[i][j]`) always defaults to an empty array,
/// so a 2-D use is never confused by an empty witness list.
#[derive(Clone, Debug)]
pub(crate) struct InputArray {
    /// The elements the witness gave; shared between copies.
    elems: Rc<[Value]>,
    /// The number of dimensions: 1 means the elements are integers.
    dims: u32,
    /// Elements written by the program, on this copy only.
    overrides: BTreeMap<BigInt, Value>,
    /// Set when the run records the witness cells it reads.
    origin: Option<Origin>,
}

/// Where an input array sits in the witness, for a run that records which
/// witness cells it reads (`interp::run_reading`).
#[derive(Clone, Debug)]
pub(crate) struct Origin {
    reads: Rc<RefCell<InputReads>>,
    /// main's parameter (its position) and the indices down to this array.
    param: usize,
    path: Rc<[usize]>,
}

impl Origin {
    pub(crate) fn new(reads: Rc<RefCell<InputReads>>, param: usize) -> Origin {
        Origin {
            reads,
            param,
            path: Rc::from([]),
        }
    }

    /// The origin of element `i`.
    pub(crate) fn child(&self, i: usize) -> Origin {
        Origin {
            path: self.path.iter().copied().chain([i]).collect(),
            ..self.clone()
        }
    }

    fn record(&self, i: usize) {
        self.reads.borrow_mut().record(self.param, &self.path, i);
    }
}

impl InputArray {
    pub(crate) fn new(elems: Vec<Value>, dims: u32, origin: Option<Origin>) -> InputArray {
        InputArray {
            elems: elems.into(),
            dims: dims.max(1),
            overrides: BTreeMap::new(),
            origin,
        }
    }

    fn given<'a>(elems: &'a [Value], i: &BigInt) -> Option<&'a Value> {
        i.to_usize().and_then(|u| elems.get(u))
    }

    fn default_elem(dims: u32, origin: Option<&Origin>, i: &BigInt, want_array: bool) -> Value {
        if dims > 1 || want_array {
            // A witness cell below a negative index cannot be given, so it
            // is not recorded either.
            let origin = origin.zip(i.to_usize()).map(|(o, u)| o.child(u));
            Value::Input(InputArray::new(vec![], dims.saturating_sub(1), origin))
        } else {
            Value::Int(BigInt::zero())
        }
    }

    /// Element `i` (never out of bounds). `want_array`: the caller indexes
    /// the result again.
    pub(crate) fn get(&self, i: &BigInt, want_array: bool) -> Cow<'_, Value> {
        if let Some(v) = self.overrides.get(i) {
            return Cow::Borrowed(v);
        }
        let v = match Self::given(&self.elems, i) {
            Some(v) => Cow::Borrowed(v),
            None => Cow::Owned(Self::default_elem(
                self.dims,
                self.origin.as_ref(),
                i,
                want_array,
            )),
        };
        if let (Some(o), Some(u), Value::Int(_)) = (&self.origin, i.to_usize(), v.as_ref()) {
            o.record(u);
        }
        v
    }

    /// [`InputArray::get`] of a 64-bit index: no big integer is made
    /// unless the program wrote to this copy.
    pub(crate) fn get_small(&self, i: i64, want_array: bool) -> Cow<'_, Value> {
        if !self.overrides.is_empty() {
            return self.get(&BigInt::from(i), want_array);
        }
        let given = usize::try_from(i).ok().and_then(|u| self.elems.get(u));
        let v = match given {
            Some(v) => Cow::Borrowed(v),
            None => Cow::Owned(Self::default_elem(
                self.dims,
                self.origin.as_ref(),
                &BigInt::from(i),
                want_array,
            )),
        };
        if let (Some(o), Ok(u), Value::Int(_)) = (&self.origin, usize::try_from(i), v.as_ref()) {
            o.record(u);
        }
        v
    }

    /// Element `i` for writing: it moves into the override map first, so the
    /// write (or a write into it, for `p[i][j] = v`) affects this copy only.
    pub(crate) fn get_mut(&mut self, i: &BigInt, want_array: bool) -> &mut Value {
        match self.overrides.entry(i.clone()) {
            Entry::Occupied(o) => o.into_mut(),
            Entry::Vacant(slot) => {
                let v = match Self::given(&self.elems, i) {
                    Some(v) => v.clone(),
                    None => Self::default_elem(self.dims, self.origin.as_ref(), i, want_array),
                };
                slot.insert(v)
            }
        }
    }
}

//! The memory a run allocates, for limits that hold per run when several
//! runs share one process (`apc bench thesis` runs two programs at a time,
//! a portfolio runs its engines side by side). The process's resident size
//! counts every run's memory against each, and memory the allocator keeps
//! after a run against the runs that follow: a long batch ended every run
//! at its start with `memory limit (2048 MiB)`.
//!
//! The global allocator counts, for each thread, the bytes it allocated
//! minus the bytes it freed. A run on one thread measures its growth from
//! where it started ([`Gauge`]). Memory freed by another thread counts for
//! the thread that freed it; a run allocates and frees its own states on
//! its own thread.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// The system allocator, counting per thread.
pub struct Counting;

thread_local! {
    // `const`: no lazy initialisation, so no allocation inside the allocator.
    static LIVE: Cell<i64> = const { Cell::new(0) };
}

fn count(bytes: i64) {
    // A thread's last frees come after its storage is gone: not counted.
    let _ = LIVE.try_with(|c| c.set(c.get() + bytes));
}

// SAFETY: every call goes to `System` unchanged; only a thread-local
// counter (no allocation) is updated besides.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            count(layout.size() as i64);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            count(layout.size() as i64);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        count(-(layout.size() as i64));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            count(new_size as i64 - layout.size() as i64);
        }
        p
    }
}

/// What this thread has allocated since the gauge was made; read it on
/// the thread that made it.
pub struct Gauge {
    start: i64,
}

impl Gauge {
    pub fn new() -> Gauge {
        Gauge {
            start: LIVE.with(Cell::get),
        }
    }

    /// MiB allocated (and not freed) on this thread since [`Gauge::new`].
    pub fn mib(&self) -> u64 {
        let grown = LIVE.with(Cell::get) - self.start;
        (grown.max(0) as u64) >> 20
    }
}

impl Default for Gauge {
    fn default() -> Gauge {
        Gauge::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gauge_sees_its_own_thread_only() {
        let g = Gauge::new();
        let mine = vec![0u8; 8 << 20];
        let other = std::thread::spawn(|| vec![0u8; 64 << 20]).join().unwrap();
        assert_eq!(g.mib(), 8, "the other thread's 64 MiB are not this run's");
        drop(mine);
        assert_eq!(g.mib(), 0);
        drop(other);
    }
}

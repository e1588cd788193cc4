//! Executable memory for the native tier's code: mapped writable, filled,
//! then made executable and never written again.

use super::Handback;

/// Pages holding machine code, unmapped on drop.
pub(super) struct Executable {
    base: *mut u8,
    len: usize,
}

// SAFETY: the pages are only read (executed) after construction.
unsafe impl Send for Executable {}
unsafe impl Sync for Executable {}

impl Executable {
    /// The bodies laid out one after another, each 16-byte aligned; the
    /// memory and each body's start address.
    pub(super) fn new(bodies: &[Vec<u8>]) -> Result<(Executable, Vec<usize>), Handback> {
        let mut offsets = Vec::with_capacity(bodies.len());
        let mut len = 0;
        for body in bodies {
            offsets.push(len);
            len = (len + body.len()).next_multiple_of(16);
        }
        let len = len.max(1).next_multiple_of(page_size());
        // SAFETY: a fresh private anonymous mapping; checked below.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err("no memory for native code");
        }
        let memory = Executable {
            base: base.cast(),
            len,
        };
        for (body, &at) in bodies.iter().zip(&offsets) {
            // SAFETY: `at + body.len() <= len`, inside the mapping.
            unsafe {
                std::ptr::copy_nonoverlapping(body.as_ptr(), memory.base.add(at), body.len())
            };
        }
        // SAFETY: the whole mapping, now filled.
        let sealed = unsafe { libc::mprotect(base, len, libc::PROT_READ | libc::PROT_EXEC) };
        if sealed != 0 {
            return Err("native code cannot be made executable");
        }
        let starts = offsets
            .iter()
            .map(|&at| memory.base as usize + at)
            .collect();
        Ok((memory, starts))
    }
}

impl Drop for Executable {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`, no longer executed.
        unsafe { libc::munmap(self.base.cast(), self.len) };
    }
}

fn page_size() -> usize {
    // SAFETY: a plain query.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(size).unwrap_or(4096).max(4096)
}

/// Bytes of the current thread's stack left below this call.
pub(super) fn stack_left() -> usize {
    let here = 0u8;
    let here = &here as *const u8 as usize;
    // SAFETY: pthread_getattr_np fills `attr`, destroyed after use.
    unsafe {
        let mut attr: libc::pthread_attr_t = std::mem::zeroed();
        if libc::pthread_getattr_np(libc::pthread_self(), &mut attr) != 0 {
            return 0;
        }
        let mut low: *mut libc::c_void = std::ptr::null_mut();
        let mut size = 0usize;
        let got = libc::pthread_attr_getstack(&attr, &mut low, &mut size);
        libc::pthread_attr_destroy(&mut attr);
        if got != 0 {
            return 0;
        }
        here.saturating_sub(low as usize)
    }
}

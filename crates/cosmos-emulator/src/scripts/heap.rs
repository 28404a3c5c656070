//! The heap cap of a script's runtime: QuickJS allocates through this allocator, which refuses an
//! allocation that would take the runtime past its cap and records that it did, so an execution
//! that ran out of memory is told apart from one that threw (QuickJS may be unable to build its
//! own out-of-memory error by then).

use std::cell::Cell;
use std::rc::Rc;

use rquickjs::allocator::{Allocator, RustAllocator};

/// Counts the bytes a runtime holds and refuses allocations past `limit`.
pub(super) struct CappedHeap {
    inner: RustAllocator,
    used: usize,
    limit: usize,
    refused: Rc<Cell<bool>>,
}

impl CappedHeap {
    /// A heap of at most `limit` bytes; `refused` is set when an allocation is refused.
    pub(super) fn new(limit: usize, refused: Rc<Cell<bool>>) -> Self {
        Self {
            inner: RustAllocator,
            used: 0,
            limit,
            refused,
        }
    }

    fn fits(&self, more: usize) -> bool {
        let fits = self.used.checked_add(more).is_some_and(|n| n <= self.limit);
        if !fits {
            self.refused.set(true);
        }
        fits
    }
}

// Every pointer this allocator hands out comes from `RustAllocator`, which it passes on to
// unchanged, so the inner allocator's contract holds; only the byte count is added.
unsafe impl Allocator for CappedHeap {
    fn alloc(&mut self, size: usize) -> *mut u8 {
        if !self.fits(size) {
            return std::ptr::null_mut();
        }
        let ptr = self.inner.alloc(size);
        if !ptr.is_null() {
            // SAFETY: `ptr` was just allocated by the inner allocator.
            self.used += unsafe { RustAllocator::usable_size(ptr) };
        }
        ptr
    }

    fn calloc(&mut self, count: usize, size: usize) -> *mut u8 {
        match count.checked_mul(size) {
            Some(total) if self.fits(total) => {
                let ptr = self.inner.calloc(count, size);
                if !ptr.is_null() {
                    // SAFETY: `ptr` was just allocated by the inner allocator.
                    self.used += unsafe { RustAllocator::usable_size(ptr) };
                }
                ptr
            }
            _ => {
                self.refused.set(true);
                std::ptr::null_mut()
            }
        }
    }

    unsafe fn dealloc(&mut self, ptr: *mut u8) {
        // SAFETY: the caller passes a pointer this allocator (so the inner one) handed out.
        let size = unsafe { RustAllocator::usable_size(ptr) };
        self.used = self.used.saturating_sub(size);
        unsafe { self.inner.dealloc(ptr) }
    }

    unsafe fn realloc(&mut self, ptr: *mut u8, new_size: usize) -> *mut u8 {
        if ptr.is_null() {
            return self.alloc(new_size);
        }
        // SAFETY: as for `dealloc`.
        let old = unsafe { RustAllocator::usable_size(ptr) };
        if new_size > old && !self.fits(new_size - old) {
            return std::ptr::null_mut();
        }
        let moved = unsafe { self.inner.realloc(ptr, new_size) };
        if !moved.is_null() {
            let now = unsafe { RustAllocator::usable_size(moved) };
            self.used = self.used.saturating_sub(old) + now;
        }
        moved
    }

    unsafe fn usable_size(ptr: *mut u8) -> usize {
        // SAFETY: as for `dealloc`.
        unsafe { RustAllocator::usable_size(ptr) }
    }
}

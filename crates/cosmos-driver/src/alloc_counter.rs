//! A counting global allocator for allocation tests and benchmarks: it counts the allocations (and
//! bytes) made on the measuring thread while counting is on. Self-contained (only `std`), so
//! integration tests and benchmarks include this same file with `#[path]` rather than keeping a
//! copy.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// Counts allocations made on a thread while counting is on there; otherwise the system allocator.
pub(crate) struct CountingAllocator;

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
    static BYTES: Cell<u64> = const { Cell::new(0) };
}

fn note_allocation(size: usize) {
    // `try_with`: the allocator may run while thread-locals are being torn down.
    if COUNTING.try_with(Cell::get).unwrap_or(false) {
        let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
        let _ = BYTES.try_with(|n| n.set(n.get() + size as u64));
    }
}

// SAFETY: every call is forwarded unchanged to the system allocator; counting touches only
// thread-locals through `try_with`, which neither allocates nor panics.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note_allocation(layout.size());
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note_allocation(layout.size());
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note_allocation(new_size);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// What was allocated on a thread while counting was on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Allocated {
    /// Allocations (a `realloc` counts as one).
    pub count: u64,
    /// Bytes requested.
    pub bytes: u64,
}

/// Starts counting this thread's allocations from zero.
pub(crate) fn start_counting() {
    ALLOCATIONS.with(|n| n.set(0));
    BYTES.with(|n| n.set(0));
    COUNTING.with(|c| c.set(true));
}

/// Stops counting on this thread and returns what was allocated since [`start_counting`].
pub(crate) fn stop_counting() -> Allocated {
    COUNTING.with(|c| c.set(false));
    Allocated {
        count: ALLOCATIONS.with(Cell::get),
        bytes: BYTES.with(Cell::get),
    }
}

/// Allocations made on this thread while `f` runs (with [`CountingAllocator`] installed as the
/// global allocator), and what `f` returned.
pub(crate) fn allocations_of<T>(f: impl FnOnce() -> T) -> (u64, T) {
    start_counting();
    let out = f();
    (stop_counting().count, out)
}

//! The memory queries hold between and during their pages: answers kept for later pages
//! ([`ResultCache`](super::result_cache::ResultCache)), answers still being built
//! ([`BuildShelf`](super::build_shelf::BuildShelf))
//! and the state a page is building right now. Each holder keeps a [`Reservation`] of the bytes it
//! holds (parsed values, counted by [`heap_size`](crate::sql::meter::heap_size)), released when
//! the holder is dropped; the total across every query is capped, so no mix of queries can make
//! the process hold more than the cap.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// The bytes held by queries, against a cap.
#[derive(Debug)]
pub(crate) struct QueryMemory {
    held: AtomicUsize,
    peak: AtomicUsize,
    cap: usize,
}

/// What the memory counter reads (for tests and diagnostics).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueryMemoryStats {
    /// Bytes held now.
    pub held: usize,
    /// The most ever held at once.
    pub peak: usize,
    /// The cap on what may be held at once.
    pub cap: usize,
}

impl QueryMemory {
    /// A counter with `cap` bytes to give out.
    pub(crate) fn new(cap: usize) -> Arc<Self> {
        Arc::new(Self {
            held: AtomicUsize::new(0),
            peak: AtomicUsize::new(0),
            cap,
        })
    }

    /// What is held now, the peak and the cap.
    pub(crate) fn stats(&self) -> QueryMemoryStats {
        QueryMemoryStats {
            held: self.held.load(Ordering::Relaxed),
            peak: self.peak.load(Ordering::Relaxed),
            cap: self.cap,
        }
    }

    /// An empty reservation.
    pub(crate) fn reservation(self: &Arc<Self>) -> Reservation {
        Reservation {
            memory: self.clone(),
            bytes: 0,
        }
    }

    fn grow(&self, more: usize) -> bool {
        let mut held = self.held.load(Ordering::Relaxed);
        loop {
            let Some(next) = held.checked_add(more).filter(|n| *n <= self.cap) else {
                return false;
            };
            match self
                .held
                .compare_exchange_weak(held, next, Ordering::AcqRel, Ordering::Relaxed)
            {
                Ok(_) => {
                    self.peak.fetch_max(next, Ordering::Relaxed);
                    return true;
                }
                Err(now) => held = now,
            }
        }
    }

    fn shrink(&self, less: usize) {
        self.held.fetch_sub(less, Ordering::AcqRel);
    }
}

/// Bytes one holder has of a [`QueryMemory`]; given back when dropped.
#[derive(Debug)]
pub(crate) struct Reservation {
    memory: Arc<QueryMemory>,
    bytes: usize,
}

impl Reservation {
    /// Bytes reserved.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    /// Holds exactly `bytes`: shrinking always succeeds, growing fails (changing nothing) when the
    /// cap would be passed.
    pub(crate) fn resize(&mut self, bytes: usize) -> bool {
        if bytes <= self.bytes {
            self.memory.shrink(self.bytes - bytes);
            self.bytes = bytes;
            return true;
        }
        if self.memory.grow(bytes - self.bytes) {
            self.bytes = bytes;
            true
        } else {
            false
        }
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        self.memory.shrink(self.bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reservations_are_capped_in_total_and_given_back_when_dropped() {
        let memory = QueryMemory::new(1000);
        let mut a = memory.reservation();
        let mut b = memory.reservation();
        assert!(a.resize(600));
        assert!(!b.resize(500), "past the cap");
        assert_eq!(b.bytes(), 0);
        assert!(b.resize(400));
        assert_eq!(memory.stats().held, 1000);
        assert!(a.resize(100));
        assert_eq!(memory.stats().held, 500);
        drop(a);
        drop(b);
        assert_eq!(
            memory.stats(),
            QueryMemoryStats {
                held: 0,
                peak: 1000,
                cap: 1000
            }
        );
    }
}

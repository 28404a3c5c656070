//! Answers being built: what a query that must see every row before its first page (ORDER BY,
//! aggregates, GROUP BY, DISTINCT) has gathered so far when a page's budget ran out before the
//! scan of its scope ended. The page answers with a continuation naming the build; the next page
//! takes the build off the shelf, reads on from where it stopped and puts it back (or finishes).
//!
//! The shelf is bounded (the least recently used build leaves first, and a build unused for the
//! idle time leaves); a build that is gone (or does not match the continuation) is started again
//! from the beginning, which is exact because a build has returned no row yet. What a build holds
//! is opaque here (the query executor owns its shape, and its memory reservation with it).

use std::any::Any;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Builds kept at once.
const MAX_BUILDS: usize = 16;

/// What a build belongs to: the container, the query text and parameters, and its scope.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct BuildKey {
    /// The container's `_rid`.
    pub container: String,
    pub text: String,
    /// The parameters, as canonical JSON text.
    pub params: String,
    /// The ids of the ranges read and the one partition key's EPK (hex) if any.
    pub scope: String,
    /// The build's number (from [`BuildShelf::next_id`]).
    pub id: u64,
}

struct Shelved {
    key: BuildKey,
    state: Box<dyn Any + Send>,
    used: u64,
    last_use: Instant,
}

/// The builds of one emulator.
pub(crate) struct BuildShelf {
    inner: Mutex<(Vec<Shelved>, u64)>,
    next: AtomicU64,
    idle: Duration,
}

impl BuildShelf {
    /// An empty shelf whose builds leave after `idle` without use.
    pub(crate) fn new(idle: Duration) -> Self {
        // Numbers start from the clock so a continuation from an earlier process names no build
        // of this one.
        let start = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64);
        Self {
            inner: Mutex::new((Vec::new(), 0)),
            next: AtomicU64::new(start),
            idle,
        }
    }

    /// A number no other build of this emulator has.
    pub(crate) fn next_id(&self) -> u64 {
        self.next.fetch_add(1, Ordering::Relaxed)
    }

    /// Takes the build under `key` off the shelf (a concurrent request for it finds none).
    pub(crate) fn take(&self, key: &BuildKey) -> Option<Box<dyn Any + Send>> {
        let mut inner = self.inner.lock().ok()?;
        let at = inner.0.iter().position(|s| &s.key == key)?;
        Some(inner.0.swap_remove(at).state)
    }

    /// Puts a build on the shelf, dropping the least recently used one past the limit.
    pub(crate) fn put(&self, key: BuildKey, state: Box<dyn Any + Send>) {
        let Ok(mut inner) = self.inner.lock() else {
            return;
        };
        inner.1 += 1;
        let used = inner.1;
        let shelved = &mut inner.0;
        shelved.retain(|s| s.key != key);
        if shelved.len() >= MAX_BUILDS {
            remove_oldest(shelved);
        }
        shelved.push(Shelved {
            key,
            state,
            used,
            last_use: Instant::now(),
        });
    }

    /// Drops the least recently used build; false when there is none.
    pub(crate) fn evict_oldest(&self) -> bool {
        let Ok(mut inner) = self.inner.lock() else {
            return false;
        };
        remove_oldest(&mut inner.0)
    }

    /// Drops the builds unused for the idle time.
    pub(crate) fn sweep(&self, now: Instant) {
        if let Ok(mut inner) = self.inner.lock() {
            let idle = self.idle;
            inner
                .0
                .retain(|s| now.saturating_duration_since(s.last_use) < idle);
        }
    }

    /// Builds shelved.
    pub(crate) fn len(&self) -> usize {
        self.inner.lock().map_or(0, |i| i.0.len())
    }

    /// Whether no build is shelved.
    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

fn remove_oldest(shelved: &mut Vec<Shelved>) -> bool {
    match shelved
        .iter()
        .enumerate()
        .min_by_key(|(_, s)| s.used)
        .map(|(i, _)| i)
    {
        Some(oldest) => {
            // Dropped outside the search; its reservation goes with it.
            drop(shelved.swap_remove(oldest));
            true
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(id: u64) -> BuildKey {
        BuildKey {
            container: "c".into(),
            text: "q".into(),
            params: "{}".into(),
            scope: "0".into(),
            id,
        }
    }

    #[test]
    fn a_build_is_taken_once_and_the_oldest_leaves_first() {
        let shelf = BuildShelf::new(Duration::from_secs(60));
        let a = shelf.next_id();
        assert_ne!(a, shelf.next_id());
        shelf.put(key(a), Box::new(7u32));
        let other_scope = BuildKey {
            scope: "1".into(),
            ..key(a)
        };
        assert!(shelf.take(&other_scope).is_none());
        let state = shelf.take(&key(a)).expect("shelved");
        assert_eq!(state.downcast_ref::<u32>(), Some(&7));
        assert!(shelf.take(&key(a)).is_none(), "taken once");
        for i in 0..=MAX_BUILDS as u64 {
            shelf.put(key(100 + i), Box::new(i));
        }
        assert!(shelf.take(&key(100)).is_none(), "the oldest left");
        assert!(shelf.take(&key(101)).is_some());
    }

    #[test]
    fn idle_builds_leave() {
        let shelf = BuildShelf::new(Duration::from_millis(50));
        shelf.put(key(1), Box::new(1u8));
        shelf.sweep(Instant::now());
        assert_eq!(shelf.len(), 1);
        shelf.sweep(Instant::now() + Duration::from_millis(60));
        assert!(shelf.is_empty());
        shelf.put(key(2), Box::new(2u8));
        assert!(shelf.evict_oldest() && !shelf.evict_oldest());
    }
}

//! Answers being built: what a query that must see every row before its first page (ORDER BY,
//! aggregates, GROUP BY, DISTINCT) has gathered so far when a page's budget ran out before the
//! scan of its scope ended. The page answers with a continuation naming the build; the next page
//! takes the build off the shelf, reads on from where it stopped and puts it back (or finishes).
//!
//! The shelf is bounded (the least recently used build leaves first); a build that is gone (or
//! does not match the continuation) is started again from the beginning, which is exact because
//! a build has returned no row yet. What a build holds is opaque here: the query handlers own its
//! shape.

use std::any::Any;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Builds kept at once.
const MAX_BUILDS: usize = 8;

/// What a build belongs to: the container, the query text and parameters, and its scope.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuildKey {
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
}

/// The builds of one emulator.
pub struct BuildShelf {
    inner: Mutex<(Vec<Shelved>, u64)>,
    next: AtomicU64,
}

impl Default for BuildShelf {
    fn default() -> Self {
        // Numbers start from the clock so a continuation from an earlier process names no build
        // of this one.
        let start = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64);
        Self {
            inner: Mutex::new((Vec::new(), 0)),
            next: AtomicU64::new(start),
        }
    }
}

impl BuildShelf {
    /// A number no other build of this emulator has.
    pub fn next_id(&self) -> u64 {
        self.next.fetch_add(1, Ordering::Relaxed)
    }

    /// Takes the build under `key` off the shelf (a concurrent request for it finds none).
    pub fn take(&self, key: &BuildKey) -> Option<Box<dyn Any + Send>> {
        let mut inner = self.inner.lock().ok()?;
        let at = inner.0.iter().position(|s| &s.key == key)?;
        Some(inner.0.swap_remove(at).state)
    }

    /// Puts a build on the shelf, dropping the least recently used one past the limit.
    pub fn put(&self, key: BuildKey, state: Box<dyn Any + Send>) {
        let Ok(mut inner) = self.inner.lock() else {
            return;
        };
        inner.1 += 1;
        let used = inner.1;
        let shelved = &mut inner.0;
        shelved.retain(|s| s.key != key);
        if shelved.len() >= MAX_BUILDS {
            if let Some(oldest) = shelved
                .iter()
                .enumerate()
                .min_by_key(|(_, s)| s.used)
                .map(|(i, _)| i)
            {
                shelved.swap_remove(oldest);
            }
        }
        shelved.push(Shelved { key, state, used });
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
        let shelf = BuildShelf::default();
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
}

//! Results of queries that must see every row before their first page (ORDER BY, aggregates,
//! GROUP BY, DISTINCT), kept between pages so paging through them costs each page only its own
//! rows instead of a fresh scan and sort of the whole scope.
//!
//! An entry is keyed by everything its answer depends on: the container, the query text and
//! parameters, the region, each range's LSN it was read at, and the ranges' writes served only by
//! the region that took them (multi-write conflicts). A write moves an LSN (or those), so the
//! next page misses and recomputes from the current state, exactly as without the cache (pages
//! resume from a position in the result order, never from an index into a stale list).
//!
//! An entry holds only what pages return: each row's sort keys and its projected result as JSON
//! text (not the documents it came from), and a [`Reservation`] of the bytes it holds. It leaves
//! when its last page is served, when it has not been used for the idle time, or (least recently
//! used first) when the count or the memory cap needs room.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use serde_json::Value;

use super::query_memory::Reservation;
use crate::epk::EpkFilter;
use crate::store::DocKey;

/// Entries kept at once.
const MAX_ENTRIES: usize = 16;

/// What a cached answer depends on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ResultKey {
    /// The container's `_rid`.
    pub container: String,
    pub text: String,
    /// The parameters, as canonical JSON text.
    pub params: String,
    pub region: usize,
    /// Each range read, by its id (never reused: a split gives its children new ids, while their
    /// positions in the container's list take the parent's), and the LSN it was read at.
    pub ranges: Vec<(String, u64)>,
    /// The keys a single-partition or prefix query reads.
    pub only_epk: Option<EpkFilter>,
    /// Per range read, what marks its region-local writes
    /// ([`Partition::local_state`](crate::store::Partition::local_state)).
    pub local: Vec<u64>,
}

/// One row of an ORDER BY result: its sort keys, its document and row within it, and its
/// projected result (`None`: the row yields nothing, but it still counts for OFFSET and LIMIT).
#[derive(Clone, Debug)]
pub(crate) struct OrderedRow {
    pub keys: Vec<Option<Value>>,
    pub doc: DocKey,
    pub row: u64,
    pub item: Option<Bytes>,
}

/// A query's whole answer.
#[derive(Debug)]
pub(crate) enum Answer {
    /// ORDER BY rows, sorted.
    Ordered(Vec<OrderedRow>),
    /// The final results (JSON text) of an aggregate, GROUP BY or DISTINCT query.
    Whole(Vec<Bytes>),
}

/// An answer and the memory it holds.
#[derive(Debug)]
pub(crate) struct CachedResult {
    pub answer: Answer,
    /// Held for its `Drop`: the memory goes back when the answer is dropped.
    #[allow(dead_code)]
    pub reservation: Reservation,
}

struct Entry {
    key: ResultKey,
    result: Arc<CachedResult>,
    used: u64,
    last_use: Instant,
}

/// The cache of one emulator.
pub(crate) struct ResultCache {
    inner: Mutex<(Vec<Entry>, u64)>,
    idle: Duration,
}

impl ResultCache {
    /// An empty cache whose entries leave after `idle` without use.
    pub(crate) fn new(idle: Duration) -> Self {
        Self {
            inner: Mutex::new((Vec::new(), 0)),
            idle,
        }
    }

    /// The answer cached under `key`, if any.
    pub(crate) fn get(&self, key: &ResultKey) -> Option<Arc<CachedResult>> {
        let mut inner = self.inner.lock().ok()?;
        inner.1 += 1;
        let tick = inner.1;
        let entry = inner.0.iter_mut().find(|e| &e.key == key)?;
        entry.used = tick;
        entry.last_use = Instant::now();
        Some(entry.result.clone())
    }

    /// Keeps `result` under `key`, dropping the least recently used entry past the limit.
    pub(crate) fn put(&self, key: ResultKey, result: Arc<CachedResult>) {
        let Ok(mut inner) = self.inner.lock() else {
            return;
        };
        inner.1 += 1;
        let used = inner.1;
        let entries = &mut inner.0;
        entries.retain(|e| e.key != key);
        if entries.len() >= MAX_ENTRIES {
            remove_oldest(entries);
        }
        entries.push(Entry {
            key,
            result,
            used,
            last_use: Instant::now(),
        });
    }

    /// Drops the entry under `key` (its query has returned its last page).
    pub(crate) fn remove(&self, key: &ResultKey) {
        if let Ok(mut inner) = self.inner.lock() {
            inner.0.retain(|e| &e.key != key);
        }
    }

    /// Drops the least recently used entry; false when there is none.
    pub(crate) fn evict_oldest(&self) -> bool {
        let Ok(mut inner) = self.inner.lock() else {
            return false;
        };
        remove_oldest(&mut inner.0)
    }

    /// Drops the entries unused for the idle time.
    pub(crate) fn sweep(&self, now: Instant) {
        if let Ok(mut inner) = self.inner.lock() {
            let idle = self.idle;
            inner
                .0
                .retain(|e| now.saturating_duration_since(e.last_use) < idle);
        }
    }

    /// Entries held.
    pub(crate) fn len(&self) -> usize {
        self.inner.lock().map_or(0, |i| i.0.len())
    }

    /// Whether no entry is held.
    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

fn remove_oldest(entries: &mut Vec<Entry>) -> bool {
    match entries
        .iter()
        .enumerate()
        .min_by_key(|(_, e)| e.used)
        .map(|(i, _)| i)
    {
        Some(oldest) => {
            entries.swap_remove(oldest);
            true
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::super::query_memory::QueryMemory;
    use super::*;

    fn key(text: &str, lsn: u64) -> ResultKey {
        ResultKey {
            container: "c".into(),
            text: text.into(),
            params: "{}".into(),
            region: 0,
            ranges: vec![("0".to_owned(), lsn)],
            only_epk: None,
            local: Vec::new(),
        }
    }

    fn whole(memory: &Arc<QueryMemory>, n: i64) -> Arc<CachedResult> {
        let mut reservation = memory.reservation();
        assert!(reservation.resize(100));
        Arc::new(CachedResult {
            answer: Answer::Whole(vec![Bytes::from(n.to_string())]),
            reservation,
        })
    }

    fn value(r: Option<Arc<CachedResult>>) -> Option<i64> {
        match r.as_deref() {
            Some(CachedResult {
                answer: Answer::Whole(v),
                ..
            }) => std::str::from_utf8(&v[0]).ok()?.parse().ok(),
            _ => None,
        }
    }

    #[test]
    fn entries_are_found_by_every_part_of_their_key_and_the_oldest_leaves_first() {
        let memory = QueryMemory::new(1 << 20);
        let cache = ResultCache::new(Duration::from_secs(60));
        cache.put(key("q", 5), whole(&memory, 1));
        assert_eq!(value(cache.get(&key("q", 5))), Some(1));
        assert_eq!(
            value(cache.get(&key("q", 6))),
            None,
            "a write moved the LSN"
        );
        assert_eq!(value(cache.get(&key("other", 5))), None);
        cache.put(key("q", 5), whole(&memory, 2));
        assert_eq!(value(cache.get(&key("q", 5))), Some(2));
        for i in 0..MAX_ENTRIES as u64 {
            cache.put(key("filler", 100 + i), whole(&memory, 0));
            // Keeps "q" the most recently used.
            assert!(cache.get(&key("q", 5)).is_some());
        }
        assert_eq!(value(cache.get(&key("q", 5))), Some(2));
        assert!(cache.get(&key("filler", 100)).is_none());
        assert_eq!(memory.stats().held, 100 * MAX_ENTRIES);
    }

    #[test]
    fn entries_leave_when_removed_evicted_or_idle_and_give_their_memory_back() {
        let memory = QueryMemory::new(1 << 20);
        let cache = ResultCache::new(Duration::from_millis(50));
        cache.put(key("a", 1), whole(&memory, 1));
        cache.put(key("b", 1), whole(&memory, 2));
        cache.put(key("c", 1), whole(&memory, 3));
        assert_eq!(memory.stats().held, 300);
        cache.remove(&key("a", 1));
        assert!(cache.evict_oldest());
        assert_eq!((cache.len(), memory.stats().held), (1, 100));
        cache.sweep(Instant::now());
        assert_eq!(cache.len(), 1, "not idle yet");
        cache.sweep(Instant::now() + Duration::from_millis(60));
        assert_eq!((cache.len(), memory.stats().held), (0, 0));
        assert!(!cache.evict_oldest());
    }
}

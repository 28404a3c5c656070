//! Results of queries that must see every row before their first page (ORDER BY, aggregates,
//! GROUP BY, DISTINCT), kept between pages so paging through them costs each page only its own
//! rows instead of a fresh scan and sort of the whole scope.
//!
//! An entry is keyed by everything its answer depends on: the container, the query text and
//! parameters, the region, and each range's LSN it was read at. A write moves an LSN, so the
//! next page misses and recomputes from the current state, exactly as without the cache (pages
//! resume from a position in the result order, never from an index into a stale list). Entries
//! are few and bounded in size; the least recently used leaves first.

use std::sync::{Arc, Mutex};

use serde_json::Value;

use super::partition::DocKey;
use crate::epk::EpkFilter;

/// Entries kept at once.
const MAX_ENTRIES: usize = 8;
/// Largest result kept, in bytes of the documents it was computed from.
pub const MAX_ENTRY_BYTES: usize = 256 * 1024 * 1024;

/// What a cached answer depends on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResultKey {
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
}

/// One row of an ORDER BY result: its sort keys, its document and row within it, and the values
/// its sources bound (projected when a page returns it).
#[derive(Clone, Debug)]
pub struct OrderedRow {
    pub keys: Vec<Option<Value>>,
    pub doc: DocKey,
    pub row: u64,
    pub bound: Vec<Value>,
}

/// A query's whole answer.
#[derive(Debug)]
pub enum CachedResult {
    /// ORDER BY rows, sorted.
    Ordered(Vec<OrderedRow>),
    /// The final results of an aggregate, GROUP BY or DISTINCT query.
    Whole(Vec<Value>),
}

struct Entry {
    key: ResultKey,
    result: Arc<CachedResult>,
    used: u64,
}

/// The cache of one emulator.
#[derive(Default)]
pub struct ResultCache {
    inner: Mutex<(Vec<Entry>, u64)>,
}

impl ResultCache {
    /// The answer cached under `key`, if any.
    pub fn get(&self, key: &ResultKey) -> Option<Arc<CachedResult>> {
        let mut inner = self.inner.lock().ok()?;
        inner.1 += 1;
        let tick = inner.1;
        let entry = inner.0.iter_mut().find(|e| &e.key == key)?;
        entry.used = tick;
        Some(entry.result.clone())
    }

    /// Keeps `result` under `key`, dropping the least recently used entry past the limit.
    pub fn put(&self, key: ResultKey, result: Arc<CachedResult>) {
        let Ok(mut inner) = self.inner.lock() else {
            return;
        };
        inner.1 += 1;
        let used = inner.1;
        let entries = &mut inner.0;
        entries.retain(|e| e.key != key);
        if entries.len() >= MAX_ENTRIES {
            if let Some(oldest) = entries
                .iter()
                .enumerate()
                .min_by_key(|(_, e)| e.used)
                .map(|(i, _)| i)
            {
                entries.swap_remove(oldest);
            }
        }
        entries.push(Entry { key, result, used });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(text: &str, lsn: u64) -> ResultKey {
        ResultKey {
            container: "c".into(),
            text: text.into(),
            params: "{}".into(),
            region: 0,
            ranges: vec![("0".to_owned(), lsn)],
            only_epk: None,
        }
    }

    fn whole(n: i64) -> Arc<CachedResult> {
        Arc::new(CachedResult::Whole(vec![Value::from(n)]))
    }

    fn value(r: Option<Arc<CachedResult>>) -> Option<i64> {
        match r.as_deref() {
            Some(CachedResult::Whole(v)) => v[0].as_i64(),
            _ => None,
        }
    }

    #[test]
    fn entries_are_found_by_every_part_of_their_key_and_the_oldest_leaves_first() {
        let cache = ResultCache::default();
        cache.put(key("q", 5), whole(1));
        assert_eq!(value(cache.get(&key("q", 5))), Some(1));
        assert_eq!(
            value(cache.get(&key("q", 6))),
            None,
            "a write moved the LSN"
        );
        assert_eq!(value(cache.get(&key("other", 5))), None);
        cache.put(key("q", 5), whole(2));
        assert_eq!(value(cache.get(&key("q", 5))), Some(2));
        for i in 0..MAX_ENTRIES as u64 {
            cache.put(key("filler", 100 + i), whole(0));
            // Keeps "q" the most recently used.
            assert!(cache.get(&key("q", 5)).is_some());
        }
        assert_eq!(value(cache.get(&key("q", 5))), Some(2));
        assert!(cache.get(&key("filler", 100)).is_none());
    }
}

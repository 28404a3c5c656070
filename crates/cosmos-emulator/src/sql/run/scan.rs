//! Reading the documents of a build (ORDER BY, aggregates, GROUP BY, DISTINCT; the per-range
//! aggregates of a plan): the ranges of its scope in order, each at the LSN the request reads it
//! at, in the container's stable order (effective partition key, then id), from a resume position
//! on. Streaming pages read in creation order instead (`scan_created.rs`). Documents are taken a chunk at a time under the partition's read lock, which is
//! released before any of them is evaluated, so no query holds a lock while it works. A query
//! that uses the index ([`uses_index`]) passes by the items kept out of it.

use std::ops::Bound;
use std::sync::Arc;

use super::Execution;
use crate::protocol::ApiError;
use crate::sql::index_use::uses_index;
use crate::store::live;
use crate::store::{DocKey, StoredDoc};

/// Documents read from a partition per lock acquisition.
const SCAN_CHUNK: usize = 256;

pub(super) fn poisoned() -> ApiError {
    ApiError::new(500, "A partition lock was poisoned.")
}

/// Counts a document a scan read toward the request's metering (documents and bytes read).
pub(super) fn count_read(ex: &Execution<'_>, doc: &StoredDoc) {
    ex.docs_read.set(ex.docs_read.get() + 1);
    ex.bytes_read.set(ex.bytes_read.get() + doc.body.len());
}

/// Each range's id and the LSN this request reads it at (the reply notes what was read).
pub(super) fn read_points(ex: &Execution<'_>) -> Result<Vec<(String, u64)>, ApiError> {
    let mut lsns = Vec::with_capacity(ex.scope.ranges.len());
    for &range in &ex.scope.ranges {
        let lock = ex
            .container
            .partition(range)
            .ok_or_else(|| ApiError::new(500, "A partition key range has no partition."))?;
        let partition = lock.read().map_err(|_| poisoned()).and_then(live)?;
        let lsn = ex.reads.read_point(range, &partition)?;
        lsns.push((ex.container.range_id(range).to_owned(), lsn));
    }
    Ok(lsns)
}

/// Each range's mark of the writes only the serving region serves (see
/// [`Partition::local_state`](crate::store::Partition::local_state)): 0 where it has none.
pub(super) fn local_marks(ex: &Execution<'_>) -> Result<Vec<u64>, ApiError> {
    let mut marks = Vec::with_capacity(ex.scope.ranges.len());
    for &range in &ex.scope.ranges {
        let lock = ex
            .container
            .partition(range)
            .ok_or_else(|| ApiError::new(500, "A partition key range has no partition."))?;
        let partition = lock.read().map_err(|_| poisoned()).and_then(live)?;
        let (any, generation) = partition.local_state(ex.region);
        marks.push(if any { generation } else { 0 });
    }
    Ok(marks)
}

/// A scan over the scope's documents.
pub(super) struct DocScan<'e, 'a> {
    ex: &'e Execution<'a>,
    /// The LSN of each range, when read up front; else each range's is read when reached.
    lsns: Option<&'e [(String, u64)]>,
    /// Index into the scope's ranges.
    range: usize,
    lsn: Option<u64>,
    /// Where the scan starts (inclusive), until the first document is returned.
    start: Option<DocKey>,
    /// The last document returned (the scan goes on strictly after it).
    cursor: Option<DocKey>,
    chunk: std::vec::IntoIter<(DocKey, Arc<StoredDoc>)>,
    /// Documents returned.
    pub scanned: usize,
    /// Whether items kept out of the index are passed by.
    indexed_only: bool,
}

impl<'e, 'a> DocScan<'e, 'a> {
    pub(super) fn new(
        ex: &'e Execution<'a>,
        lsns: Option<&'e [(String, u64)]>,
        start: Option<DocKey>,
    ) -> Self {
        Self {
            ex,
            lsns,
            range: 0,
            lsn: None,
            start,
            cursor: None,
            chunk: Vec::new().into_iter(),
            scanned: 0,
            indexed_only: uses_index(ex.query),
        }
    }

    /// The next document, if any.
    pub(super) fn next(&mut self) -> Result<Option<(DocKey, Arc<StoredDoc>)>, ApiError> {
        loop {
            if let Some((key, doc)) = self.chunk.next() {
                self.cursor = Some(key.clone());
                if self.indexed_only && !doc.indexed {
                    continue;
                }
                self.scanned += 1;
                count_read(self.ex, &doc);
                return Ok(Some((key, doc)));
            }
            let Some(&range) = self.ex.scope.ranges.get(self.range) else {
                return Ok(None);
            };
            let lock = self
                .ex
                .container
                .partition(range)
                .ok_or_else(|| ApiError::new(500, "A partition key range has no partition."))?;
            let chunk = {
                let partition = lock.read().map_err(|_| poisoned()).and_then(live)?;
                let lsn = match (self.lsn, self.lsns) {
                    (Some(lsn), _) => lsn,
                    (None, Some(lsns)) => lsns.get(self.range).map_or(0, |(_, l)| *l),
                    (None, None) => self.ex.reads.read_point(range, &partition)?,
                };
                self.lsn = Some(lsn);
                // Ranges hold ascending, disjoint stretches of keys, so one position bounds every
                // range's scan.
                let from = match (&self.cursor, &self.start) {
                    (Some(c), _) => Bound::Excluded(c),
                    (None, Some(s)) => Bound::Included(s),
                    (None, None) => Bound::Unbounded,
                };
                partition.scan_from_in(
                    lsn,
                    from,
                    self.ex.scope.only_epk,
                    SCAN_CHUNK,
                    Some(self.ex.region),
                )
            };
            if chunk.is_empty() {
                self.range += 1;
                self.lsn = None;
                continue;
            }
            self.chunk = chunk.into_iter();
        }
    }
}

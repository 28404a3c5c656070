//! Reading a streaming page's documents in creation order (`_rid` order within a range, as the
//! service lists a query without ORDER BY), one range a page: the range the position names, from
//! the item it names when the range lies within the position's span, else from the range's start.
//! Documents are taken a chunk at a time under the partition's read lock, released before any of
//! them is evaluated. A query that uses the index passes by the items kept out of it.

use std::ops::Bound;
use std::sync::Arc;

use super::scan::{count_read, poisoned};
use super::token::CreatedAt;
use super::Execution;
use crate::epk::{epk_hex, Epk};
use crate::protocol::ApiError;
use crate::sql::index_use::uses_index;
use crate::store::creation_order::Ordinal;
use crate::store::live;
use crate::store::{DocKey, StoredDoc};

/// Documents read from a partition per lock acquisition.
const SCAN_CHUNK: usize = 256;

/// A scan over one range of the scope, in creation order.
pub(super) struct CreatedScan<'e, 'a> {
    ex: &'e Execution<'a>,
    /// Index into the scope's ranges (past the end: nothing to read).
    range: usize,
    lsn: Option<u64>,
    /// Where the scan starts (inclusive) until the first document is returned.
    start: Option<Ordinal>,
    /// The position's span, carried to the next range's token.
    span: (String, Option<String>),
    carried: Option<(u64, u16)>,
    carried_row: u64,
    cursor: Option<Ordinal>,
    chunk: std::vec::IntoIter<(Ordinal, DocKey, Arc<StoredDoc>)>,
    pub scanned: usize,
    indexed_only: bool,
}

/// Whether the range `[min, max)` lies within the span `[span_min, span_max)`.
fn within(min: Epk, max: Option<Epk>, span_min: Epk, span_max: Option<Epk>) -> bool {
    let below_max = match (max, span_max) {
        (_, None) => true,
        (None, Some(_)) => false,
        (Some(m), Some(s)) => m <= s,
    };
    min >= span_min && below_max
}

impl<'e, 'a> CreatedScan<'e, 'a> {
    /// A scan from `after` (the scope's first range from its start when absent); also the rows
    /// of the first document to skip (when the scan starts at the position's item).
    pub(super) fn new(ex: &'e Execution<'a>, after: Option<&CreatedAt>) -> Result<Self, ApiError> {
        let mut scan = Self {
            ex,
            range: 0,
            lsn: None,
            start: None,
            span: (String::new(), None),
            carried: None,
            carried_row: 0,
            cursor: None,
            chunk: Vec::new().into_iter(),
            scanned: 0,
            indexed_only: uses_index(ex.query),
        };
        if let Some(at) = after {
            let (go_on, span_min, span_max) = at.epks()?;
            let holding = ex.container.range_index(go_on);
            scan.range = ex
                .scope
                .ranges
                .iter()
                .position(|&r| r >= holding)
                .unwrap_or(ex.scope.ranges.len());
            scan.span = at.span.clone();
            scan.carried = at.at;
            scan.carried_row = at.row;
            if let Some(&range) = ex.scope.ranges.get(scan.range) {
                let (min, max) = ex.container.range_epks(range);
                if within(min, max, span_min, span_max) {
                    scan.start = at.at;
                }
            }
        }
        Ok(scan)
    }

    /// The rows of the document at `at` already consumed: the position's, when the scan started
    /// at its item.
    pub(super) fn rows_consumed(&self, at: Ordinal) -> u64 {
        if self.start == Some(at) {
            self.carried_row
        } else {
            0
        }
    }

    /// The position of row `row` of the document at `at`, in the range being read.
    pub(super) fn position(&self, at: Ordinal, row: u64) -> CreatedAt {
        let range = self.ex.scope.ranges.get(self.range).copied().unwrap_or(0);
        let (min, max) = self.ex.container.range_epks(range);
        CreatedAt {
            range: epk_hex(min),
            span: (epk_hex(min), max.map(epk_hex)),
            at: Some(at),
            row,
        }
    }

    /// After the range ran out: where the next page goes on (the next range of the scope, the
    /// position's span carried), if there is one.
    pub(super) fn next_range(&self) -> Option<CreatedAt> {
        let &next = self.ex.scope.ranges.get(self.range + 1)?;
        let (min, _) = self.ex.container.range_epks(next);
        Some(CreatedAt {
            range: epk_hex(min),
            span: self.span.clone(),
            at: self.carried,
            row: self.carried_row,
        })
    }

    /// The next document of the range, if any.
    pub(super) fn next(&mut self) -> Result<Option<(Ordinal, DocKey, Arc<StoredDoc>)>, ApiError> {
        loop {
            if let Some((at, key, doc)) = self.chunk.next() {
                self.cursor = Some(at);
                if self.indexed_only && !doc.indexed {
                    continue;
                }
                self.scanned += 1;
                count_read(self.ex, &doc);
                return Ok(Some((at, key, doc)));
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
                let lsn = match self.lsn {
                    Some(lsn) => lsn,
                    None => self.ex.reads.read_point(range, &partition)?,
                };
                self.lsn = Some(lsn);
                let from = match (self.cursor, self.start) {
                    (Some(c), _) => Bound::Excluded(c),
                    (None, Some(s)) => Bound::Included(s),
                    (None, None) => Bound::Unbounded,
                };
                partition.scan_in_order(
                    lsn,
                    from,
                    self.ex.scope.only_epk,
                    SCAN_CHUNK,
                    Some(self.ex.region),
                )
            };
            if chunk.is_empty() {
                return Ok(None);
            }
            self.chunk = chunk.into_iter();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::within;
    use crate::epk::Epk;

    #[test]
    fn a_range_lies_within_a_span_when_both_bounds_do() {
        let e = |n: u128| Epk::single(n);
        let table = [
            ((e(0), None), (e(0), None), true),
            ((e(0), Some(e(5))), (e(0), None), true),
            ((e(5), None), (e(0), None), true),
            ((e(0), None), (e(0), Some(e(5))), false),
            ((e(0), Some(e(5))), (e(0), Some(e(5))), true),
            ((e(5), Some(e(9))), (e(0), Some(e(5))), false),
            ((e(0), Some(e(9))), (e(1), Some(e(9))), false),
        ];
        for ((min, max), (smin, smax), expected) in table {
            assert_eq!(within(min, max, smin, smax), expected, "{min:?} {max:?}");
        }
    }
}

//! Streaming pages (no ORDER BY, aggregate, GROUP BY or DISTINCT): rows are answered as they are
//! read, from the continuation's position (document and row) on, until the page holds its items
//! or bytes, its work or time budget runs out, or TOP/LIMIT is reached. A query over several
//! ranges (a cross-partition query the gateway serves) is answered one range per page, as the
//! service's gateway answers it one partition at a time: a page ends where its range ends (an
//! empty page when nothing there matches), and its continuation names the next range.

use super::budget::{over_budget, Halt};
use super::scan::DocScan;
use super::token::{Position, QueryToken};
use super::{Execution, Page, Window};
use crate::protocol::ApiError;
use crate::sql::exec::{for_each_row, passes, Flow};
use crate::sql::id_filter::candidate_ids;
use crate::store::DocKey;

/// Why a page stopped inside a document.
enum Stop {
    /// TOP/LIMIT reached: the query is done.
    Done,
    /// The page is full or out of budget: it resumes at the row it stopped at.
    Resume,
}

/// One streaming page, from `after` (position, rows that passed the filter so far) on.
pub(super) fn page(
    ex: &Execution<'_>,
    after: Option<(Position, u64)>,
    window: &Window,
) -> Result<Page, ApiError> {
    let q = ex.query;
    let ctx = ex.ctx();
    let mut page = Page::default();
    let (start, mut skip): (Option<DocKey>, u64) = match &after {
        Some((at, _)) => (Some(at.key()?), at.row),
        None => (None, 0),
    };
    let mut seen = after.as_ref().map_or(0, |a| a.1);
    // Read-many queries: only documents with these ids can pass the WHERE clause (a `FROM c`
    // without JOIN binds one row per document).
    let only_ids = candidate_ids(q, ex.params);
    let mut scan = scan_from(ex, start.clone());
    // Whether the page has consumed a row (or a document) yet: until it has, running out of
    // budget means the row alone needs more than a page.
    let mut progress = false;
    while let Some((key, doc)) = scan.next()? {
        let first_row = if start.as_ref() == Some(&key) {
            std::mem::take(&mut skip)
        } else {
            0
        };
        if window.end.is_some_and(|end| seen >= end) {
            break;
        }
        if ex.full(page.items.len(), page.bytes) || (progress && ex.meter.spent()) {
            page.next = Some(resume(&key, first_row, seen));
            break;
        }
        // A document whose id the WHERE clause cannot let through binds its one row, which fails
        // the filter, without being read: the page, its continuation and its charge are those of
        // the full scan.
        if only_ids.as_ref().is_some_and(|ids| !ids.contains(&key.id)) {
            ex.meter.charge(1).ok();
            progress = true;
            continue;
        }
        let value = match ex.parse(&doc) {
            Ok(v) => v,
            Err(Halt::Budget(_)) if progress => {
                page.next = Some(resume(&key, first_row, seen));
                break;
            }
            Err(Halt::Budget(limit)) => return Err(over_budget(limit)),
            Err(Halt::Fail(e)) => return Err(e),
        };
        let mut row_no = first_row;
        let mut stop = None;
        let walked = for_each_row(q, Some(&value), None, &ctx, first_row, &mut |row| {
            if window.end.is_some_and(|end| seen >= end) {
                stop = Some(Stop::Done);
                return Ok(Flow::Stop);
            }
            if ex.full(page.items.len(), page.bytes) || (progress && ex.meter.spent()) {
                stop = Some(Stop::Resume);
                return Ok(Flow::Stop);
            }
            if passes(q, row, &ctx)? {
                if seen >= window.offset {
                    // Evaluated in full before the row counts: a page that stops inside the
                    // projection resumes at this row.
                    if let Some(item) = ex.project_bytes(row, &doc)? {
                        page.push(item);
                    }
                }
                seen += 1;
            }
            row_no += 1;
            progress = true;
            Ok(Flow::Go)
        });
        match walked.map_err(Halt::from) {
            Ok(_) => match stop {
                None => progress = true,
                Some(Stop::Done) => break,
                Some(Stop::Resume) => {
                    page.next = Some(resume(&key, row_no, seen));
                    break;
                }
            },
            Err(Halt::Budget(_)) if progress => {
                page.next = Some(resume(&key, row_no, seen));
                break;
            }
            Err(Halt::Budget(limit)) => return Err(over_budget(limit)),
            Err(Halt::Fail(e)) => return Err(e),
        }
    }
    if page.next.is_none() {
        page.next = scan
            .next_range()
            .map(|next| resume(&range_start(ex, next), 0, seen));
    }
    page.scanned = scan.scanned;
    Ok(page)
}

/// The scan of a streaming page from `start`: over a scope of several ranges, one range a page.
fn scan_from<'e, 'a>(ex: &'e Execution<'a>, start: Option<DocKey>) -> DocScan<'e, 'a> {
    let scan = DocScan::new(ex, None, start);
    if ex.scope.ranges.len() > 1 {
        scan.one_range_at_a_time()
    } else {
        scan
    }
}

/// The continuation of a page that stops at row `row` of `key`, `seen` rows having passed.
fn resume(key: &DocKey, row: u64, seen: u64) -> QueryToken {
    QueryToken::Scan {
        at: Position::new(key, row),
        seen,
    }
}

/// Where the scope's range number `next` starts: before its first document.
fn range_start(ex: &Execution<'_>, next: usize) -> DocKey {
    let range = ex.scope.ranges[next];
    let (min, _) = ex.container.range_epks(range);
    DocKey {
        epk: min,
        id: String::new(),
    }
}

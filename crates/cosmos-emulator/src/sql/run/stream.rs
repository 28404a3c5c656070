//! Streaming pages (no ORDER BY, aggregate, GROUP BY or DISTINCT): rows are answered as they are
//! read, in creation order (`_rid` order within a range, as the service answers), from the
//! continuation's position (document and row) on, until the page holds its items
//! or bytes, its work or time budget runs out, or TOP/LIMIT is reached. A query over several
//! ranges (a cross-partition query the gateway serves) is answered one range per page, as the
//! service's gateway answers it one partition at a time: a page ends where its range ends (an
//! empty page when nothing there matches), and its continuation names the next range.

use super::budget::{over_budget, Halt};
use super::scan_created::CreatedScan;
use super::token::{CreatedAt, QueryToken};
use super::{Execution, Page, Window};
use crate::protocol::ApiError;
use crate::sql::exec::{for_each_row, passes, Flow};
use crate::sql::id_filter::candidate_ids;

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
    after: Option<(CreatedAt, u64)>,
    window: &Window,
) -> Result<Page, ApiError> {
    let q = ex.query;
    let ctx = ex.ctx();
    let mut page = Page::default();
    let mut seen = after.as_ref().map_or(0, |a| a.1);
    // Read-many queries: only documents with these ids can pass the WHERE clause (a `FROM c`
    // without JOIN binds one row per document).
    let only_ids = candidate_ids(q, ex.params);
    let mut scan = CreatedScan::new(ex, after.as_ref().map(|a| &a.0))?;
    // Whether the page has consumed a row (or a document) yet: until it has, running out of
    // budget means the row alone needs more than a page.
    let mut progress = false;
    while let Some((at, key, doc)) = scan.next()? {
        let first_row = scan.rows_consumed(at);
        if window.end.is_some_and(|end| seen >= end) {
            break;
        }
        if ex.full(page.items.len(), page.bytes) || (progress && ex.meter.spent()) {
            page.next = Some(resume(scan.position(at, first_row), seen));
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
                page.next = Some(resume(scan.position(at, first_row), seen));
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
                ex.matched.note(&doc);
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
                    page.next = Some(resume(scan.position(at, row_no), seen));
                    break;
                }
            },
            Err(Halt::Budget(_)) if progress => {
                page.next = Some(resume(scan.position(at, row_no), seen));
                break;
            }
            Err(Halt::Budget(limit)) => return Err(over_budget(limit)),
            Err(Halt::Fail(e)) => return Err(e),
        }
    }
    let done = window.end.is_some_and(|end| seen >= end);
    if page.next.is_none() && !done {
        page.next = scan.next_range().map(|next| resume(next, seen));
    }
    page.scanned = scan.scanned;
    Ok(page)
}

/// The continuation of a page that stops at `at`, `seen` rows having passed.
fn resume(at: CreatedAt, seen: u64) -> QueryToken {
    QueryToken::Scan { at, seen }
}

//! Pages of the per-range aggregate queries of a query plan (see
//! [`combines_across_pages`](crate::sql::grouping::combines_across_pages)): as the service does,
//! a page whose work or time budget ends before its scope is read answers the partial aggregates
//! (or partial groups) of the rows it read, with a continuation at the row where it stopped; the
//! SDKs combine the rows of every page of every range. Nothing is carried between pages but the
//! position, so such a query holds no state and no memory beyond one page's.

use super::budget::{hold, over_budget, sql_error, Halt};
use super::scan::{read_points, DocScan};
use super::token::{Position, QueryToken};
use super::{Execution, Page};
use crate::protocol::ApiError;
use crate::sql::collect::finish_gathered;
use crate::sql::eval::Ctx;
use crate::sql::exec::{for_each_row, passes, Flow};
use crate::sql::grouping::Gathered;
use crate::sql::meter::Meter;
use crate::store::DocKey;

/// One page of a combinable aggregate query, from the row `at` names on.
pub(super) fn page(ex: &Execution<'_>, at: Option<Position>) -> Result<Page, ApiError> {
    let q = ex.query;
    let ctx = ex.ctx();
    let mut page = Page::default();
    let lsns = read_points(ex)?;
    let (start, mut skip): (Option<DocKey>, u64) = match &at {
        Some(p) => (Some(p.key()?), p.row),
        None => (None, 0),
    };
    let mut gathered = Gathered::new(q);
    let mut reservation = ex.state.memory.reservation();
    let mut scan = DocScan::new(ex, Some(&lsns), start.clone());
    let mut progress = false;
    // Where the page stopped, when the scope is not read to its end.
    let mut stopped: Option<(DocKey, u64)> = None;
    // A page of groups also ends at its item count.
    let groups_full = |g: &Gathered| !q.group_by.is_empty() && g.len() >= ex.max_items;
    while let Some((key, doc)) = scan.next()? {
        let first_row = if start.as_ref() == Some(&key) {
            std::mem::take(&mut skip)
        } else {
            0
        };
        if progress && (ex.meter.spent() || groups_full(&gathered)) {
            stopped = Some((key, first_row));
            break;
        }
        let value = match ex.parse(&doc) {
            Ok(v) => v,
            Err(Halt::Budget(_)) if progress => {
                stopped = Some((key, first_row));
                break;
            }
            Err(Halt::Budget(limit)) => return Err(over_budget(limit)),
            Err(Halt::Fail(e)) => return Err(e),
        };
        let mut row_no = first_row;
        let mut paused = false;
        let mut refused: Option<ApiError> = None;
        let walked = for_each_row(q, Some(&value), None, &ctx, first_row, &mut |row| {
            if progress && (ex.meter.spent() || groups_full(&gathered)) {
                paused = true;
                return Ok(Flow::Stop);
            }
            if passes(q, row, &ctx)? {
                ex.matched.note(&doc);
                gathered.add(q, row, &ctx)?;
            }
            row_no += 1;
            progress = true;
            if let Err(e) = hold(&ex.limits, ex.state, &mut reservation, gathered.held()) {
                refused = Some(e);
                return Ok(Flow::Stop);
            }
            Ok(Flow::Go)
        });
        if let Some(e) = refused {
            return Err(e);
        }
        match walked.map_err(Halt::from) {
            Ok(_) if paused => {
                stopped = Some((key, row_no));
                break;
            }
            Ok(_) => progress = true,
            Err(Halt::Budget(_)) if progress => {
                stopped = Some((key, row_no));
                break;
            }
            Err(Halt::Budget(limit)) => return Err(over_budget(limit)),
            Err(Halt::Fail(e)) => return Err(e),
        }
    }
    page.scanned = scan.scanned;
    // Turning the gathered rows into the page's answer gets the page's time again.
    let meter = Meter::new(u64::MAX, ex.limits.page_time);
    let finish = Ctx {
        params: ex.params,
        aggregates: None,
        work: &meter,
        subquery: crate::sql::collect::run_subquery,
    };
    for v in finish_gathered(q, gathered, None, &finish).map_err(sql_error)? {
        page.push(serde_json::to_vec(&v).unwrap_or_default().into());
    }
    page.next = stopped.map(|(key, row)| QueryToken::Partial {
        at: Position::new(&key, row),
    });
    Ok(page)
}

//! Pages of the per-range aggregate queries of a query plan (see
//! [`combines_across_pages`](crate::sql::grouping::combines_across_pages)): as the service does,
//! a page whose work or time budget ends before its scope is read answers the partial aggregates
//! (or partial groups) of the documents it read, with a continuation after the last of them; the
//! SDKs combine the rows of every page of every range. Nothing is carried between pages but the
//! position, so such a query holds no state and no memory beyond one page's.

use std::ops::Bound;

use serde_json::Value;

use super::query_budget::{exceeded, next_step, Step};
use super::query_build::read_points;
use super::query_page::{parse_doc, sql_error, Budget, Page, Scope};
use super::query_token::{Position, QueryToken};
use super::target::live;
use crate::exchange::RequestCtx;
use crate::protocol::ApiError;
use crate::sql::ast::Query;
use crate::sql::eval::Ctx;
use crate::sql::exec::{bind, finish_gathered, passes, source_names};
use crate::sql::grouping::Gathered;
use crate::store::{Container, DocKey};

/// Documents read from a partition per lock acquisition.
const SCAN_CHUNK: usize = 256;

/// Whether the ranges of `scope` from `index` on hold a document after `after`.
fn more_after(
    container: &Container,
    scope: &Scope,
    lsns: &[(String, u64)],
    index: usize,
    after: Option<&DocKey>,
) -> Result<bool, ApiError> {
    for (&range, (_, lsn)) in scope.ranges.iter().zip(lsns).skip(index) {
        let lock = container
            .partition(range)
            .ok_or_else(|| ApiError::new(500, "A partition key range has no partition."))?;
        let partition = lock
            .read()
            .map_err(|_| ApiError::new(500, "A partition lock was poisoned."))
            .and_then(live)?;
        let from = after.map_or(Bound::Unbounded, Bound::Excluded);
        if !partition
            .scan_from(*lsn, from, scope.only_epk, 1)
            .is_empty()
        {
            return Ok(true);
        }
    }
    Ok(false)
}

/// One page of a combinable aggregate query, strictly after the document `after`.
pub fn partial_page(
    ctx: &RequestCtx<'_>,
    container: &Container,
    q: &Query,
    ectx: &Ctx<'_>,
    scope: &Scope,
    after: Option<Position>,
    budget: &Budget,
) -> Result<Page, ApiError> {
    let mut page = Page::new();
    let names = source_names(q);
    let lsns = read_points(ctx, container, scope, &mut page)?;
    let mut after: Option<DocKey> = after.map(|p| p.key()).transpose()?;
    let mut gathered = Gathered::new(q);
    let mut held = 0usize;
    let mut stopped = false;
    'ranges: for (index, (&range, (_, lsn))) in scope.ranges.iter().zip(&lsns).enumerate() {
        let lock = container
            .partition(range)
            .ok_or_else(|| ApiError::new(500, "A partition key range has no partition."))?;
        loop {
            let chunk = {
                let partition = lock
                    .read()
                    .map_err(|_| ApiError::new(500, "A partition lock was poisoned."))
                    .and_then(live)?;
                let from = match &after {
                    Some(k) => Bound::Excluded(k),
                    None => Bound::Unbounded,
                };
                partition.scan_from(*lsn, from, scope.only_epk, SCAN_CHUNK)
            };
            if chunk.is_empty() {
                break;
            }
            for (key, doc) in chunk {
                page.scanned += 1;
                let value: Value = parse_doc(&doc)?;
                let doc_bytes = doc.body.len();
                for row in bind(q, Some(value), None, ectx).map_err(sql_error)? {
                    if passes(q, &names, &row, None, ectx).map_err(sql_error)? {
                        held += gathered
                            .add(q, &names, row, doc_bytes, None, ectx)
                            .map_err(sql_error)?;
                    }
                }
                after = Some(key);
                match next_step(budget.spent(ectx.work.get(), held), &budget.limits) {
                    Step::Refuse => return Err(exceeded(&budget.limits)),
                    Step::Yield => stopped = true,
                    // A page of groups also ends at its item count.
                    Step::Go => {
                        stopped = !q.group_by.is_empty() && gathered.len() >= budget.max_items
                    }
                }
                if stopped {
                    // A page that read the scope's last document is its last page (an empty
                    // page after it would end an SDK's GROUP BY before its other ranges).
                    stopped = more_after(container, scope, &lsns, index, after.as_ref())?;
                    break 'ranges;
                }
            }
        }
    }
    for v in finish_gathered(q, gathered, None, ectx).map_err(sql_error)? {
        page.items.push(serde_json::to_vec(&v).unwrap_or_default());
    }
    if stopped {
        page.next = after.map(|k| QueryToken::Partial {
            after: Position::new(&k, 0),
        });
    }
    Ok(page)
}

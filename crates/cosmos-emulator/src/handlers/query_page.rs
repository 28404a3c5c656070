//! One page of a query over a set of partition key ranges: documents are read in the container's
//! stable order (effective partition key, then id), so a page resumes from a position in that
//! order whichever ranges hold it.
//!
//! Three ways to answer, by what the query needs:
//! - streaming (no ORDER BY, aggregate, GROUP BY or DISTINCT): scan from the token's position and
//!   stop at the page's item, byte, work or time budget;
//! - ordered (ORDER BY): every matching row sorted by the keys and then by document order, resumed
//!   strictly after the last row returned;
//! - whole-result (aggregates, GROUP BY, DISTINCT, no FROM): the answer, paged through;
//! - the per-range aggregate queries of a query plan: partial aggregates page by page, which the
//!   SDKs combine ([`super::query_partial`]).
//!
//! The last two are computed once per state of the data and kept between pages
//! ([`super::query_sorted`]).

use std::cell::Cell;
use std::collections::HashMap;
use std::ops::Bound;
use std::sync::Arc;

use serde_json::Value;

use super::consistency::{read_lsn, session_token};
use super::query_budget::{next_step, Spent, Step};
use super::query_build::BuildAt;
use super::query_partial::partial_page;
use super::query_sorted::{ordered, whole_result, QueryIdentity};
use super::query_token::{Position, QueryToken};
use super::replica_headers::{replica_state, ReplicaState};
use super::target::live;
use crate::epk::EpkFilter;
use crate::exchange::{QueryLimits, RequestCtx};
use crate::protocol::ApiError;
use crate::sql::ast::Query;
use crate::sql::eval::Ctx;
use crate::sql::exec::{bind, count_of, needs_all_rows, passes, project, source_names, Row};
use crate::sql::grouping::combines_across_pages;
use crate::sql::id_filter::candidate_ids;
use crate::sql::SqlError;
use crate::store::{Container, DocKey, StoredDoc};

/// Documents read from a partition per lock acquisition while streaming.
const SCAN_CHUNK: usize = 256;

/// What a page may use.
pub struct Budget {
    pub max_items: usize,
    pub max_bytes: usize,
    /// Work, time and memory ([`super::query_budget::next_step`]).
    pub limits: QueryLimits,
    pub started: std::time::Instant,
}

impl Budget {
    /// What the page has used: the work counted in `work`, the time since it started, `held`.
    pub fn spent(&self, work: u64, held: usize) -> Spent {
        Spent {
            work,
            elapsed: self.started.elapsed(),
            held,
        }
    }
}

/// The ranges a query reads and, for a single-partition or prefix query, the keys it reads.
pub struct Scope {
    pub ranges: Vec<usize>,
    pub only_epk: Option<EpkFilter>,
}

/// One page of results.
pub struct Page {
    /// Each result's JSON text.
    pub items: Vec<Vec<u8>>,
    pub next: Option<QueryToken>,
    pub scanned: usize,
    pub session_tokens: Vec<String>,
    /// The replication state of the last range read (its headers, on a single-range page).
    pub replica: Option<ReplicaState>,
}

impl Page {
    pub(super) fn new() -> Self {
        Self {
            items: Vec::new(),
            next: None,
            scanned: 0,
            session_tokens: Vec::new(),
            replica: None,
        }
    }

    fn bytes(&self) -> usize {
        self.items.iter().map(Vec::len).sum()
    }

    pub(super) fn full(&self, budget: &Budget) -> bool {
        self.items.len() >= budget.max_items || self.bytes() >= budget.max_bytes
    }
}

pub(super) fn sql_error(e: SqlError) -> ApiError {
    ApiError::bad_request(format!("The query could not be run: {e}"))
}

pub(super) fn parse_doc(doc: &StoredDoc) -> Result<Value, ApiError> {
    serde_json::from_slice(&doc.body)
        .map_err(|e| ApiError::new(500, format!("A stored item could not be read: {e}")))
}

/// Runs one page of `q`.
#[allow(clippy::too_many_arguments)]
pub fn run_page(
    ctx: &RequestCtx<'_>,
    container: &Arc<Container>,
    q: &Query,
    text: &str,
    params: &HashMap<String, Value>,
    scope: &Scope,
    token: Option<QueryToken>,
    budget: &Budget,
) -> Result<Page, ApiError> {
    let identity = &QueryIdentity { text, params };
    let work = Cell::new(0);
    let ectx = Ctx {
        params,
        aggregates: None,
        work: &work,
    };
    let offset = count_of(q.offset.as_ref(), &ectx).map_err(sql_error)?;
    let take = [
        count_of(q.limit.as_ref(), &ectx).map_err(sql_error)?,
        count_of(q.top.as_ref(), &ectx).map_err(sql_error)?,
    ]
    .into_iter()
    .flatten()
    .min();
    let window = Window {
        offset: offset.unwrap_or(0),
        end: take.map(|t| offset.unwrap_or(0).saturating_add(t)),
    };
    // A build in progress carries where its pages resume once it is done.
    let (token, at) = match token {
        Some(QueryToken::Build { id, after, then }) => {
            (then.map(|t| *t), Some(BuildAt { id, after }))
        }
        other => (other, None),
    };
    if q.from.is_some() && combines_across_pages(q) {
        let after = match (token, at) {
            (None, None) => None,
            (Some(QueryToken::Partial { after }), None) => Some(after),
            _ => return Err(kind_mismatch()),
        };
        return partial_page(ctx, container, q, &ectx, scope, after, budget);
    }
    if q.from.is_none() || needs_all_rows(q) {
        let start = match token {
            None => 0,
            Some(QueryToken::Results { n }) => n,
            Some(_) => return Err(kind_mismatch()),
        };
        return whole_result(ctx, container, q, identity, &ectx, scope, start, at, budget);
    }
    if !q.order_by.is_empty() {
        if !matches!(token, None | Some(QueryToken::Order { .. })) {
            return Err(kind_mismatch());
        }
        return ordered(
            ctx, container, q, identity, &ectx, scope, token, at, &window, budget,
        );
    }
    if at.is_some() {
        return Err(kind_mismatch());
    }
    let after = match token {
        None => None,
        Some(QueryToken::Scan { at, seen }) => Some((at, seen)),
        Some(_) => return Err(kind_mismatch()),
    };
    streaming(ctx, container, q, &ectx, scope, after, &window, budget)
}

fn kind_mismatch() -> ApiError {
    ApiError::bad_request("The continuation token belongs to a different kind of query.")
}

/// OFFSET and the row count after which nothing more is returned.
pub(super) struct Window {
    pub offset: u64,
    pub end: Option<u64>,
}

#[allow(clippy::too_many_arguments)]
fn streaming(
    ctx: &RequestCtx<'_>,
    container: &Container,
    q: &Query,
    ectx: &Ctx<'_>,
    scope: &Scope,
    after: Option<(Position, u64)>,
    window: &Window,
    budget: &Budget,
) -> Result<Page, ApiError> {
    let mut page = Page::new();
    let names = source_names(q);
    let (resume_key, resume_row) = match &after {
        Some((at, _)) => (Some(at.key()?), at.row),
        None => (None, 0),
    };
    let mut seen = after.as_ref().map_or(0, |a| a.1);
    let mut scanned = 0usize;
    // Read-many queries: only documents with these ids can pass the WHERE clause (a `FROM c`
    // without JOIN binds one row per document).
    let only_ids = candidate_ids(q, ectx.params);
    for &range in &scope.ranges {
        let lock = container
            .partition(range)
            .ok_or_else(|| ApiError::new(500, "A partition key range has no partition."))?;
        let range_id = container.range_id(range);
        let lsn = {
            let partition = lock
                .read()
                .map_err(|_| ApiError::new(500, "A partition lock was poisoned."))
                .and_then(live)?;
            let lsn = read_lsn(ctx, &partition, range_id)?;
            page.session_tokens
                .push(session_token(ctx, &partition, range_id, lsn));
            page.replica = Some(replica_state(ctx, &partition, lsn, None));
            lsn
        };
        let mut cursor: Option<DocKey> = None;
        loop {
            let chunk = {
                let partition = lock
                    .read()
                    .map_err(|_| ApiError::new(500, "A partition lock was poisoned."))
                    .and_then(live)?;
                let from = match (&cursor, &resume_key) {
                    (Some(c), _) => Bound::Excluded(c),
                    (None, Some(k)) => Bound::Included(k),
                    (None, None) => Bound::Unbounded,
                };
                partition.scan_from(lsn, from, scope.only_epk, SCAN_CHUNK)
            };
            let Some((last_key, _)) = chunk.last() else {
                break;
            };
            cursor = Some(last_key.clone());
            for (key, doc) in chunk {
                scanned += 1;
                // A document whose id the WHERE clause cannot let through binds its one row,
                // which fails the filter, without being read (`None`): the page, its
                // continuation and its charge are those of the full scan.
                let rows: Vec<Option<Row>> =
                    if only_ids.as_ref().is_some_and(|ids| !ids.contains(&key.id)) {
                        ectx.work.set(ectx.work.get() + 1);
                        vec![None]
                    } else {
                        let value = parse_doc(&doc)?;
                        bind(q, Some(value), None, ectx)
                            .map_err(sql_error)?
                            .into_iter()
                            .map(Some)
                            .collect()
                    };
                let skip = if resume_key.as_ref() == Some(&key) {
                    resume_row as usize
                } else {
                    0
                };
                let total = rows.len();
                for (i, row) in rows.into_iter().enumerate().skip(skip) {
                    if window.end.is_some_and(|end| seen >= end) {
                        page.scanned = scanned;
                        return Ok(page);
                    }
                    if page.full(budget) {
                        page.next = Some(QueryToken::Scan {
                            at: Position::new(&key, i as u64),
                            seen,
                        });
                        page.scanned = scanned;
                        return Ok(page);
                    }
                    let Some(row) = row else { continue };
                    if !passes(q, &names, &row, None, ectx).map_err(sql_error)? {
                        continue;
                    }
                    seen += 1;
                    if seen <= window.offset {
                        continue;
                    }
                    if let Some(v) = project(q, &names, &row, None, ectx).map_err(sql_error)? {
                        page.items.push(serde_json::to_vec(&v).unwrap_or_default());
                    }
                }
                let out_of_budget =
                    next_step(budget.spent(ectx.work.get(), 0), &budget.limits) != Step::Go;
                if out_of_budget && window.end.is_none_or(|end| seen < end) {
                    page.next = Some(QueryToken::Scan {
                        at: Position::new(&key, total as u64),
                        seen,
                    });
                    page.scanned = scanned;
                    return Ok(page);
                }
            }
        }
    }
    page.scanned = scanned;
    Ok(page)
}

//! Pages of queries that must see every row before their first page: ORDER BY (rows sorted by
//! their keys, then document order) and whole-result queries (aggregates, GROUP BY, DISTINCT).
//!
//! The sorted rows or final results are computed once per state of the data and kept in the
//! store's [`ResultCache`](crate::store::ResultCache); each later page finds its start by binary
//! search on the position its continuation names (ORDER BY) or by index (whole results), so
//! paging a large ORDER BY costs one scan and sort, not one per page. A write between pages moves
//! a range's LSN: the next page recomputes from the current state and still resumes strictly
//! after the last row returned.
//!
//! Computing an answer reads the whole scope under the page's work and time budget: a scope too
//! large for one page is read over several, each ending empty with a continuation, and the first
//! results come once it is read ([`super::query_build`]).

use std::cmp::Ordering;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use serde_json::Value;

use super::query_build::{build_page, read_points, BuildAt, Built};
use super::query_page::{sql_error, Budget, Page, Scope, Window};
use super::query_token::{Position, QueryToken, SortKey};
use crate::exchange::RequestCtx;
use crate::protocol::ApiError;
use crate::sql::ast::Query;
use crate::sql::eval::Ctx;
use crate::sql::exec::{
    bind, compare_keys, finish, finish_gathered, order_keys, passes, project, source_names,
};
use crate::sql::grouping::{row_bytes, Gathered};
use crate::store::{CachedResult, Container, DocKey, OrderedRow, ResultKey, MAX_ENTRY_BYTES};

/// What a query's answer depends on besides the data: its text and parameters.
pub struct QueryIdentity<'a> {
    pub text: &'a str,
    pub params: &'a HashMap<String, Value>,
}

/// A query's whole answer, or the continuation of its build when the page's budget ran out first.
enum Answer {
    Ready(Arc<CachedResult>),
    Building(BuildAt),
}

/// The answer for `scope` at the LSNs the request reads: from the cache, or built from every
/// document of the scope over as many pages as the budget needs ([`super::query_build`]). `fresh`
/// starts the gathered state, `feed` adds a document to it, `pause` tidies it when a page ends
/// mid-build and `done` turns it into the answer.
#[allow(clippy::too_many_arguments)]
fn answer<S: std::any::Any + Send>(
    ctx: &RequestCtx<'_>,
    container: &Container,
    identity: &QueryIdentity<'_>,
    scope: &Scope,
    at: Option<BuildAt>,
    budget: &Budget,
    page: &mut Page,
    work: &std::cell::Cell<u64>,
    fresh: impl FnOnce() -> S,
    feed: impl FnMut(&mut S, &DocKey, Value, usize) -> Result<usize, ApiError>,
    pause: impl FnMut(&mut S),
    done: impl FnOnce(S) -> Result<CachedResult, ApiError>,
) -> Result<Answer, ApiError> {
    let params: BTreeMap<&String, &Value> = identity.params.iter().collect();
    let lsns = read_points(ctx, container, scope, page)?;
    let cache_key = ResultKey {
        container: container.rid.clone(),
        text: identity.text.to_owned(),
        params: serde_json::to_string(&params).unwrap_or_default(),
        region: ctx.region,
        ranges: lsns.clone(),
        only_epk: scope.only_epk,
    };
    let cache = &ctx.shared.store.query_results;
    if at.is_none() {
        if let Some(hit) = cache.get(&cache_key) {
            return Ok(Answer::Ready(hit));
        }
    }
    let built = build_page(
        ctx, container, identity, scope, &lsns, at, budget, page, work, fresh, feed, pause,
    )?;
    match built {
        Built::Yielded { id, after } => Ok(Answer::Building(BuildAt { id, after })),
        Built::Done {
            state,
            consistent,
            held,
        } => {
            let result = Arc::new(done(state)?);
            if consistent && held <= MAX_ENTRY_BYTES {
                cache.put(cache_key, result.clone());
            }
            Ok(Answer::Ready(result))
        }
    }
}

/// The continuation of a page that ended mid-build: the build, then where its pages resume.
fn building(at: BuildAt, then: Option<QueryToken>) -> QueryToken {
    QueryToken::Build {
        id: at.id,
        after: at.after,
        then: then.map(Box::new),
    }
}

fn wrong_shape() -> ApiError {
    ApiError::new(500, "A cached query answer has the wrong shape.")
}

/// One page of an ORDER BY query, strictly after `after` (keys, position, rows seen so far), or
/// of its build (`at`).
#[allow(clippy::too_many_arguments)]
pub fn ordered(
    ctx: &RequestCtx<'_>,
    container: &Container,
    q: &Query,
    identity: &QueryIdentity<'_>,
    ectx: &Ctx<'_>,
    scope: &Scope,
    resume: Option<QueryToken>,
    at: Option<BuildAt>,
    window: &Window,
    budget: &Budget,
) -> Result<Page, ApiError> {
    let mut page = Page::new();
    let names = source_names(q);
    let after = match &resume {
        Some(QueryToken::Order { keys, at, seen }) => {
            let keys: Vec<Option<Value>> = keys.iter().map(SortKey::to_val).collect();
            Some((keys, at.key()?, at.row, *seen))
        }
        _ => None,
    };
    let cmp = |a: &OrderedRow, b: &OrderedRow| {
        compare_keys(q, &a.keys, &b.keys)
            .then_with(|| a.doc.cmp(&b.doc))
            .then_with(|| a.row.cmp(&b.row))
    };
    // Rows gathered so far and where the rows of this page's stretch of the scan begin (each
    // stretch is sorted when its page ends, so the final sort merges sorted runs).
    type Gathering = (Vec<OrderedRow>, usize);
    let answer = answer(
        ctx,
        container,
        identity,
        scope,
        at,
        budget,
        &mut page,
        ectx.work,
        || (Vec::new(), 0),
        |(rows, _): &mut Gathering, key: &DocKey, value: Value, doc_bytes: usize| {
            let mut held = 0;
            for (i, row) in bind(q, Some(value), None, ectx)
                .map_err(sql_error)?
                .into_iter()
                .enumerate()
            {
                if !passes(q, &names, &row, None, ectx).map_err(sql_error)? {
                    continue;
                }
                let keys = order_keys(q, &names, &row, None, ectx).map_err(sql_error)?;
                held += row_bytes(doc_bytes) + key.id.len();
                rows.push(OrderedRow {
                    keys,
                    doc: key.clone(),
                    row: i as u64,
                    bound: row,
                });
            }
            Ok(held)
        },
        |(rows, run): &mut Gathering| {
            rows[*run..].sort_by(cmp);
            *run = rows.len();
        },
        |(mut rows, _): Gathering| {
            rows.sort_by(cmp);
            Ok(CachedResult::Ordered(rows))
        },
    )?;
    let result = match answer {
        Answer::Ready(result) => result,
        Answer::Building(at) => {
            page.next = Some(building(at, resume));
            return Ok(page);
        }
    };
    let CachedResult::Ordered(rows) = result.as_ref() else {
        return Err(wrong_shape());
    };
    let start = match &after {
        None => 0,
        Some((keys, doc, row, _)) => rows.partition_point(|r| {
            compare_keys(q, &r.keys, keys)
                .then_with(|| r.doc.cmp(doc))
                .then_with(|| r.row.cmp(row))
                != Ordering::Greater
        }),
    };
    let mut seen = after.as_ref().map_or(0, |a| a.3);
    let mut last: Option<&OrderedRow> = None;
    let mut stopped_full = false;
    let mut walked = 0;
    for r in &rows[start..] {
        if window.end.is_some_and(|end| seen >= end) {
            break;
        }
        if page.full(budget) {
            stopped_full = true;
            break;
        }
        walked += 1;
        seen += 1;
        if seen > window.offset {
            if let Some(v) = project(q, &names, &r.bound, None, ectx).map_err(sql_error)? {
                page.items.push(serde_json::to_vec(&v).unwrap_or_default());
            }
        }
        last = Some(r);
    }
    page.scanned = page.scanned.max(walked);
    if let (true, Some(r)) = (stopped_full, last) {
        page.next = Some(QueryToken::Order {
            keys: r.keys.iter().map(SortKey::from_val).collect(),
            at: Position::new(&r.doc, r.row),
            seen,
        });
    }
    Ok(page)
}

/// One page of a query answered from all its rows, from result `start` on, or of its build
/// (`at`).
#[allow(clippy::too_many_arguments)]
pub fn whole_result(
    ctx: &RequestCtx<'_>,
    container: &Container,
    q: &Query,
    identity: &QueryIdentity<'_>,
    ectx: &Ctx<'_>,
    scope: &Scope,
    start: u64,
    at: Option<BuildAt>,
    budget: &Budget,
) -> Result<Page, ApiError> {
    let mut page = Page::new();
    let names = source_names(q);
    let result = if q.from.is_none() {
        Arc::new(CachedResult::Whole(
            finish(q, vec![Vec::new()], None, ectx).map_err(sql_error)?,
        ))
    } else {
        let answer = answer(
            ctx,
            container,
            identity,
            scope,
            at,
            budget,
            &mut page,
            ectx.work,
            || Gathered::new(q),
            |gathered: &mut Gathered, _: &DocKey, value: Value, doc_bytes: usize| {
                let mut held = 0;
                for row in bind(q, Some(value), None, ectx).map_err(sql_error)? {
                    if passes(q, &names, &row, None, ectx).map_err(sql_error)? {
                        held += gathered
                            .add(q, &names, row, doc_bytes, None, ectx)
                            .map_err(sql_error)?;
                    }
                }
                Ok(held)
            },
            |_: &mut Gathered| {},
            |gathered: Gathered| {
                Ok(CachedResult::Whole(
                    finish_gathered(q, gathered, None, ectx).map_err(sql_error)?,
                ))
            },
        )?;
        match answer {
            Answer::Ready(result) => result,
            Answer::Building(at) => {
                let then = (start > 0).then_some(QueryToken::Results { n: start });
                page.next = Some(building(at, then));
                return Ok(page);
            }
        }
    };
    let CachedResult::Whole(results) = result.as_ref() else {
        return Err(wrong_shape());
    };
    let mut n = start as usize;
    while let Some(v) = results.get(n) {
        if page.full(budget) {
            page.next = Some(QueryToken::Results { n: n as u64 });
            break;
        }
        page.items.push(serde_json::to_vec(v).unwrap_or_default());
        n += 1;
    }
    page.scanned = page.scanned.max(n.saturating_sub(start as usize));
    Ok(page)
}

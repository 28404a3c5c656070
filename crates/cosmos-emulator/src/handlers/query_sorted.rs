//! Pages of queries that must see every row before their first page: ORDER BY (rows sorted by
//! their keys, then document order) and whole-result queries (aggregates, GROUP BY, DISTINCT).
//!
//! The sorted rows or final results are computed once per state of the data and kept in the
//! store's [`ResultCache`](crate::store::ResultCache); each later page finds its start by binary
//! search on the position its continuation names (ORDER BY) or by index (whole results), so
//! paging a large ORDER BY costs one scan and sort, not one per page. A write between pages moves
//! a range's LSN: the next page recomputes from the current state and still resumes strictly
//! after the last row returned.

use std::cmp::Ordering;
use std::collections::{BTreeMap, HashMap};
use std::ops::Bound;
use std::sync::Arc;

use serde_json::Value;

use super::consistency::{read_lsn, session_token};
use super::query_page::{parse_doc, sql_error, Budget, Page, Scope, Window};
use super::query_token::{Position, QueryToken, SortKey};
use super::replica_headers::replica_state;
use super::target::live;
use crate::exchange::RequestCtx;
use crate::protocol::ApiError;
use crate::sql::ast::Query;
use crate::sql::eval::Ctx;
use crate::sql::exec::{bind, compare_keys, finish, order_keys, passes, project, source_names};
use crate::store::{
    CachedResult, Container, DocKey, OrderedRow, ResultKey, StoredDoc, MAX_ENTRY_BYTES,
};

/// What a query's answer depends on besides the data: its text and parameters.
pub struct QueryIdentity<'a> {
    pub text: &'a str,
    pub params: &'a HashMap<String, Value>,
}

fn poisoned() -> ApiError {
    ApiError::new(500, "A partition lock was poisoned.")
}

/// The answer for `scope` at the LSNs the request reads, from the cache or from `build` over
/// every document of the scope; the page gets the ranges' session tokens and what was scanned.
fn answer(
    ctx: &RequestCtx<'_>,
    container: &Container,
    identity: &QueryIdentity<'_>,
    scope: &Scope,
    page: &mut Page,
    build: impl FnOnce(Vec<(DocKey, Arc<StoredDoc>)>) -> Result<CachedResult, ApiError>,
) -> Result<Arc<CachedResult>, ApiError> {
    let params: BTreeMap<&String, &Value> = identity.params.iter().collect();
    let key_at = |ranges: Vec<(String, u64)>| ResultKey {
        container: container.rid.clone(),
        text: identity.text.to_owned(),
        params: serde_json::to_string(&params).unwrap_or_default(),
        region: ctx.region,
        ranges,
        only_epk: scope.only_epk,
    };
    let mut lsns = Vec::with_capacity(scope.ranges.len());
    let mut tokens = Vec::with_capacity(scope.ranges.len());
    for &range in &scope.ranges {
        let lock = container
            .partition(range)
            .ok_or_else(|| ApiError::new(500, "A partition key range has no partition."))?;
        let partition = lock.read().map_err(|_| poisoned()).and_then(live)?;
        let range_id = container.range_id(range);
        let lsn = read_lsn(ctx, &partition, range_id)?;
        tokens.push(session_token(ctx, &partition, range_id, lsn));
        page.replica = Some(replica_state(ctx, &partition, lsn, None));
        lsns.push((range_id.to_owned(), lsn));
    }
    let cache = &ctx.shared.store.query_results;
    if let Some(hit) = cache.get(&key_at(lsns.clone())) {
        page.session_tokens = tokens;
        return Ok(hit);
    }
    // Read each range at the LSN it is at now, under its lock (versions older than the replicas
    // need may be dropped once the lock is let go).
    let mut docs = Vec::new();
    lsns.clear();
    tokens.clear();
    for &range in &scope.ranges {
        let lock = container
            .partition(range)
            .ok_or_else(|| ApiError::new(500, "A partition key range has no partition."))?;
        let partition = lock.read().map_err(|_| poisoned()).and_then(live)?;
        let range_id = container.range_id(range);
        let lsn = read_lsn(ctx, &partition, range_id)?;
        tokens.push(session_token(ctx, &partition, range_id, lsn));
        page.replica = Some(replica_state(ctx, &partition, lsn, None));
        lsns.push((range_id.to_owned(), lsn));
        docs.extend(partition.scan_from(lsn, Bound::Unbounded, scope.only_epk, usize::MAX));
    }
    page.session_tokens = tokens;
    page.scanned = docs.len();
    let bytes: usize = docs.iter().map(|(_, d)| d.body.len()).sum();
    let result = Arc::new(build(docs)?);
    if bytes <= MAX_ENTRY_BYTES {
        cache.put(key_at(lsns), result.clone());
    }
    Ok(result)
}

/// One page of an ORDER BY query, strictly after `after` (keys, position, rows seen so far).
#[allow(clippy::too_many_arguments)]
pub fn ordered(
    ctx: &RequestCtx<'_>,
    container: &Container,
    q: &Query,
    identity: &QueryIdentity<'_>,
    ectx: &Ctx<'_>,
    scope: &Scope,
    after: Option<(Vec<SortKey>, Position, u64)>,
    window: &Window,
    budget: &Budget,
) -> Result<Page, ApiError> {
    let mut page = Page::new();
    let names = source_names(q);
    let after = match after {
        None => None,
        Some((keys, at, seen)) => {
            let keys: Vec<Option<Value>> = keys.iter().map(SortKey::to_val).collect();
            Some((keys, at.key()?, at.row, seen))
        }
    };
    let cmp = |a: &OrderedRow, b: &OrderedRow| {
        compare_keys(q, &a.keys, &b.keys)
            .then_with(|| a.doc.cmp(&b.doc))
            .then_with(|| a.row.cmp(&b.row))
    };
    let result = answer(ctx, container, identity, scope, &mut page, |docs| {
        let mut rows = Vec::new();
        for (key, doc) in docs {
            let value = parse_doc(&doc)?;
            for (i, row) in bind(q, Some(value), None, ectx)
                .map_err(sql_error)?
                .into_iter()
                .enumerate()
            {
                if !passes(q, &names, &row, None, ectx).map_err(sql_error)? {
                    continue;
                }
                let keys = order_keys(q, &names, &row, None, ectx).map_err(sql_error)?;
                rows.push(OrderedRow {
                    keys,
                    doc: key.clone(),
                    row: i as u64,
                    bound: row,
                });
            }
        }
        rows.sort_by(cmp);
        Ok(CachedResult::Ordered(rows))
    })?;
    let CachedResult::Ordered(rows) = result.as_ref() else {
        return Err(ApiError::new(
            500,
            "A cached query answer has the wrong shape.",
        ));
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

/// One page of a query answered from all its rows, from result `start` on.
#[allow(clippy::too_many_arguments)]
pub fn whole_result(
    ctx: &RequestCtx<'_>,
    container: &Container,
    q: &Query,
    identity: &QueryIdentity<'_>,
    ectx: &Ctx<'_>,
    scope: &Scope,
    start: u64,
    budget: &Budget,
) -> Result<Page, ApiError> {
    let mut page = Page::new();
    let names = source_names(q);
    let result = if q.from.is_none() {
        Arc::new(CachedResult::Whole(
            finish(q, vec![Vec::new()], None, ectx).map_err(sql_error)?,
        ))
    } else {
        answer(ctx, container, identity, scope, &mut page, |docs| {
            let mut kept = Vec::new();
            for (_, doc) in docs {
                let value = parse_doc(&doc)?;
                for row in bind(q, Some(value), None, ectx).map_err(sql_error)? {
                    if passes(q, &names, &row, None, ectx).map_err(sql_error)? {
                        kept.push(row);
                    }
                }
            }
            Ok(CachedResult::Whole(
                finish(q, kept, None, ectx).map_err(sql_error)?,
            ))
        })?
    };
    let CachedResult::Whole(results) = result.as_ref() else {
        return Err(ApiError::new(
            500,
            "A cached query answer has the wrong shape.",
        ));
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

//! Query execution, its one home: running one page of a query over the store, which documents it
//! reads (a streaming page: creation order within each range of its scope, `scan_created.rs`;
//! a build: the container's stable order, effective partition key then id, `scan.rs`), under
//! which budget, how it sorts or gathers, and where the next page resumes. The rest
//! of `sql/` evaluates a query over rows; this module applies it to the store, page by page.
//!
//! Handlers make one call per request and only translate HTTP to it and back:
//! - an item query's page: [`answer_page`] with an [`ItemPage`] (`item_page.rs`), which runs a
//!   ranked (full-text or hybrid) query's plan within one partition key (`ranked.rs`) or the query
//!   itself, and measures the page for its metrics headers (`metrics.rs`);
//! - the query plan an SDK asks for: [`plan_for`] (`plan_answer.rs`);
//! - what the query text decides about where it runs (pinned keys, whether the gateway serves a
//!   cross-partition query, search functions readied): `scope.rs`;
//! - a metadata feed's or a script's query over a small whole set: [`run_whole`].
//!
//! Everything a page needs travels in one [`Execution`]: the query, its scope, its page limits,
//! the query state and the page's [`Meter`]. The meter is charged by every evaluated
//! expression, bound row and parsed byte ([`crate::sql::meter`]), so a page ends within its work
//! and time budget wherever the work is (many documents, one document with many JOIN rows, a
//! subquery, a function over a large value): at the row where the budget ran out, with a
//! continuation that resumes at that row. A row that alone needs more than a whole page's budget
//! is refused with 400 naming the limit (`budget.rs`).
//!
//! The kinds of page:
//! - streaming (no ORDER BY, aggregate, GROUP BY or DISTINCT, `stream.rs`): rows are answered as
//!   they are read, and a page stops at its item, byte, work or time budget; its continuation may
//!   also be the service's own `-RID` format (`service_token.rs`);
//! - ordered (ORDER BY) and whole-result (aggregates, GROUP BY, DISTINCT, no FROM, `sorted.rs`):
//!   every matching row is read first, over as many pages as the budget needs (`build.rs`), and the
//!   answer, kept between pages in the store's result cache, is then paged through;
//! - the per-range aggregate queries of a query plan (`partial.rs`): partial aggregates page by
//!   page, which the SDKs combine.
//!
//! A top-k vector search (`ORDER BY VectorDistance(c.path, <constant>)`, no filter or JOIN) is an
//! ordered page whose items are scored from the embeddings each item version keeps, parsing only
//! the few that may be in the answer (`vector_fast.rs`).
//!
//! What a query holds between and during its pages (a build, a kept answer) is counted in bytes of
//! parsed values against a per-query cap and a cap over all queries, and given back when the query
//! ends or its state goes unused ([`QueryState`]: `query_state.rs`, `query_memory.rs`,
//! `result_cache.rs`, `build_shelf.rs`), held by the listeners' shared state, not by the store.

mod budget;
mod build;
mod build_shelf;
mod computed;
mod execution;
mod item_page;
mod metrics;
mod page_limits;
mod partial;
mod plan_answer;
mod query_memory;
mod query_state;
mod ranked;
mod request;
mod result_cache;
mod scan;
mod scan_created;
mod scope;
mod service_token;
mod sorted;
mod stream;
mod token;
mod vector_fast;

use std::collections::HashMap;

use serde_json::Value;

pub(crate) use build::key_for as build_key;
pub(crate) use build_shelf::BuildKey;
pub(crate) use execution::Window;
pub(crate) use execution::{Execution, Page, RangeReads, ReadScope};
pub(crate) use item_page::{answer_page, ItemPage};
pub(crate) use metrics::{index_utilization_header, query_metrics_header};
pub use page_limits::QueryLimits;
pub(crate) use plan_answer::plan_for;
pub use query_memory::QueryMemoryStats;
pub(crate) use query_memory::Reservation;
pub(crate) use query_state::QueryState;
pub(crate) use request::QueryRequest;
pub(crate) use result_cache::{Answer, CachedResult, OrderedRow, ResultKey};
pub(crate) use scope::{gateway_serves, not_servable, pinned_filter, prepare_search};
pub(crate) use token::QueryToken;

use self::budget::sql_error;
use self::build::BuildAt;
use crate::protocol::ApiError;
use crate::sql::ast::Query;
use crate::sql::exec::{needs_all_rows, window_of};
use crate::sql::grouping::combines_across_pages;
use crate::store::Container;

/// Runs `query` over a small, whole set of resources (the metadata feeds: databases, containers,
/// offers) in one page under the page's work and time budget: a query that needs more than a
/// page's budget is refused with 400 naming the limit, as an item query's row is.
pub(crate) fn run_whole(
    query: &Query,
    docs: &[Value],
    params: &HashMap<String, Value>,
    limits: &QueryLimits,
) -> Result<Vec<Value>, ApiError> {
    let meter = Execution::meter_for(limits);
    for doc in docs {
        meter
            .charge_bytes(crate::sql::meter::json_size(doc))
            .map_err(sql_error)?;
    }
    crate::sql::collect::run_metered(query, docs, params, &meter).map_err(|e| match e.limit {
        Some(limit) => budget::over_budget(limit),
        None => ApiError::bad_request(format!("The query is invalid: {e}")),
    })
}

fn kind_mismatch() -> ApiError {
    ApiError::bad_request("The continuation token belongs to a different kind of query.")
}

/// The continuation `text` a query page was sent: the emulator's own token, or the service's
/// `-RID` format where it maps to a position in `container` (resuming in creation order after the
/// item it names, in `scope`'s first range unless it names its range); 400 otherwise.
pub(crate) fn continuation(
    text: &str,
    container: &Container,
    scope: &ReadScope,
) -> Result<QueryToken, ApiError> {
    // The size limit (and any text in the emulator's own form) is the decoder's to check.
    if !service_token::is_service_format(text) || text.len() > token::MAX_TOKEN_BYTES {
        return QueryToken::decode(text);
    }
    let first = scope.ranges.first().copied().unwrap_or(0);
    let read = service_token::parse(text).map_err(ApiError::bad_request)?;
    let at = service_token::position(&read, &container.rid_bytes, container.range_epks(first))
        .map_err(ApiError::bad_request)?;
    Ok(QueryToken::Scan {
        at,
        seen: read.seen,
    })
}

/// Runs one page of the query, from `token` (the continuation the previous page answered).
pub(crate) fn run_page(ex: &Execution<'_>, token: Option<QueryToken>) -> Result<Page, ApiError> {
    let mut page = page_of(ex, token)?;
    page.scanned = page.scanned.max(ex.docs_read.get());
    // A clause the index answers loads only the documents that pass it (the emulator scans,
    // but charges as the index would have served the page).
    if let Some(lookups) = crate::sql::index_lookup::lookups(ex.query, ex.params) {
        page.lookups = lookups;
        page.loaded = Some(ex.matched.docs());
    }
    Ok(page)
}

fn page_of(ex: &Execution<'_>, token: Option<QueryToken>) -> Result<Page, ApiError> {
    let q = ex.query;
    let (offset, take) = window_of(q, &ex.ctx()).map_err(sql_error)?;
    let window = Window {
        offset,
        end: take.map(|t| offset.saturating_add(t)),
    };
    // A build in progress carries where its pages resume once it is done.
    let (token, at) = match token {
        Some(QueryToken::Build { id, at, then }) => (then.map(|t| *t), Some(BuildAt { id, at })),
        other => (other, None),
    };
    if q.from.is_some() && combines_across_pages(q) {
        let at = match (token, at) {
            (None, None) => None,
            (Some(QueryToken::Partial { at }), None) => Some(at),
            _ => return Err(kind_mismatch()),
        };
        return partial::page(ex, at);
    }
    if q.from.is_none() || needs_all_rows(q) {
        let start = match token {
            None => 0,
            Some(QueryToken::Results { n }) => n,
            Some(_) => return Err(kind_mismatch()),
        };
        return sorted::whole_result(ex, start, at);
    }
    if !q.order_by.is_empty() {
        if !matches!(token, None | Some(QueryToken::Order { .. })) {
            return Err(kind_mismatch());
        }
        return sorted::ordered(ex, token, at, &window);
    }
    if at.is_some() {
        return Err(kind_mismatch());
    }
    let after = match token {
        None => None,
        Some(QueryToken::Scan { at, seen }) => Some((at, seen)),
        Some(_) => return Err(kind_mismatch()),
    };
    stream::page(ex, after, &window)
}

//! A query ranked by `ORDER BY RANK` (`FullTextScore` or `RRF`) within one partition key (the
//! partition key header): the emulator runs the query's plan itself over that key's documents
//! (its global statistics query, then each component query with the statistics written in) and
//! fuses the component rows ([`crate::sql::rank_fusion`]). Across partitions the client runs the
//! same plan.
//!
//! The plan is run under the page budget like any other query: a page runs the plan's queries,
//! each one's pages within what is left of the page's work and time, until the budget is spent;
//! it then answers no results and a continuation naming where the plan stands (the phase, the
//! running query's own continuation, the statistics and the rows gathered so far), which is kept
//! on the store's build shelf. The page that finishes the last component query fuses the rows and
//! answers the results (at most [`MAX_TAKE`]). Progress that is gone (evicted, idle, or taken by
//! a repeated request) starts again from the beginning: no result was answered yet, so the answer
//! stays exact. Everything the query is refused for (its plan, its terms, its TOP) is checked
//! before any item is read.

use std::time::Duration;

use bytes::Bytes;
use serde_json::Value;

use super::QueryLimits;
use super::{build_key, run_page, Execution, Page, QueryToken, RangeReads, ReadScope as Scope};
use super::{BuildKey, QueryState, Reservation};
use crate::protocol::ApiError;
use crate::sql::ast::Query;
use crate::sql::meter::Meter;
use crate::sql::parse_query;
use crate::sql::plan::{plan, MinMaxParts};
use crate::sql::rank_fusion::{fuse, ComponentRow, Statistics};
use crate::sql::search::HybridSearchQueryInfo;
use crate::store::Container;

use super::QueryRequest;

/// Most pages one sub-query of a ranked query may take (each within the page budget).
const MAX_SUB_PAGES: usize = 1000;
/// Most rows the component queries may return together.
const MAX_ROWS: usize = 200_000;
/// Most results a ranked query may ask for (as the official SDKs bound it by default).
const MAX_TAKE: u64 = 1000;
/// Rows per sub-query page.
const SUB_PAGE_ITEMS: usize = 1000;
const SUB_PAGE_BYTES: usize = 4 * 1024 * 1024;
/// What the build shelf keys a ranked query's progress by, before its text.
const KEY_PREFIX: &str = "ORDER BY RANK progress: ";

/// Where the sub-queries run: the request's container, scope, replica and budget.
pub(crate) struct SubQueries<'a> {
    pub container: &'a Container,
    pub scope: &'a Scope,
    pub region: usize,
    pub state: &'a QueryState,
    pub limits: QueryLimits,
    pub reads: &'a dyn RangeReads,
}

/// Where a ranked query's plan stands between its pages.
struct Progress {
    /// 0: the global statistics query; `c + 1`: component query `c`.
    phase: usize,
    /// The running query's continuation.
    sub: Option<QueryToken>,
    /// Pages the running query has taken.
    sub_pages: usize,
    statistics: Statistics,
    rows: Vec<ComponentRow>,
    /// Bytes (about) the rows hold, and the query memory reserved for them.
    held: usize,
    reservation: Reservation,
}

/// What one page of the plan used.
#[derive(Default)]
struct Spent {
    scanned: usize,
    work: u64,
}

/// The work and time a page has left after using `work` units for `elapsed`; `None` once either
/// is spent.
fn left(limits: &QueryLimits, work: u64, elapsed: Duration) -> Option<(u64, Duration)> {
    let work = limits.page_work.saturating_sub(work);
    let time = limits.page_time.saturating_sub(elapsed);
    (work > 0 && !time.is_zero()).then_some((work, time))
}

impl SubQueries<'_> {
    /// A planned query parsed and readied (a client's query planned into a text that cannot
    /// be run is the client's: 400).
    fn parse(
        &self,
        text: &str,
        params: &std::collections::HashMap<String, Value>,
    ) -> Result<Query, ApiError> {
        let invalid = |e: crate::sql::SqlError| {
            ApiError::bad_request(format!("The ranked query cannot be run from its plan: {e}"))
        };
        let mut query = parse_query(text).map_err(invalid)?;
        crate::sql::search::prepare(&mut query, &self.container.search_policy(), params)
            .map_err(invalid)?;
        Ok(query)
    }

    /// One page of the planned query `text` from `token`, under `meter`.
    fn sub_page(
        &self,
        query: &Query,
        text: &str,
        params: &std::collections::HashMap<String, Value>,
        token: Option<QueryToken>,
        meter: Meter,
    ) -> Result<(Page, u64), ApiError> {
        let execution = Execution {
            container: self.container,
            query,
            text,
            params,
            scope: self.scope,
            region: self.region,
            state: self.state,
            limits: self.limits,
            max_items: SUB_PAGE_ITEMS,
            max_bytes: SUB_PAGE_BYTES,
            reads: self.reads,
            meter,
            docs_read: Default::default(),
            bytes_read: Default::default(),
            matched: Default::default(),
        };
        let page = run_page(&execution, token)?;
        Ok((page, execution.meter.used()))
    }

    /// Adds a page's rows to `progress`: statistics rows in phase 0, component rows after.
    fn gather(&self, progress: &mut Progress, page: &Page) -> Result<(), ApiError> {
        let internal = |e: String| {
            ApiError::new(
                500,
                format!("A ranked query's plan answered an unreadable row: {e}."),
            )
        };
        for item in &page.items {
            let row: Value = serde_json::from_slice(item).map_err(|e| internal(e.to_string()))?;
            if progress.phase == 0 {
                progress.statistics.add(&row).map_err(internal)?;
                continue;
            }
            progress.held = progress.held.saturating_add(item.len());
            progress
                .rows
                .push(serde_json::from_value(row).map_err(|e| internal(e.to_string()))?);
        }
        if progress.rows.len() > MAX_ROWS {
            return Err(ApiError::bad_request(format!(
                "A ranked query's components returned more than {MAX_ROWS} rows within the partition key."
            )));
        }
        if progress.held > self.limits.build_bytes {
            return Err(ApiError::bad_request(format!(
                "The query exceeded the memory it may use: the rows of its ranking hold more than {} bytes (--query-build-bytes). Add filters or ask for fewer results.",
                self.limits.build_bytes
            )));
        }
        if progress.held > progress.reservation.bytes()
            && !self.state.reserve(&mut progress.reservation, progress.held)
        {
            let mut e = ApiError::new(
                429,
                format!(
                    "The emulator's queries hold all of the {} bytes they may hold together (--query-memory-bytes); retry once they end.",
                    self.limits.memory_bytes
                ),
            )
            .with_sub_status(3092);
            e.retry_after_ms = Some(500);
            return Err(e);
        }
        Ok(())
    }

    /// One page of the ranked query `request` from `token`: its results once the plan has run,
    /// else no results and a continuation; and the work it took.
    pub(crate) fn answer(
        &self,
        request: &QueryRequest,
        token: Option<QueryToken>,
    ) -> Result<(Page, u64), ApiError> {
        let started = std::time::Instant::now();
        let info = self.plan_of(request)?;
        let take = info.take.unwrap_or(0);
        let statistics_query = info
            .requires_global_statistics
            .then(|| self.parse(&info.global_statistics_query, &request.params))
            .transpose()?;
        let key = |id| {
            build_key(
                self.container,
                self.scope,
                &format!("{KEY_PREFIX}{}", request.text),
                &request.params,
                id,
            )
        };
        let (id, mut progress) = self.resume(token, &key, statistics_query.is_none())?;
        let components = info.component_query_infos.len();
        let mut spent = Spent::default();
        let mut parsed: Option<(usize, String, Query)> = None;
        while progress.phase <= components {
            let Some((work, time)) = left(&self.limits, spent.work, started.elapsed()) else {
                break;
            };
            let meter = Meter::new(work, time);
            let fresh = spent.work == 0;
            if parsed
                .as_ref()
                .is_none_or(|(phase, _, _)| *phase != progress.phase)
            {
                let (text, query) = match (progress.phase, &statistics_query) {
                    (0, Some(q)) => (info.global_statistics_query.clone(), q.clone()),
                    (phase, _) => {
                        let text = progress.statistics.fill(
                            &info.component_query_infos[phase - 1].rewritten_query,
                            components,
                        );
                        let query = self.parse(&text, &request.params)?;
                        (text, query)
                    }
                };
                parsed = Some((progress.phase, text, query));
            }
            let Some((_, text, query)) = parsed.as_ref() else {
                break;
            };
            match self.sub_page(query, text, &request.params, progress.sub.clone(), meter) {
                Ok((page, work)) => {
                    spent.work += work;
                    spent.scanned += page.scanned;
                    self.gather(&mut progress, &page)?;
                    progress.sub_pages += 1;
                    if progress.sub_pages > MAX_SUB_PAGES {
                        return Err(ApiError::bad_request(format!(
                            "A ranked query's sub-query took more than {MAX_SUB_PAGES} pages within the partition key."
                        )));
                    }
                    match page.next {
                        Some(next) => progress.sub = Some(next),
                        None => {
                            progress.phase += 1;
                            progress.sub_pages = 0;
                        }
                    }
                }
                // A sub-page refused under what was left of this page's budget runs again on
                // the next page, with a whole budget; refused under a whole budget, it is the
                // query's answer.
                Err(e) if !fresh && e.status == 400 => break,
                Err(e) => return Err(e),
            }
        }
        if progress.phase <= components {
            let page = Page {
                items: Vec::new(),
                next: Some(QueryToken::Ranked { id }),
                scanned: spent.scanned,
                bytes: 0,
                ..Page::default()
            };
            self.state.builds.put(key(id), Box::new(progress));
            return Ok((page, spent.work));
        }
        Ok((
            self.fused(&info, progress, take, spent.scanned)?,
            spent.work,
        ))
    }

    /// Where the plan stands: kept under the number `token` names, or a fresh start (at the
    /// first component query when no statistics are needed).
    fn resume(
        &self,
        token: Option<QueryToken>,
        key: &dyn Fn(u64) -> BuildKey,
        no_statistics: bool,
    ) -> Result<(u64, Progress), ApiError> {
        let (id, kept) = match token {
            None => (self.state.builds.next_id(), None),
            Some(QueryToken::Ranked { id }) => (id, self.state.builds.take(&key(id))),
            Some(_) => {
                return Err(ApiError::bad_request(
                    "The continuation token belongs to a different kind of query.",
                ))
            }
        };
        let progress = kept
            .and_then(|b| b.downcast::<Progress>().ok())
            .map(|b| *b)
            .unwrap_or_else(|| Progress {
                phase: usize::from(no_statistics),
                sub: None,
                sub_pages: 0,
                statistics: Statistics::default(),
                rows: Vec::new(),
                held: 0,
                reservation: self.state.memory.reservation(),
            });
        Ok((id, progress))
    }

    /// The ranked query's plan, checked before anything is read.
    fn plan_of(&self, request: &QueryRequest) -> Result<HybridSearchQueryInfo, ApiError> {
        let invalid = |e: crate::sql::sql_error::SqlError| {
            ApiError::bad_request(format!("The query is invalid: {e}"))
        };
        let plan = plan(
            &request.query,
            &request.text,
            &request.params,
            None,
            MinMaxParts::Plain,
        )
        .map_err(invalid)?;
        let info = plan
            .hybrid_search_query_info
            .ok_or_else(|| ApiError::new(500, "A ranked query has no hybrid search plan."))?;
        let take = info.take.ok_or_else(|| {
            ApiError::bad_request(
                "A query ranked by ORDER BY RANK needs TOP or LIMIT (its cost is unbounded otherwise).",
            )
        })?;
        if take > MAX_TAKE {
            return Err(ApiError::bad_request(format!(
                "A query ranked by ORDER BY RANK may ask for at most {MAX_TAKE} results, not {take}."
            )));
        }
        Ok(info)
    }

    /// The results of a plan that has run: its rows fused.
    fn fused(
        &self,
        info: &HybridSearchQueryInfo,
        progress: Progress,
        take: u64,
        scanned: usize,
    ) -> Result<Page, ApiError> {
        let descending: Vec<bool> = info
            .component_query_infos
            .iter()
            .map(|c| c.order_by.first() == Some(&"Descending"))
            .collect();
        let values = fuse(
            progress.rows,
            &descending,
            &info.component_weights,
            info.skip.unwrap_or(0),
            take,
        )
        .map_err(|e| ApiError::new(500, format!("{e}.")))?;
        let mut page = Page {
            items: Vec::with_capacity(values.len()),
            next: None,
            scanned,
            bytes: 0,
            ..Page::default()
        };
        for v in values {
            let item = Bytes::from(serde_json::to_vec(&v).unwrap_or_default());
            page.bytes += item.len();
            page.items.push(item);
        }
        Ok(page)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_runs_sub_pages_while_its_work_and_time_last() {
        let limits = QueryLimits {
            page_work: 1000,
            page_time: Duration::from_millis(100),
            ..QueryLimits::default()
        };
        let ms = Duration::from_millis;
        let cases = [
            (0, ms(0), Some((1000, ms(100)))),
            (400, ms(30), Some((600, ms(70)))),
            (999, ms(99), Some((1, ms(1)))),
            (1000, ms(10), None),
            (5000, ms(10), None),
            (10, ms(100), None),
            (10, ms(250), None),
        ];
        for (work, elapsed, want) in cases {
            assert_eq!(
                left(&limits, work, elapsed),
                want,
                "{work} units, {elapsed:?}"
            );
        }
    }
}

//! Runs one query page by page: asks for the plan (cross-partition), reads the ranges, sends the
//! page requests a [`QueryExecution`] asks for with a bounded number in flight, continues on the
//! children of a range that split (410/1002, 1007, 1008), and cuts the result into pages with their
//! continuation, charge, session token, metrics and diagnostics.
//!
//! Each page runs as rounds of the one re-plan loop of the compound operations
//! ([`Replanning`]): a round steps the execution and sends the page requests it asks for; a round
//! in which a request found its range gone ends there, the loop takes a re-plan from the query's
//! budget (one budget over the query's whole run, across its pages) and waits, and the next round
//! first reads the ranges again and puts each gone range's children in its place (a range the
//! listing still shows is asked again).

use std::collections::HashMap;
use std::sync::Arc;

use bytes::Bytes;
use futures::stream::{self, StreamExt};
use serde_json::Value;
use tokio::time::Instant;

use super::continuation::continuation_token::QueryContinuation;
use super::merge::range_merge::{RangeCursor, TargetRange};
use super::page_source::{
    PageSettings, PageTarget, QueryPageSource, RangePage, INDEX_METRICS, QUERY_METRICS,
};
use super::plan::query_features::check_plan;
use super::plan::query_plan::QueryRange;
use super::query_execution::{
    overlapping_ranges, resume_cursors, Next, PageRequest, QueryExecution,
};
use super::query_options::{QueryOptions, QueryScope};
use super::query_spec::Query;
use crate::diagnostics::DiagnosticsContext;
use crate::error::{CosmosError, ErrorKind};
use crate::operations::page_guard::PageGuard;
use crate::operations::{Replanning, Replans, Round};
use crate::protocol::{effective_partition_key, PartitionKey, EPK_MAX, MAX_HIERARCHY_DEPTH};

/// The page size when the caller sets none (the service's default).
const DEFAULT_PAGE_ITEMS: usize = 100;

/// What one query cost and how it ran, across all its pages so far.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct QuerySummary {
    /// Pages the service answered (plan and range listings not included).
    pub pages: u64,
    /// Requests sent, retries, hedges, plan and range listings included.
    pub requests: u64,
    /// Request units charged.
    pub request_charge: f64,
    /// Pages whose request was hedged (an alternate region was asked too).
    pub hedged_pages: u64,
    /// Hedged pages the alternate region answered first.
    pub alternate_wins: u64,
    /// Ranges that split while the query ran.
    pub splits: u64,
}

impl QuerySummary {
    fn record(&mut self, diagnostics: &DiagnosticsContext) {
        self.requests += diagnostics.requests().len() as u64;
        self.request_charge += diagnostics.total_request_charge();
        if let Some(hedge) = diagnostics.hedge() {
            if hedge.alternate_region().is_some() {
                self.hedged_pages += 1;
            }
            if hedge.was_hedge() {
                self.alternate_wins += 1;
            }
        }
    }
}

/// One page of a query's result.
#[derive(Debug)]
pub struct RawQueryPage {
    /// The page's values.
    pub values: Vec<Value>,
    /// Resumes the query after this page (`Ok(None)`: the query is complete; no page follows),
    /// or why no token can be issued (too large).
    pub continuation: Result<Option<String>, String>,
    /// Request units of the requests behind this page.
    pub request_charge: f64,
    /// The session token of the last service page behind this page.
    pub session_token: Option<String>,
    /// Query metrics of each service page behind this page, when asked for.
    pub query_metrics: Vec<String>,
    /// Index metrics of each service page behind this page, when asked for.
    pub index_metrics: Vec<String>,
    /// Diagnostics of each service page behind this page.
    pub diagnostics: Vec<DiagnosticsContext>,
    /// The query's summary so far.
    pub summary: QuerySummary,
}

/// A query being run.
pub struct QueryPager {
    source: Arc<dyn QueryPageSource>,
    query: Query,
    scope: QueryScope,
    options: QueryOptions,
    exec: Option<(QueryExecution, Bytes)>,
    /// How the pages are addressed, decided when the query starts.
    mode: Mode,
    started: Option<Instant>,
    summary: QuerySummary,
    finished: bool,
    /// The continuation guard of each range's chain of pages, by range id and lower bound.
    guards: HashMap<(String, String), PageGuard>,
    /// A hybrid search's whole answer, handed out page by page.
    ready: Option<std::collections::VecDeque<Value>>,
    /// The re-plans taken over the query's whole run.
    replans: Replans,
    /// The page requests of the last round that found their range gone, re-planned when the
    /// next round starts.
    gone: Vec<PageRequest>,
}

/// How a query starts: paged from its ranges, or (a hybrid search) answered whole.
enum Started {
    Paged(Box<(QueryExecution, Bytes)>),
    Whole(super::hybrid::HybridRun),
}

impl std::fmt::Debug for QueryPager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QueryPager")
            .field("scope", &self.scope)
            .field("summary", &self.summary)
            .field("finished", &self.finished)
            .finish_non_exhaustive()
    }
}

/// How a query's page requests are addressed.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Mode {
    /// Each range by its id (a cross-partition query).
    Ranges,
    /// The partition key header (a full key: one range).
    Key,
    /// Each range by its id and the part of it a hierarchical key prefix covers.
    Prefix,
}

impl QueryPager {
    /// A query over `source`; nothing is sent until the first page is asked for.
    pub fn new(
        source: Arc<dyn QueryPageSource>,
        query: Query,
        scope: QueryScope,
        options: QueryOptions,
    ) -> Self {
        QueryPager {
            source,
            query,
            scope,
            options,
            exec: None,
            mode: Mode::Ranges,
            started: None,
            summary: QuerySummary::default(),
            finished: false,
            guards: HashMap::new(),
            ready: None,
            replans: Replans::default(),
            gone: Vec::new(),
        }
    }

    /// The summary so far.
    pub fn summary(&self) -> &QuerySummary {
        &self.summary
    }

    fn settings(&self) -> Result<PageSettings, CosmosError> {
        let mut request = self.options.request.clone();
        if let (Some(limit), Some(start)) = (self.options.query_timeout, self.started) {
            let left = limit.saturating_sub(start.elapsed());
            if left.is_zero() {
                return Err(CosmosError::new(
                    ErrorKind::EndToEndTimeout,
                    format!(
                        "the query's deadline of {limit:?} passed after {} pages",
                        self.summary.pages
                    ),
                ));
            }
            request.end_to_end_timeout = Some(match request.end_to_end_timeout {
                Some(page) => page.min(left),
                None => left,
            });
        }
        Ok(PageSettings {
            max_item_count: self.options.max_item_count,
            populate_query_metrics: self.options.populate_query_metrics,
            populate_index_metrics: self.options.populate_index_metrics,
            request,
        })
    }

    /// The part of the key space the scope reads, when it is not a whole range: a hierarchical
    /// key prefix's span, or a feed range's.
    async fn key_span(&self, settings: &PageSettings) -> Result<Option<QueryRange>, CosmosError> {
        Ok(match &self.scope {
            // A key of the deepest hierarchy is complete whatever the container's definition.
            QueryScope::PartitionKey(pk) if pk.values().len() < MAX_HIERARCHY_DEPTH => {
                let paths = self.source.partition_key_path_count(settings).await?;
                prefix_range(pk, paths)
            }
            QueryScope::FeedRange(span) => Some(QueryRange {
                min: span.min.clone(),
                max: span.max.clone(),
                is_min_inclusive: true,
                is_max_inclusive: false,
            }),
            QueryScope::PartitionKey(_) | QueryScope::CrossPartition => None,
        })
    }

    async fn start(&mut self) -> Result<Started, CosmosError> {
        self.query.validate()?;
        let fingerprint = self.query.fingerprint();
        let scope_text = self.scope.fingerprint();
        let token = match &self.options.continuation {
            Some(text) => Some(
                QueryContinuation::decode(text, &fingerprint, &scope_text)
                    .map_err(CosmosError::invalid_input)?,
            ),
            None => None,
        };
        let settings = self.settings()?;
        let prefix = self.key_span(&settings).await?;
        self.mode = match (&self.scope, &prefix) {
            (QueryScope::CrossPartition, _) => Mode::Ranges,
            (QueryScope::FeedRange(_), _) => Mode::Prefix,
            (QueryScope::PartitionKey(_), None) => Mode::Key,
            (QueryScope::PartitionKey(_), Some(_)) => Mode::Prefix,
        };
        match (&self.scope, prefix) {
            (QueryScope::PartitionKey(_), None) => {
                let whole = TargetRange {
                    id: String::new(),
                    min: String::new(),
                    max: "FF".into(),
                };
                let cursor = match token.as_ref().and_then(|t| t.ranges.first()) {
                    Some(p) => RangeCursor::new(whole, p.token.clone(), p.skip),
                    None => RangeCursor::new(whole, None, 0),
                };
                let body = self.query.to_body()?;
                Ok(Started::Paged(Box::new((
                    QueryExecution::single(fingerprint, scope_text, cursor),
                    body,
                ))))
            }
            (_, prefix) => {
                let plan = self.source.plan(self.query.to_body()?, &settings).await?;
                if let Some(info) = plan
                    .hybrid_search_query_info
                    .as_ref()
                    .filter(|v| !v.is_null())
                {
                    if token.is_some() {
                        return Err(CosmosError::invalid_input(
                            "a hybrid search is answered whole: it cannot resume from a continuation token",
                        ));
                    }
                    let info = super::hybrid::HybridSearchInfo::from_plan(info)
                        .map_err(|m| CosmosError::new(ErrorKind::NotSupported, m))?;
                    let all = self.source.ranges(false, &settings.request).await?;
                    let read = match &prefix {
                        Some(p) => narrowed_ranges(p, &all),
                        None => overlapping_ranges(&plan.query_ranges, &all),
                    };
                    let query = &self.query;
                    let with_text = |text: &str| query.with_text(text).to_body();
                    let run = super::hybrid::run(
                        self.source.as_ref(),
                        &info,
                        &with_text,
                        &all,
                        &read,
                        &settings,
                    )
                    .await?;
                    return Ok(Started::Whole(run));
                }
                let plan = check_plan(&plan)
                    .map_err(|u| CosmosError::new(ErrorKind::NotSupported, u.to_string()))?;
                let ranges = self.source.ranges(false, &settings.request).await?;
                let cursors = match &token {
                    Some(t) => {
                        resume_cursors(&t.ranges, &ranges).map_err(CosmosError::invalid_input)?
                    }
                    None => match &prefix {
                        Some(p) => narrowed_ranges(p, &ranges),
                        None => overlapping_ranges(&plan.ranges, &ranges),
                    }
                    .into_iter()
                    .map(|r| RangeCursor::new(r, None, 0))
                    .collect(),
                };
                let body = match &plan.range_query {
                    Some(text) => self.query.with_text(text).to_body()?,
                    None => self.query.to_body()?,
                };
                let exec =
                    QueryExecution::new(&plan, fingerprint, scope_text, cursors, token.as_ref())
                        .map_err(CosmosError::invalid_input)?;
                Ok(Started::Paged(Box::new((exec, body))))
            }
        }
    }

    /// The next page: `None` once the query is complete (or failed).
    pub async fn next_page(&mut self) -> Option<Result<RawQueryPage, CosmosError>> {
        if self.finished {
            return None;
        }
        let result = self.fill_page().await;
        if result.is_err() {
            self.finished = true;
        }
        Some(result)
    }

    async fn fill_page(&mut self) -> Result<RawQueryPage, CosmosError> {
        self.started.get_or_insert_with(Instant::now);
        let page_items = self
            .options
            .max_item_count
            .map(|n| n.max(1) as usize)
            .unwrap_or(DEFAULT_PAGE_ITEMS);
        let mut page = RawQueryPage {
            values: Vec::new(),
            continuation: Ok(None),
            request_charge: 0.0,
            session_token: None,
            query_metrics: Vec::new(),
            index_metrics: Vec::new(),
            diagnostics: Vec::new(),
            summary: QuerySummary::default(),
        };
        if self.exec.is_none() && self.ready.is_none() {
            match self.start().await? {
                Started::Paged(started) => self.exec = Some(*started),
                Started::Whole(run) => {
                    self.summary.pages += run.pages;
                    for d in &run.diagnostics {
                        self.summary.record(d);
                    }
                    page.request_charge = run.request_charge;
                    page.session_token = run.session_token;
                    page.diagnostics = run.diagnostics;
                    self.ready = Some(run.values.into());
                }
            }
        }
        if let Some(ready) = self.ready.as_mut() {
            while page.values.len() < page_items {
                match ready.pop_front() {
                    Some(v) => page.values.push(v),
                    None => break,
                }
            }
            page.continuation = if ready.is_empty() {
                self.finished = true;
                Ok(None)
            } else {
                Err(
                    "a hybrid search is answered whole: its pages carry no continuation token"
                        .into(),
                )
            };
            page.summary = self.summary.clone();
            return Ok(page);
        }
        let page_started = Instant::now();
        let mut pages_read: u64 = 0;
        // One budget of re-plans over the query's whole run, across its pages.
        let mut replanning = Replanning::resumed(self.replans);
        loop {
            if replanning.refresh() {
                self.replan().await?;
            }
            let round = self
                .round(&mut page, page_items, &mut pages_read, page_started)
                .await?;
            let settled = replanning.settle(round, "the query").await;
            self.replans = replanning.replans();
            if settled?.is_some() {
                break;
            }
        }
        page.continuation = match (&self.exec, self.finished) {
            (_, true) | (None, _) => Ok(None),
            (Some((exec, _)), false) => exec.continuation(),
        };
        if matches!(page.continuation, Ok(None)) {
            self.finished = true;
        }
        page.summary = self.summary.clone();
        Ok(page)
    }

    /// One round of a page: steps the execution into `page` and sends the page requests it asks
    /// for, until the page is full, the query is done, or the page has read enough
    /// ([`Self::page_spent`]): `Done`; or until a request found its range gone: `Gone`, with the
    /// gone requests kept for the re-plan.
    async fn round(
        &mut self,
        page: &mut RawQueryPage,
        page_items: usize,
        pages_read: &mut u64,
        page_started: Instant,
    ) -> Result<Round<()>, CosmosError> {
        while let Some((exec, _)) = self.exec.as_mut() {
            match exec
                .step()
                .map_err(|m| CosmosError::new(ErrorKind::Deserialization, m))?
            {
                Next::Value(v) => {
                    page.values.push(v);
                    if page.values.len() >= page_items {
                        break;
                    }
                }
                Next::Done => {
                    self.finished = true;
                    break;
                }
                Next::Fetch(needed) => {
                    if !page.values.is_empty() || self.page_spent(*pages_read, page_started) {
                        break;
                    }
                    let before = self.summary.pages;
                    let gone = self.fetch(needed, page).await?;
                    *pages_read += self.summary.pages - before;
                    if let Some(error) = gone {
                        return Ok(Round::Gone(error));
                    }
                }
            }
        }
        Ok(Round::Done(()))
    }

    /// The re-plan after a round that found ranges gone: reads the ranges again and puts the
    /// children of each gone range in its place. A range the listing still shows (a split or
    /// migration completing) stays, and is asked again.
    async fn replan(&mut self) -> Result<(), CosmosError> {
        if self.gone.is_empty() {
            return Ok(());
        }
        let settings = self.settings()?;
        let ranges = self.source.ranges(true, &settings.request).await?;
        for req in std::mem::take(&mut self.gone) {
            let children = children_of(&req.range, &ranges);
            if children.is_empty() {
                continue;
            }
            let Some((exec, _)) = self.exec.as_mut() else {
                break;
            };
            exec.split(&req, children)
                .map_err(|m| CosmosError::new(ErrorKind::Deserialization, m))?;
        }
        Ok(())
    }

    /// Whether a page without a value has read enough: the page read limit, or the page time
    /// limit or the page's deadline (`request.end_to_end_timeout`) passed, checked between
    /// requests. It then ends empty, with its continuation. A page always reads at least one
    /// service page.
    fn page_spent(&self, pages_read: u64, page_started: Instant) -> bool {
        if pages_read == 0 {
            return false;
        }
        let read_limit = self
            .options
            .page_read_limit
            .is_some_and(|n| pages_read >= u64::from(n));
        let time_limit = [
            self.options.page_time_limit,
            self.options.request.end_to_end_timeout,
        ]
        .into_iter()
        .flatten()
        .min();
        read_limit || time_limit.is_some_and(|d| page_started.elapsed() >= d)
    }

    /// Sends the page requests `needed` (and, within the concurrency, those that can be read
    /// ahead) and fills the execution with their pages. Answers the first error of a request
    /// that found its range gone (the gone requests kept in `self.gone`), if any.
    async fn fetch(
        &mut self,
        needed: Vec<PageRequest>,
        page: &mut RawQueryPage,
    ) -> Result<Option<CosmosError>, CosmosError> {
        let settings = self.settings()?;
        let concurrency = self.options.effective_concurrency();
        let Some((exec, body)) = self.exec.as_ref() else {
            return Ok(None);
        };
        let mut wanted = needed;
        for extra in exec.prefetchable() {
            if wanted.len() >= concurrency {
                break;
            }
            if !wanted.iter().any(|w| w.range == extra.range) {
                wanted.push(extra);
            }
        }
        let mode = self.mode;
        let single = mode == Mode::Key;
        let source = &self.source;
        let scope = &self.scope;
        let results: Vec<(PageRequest, Result<RangePage, CosmosError>)> = stream::iter(wanted)
            .map(|req| {
                let target = match (mode, scope) {
                    (Mode::Key, QueryScope::PartitionKey(pk)) => {
                        PageTarget::PartitionKey(pk.clone())
                    }
                    (Mode::Prefix, _) => PageTarget::EpkRange(req.range.clone()),
                    _ => PageTarget::Range(req.range.clone()),
                };
                let fut = source.page(body.clone(), target, req.continuation.clone(), &settings);
                async move { (req, fut.await) }
            })
            .buffer_unordered(concurrency)
            .collect()
            .await;
        let mut first_gone = None;
        for (req, result) in results {
            match result {
                Ok(p) => {
                    self.summary.pages += 1;
                    self.summary.record(&p.diagnostics);
                    page.request_charge += p.headers.request_charge();
                    if let Some(s) = p.headers.session_token() {
                        page.session_token = Some(s.to_owned());
                    }
                    if let Some(m) = p.headers.get(QUERY_METRICS) {
                        page.query_metrics.push(m.to_owned());
                    }
                    if let Some(m) = p.headers.get(INDEX_METRICS) {
                        page.index_metrics.push(m.to_owned());
                    }
                    let guard = self
                        .guards
                        .entry((req.range.id.clone(), req.range.min.clone()))
                        .or_default();
                    if let Err(fault) = guard.check(
                        req.continuation.as_deref(),
                        p.continuation.as_deref(),
                        p.documents.len(),
                    ) {
                        let what = self.page_name(&req);
                        return Err(fault.into_error(what).with_diagnostics(p.diagnostics));
                    }
                    let Some((exec, _)) = self.exec.as_mut() else {
                        break;
                    };
                    exec.fill(&req, p.documents, p.continuation).map_err(|m| {
                        CosmosError::new(ErrorKind::Deserialization, m)
                            .with_diagnostics(p.diagnostics.clone())
                    })?;
                    page.diagnostics.push(p.diagnostics);
                }
                Err(e) if e.is_range_gone() && !single => {
                    self.summary.record(e.diagnostics());
                    self.summary.splits += 1;
                    self.gone.push(req);
                    first_gone.get_or_insert(e);
                }
                Err(e) => {
                    return Err(e.with_context(self.page_name(&req)));
                }
            }
        }
        Ok(first_gone)
    }

    /// How errors name the page `req` asked for.
    fn page_name(&self, req: &PageRequest) -> String {
        match self.mode {
            Mode::Key => "a query page".to_owned(),
            Mode::Ranges | Mode::Prefix => format!("a query page of range {}", req.range.id),
        }
    }
}

/// The ranges of `ranges` that took the place of `gone` (those overlapping it under another id),
/// each cut to the part of it `gone` covered; none while the listing still shows only `gone`.
pub(crate) fn children_of(gone: &TargetRange, ranges: &[TargetRange]) -> Vec<TargetRange> {
    ranges
        .iter()
        .filter(|r| r.min < gone.max && gone.min < r.max && r.id != gone.id)
        .map(|r| TargetRange {
            min: r.min.clone().max(gone.min.clone()),
            max: r.max.clone().min(gone.max.clone()),
            id: r.id.clone(),
        })
        .collect()
}

/// The effective partition keys a hierarchical key prefix covers, `[prefix, prefix + "FF")`, when
/// `pk` has fewer components than the container's `paths` (None for a full key).
pub(crate) fn prefix_range(pk: &PartitionKey, paths: usize) -> Option<QueryRange> {
    let components = pk.values().len();
    if paths < 2 || components == 0 || components >= paths {
        return None;
    }
    let min = effective_partition_key(pk, paths);
    let max = format!("{min}{EPK_MAX}");
    Some(QueryRange {
        min,
        max,
        is_min_inclusive: true,
        is_max_inclusive: false,
    })
}

/// The ranges overlapping `prefix`, each narrowed to the part the prefix covers.
pub(crate) fn narrowed_ranges(prefix: &QueryRange, ranges: &[TargetRange]) -> Vec<TargetRange> {
    overlapping_ranges(std::slice::from_ref(prefix), ranges)
        .into_iter()
        .map(|r| TargetRange {
            min: r.min.max(prefix.min.clone()),
            // Text order: "FF" (the end of the space) sorts after every key.
            max: r.max.min(prefix.max.clone()),
            id: r.id,
        })
        .collect()
}

#[cfg(test)]
#[path = "query_pager_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "query_pager_feed_range_tests.rs"]
mod feed_range_tests;

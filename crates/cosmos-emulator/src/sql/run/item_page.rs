//! One page of an item query as one call: a handler reads the request into an [`ItemPage`] and
//! turns the [`Answered`] page into its reply. The call picks the way the page runs (a ranked
//! query's plan within one partition key, or the query itself) and measures what the page read.

use std::time::Instant;

use super::metrics::PageFigures;
use super::ranked::SubQueries;
use super::{run_page, Execution, Page, QueryLimits, QueryRequest, QueryState, QueryToken};
use super::{RangeReads, ReadScope};
use crate::protocol::ApiError;
use crate::store::Container;

/// What one page of an item query needs.
pub(crate) struct ItemPage<'a> {
    pub container: &'a Container,
    pub request: &'a QueryRequest,
    pub scope: &'a ReadScope,
    /// The region whose replica serves the request.
    pub region: usize,
    pub state: &'a QueryState,
    pub limits: QueryLimits,
    /// Most results in the page, and the bytes at which it ends.
    pub max_items: usize,
    pub max_bytes: usize,
    pub reads: &'a dyn RangeReads,
    /// Where the previous page left off.
    pub token: Option<QueryToken>,
    /// The request names one partition key (a ranked query's plan then runs here).
    pub by_partition_key: bool,
}

/// The page, the work it took and what it read and returned.
pub(crate) struct Answered {
    pub page: Page,
    pub work: u64,
    pub figures: PageFigures,
    /// The page ran a ranked query's plan: its sub-queries read the same ranges again.
    pub ranked: bool,
}

/// Runs one page of an item query.
pub(crate) fn answer_page(call: ItemPage<'_>) -> Result<Answered, ApiError> {
    let request = call.request;
    let execution = Execution {
        container: call.container,
        query: &request.query,
        text: &request.text,
        params: &request.params,
        scope: call.scope,
        region: call.region,
        state: call.state,
        limits: call.limits,
        max_items: call.max_items,
        max_bytes: call.max_bytes,
        reads: call.reads,
        meter: Execution::meter_for(&call.limits),
        docs_read: Default::default(),
        bytes_read: Default::default(),
        matched: Default::default(),
    };
    let started = Instant::now();
    let ranked = call.by_partition_key && crate::sql::search::is_ranked(&request.query);
    let (page, work) = if ranked {
        let sub = SubQueries {
            container: call.container,
            scope: call.scope,
            region: call.region,
            state: call.state,
            limits: call.limits,
            reads: call.reads,
        };
        sub.answer(request, call.token)?
    } else {
        let page = run_page(&execution, call.token)?;
        (page, execution.meter.used())
    };
    let figures = PageFigures {
        retrieved_docs: execution.docs_read.get(),
        retrieved_bytes: execution.bytes_read.get(),
        output_docs: page.items.len(),
        output_bytes: page.bytes,
        elapsed: started.elapsed(),
    };
    Ok(Answered {
        page,
        work,
        figures,
        ranked,
    })
}

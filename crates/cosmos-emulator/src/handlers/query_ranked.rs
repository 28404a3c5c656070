//! A query ranked by `ORDER BY RANK` (`FullTextScore` or `RRF`) within one partition key (the
//! partition key header), answered whole on one page: the emulator runs the query's plan itself
//! over that key's documents (its global statistics query, then each component query with the
//! statistics written in) and fuses the component rows ([`crate::sql::rank_fusion`]). Across
//! partitions the client runs the same plan.

use bytes::Bytes;
use serde_json::Value;

use crate::exchange::QueryLimits;
use crate::protocol::ApiError;
use crate::query_exec::{run_page, Execution, Page, RangeReads, ReadScope as Scope};
use crate::sql::parse_query;
use crate::sql::plan::{plan, MinMaxParts};
use crate::sql::rank_fusion::{fuse, ComponentRow, Statistics};
use crate::store::{Container, QueryState};

use super::query::QueryRequest;

/// Most pages one sub-query of a ranked query may take (each within the page budget).
const MAX_SUB_PAGES: usize = 1000;
/// Most rows the component queries may return together.
const MAX_ROWS: usize = 200_000;
/// Most results a ranked query may ask for (as the official SDKs bound it by default).
const MAX_TAKE: u64 = 1000;
/// Rows per sub-query page.
const SUB_PAGE_ITEMS: usize = 1000;
const SUB_PAGE_BYTES: usize = 4 * 1024 * 1024;

/// Where the sub-queries run: the request's container, scope, replica and budget.
pub struct SubQueries<'a> {
    pub container: &'a Container,
    pub scope: &'a Scope,
    pub region: usize,
    pub state: &'a QueryState,
    pub limits: QueryLimits,
    pub reads: &'a dyn RangeReads,
}

/// What the sub-queries cost.
#[derive(Default)]
struct Cost {
    scanned: usize,
    work: u64,
}

impl SubQueries<'_> {
    /// Every row of `text` over the scope, page after page.
    fn drain(
        &self,
        text: &str,
        params: &std::collections::HashMap<String, Value>,
        cost: &mut Cost,
    ) -> Result<Vec<Value>, ApiError> {
        let mut query = parse_query(text).map_err(|e| {
            ApiError::new(500, format!("A ranked query's sub-query is invalid: {e}"))
        })?;
        crate::sql::search::prepare(&mut query, &self.container.search_policy(), params)
            .map_err(|e| ApiError::bad_request(format!("The query is invalid: {e}")))?;
        let mut rows = Vec::new();
        let mut token = None;
        for _ in 0..MAX_SUB_PAGES {
            let execution = Execution {
                container: self.container,
                query: &query,
                text,
                params,
                scope: self.scope,
                region: self.region,
                state: self.state,
                limits: self.limits,
                max_items: SUB_PAGE_ITEMS,
                max_bytes: SUB_PAGE_BYTES,
                reads: self.reads,
                meter: Execution::meter_for(&self.limits),
                docs_read: Default::default(),
                bytes_read: Default::default(),
            };
            let page = run_page(&execution, token)?;
            cost.scanned += page.scanned;
            cost.work += execution.meter.used();
            for item in &page.items {
                rows.push(serde_json::from_slice(item).map_err(|e| {
                    ApiError::new(
                        500,
                        format!("A ranked query's sub-query row is invalid: {e}"),
                    )
                })?);
            }
            if rows.len() > MAX_ROWS {
                return Err(ApiError::bad_request(format!(
                    "A ranked query's components returned more than {MAX_ROWS} rows within the partition key."
                )));
            }
            match page.next {
                None => return Ok(rows),
                next => token = next,
            }
        }
        Err(ApiError::bad_request(format!(
            "A ranked query's sub-query took more than {MAX_SUB_PAGES} pages within the partition key."
        )))
    }

    /// The ranked query `request` answered whole: its page and the work it took.
    pub fn answer(&self, request: &QueryRequest) -> Result<(Page, u64), ApiError> {
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
        let mut cost = Cost::default();
        let mut statistics = Statistics::default();
        if info.requires_global_statistics {
            for row in self.drain(&info.global_statistics_query, &request.params, &mut cost)? {
                statistics
                    .add(&row)
                    .map_err(|e| ApiError::new(500, format!("{e}.")))?;
            }
        }
        let components = info.component_query_infos.len();
        let mut rows: Vec<ComponentRow> = Vec::new();
        for component in &info.component_query_infos {
            let text = statistics.fill(&component.rewritten_query, components);
            for row in self.drain(&text, &request.params, &mut cost)? {
                rows.push(serde_json::from_value(row).map_err(|e| {
                    ApiError::new(
                        500,
                        format!("A ranked query's component row is invalid: {e}"),
                    )
                })?);
            }
        }
        let descending: Vec<bool> = info
            .component_query_infos
            .iter()
            .map(|c| c.order_by.first() == Some(&"Descending"))
            .collect();
        let values = fuse(
            rows,
            &descending,
            &info.component_weights,
            info.skip.unwrap_or(0),
            take,
        )
        .map_err(|e| ApiError::new(500, format!("{e}.")))?;
        let mut page = Page {
            items: Vec::with_capacity(values.len()),
            next: None,
            scanned: cost.scanned,
            bytes: 0,
        };
        for v in values {
            let item = Bytes::from(serde_json::to_vec(&v).unwrap_or_default());
            page.bytes += item.len();
            page.items.push(item);
        }
        Ok((page, cost.work))
    }
}

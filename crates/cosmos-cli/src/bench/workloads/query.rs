//! Query workloads: `query` runs a single-partition query that finds one seeded item by id (a
//! point read written as a query), `query-cross` a cross-partition `ORDER BY` with `TOP` over
//! every partition, `vector` a cross-partition top-k `ORDER BY VectorDistance` with a new probe
//! vector each time. Each operation reads the whole result; its report covers every page request.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use cosmos_driver::query::{Query, QueryOptions, QueryScope};
use cosmos_driver::{ContainerClient, CosmosDriver, DiagnosticsContext};
use futures::TryStreamExt;
use serde_json::Value;

use super::op_report::{extra_requests, hedge_facts, report_err};
use super::setup::SeededItems;
use crate::bench::items::{embedding, item_for, item_id, EMBEDDING_PATH};
use crate::bench::workload::{OpReport, Workload};

/// Which query each operation runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueryShape {
    /// `SELECT * FROM c WHERE c.id = @id` within the item's partition key.
    PointLike,
    /// `SELECT TOP 10 c.id, c.n FROM c ORDER BY c.id DESC` across partitions.
    CrossOrderByTop,
    /// The `top` items closest (cosine) to a random probe of `dimensions` numbers, across
    /// partitions ([`Query::vector_search`] over the embedding).
    Vector {
        /// Numbers in each embedding.
        dimensions: u32,
        /// Results asked for.
        top: u32,
    },
}

/// Runs one query per operation.
pub struct QueryWorkload {
    container: ContainerClient,
    items: SeededItems,
    shape: QueryShape,
    slow_after: Duration,
    short_results: Arc<AtomicU64>,
}

impl QueryWorkload {
    /// Queries the seeded `items` through `driver`; a first attempt slower than `slow_after`
    /// counts as over the hedge threshold.
    pub fn new(
        driver: &CosmosDriver,
        database: &str,
        container: &str,
        items: SeededItems,
        shape: QueryShape,
        slow_after: Duration,
    ) -> Self {
        Self {
            container: driver.container(database, container),
            items,
            shape,
            slow_after,
            short_results: Arc::default(),
        }
    }

    /// Counts the successful searches that returned fewer results than they should have
    /// (`min(top, items)`, for the vector shape), warm-up included.
    pub fn short_results(&self) -> Arc<AtomicU64> {
        self.short_results.clone()
    }

    /// How many results operation results must have, when the shape says.
    fn expected_results(&self) -> Option<u64> {
        match self.shape {
            QueryShape::Vector { top, .. } => Some(u64::from(top).min(self.items.len())),
            _ => None,
        }
    }

    fn query_for(&self, seq: u64) -> Result<(Query, QueryScope), cosmos_driver::CosmosError> {
        Ok(match self.shape {
            QueryShape::PointLike => {
                let id = item_id(item_for(seq, self.items.len()));
                let q =
                    Query::new("SELECT * FROM c WHERE c.id = @id").with_parameter("@id", &id)?;
                (q, QueryScope::PartitionKey(id.as_str().into()))
            }
            QueryShape::CrossOrderByTop => (
                Query::new("SELECT TOP 10 c.id, c.n FROM c ORDER BY c.id DESC"),
                QueryScope::CrossPartition,
            ),
            QueryShape::Vector { dimensions, top } => (
                Query::vector_search(EMBEDDING_PATH, embedding(1, seq, dimensions), top)?,
                QueryScope::CrossPartition,
            ),
        })
    }
}

impl Workload for QueryWorkload {
    async fn run_op(&self, seq: u64) -> OpReport {
        let (query, scope) = match self.query_for(seq) {
            Ok(q) => q,
            Err(e) => return report_err(&e, self.slow_after, None),
        };
        let mut pages = self
            .container
            .query_items_with::<Value>(query, scope, QueryOptions::new())
            .into_pages();
        let mut contexts: Vec<DiagnosticsContext> = Vec::new();
        let mut charge = 0.0;
        let mut results = 0u64;
        loop {
            match pages.try_next().await {
                Ok(Some(page)) => {
                    charge += page.request_charge();
                    results += page.items().len() as u64;
                    contexts.extend(page.diagnostics().iter().cloned());
                }
                Ok(None) => break,
                Err(e) => return report_err(&e, self.slow_after, None),
            }
        }
        if self.expected_results().is_some_and(|n| results < n) {
            self.short_results.fetch_add(1, Ordering::Relaxed);
        }
        let pages_read = contexts.len();
        let d = DiagnosticsContext::aggregate(contexts);
        OpReport {
            hedge: hedge_facts(&d, self.slow_after),
            // Requests beyond one per service page: hedges, retries, failovers.
            extra_requests: extra_requests(&d).saturating_sub(pages_read.saturating_sub(1) as u32),
            ru_caller_visible: charge,
            ru_total: d.total_request_charge(),
            ..OpReport::ok()
        }
    }
}

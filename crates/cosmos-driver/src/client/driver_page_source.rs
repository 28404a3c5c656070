//! Query pages through a driver: the plan, the range listing and each page are one operation
//! through the driver's `execute`, so each is retried, routed and hedged like a point read.

use std::sync::Arc;

use bytes::Bytes;
use futures::future::BoxFuture;
use serde::Deserialize;
use serde_json::Value;

use crate::operations::feed_body::{feed_items, unreadable};
use crate::operations::page_guard::PageGuard;
use crate::options::OperationOptions;
use crate::protocol::ContainerReference;
use crate::query::{
    page_operation, plan_operation, PageSettings, PageTarget, QueryPageSource, QueryPlan,
    RangePage, TargetRange,
};
use crate::{CosmosDriver, CosmosError, CosmosOperation, ErrorKind};

/// Pages through a driver: each request is one operation through its pipeline.
#[derive(Clone, Debug)]
pub(crate) struct DriverPageSource {
    driver: CosmosDriver,
    container: ContainerReference,
}

impl DriverPageSource {
    /// A source for queries on `container`.
    pub(crate) fn new(driver: CosmosDriver, container: ContainerReference) -> Self {
        DriverPageSource { driver, container }
    }
}

#[derive(Deserialize)]
struct RawRange {
    id: String,
    #[serde(rename = "minInclusive")]
    min: String,
    #[serde(rename = "maxExclusive")]
    max: String,
}

impl DriverPageSource {
    /// Reads the container's partition key ranges: every page of the feed, the leaves only.
    async fn read_ranges(
        &self,
        options: &OperationOptions,
    ) -> Result<Vec<TargetRange>, CosmosError> {
        let options = options.for_metadata();
        let mut out = Vec::new();
        let mut continuation: Option<String> = None;
        let mut guard = PageGuard::new();
        for _ in 0..MAX_RANGE_PAGES {
            let mut op = CosmosOperation::read_partition_key_ranges(self.container.clone());
            if let Some(c) = &continuation {
                op = op.with_continuation(c)?;
            }
            let response = self.driver.execute(op.clone(), &options).await?;
            let ranges: Vec<RawRange> = feed_items(&response, "PartitionKeyRanges", &op)?;
            guard
                .check(
                    continuation.as_deref(),
                    response.continuation(),
                    ranges.len(),
                )
                .map_err(|fault| {
                    fault
                        .into_error(&op)
                        .with_diagnostics(response.diagnostics().clone())
                })?;
            out.extend(ranges.into_iter().map(|r| TargetRange {
                id: r.id,
                min: r.min,
                max: r.max,
            }));
            continuation = response.continuation().map(str::to_owned);
            if continuation.is_none() {
                out.sort_by(|a, b| a.min.cmp(&b.min));
                // A feed can list a split parent beside its children; keep the leaves.
                let all = out.clone();
                out.retain(|r| {
                    !all.iter().any(|o| {
                        o.id != r.id
                            && o.min >= r.min
                            && o.max <= r.max
                            && (o.min != r.min || o.max != r.max)
                    })
                });
                return Ok(out);
            }
        }
        Err(CosmosError::new(
            ErrorKind::Deserialization,
            format!("the partition key range feed did not end within {MAX_RANGE_PAGES} pages"),
        ))
    }
}

/// The most pages of partition key ranges read for one container.
const MAX_RANGE_PAGES: usize = 1000;

impl QueryPageSource for DriverPageSource {
    fn plan(
        &self,
        body: Bytes,
        settings: &PageSettings,
    ) -> BoxFuture<'_, Result<QueryPlan, CosmosError>> {
        let op = plan_operation(&self.container, body);
        let options = settings.request.clone();
        Box::pin(async move {
            let response = self.driver.execute(op, &options).await?;
            QueryPlan::from_body(response.body())
                .map_err(|why| unreadable(&response, "the query plan request", why))
        })
    }

    fn partition_key_path_count(
        &self,
        settings: &PageSettings,
    ) -> BoxFuture<'_, Result<usize, CosmosError>> {
        let options = settings.request.clone();
        Box::pin(async move {
            self.driver
                .partition_key_paths(&self.container, &options)
                .await
                .map(|paths| paths.len())
        })
    }

    /// The container's ranges: the driver's last reading unless `refresh` (or none is kept); a
    /// reading is kept for the next operation until a request finds a range gone.
    fn ranges(
        &self,
        refresh: bool,
        options: &OperationOptions,
    ) -> BoxFuture<'_, Result<Vec<TargetRange>, CosmosError>> {
        let options = options.clone();
        Box::pin(async move {
            let metadata = self.driver.container_metadata();
            let link = self.container.link();
            if !refresh {
                if let Some(kept) = metadata.partition_key_ranges(link) {
                    return Ok(kept.to_vec());
                }
            }
            let ranges = self.read_ranges(&options).await?;
            metadata.remember_partition_key_ranges(link, Arc::from(ranges.clone()));
            Ok(ranges)
        })
    }

    fn page(
        &self,
        body: Bytes,
        target: PageTarget,
        continuation: Option<String>,
        settings: &PageSettings,
    ) -> BoxFuture<'_, Result<RangePage, CosmosError>> {
        let op = page_operation(
            &self.container,
            body,
            &target,
            continuation.as_deref(),
            settings,
        );
        let options = settings.request.clone();
        Box::pin(async move {
            let response = self.driver.execute(op?, &options).await?;
            let documents: Vec<Value> = feed_items(
                &response,
                "Documents",
                format_args!("container {}", self.container.link()),
            )?;
            let (_, headers, _, diagnostics) = response.into_parts();
            Ok(RangePage {
                documents,
                continuation: headers.continuation().map(str::to_owned),
                headers,
                diagnostics,
            })
        })
    }
}

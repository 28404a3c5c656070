//! A query's plan, ranges and pages through the driver's pipeline: each is one operation through
//! the dispatcher, so each is retried, routed and hedged like a point read. The query pager reads
//! through this source.

use std::sync::Arc;

use bytes::Bytes;
use futures::future::BoxFuture;
use serde_json::Value;

use super::page_source::{
    page_operation, plan_operation, PageSettings, PageTarget, QueryPageSource, RangePage,
};
use super::plan::query_plan::QueryPlan;
use crate::error::CosmosError;
use crate::operations::feed_body::{feed_items, unreadable};
use crate::operations::{partition_key_paths, partition_key_ranges, run};
use crate::options::OperationOptions;
use crate::pipeline::DriverCore;
use crate::protocol::ContainerReference;
use crate::routing::TargetRange;

/// Pages of one container through the driver's pipeline.
#[derive(Clone, Debug)]
pub(crate) struct DriverPageSource {
    core: Arc<DriverCore>,
    container: ContainerReference,
}

impl DriverPageSource {
    /// A source for `container`.
    pub(crate) fn new(core: Arc<DriverCore>, container: ContainerReference) -> Self {
        DriverPageSource { core, container }
    }
}

impl QueryPageSource for DriverPageSource {
    fn plan(
        &self,
        body: Bytes,
        settings: &PageSettings,
    ) -> BoxFuture<'_, Result<QueryPlan, CosmosError>> {
        let op = plan_operation(&self.container, body);
        let options = settings.request.clone();
        Box::pin(async move {
            let response = run(&self.core, op, &options).await?;
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
            partition_key_paths(&self.core, &self.container, &options)
                .await
                .map(|paths| paths.len())
        })
    }

    fn ranges(
        &self,
        refresh: bool,
        options: &OperationOptions,
    ) -> BoxFuture<'_, Result<Vec<TargetRange>, CosmosError>> {
        let options = options.clone();
        Box::pin(async move {
            partition_key_ranges(&self.core, &self.container, refresh, &options).await
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
            let response = run(&self.core, op?, &options).await?;
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

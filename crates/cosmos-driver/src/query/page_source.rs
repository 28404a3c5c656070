//! Where a query's pages come from: the query plan, the container's partition key ranges, and
//! one page of one range. `operations::DriverPageSource` sends each of them as an operation through
//! the driver's pipeline, so every page request is retried, routed and hedged like a point read.
//! The trait is the seam the query executor is tested through.

use bytes::Bytes;
use futures::future::BoxFuture;
use http::{HeaderName, HeaderValue};
use serde_json::Value;

use super::merge::range_merge::TargetRange;
use super::plan::query_features::{QUERY_VERSION, SUPPORTED_QUERY_FEATURES};
use super::plan::query_plan::QueryPlan;
use crate::diagnostics::DiagnosticsContext;
use crate::error::{CosmosError, ErrorKind};
use crate::operation::{CosmosOperation, OperationTarget};
use crate::options::OperationOptions;
use crate::protocol::ResponseHeaders;
use crate::protocol::{header_names as h, ContainerReference, OperationType, PartitionKey};

/// `x-ms-documentdb-isquery`
pub(crate) const IS_QUERY: HeaderName = HeaderName::from_static("x-ms-documentdb-isquery");
pub(crate) use crate::protocol::header_names::IS_QUERY_PLAN_REQUEST;
/// `x-ms-cosmos-supported-query-features`
pub(crate) const SUPPORTED_QUERY_FEATURES_HEADER: HeaderName =
    HeaderName::from_static("x-ms-cosmos-supported-query-features");
/// `x-ms-cosmos-query-version`
pub(crate) const QUERY_VERSION_HEADER: HeaderName =
    HeaderName::from_static("x-ms-cosmos-query-version");
/// `x-ms-documentdb-query-enablecrosspartition`
pub(crate) const ENABLE_CROSS_PARTITION: HeaderName =
    HeaderName::from_static("x-ms-documentdb-query-enablecrosspartition");
/// `x-ms-documentdb-populatequerymetrics`
pub(crate) const POPULATE_QUERY_METRICS: HeaderName =
    HeaderName::from_static("x-ms-documentdb-populatequerymetrics");
/// `x-ms-cosmos-populateindexmetrics`
pub(crate) const POPULATE_INDEX_METRICS: HeaderName =
    HeaderName::from_static("x-ms-cosmos-populateindexmetrics");
/// `x-ms-documentdb-query-metrics` (response)
pub(crate) const QUERY_METRICS: &str = "x-ms-documentdb-query-metrics";
/// `x-ms-cosmos-index-utilization` (response)
pub(crate) const INDEX_METRICS: &str = "x-ms-cosmos-index-utilization";
/// The content type of a query body.
pub(crate) const QUERY_CONTENT_TYPE: &str = "application/query+json";

/// Where one page request goes.
#[derive(Clone, Debug, PartialEq)]
pub enum PageTarget {
    /// One partition key range of a cross-partition query.
    Range(TargetRange),
    /// The range of one partition key.
    PartitionKey(PartitionKey),
    /// Part of one partition key range: the keys in `[min, max)` of range `id` (the
    /// `x-ms-start-epk` / `x-ms-end-epk` headers), as for a prefix of a hierarchical key.
    EpkRange(TargetRange),
}

/// One page of one range, as the service answered it.
#[derive(Debug)]
pub struct RangePage {
    /// The page's documents.
    pub documents: Vec<Value>,
    /// The service continuation of the next page (`None`: the range is drained).
    pub continuation: Option<String>,
    /// The response headers (request charge, session token, metrics).
    pub headers: ResponseHeaders,
    /// The diagnostics of the page request.
    pub diagnostics: DiagnosticsContext,
}

/// Per-page request settings.
#[derive(Clone, Debug, Default)]
pub struct PageSettings {
    /// `x-ms-max-item-count`.
    pub max_item_count: Option<u32>,
    /// Ask for query metrics.
    pub populate_query_metrics: bool,
    /// Ask for index metrics.
    pub populate_index_metrics: bool,
    /// Per-request options (session token, consistency, excluded regions, deadline, hedging).
    pub request: OperationOptions,
}

/// The source of a query's plan, ranges and pages.
pub trait QueryPageSource: Send + Sync {
    /// The gateway's plan for the query body.
    fn plan(
        &self,
        body: Bytes,
        settings: &PageSettings,
    ) -> BoxFuture<'_, Result<QueryPlan, CosmosError>>;
    /// How many paths the container's partition key has (more than one: hierarchical).
    fn partition_key_path_count(
        &self,
        settings: &PageSettings,
    ) -> BoxFuture<'_, Result<usize, CosmosError>>;
    /// The container's partition key ranges, re-read from the service when `refresh`, with the
    /// routing, strategy, deadline and consistency of `options` (the operation they serve).
    fn ranges(
        &self,
        refresh: bool,
        options: &OperationOptions,
    ) -> BoxFuture<'_, Result<Vec<TargetRange>, CosmosError>>;
    /// One page.
    fn page(
        &self,
        body: Bytes,
        target: PageTarget,
        continuation: Option<String>,
        settings: &PageSettings,
    ) -> BoxFuture<'_, Result<RangePage, CosmosError>>;
}

fn header(name: HeaderName, value: &'static str) -> (HeaderName, HeaderValue) {
    (name, HeaderValue::from_static(value))
}

/// The page-request operation: headers the official SDKs send for a query page.
pub fn page_operation(
    container: &ContainerReference,
    body: Bytes,
    target: &PageTarget,
    continuation: Option<&str>,
    settings: &PageSettings,
) -> Result<CosmosOperation, CosmosError> {
    let mut op = CosmosOperation::new(
        OperationType::Query,
        OperationTarget::Items(container.clone()),
    )
    .with_body(body)
    .with_header(IS_QUERY, HeaderValue::from_static("True"))
    .with_header(
        http::header::CONTENT_TYPE,
        HeaderValue::from_static(QUERY_CONTENT_TYPE),
    );
    let text = |value: &str| {
        HeaderValue::from_str(value).map_err(|_| {
            CosmosError::new(
                ErrorKind::Deserialization,
                "a partition key range id or bound is not a valid header value",
            )
        })
    };
    match target {
        PageTarget::Range(r) => {
            op = op
                .with_header(h::PARTITION_KEY_RANGE_ID, text(&r.id)?)
                .with_header(ENABLE_CROSS_PARTITION, HeaderValue::from_static("True"));
        }
        PageTarget::EpkRange(r) => {
            op = op
                .with_header(h::PARTITION_KEY_RANGE_ID, text(&r.id)?)
                .with_header(h::START_EPK, text(&r.min)?)
                .with_header(h::END_EPK, text(&r.max)?)
                .with_header(
                    h::READ_KEY_TYPE,
                    HeaderValue::from_static("EffectivePartitionKeyRange"),
                )
                .with_header(ENABLE_CROSS_PARTITION, HeaderValue::from_static("True"));
        }
        PageTarget::PartitionKey(pk) => op = op.with_partition_key(pk.clone()),
    }
    if let Some(n) = settings.max_item_count {
        op = op.with_max_item_count(n);
    }
    if let Some(c) = continuation {
        op = op.with_continuation(c)?;
    }
    if settings.populate_query_metrics {
        let (n, v) = header(POPULATE_QUERY_METRICS, "True");
        op = op.with_header(n, v);
    }
    if settings.populate_index_metrics {
        let (n, v) = header(POPULATE_INDEX_METRICS, "True");
        op = op.with_header(n, v);
    }
    Ok(op)
}

/// The plan-request operation: the headers the official SDKs send for a plan.
pub fn plan_operation(container: &ContainerReference, body: Bytes) -> CosmosOperation {
    CosmosOperation::new(
        OperationType::Query,
        OperationTarget::Items(container.clone()),
    )
    .with_body(body)
    .with_header(IS_QUERY_PLAN_REQUEST, HeaderValue::from_static("True"))
    .with_header(
        SUPPORTED_QUERY_FEATURES_HEADER,
        HeaderValue::from_static(SUPPORTED_QUERY_FEATURES),
    )
    .with_header(
        QUERY_VERSION_HEADER,
        HeaderValue::from_static(QUERY_VERSION),
    )
    .with_header(
        http::header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    )
}

//! Names of the HTTP headers the driver sends and reads, as the service spells them, and the one
//! header of the driver's own ([`HEDGE_ATTEMPT`]).

use http::HeaderName;

/// `x-ms-version`: the REST API version the driver speaks.
pub(crate) const VERSION: HeaderName = HeaderName::from_static("x-ms-version");
/// `x-ms-date`: the request time in RFC 1123 format; part of the signature.
pub(crate) const DATE: HeaderName = HeaderName::from_static("x-ms-date");
/// `x-ms-documentdb-partitionkey`: the partition key as a JSON array.
pub(crate) const PARTITION_KEY: HeaderName =
    HeaderName::from_static("x-ms-documentdb-partitionkey");
/// `x-ms-session-token`: the session token sent with a request or returned with a response.
pub(crate) const SESSION_TOKEN: HeaderName = HeaderName::from_static("x-ms-session-token");
/// `x-ms-consistency-level`: a per-request consistency override (may only weaken the account's).
pub(crate) const CONSISTENCY_LEVEL: HeaderName = HeaderName::from_static("x-ms-consistency-level");
/// `x-ms-documentdb-is-upsert`: `True` turns a create into an upsert.
pub(crate) const IS_UPSERT: HeaderName = HeaderName::from_static("x-ms-documentdb-is-upsert");
/// `x-ms-cosmos-hub-region-processing-only`: `True` asks the service to serve the request from the
/// hub (write) region's state; sent after a 404/1002 on single-write accounts.
pub(crate) const HUB_REGION_PROCESSING_ONLY: HeaderName =
    HeaderName::from_static("x-ms-cosmos-hub-region-processing-only");
/// `x-cosmos-driver-hedge-attempt`: `1` on every attempt of a hedge race's alternate leg (the
/// speculative request sent to a second region while the first is slow), absent on every other
/// request, so that servers, proxies and logs can tell hedged requests apart. The driver's own
/// header, outside the service's `x-ms-` namespace: neither the service nor the official SDKs
/// define a wire marker for hedged requests, and the service ignores headers it does not know.
pub(crate) const HEDGE_ATTEMPT: HeaderName =
    HeaderName::from_static("x-cosmos-driver-hedge-attempt");
/// `x-ms-continuation`: the continuation token of a feed page (request and response).
pub(crate) const CONTINUATION: HeaderName = HeaderName::from_static("x-ms-continuation");
/// `x-ms-max-item-count`: the page size of a feed read.
pub(crate) const MAX_ITEM_COUNT: HeaderName = HeaderName::from_static("x-ms-max-item-count");
/// `Prefer`: `return=minimal` suppresses the document body on write responses.
pub(crate) const PREFER: HeaderName = HeaderName::from_static("prefer");
pub(crate) const PRIORITY_LEVEL: HeaderName = HeaderName::from_static("x-ms-cosmos-priority-level");
pub(crate) const THROUGHPUT_BUCKET: HeaderName =
    HeaderName::from_static("x-ms-cosmos-throughput-bucket");

/// `x-ms-substatus`: the Cosmos DB sub-status of a response.
pub(crate) const SUB_STATUS: HeaderName = HeaderName::from_static("x-ms-substatus");
/// `x-ms-request-charge`: request units the request consumed.
pub(crate) const REQUEST_CHARGE: HeaderName = HeaderName::from_static("x-ms-request-charge");
/// `x-ms-activity-id`: the service's id of the request.
pub(crate) const ACTIVITY_ID: HeaderName = HeaderName::from_static("x-ms-activity-id");
/// `x-ms-cosmos-is-query-plan-request`: the request asks the gateway for a query plan.
pub(crate) const IS_QUERY_PLAN_REQUEST: HeaderName =
    HeaderName::from_static("x-ms-cosmos-is-query-plan-request");
/// `x-ms-documentdb-partitionkeyrangeid`: the partition key range that served the request.
pub(crate) const PARTITION_KEY_RANGE_ID: HeaderName =
    HeaderName::from_static("x-ms-documentdb-partitionkeyrangeid");
/// `x-ms-read-key-type`: how `x-ms-start-epk` / `x-ms-end-epk` are read
/// (`EffectivePartitionKeyRange`).
pub(crate) const READ_KEY_TYPE: HeaderName = HeaderName::from_static("x-ms-read-key-type");
/// `x-ms-start-epk`: the inclusive start of the effective partition keys a request reads.
pub(crate) const START_EPK: HeaderName = HeaderName::from_static("x-ms-start-epk");
/// `x-ms-end-epk`: the exclusive end of the effective partition keys a request reads.
pub(crate) const END_EPK: HeaderName = HeaderName::from_static("x-ms-end-epk");
/// `x-ms-content-path`: the resource id (`_rid`) of the container that served the request.
pub(crate) const CONTENT_PATH: HeaderName = HeaderName::from_static("x-ms-content-path");
/// `x-ms-retry-after-ms`: how long to wait before retrying a throttled request.
pub(crate) const RETRY_AFTER_MS: HeaderName = HeaderName::from_static("x-ms-retry-after-ms");
/// `x-ms-item-count`: the number of resources in a feed page.
pub(crate) const ITEM_COUNT: HeaderName = HeaderName::from_static("x-ms-item-count");
/// `etag`
pub(crate) const ETAG: HeaderName = http::header::ETAG;
/// `x-ms-documentdb-pre-trigger-include`: the pre-triggers a write runs, comma-separated.
pub(crate) const PRE_TRIGGER_INCLUDE: HeaderName =
    HeaderName::from_static("x-ms-documentdb-pre-trigger-include");
/// `x-ms-documentdb-post-trigger-include`: the post-triggers a write runs, comma-separated.
pub(crate) const POST_TRIGGER_INCLUDE: HeaderName =
    HeaderName::from_static("x-ms-documentdb-post-trigger-include");
/// `x-ms-documentdb-script-enable-logging`: `true` asks for a stored procedure's `console.log`.
pub(crate) const SCRIPT_ENABLE_LOGGING: HeaderName =
    HeaderName::from_static("x-ms-documentdb-script-enable-logging");
/// `x-ms-documentdb-script-log-results`: a stored procedure's log, percent-encoded.
pub(crate) const SCRIPT_LOG_RESULTS: HeaderName =
    HeaderName::from_static("x-ms-documentdb-script-log-results");

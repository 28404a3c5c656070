//! Header names the service reads and writes.

pub(crate) const AUTHORIZATION: &str = "authorization";
pub(crate) const X_MS_DATE: &str = "x-ms-date";
pub(crate) const DATE: &str = "date";
pub(crate) const PARTITION_KEY: &str = "x-ms-documentdb-partitionkey";
pub(crate) const PARTITION_KEY_RANGE_ID: &str = "x-ms-documentdb-partitionkeyrangeid";
pub(crate) const IS_UPSERT: &str = "x-ms-documentdb-is-upsert";
/// `x-ms-indexing-directive` on an item write: `Default`, `Include` or `Exclude` (kept out of the
/// index).
pub(crate) const INDEXING_DIRECTIVE: &str = "x-ms-indexing-directive";
pub(crate) const IS_QUERY: &str = "x-ms-documentdb-isquery";
pub(crate) const IS_QUERY_PLAN: &str = "x-ms-cosmos-is-query-plan-request";
/// Asks for a query page's metrics; the emulator then answers [`QUERY_WORK`].
pub(crate) const POPULATE_QUERY_METRICS: &str = "x-ms-documentdb-populatequerymetrics";
/// The units of work a query page used (the emulator's own header, sent when asked for metrics).
pub(crate) const QUERY_WORK: &str = "x-ms-emulator-query-work";
/// Asks a container read for its quota and index transformation progress.
pub(crate) const POPULATE_QUOTA_INFO: &str = "x-ms-documentdb-populatequotainfo";
/// Asks a container read for per-range statistics.
pub(crate) const POPULATE_PARTITION_STATISTICS: &str =
    "x-ms-documentdb-populatepartitionstatistics";
/// How far an indexing policy change has been applied, in percent.
pub(crate) const INDEX_TRANSFORMATION_PROGRESS: &str =
    "x-ms-documentdb-collection-index-transformation-progress";
/// A query page's metrics, `name=value` pairs separated by `;`.
pub(crate) const QUERY_METRICS: &str = "x-ms-documentdb-query-metrics";
/// Asks for a query page's index utilization ([`INDEX_UTILIZATION`]).
pub(crate) const POPULATE_INDEX_METRICS: &str = "x-ms-cosmos-populateindexmetrics";
/// The indexes a query used: base64 of a JSON object.
pub(crate) const INDEX_UTILIZATION: &str = "x-ms-cosmos-index-utilization";
pub(crate) const ENABLE_CROSS_PARTITION: &str = "x-ms-documentdb-query-enablecrosspartition";
pub(crate) const MAX_ITEM_COUNT: &str = "x-ms-max-item-count";
pub(crate) const CONTINUATION: &str = "x-ms-continuation";
pub(crate) const SESSION_TOKEN: &str = "x-ms-session-token";
pub(crate) const REQUEST_CHARGE: &str = "x-ms-request-charge";
pub(crate) const ACTIVITY_ID: &str = "x-ms-activity-id";
/// `x-ms-cosmos-priority-level`: `High` (the default) or `Low`, throttled first when contended.
pub(crate) const PRIORITY_LEVEL: &str = "x-ms-cosmos-priority-level";
/// The throughput bucket (1 to 5) a request counts against.
pub(crate) const THROUGHPUT_BUCKET: &str = "x-ms-cosmos-throughput-bucket";
/// How long the server took over a request, in milliseconds (on every answer).
pub(crate) const REQUEST_DURATION_MS: &str = "x-ms-request-duration-ms";
pub(crate) const SUB_STATUS: &str = "x-ms-substatus";
/// The resource id of the container a client means (from its cache of the container).
pub(crate) const INTENDED_COLLECTION_RID: &str = "x-ms-cosmos-intended-collection-rid";
pub(crate) const RETRY_AFTER_MS: &str = "x-ms-retry-after-ms";
pub(crate) const LSN: &str = "lsn";
pub(crate) const ITEM_COUNT: &str = "x-ms-item-count";
pub(crate) const HUB_REGION_ONLY: &str = "x-ms-cosmos-hub-region-processing-only";
/// `Prefer`: `return=minimal` asks a write to answer without the item.
pub(crate) const PREFER: &str = "prefer";
pub(crate) const IF_MATCH: &str = "if-match";
pub(crate) const IF_NONE_MATCH: &str = "if-none-match";
pub(crate) const ETAG: &str = "etag";
pub(crate) const A_IM: &str = "a-im";
pub(crate) const CONTENT_TYPE: &str = "content-type";
pub(crate) const MAX_MEDIA_STORAGE: &str = "x-ms-max-media-storage-usage-mb";
pub(crate) const MEDIA_STORAGE: &str = "x-ms-media-storage-usage-mb";
pub(crate) const IF_MODIFIED_SINCE: &str = "if-modified-since";
pub(crate) const START_EPK: &str = "x-ms-start-epk";
pub(crate) const END_EPK: &str = "x-ms-end-epk";
pub(crate) const READ_KEY_TYPE: &str = "x-ms-read-key-type";
pub(crate) const CHANGE_FEED_WIRE_FORMAT: &str = "x-ms-cosmos-changefeed-wire-format-version";
pub(crate) const CONTENT_PATH: &str = "x-ms-content-path";
pub(crate) const ALT_CONTENT_PATH: &str = "x-ms-alt-content-path";
pub(crate) const IS_BATCH_REQUEST: &str = "x-ms-cosmos-is-batch-request";
pub(crate) const IS_BATCH_ATOMIC: &str = "x-ms-cosmos-batch-atomic";
pub(crate) const OFFER_THROUGHPUT: &str = "x-ms-offer-throughput";
pub(crate) const OFFER_AUTOPILOT: &str = "x-ms-cosmos-offer-autopilot-settings";
pub(crate) const OFFER_REPLACE_PENDING: &str = "x-ms-offer-replace-pending";
pub(crate) const OFFER_MIN_THROUGHPUT: &str = "x-ms-cosmos-min-throughput";
/// On an offer replace: switch a manual offer to autoscale.
pub(crate) const MIGRATE_OFFER_TO_AUTOSCALE: &str = "x-ms-cosmos-migrate-offer-to-autopilot";
/// On an offer replace: switch an autoscale offer to manual throughput.
pub(crate) const MIGRATE_OFFER_TO_MANUAL: &str = "x-ms-cosmos-migrate-offer-to-manual-throughput";
pub(crate) const BATCH_CONTINUE_ON_ERROR: &str = "x-ms-cosmos-batch-continue-on-error";
pub(crate) const ITEM_LSN: &str = "x-ms-item-lsn";
pub(crate) const COSMOS_ITEM_LLSN: &str = "x-ms-cosmos-item-llsn";
pub(crate) const COSMOS_LLSN: &str = "x-ms-cosmos-llsn";
pub(crate) const GLOBAL_COMMITTED_LSN: &str = "x-ms-global-committed-lsn";
pub(crate) const QUORUM_ACKED_LSN: &str = "x-ms-quorum-acked-lsn";
pub(crate) const COSMOS_QUORUM_ACKED_LLSN: &str = "x-ms-cosmos-quorum-acked-llsn";
pub(crate) const CURRENT_WRITE_QUORUM: &str = "x-ms-current-write-quorum";
pub(crate) const CURRENT_REPLICA_SET_SIZE: &str = "x-ms-current-replica-set-size";
pub(crate) const XP_ROLE: &str = "x-ms-xp-role";
pub(crate) const NUMBER_OF_READ_REGIONS: &str = "x-ms-number-of-read-regions";
pub(crate) const RESOURCE_QUOTA: &str = "x-ms-resource-quota";
pub(crate) const RESOURCE_USAGE: &str = "x-ms-resource-usage";
pub(crate) const SCHEMA_VERSION: &str = "x-ms-schemaversion";
pub(crate) const SERVICE_VERSION: &str = "x-ms-serviceversion";
pub(crate) const GATEWAY_VERSION: &str = "x-ms-gatewayversion";
pub(crate) const TRANSPORT_REQUEST_ID: &str = "x-ms-transport-request-id";
/// Asks a stored procedure's execution to answer its `console.log` output.
pub(crate) const SCRIPT_ENABLE_LOGGING: &str = "x-ms-documentdb-script-enable-logging";
/// A stored procedure's `console.log` output, percent-encoded.
pub(crate) const SCRIPT_LOG_RESULTS: &str = "x-ms-documentdb-script-log-results";
/// The pre-triggers an item write runs (comma-separated ids).
pub(crate) const PRE_TRIGGER_INCLUDE: &str = "x-ms-documentdb-pre-trigger-include";
/// The post-triggers an item write runs (comma-separated ids).
pub(crate) const POST_TRIGGER_INCLUDE: &str = "x-ms-documentdb-post-trigger-include";
/// The answer formats a client accepts (`JsonText`, `CosmosBinary`, comma-separated).
pub(crate) const SUPPORTED_SERIALIZATION_FORMATS: &str =
    "x-ms-cosmos-supported-serialization-formats";

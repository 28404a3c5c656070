//! Header names the service reads and writes.

pub const AUTHORIZATION: &str = "authorization";
pub const X_MS_DATE: &str = "x-ms-date";
pub const DATE: &str = "date";
pub const PARTITION_KEY: &str = "x-ms-documentdb-partitionkey";
pub const PARTITION_KEY_RANGE_ID: &str = "x-ms-documentdb-partitionkeyrangeid";
pub const IS_UPSERT: &str = "x-ms-documentdb-is-upsert";
pub const IS_QUERY: &str = "x-ms-documentdb-isquery";
pub const IS_QUERY_PLAN: &str = "x-ms-cosmos-is-query-plan-request";
/// Asks for a query page's metrics; the emulator then answers [`QUERY_WORK`].
pub const POPULATE_QUERY_METRICS: &str = "x-ms-documentdb-populatequerymetrics";
/// The units of work a query page used (the emulator's own header, sent when asked for metrics).
pub const QUERY_WORK: &str = "x-ms-emulator-query-work";
pub const ENABLE_CROSS_PARTITION: &str = "x-ms-documentdb-query-enablecrosspartition";
pub const MAX_ITEM_COUNT: &str = "x-ms-max-item-count";
pub const CONTINUATION: &str = "x-ms-continuation";
pub const SESSION_TOKEN: &str = "x-ms-session-token";
pub const REQUEST_CHARGE: &str = "x-ms-request-charge";
pub const ACTIVITY_ID: &str = "x-ms-activity-id";
pub const SUB_STATUS: &str = "x-ms-substatus";
pub const RETRY_AFTER_MS: &str = "x-ms-retry-after-ms";
pub const LSN: &str = "lsn";
pub const ITEM_COUNT: &str = "x-ms-item-count";
pub const HUB_REGION_ONLY: &str = "x-ms-cosmos-hub-region-processing-only";
/// `Prefer`: `return=minimal` asks a write to answer without the item.
pub const PREFER: &str = "prefer";
pub const IF_MATCH: &str = "if-match";
pub const IF_NONE_MATCH: &str = "if-none-match";
pub const ETAG: &str = "etag";
pub const A_IM: &str = "a-im";
pub const CONTENT_TYPE: &str = "content-type";
pub const MAX_MEDIA_STORAGE: &str = "x-ms-max-media-storage-usage-mb";
pub const MEDIA_STORAGE: &str = "x-ms-media-storage-usage-mb";
pub const IF_MODIFIED_SINCE: &str = "if-modified-since";
pub const START_EPK: &str = "x-ms-start-epk";
pub const END_EPK: &str = "x-ms-end-epk";
pub const READ_KEY_TYPE: &str = "x-ms-read-key-type";
pub const CHANGE_FEED_WIRE_FORMAT: &str = "x-ms-cosmos-changefeed-wire-format-version";
pub const CONTENT_PATH: &str = "x-ms-content-path";
pub const ALT_CONTENT_PATH: &str = "x-ms-alt-content-path";
pub const IS_BATCH_REQUEST: &str = "x-ms-cosmos-is-batch-request";
pub const IS_BATCH_ATOMIC: &str = "x-ms-cosmos-batch-atomic";
pub const OFFER_THROUGHPUT: &str = "x-ms-offer-throughput";
pub const OFFER_AUTOPILOT: &str = "x-ms-cosmos-offer-autopilot-settings";
pub const OFFER_REPLACE_PENDING: &str = "x-ms-offer-replace-pending";
pub const OFFER_MIN_THROUGHPUT: &str = "x-ms-cosmos-min-throughput";
/// On an offer replace: switch a manual offer to autoscale.
pub const MIGRATE_OFFER_TO_AUTOSCALE: &str = "x-ms-cosmos-migrate-offer-to-autopilot";
/// On an offer replace: switch an autoscale offer to manual throughput.
pub const MIGRATE_OFFER_TO_MANUAL: &str = "x-ms-cosmos-migrate-offer-to-manual-throughput";
pub const BATCH_CONTINUE_ON_ERROR: &str = "x-ms-cosmos-batch-continue-on-error";
pub const ITEM_LSN: &str = "x-ms-item-lsn";
pub const COSMOS_ITEM_LLSN: &str = "x-ms-cosmos-item-llsn";
pub const COSMOS_LLSN: &str = "x-ms-cosmos-llsn";
pub const GLOBAL_COMMITTED_LSN: &str = "x-ms-global-committed-lsn";
pub const QUORUM_ACKED_LSN: &str = "x-ms-quorum-acked-lsn";
pub const COSMOS_QUORUM_ACKED_LLSN: &str = "x-ms-cosmos-quorum-acked-llsn";
pub const CURRENT_WRITE_QUORUM: &str = "x-ms-current-write-quorum";
pub const CURRENT_REPLICA_SET_SIZE: &str = "x-ms-current-replica-set-size";
pub const XP_ROLE: &str = "x-ms-xp-role";
pub const NUMBER_OF_READ_REGIONS: &str = "x-ms-number-of-read-regions";
pub const RESOURCE_QUOTA: &str = "x-ms-resource-quota";
pub const RESOURCE_USAGE: &str = "x-ms-resource-usage";
pub const SCHEMA_VERSION: &str = "x-ms-schemaversion";
pub const SERVICE_VERSION: &str = "x-ms-serviceversion";
pub const GATEWAY_VERSION: &str = "x-ms-gatewayversion";
pub const TRANSPORT_REQUEST_ID: &str = "x-ms-transport-request-id";
/// Asks a stored procedure's execution to answer its `console.log` output.
pub const SCRIPT_ENABLE_LOGGING: &str = "x-ms-documentdb-script-enable-logging";
/// A stored procedure's `console.log` output, percent-encoded.
pub const SCRIPT_LOG_RESULTS: &str = "x-ms-documentdb-script-log-results";
/// The pre-triggers an item write runs (comma-separated ids).
pub const PRE_TRIGGER_INCLUDE: &str = "x-ms-documentdb-pre-trigger-include";
/// The post-triggers an item write runs (comma-separated ids).
pub const POST_TRIGGER_INCLUDE: &str = "x-ms-documentdb-post-trigger-include";

//! The settings of databases and containers as typed data (and users and permissions): a container's definition (indexing
//! policy, default TTL, unique keys) and provisioned throughput (manual or autoscale), with the
//! JSON the service reads and writes. Plain data; the client layer sends it.

mod conflicts;
mod container_properties;
mod scripts;
mod search_policy;
mod throughput_buckets;
mod throughput_properties;
mod users;

pub use conflicts::ConflictProperties;
pub use container_properties::{
    CompositePath, ContainerProperties, IndexPath, IndexingMode, IndexingPolicy, PartitionKeySpec,
    UniqueKey, UniqueKeyPolicy,
};
pub use scripts::{
    decode_script_log, trigger_include_header, StoredProcedureProperties, TriggerOperation,
    TriggerProperties, TriggerType, UserDefinedFunctionProperties,
};
pub use search_policy::{
    DistanceFunction, FullTextIndex, FullTextPath, FullTextPolicy, VectorDataType, VectorEmbedding,
    VectorEmbeddingPolicy, VectorIndex, VectorIndexType,
};
pub use throughput_buckets::ThroughputBucketLimit;
pub use throughput_properties::{
    AutopilotSettings, OfferContent, OfferDocument, ThroughputProperties,
};
pub use users::{PermissionMode, PermissionProperties, UserProperties};

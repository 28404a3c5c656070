//! The protocol's vocabulary: regions, resource and operation types, status codes, header names,
//! endpoints, resource links, partition keys, session tokens and consistency levels. No I/O here,
//! and no import of any other driver module: refusals are this layer's own [`ProtocolError`].

mod consistency;
mod cosmos_status;
mod effective_partition_key;
mod endpoint;
pub(crate) mod header_names;
mod offer_id;
mod operation_type;
mod partition_key;
mod priority_level;
mod protocol_error;
mod region;
mod resource_link;
mod response_headers;
mod script_kind;
mod session_token;
mod status_class;
mod throughput_bucket;

pub use consistency::ConsistencyLevel;
pub use cosmos_status::{status, sub_status, CosmosStatus};
pub use effective_partition_key::{
    effective_partition_key, effective_partition_key_for, epk_in_range, HashVersion, EPK_MAX,
};
pub use endpoint::Endpoint;
pub use offer_id::OfferId;
pub use operation_type::{OperationType, ResourceType};
pub use partition_key::{
    PartitionKey, PartitionKeyDefinition, PartitionKeyValue, MAX_HIERARCHY_DEPTH,
};
pub use priority_level::PriorityLevel;
pub use protocol_error::ProtocolError;
pub use region::Region;
pub use resource_link::{
    validate_id, ConflictReference, ContainerReference, DatabaseReference, ItemReference,
    PermissionReference, ScriptReference, UserReference, MAX_ID_LENGTH,
};
pub(crate) use response_headers::parse_retry_after;
pub use response_headers::ResponseHeaders;
pub use script_kind::ScriptKind;
pub use session_token::{PartitionSessionToken, SessionToken, MAX_SESSION_TOKEN_BYTES};
pub use status_class::is_range_gone;
pub(crate) use status_class::StatusClass;
pub use throughput_bucket::ThroughputBucket;

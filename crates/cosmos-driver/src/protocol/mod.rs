//! The protocol's vocabulary: regions, resource and operation types, status codes, header names,
//! resource links, partition keys and session tokens. No I/O here.

mod operation_type;
mod region;
mod cosmos_status;

pub use operation_type::{OperationType, ResourceType};
pub use region::Region;
pub use cosmos_status::{status, sub_status, CosmosStatus};

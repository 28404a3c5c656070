//! Effective partition keys: hashing (V2, and V1 for containers created with `"version": 1`) and
//! the split of the key space into ranges.

mod definition;
mod hash_v1;
mod key;
mod murmur;
mod partition_key;
mod ranges;

pub use definition::PkDefinition;
pub use key::{Epk, EpkFilter, MAX_PARTS};
pub use murmur::murmur3_x64_128;
pub use partition_key::{epk_hex, PartitionKeyValue, PkComponent};
pub use ranges::{boundaries, range_bounds, range_of, MAX_EPK, MIN_EPK, SPACE_END};

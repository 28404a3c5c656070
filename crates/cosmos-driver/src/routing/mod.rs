//! Where the next attempt goes: account metadata, region order, exclusions, endpoint health, the
//! partition circuit breaker, and the container metadata cache. Shared state here is lock-free on the read path.

mod account;
mod account_cache;
mod container_metadata;
mod endpoint_health;
mod hedging_kill_switch;
mod operation_route;
mod partition_breaker;
mod region_order;

pub(crate) use account::RegionalEndpoint;
pub use account::{AccountProperties, RegionEndpoint};
pub(crate) use account_cache::AccountCache;
pub(crate) use account_cache::AccountSnapshot;
pub(crate) use container_metadata::partition_key_path_segments;
pub use container_metadata::TargetRange;
pub(crate) use container_metadata::{ContainerMetadata, RangeParents};
pub use endpoint_health::{AccessScope, EndpointHealth};
pub(crate) use hedging_kill_switch::engaged as hedging_kill_switch_engaged;
pub(crate) use operation_route::{region_list, route_candidates, RouteQuery};
pub(crate) use partition_breaker::{BreakerConfig, HedgeWinRecorder};
pub use partition_breaker::{ContainerBreaker, PartitionBreaker};
pub(crate) use region_order::{applicable, Candidates};

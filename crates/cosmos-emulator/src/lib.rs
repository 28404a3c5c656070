//! A multi-region Azure Cosmos DB (NoSQL API) emulator over real HTTP: master-key auth, partition key
//! ranges placed by effective partition key, per-region replicas with replication lag, session
//! consistency, failover, native patch, and fault rules.
//!
//! Start one with [`EmulatorBuilder`]; the returned [`Emulator`] gives the endpoints, the key, the
//! fault controls and the request counters, and stops every listener when dropped.

pub mod auth;
pub mod cli;
mod emulator;
pub mod epk;
pub mod exchange;
pub mod faults;
mod handlers;
mod ops;
pub mod patch;
mod persist;
pub mod protocol;
mod query_exec;
pub mod scripts;
pub mod server;
pub mod sql;
pub mod store;
mod tls;

pub use cli::{run, EmulatorArgs};
pub use emulator::{DetachedEmulator, Emulator, EmulatorBuilder, StartError, WELL_KNOWN_KEY};
pub use exchange::SessionWait;
pub use faults::{FaultInjector, RequestCounters};
pub use query_exec::QueryLimits;
pub use store::{QueryMemoryStats, ReplicationLag};

//! A multi-region Azure Cosmos DB (NoSQL API) emulator over real HTTP: master-key auth, partition key
//! ranges placed by effective partition key, per-region replicas with replication lag, session
//! consistency, failover, native patch, and fault rules.
//!
//! Start one with [`EmulatorBuilder`]; the returned [`Emulator`] gives the endpoints, the key, the
//! fault controls and the request counters, and stops every listener when dropped.
//!
//! Besides that embedding API, the crate shows the fault rules' types ([`faults`]), partition key
//! hashing ([`epk`]), the binary encoding ([`protocol::cosmos_binary`]) and full-text tokenizing
//! ([`sql::fulltext`]) that tests measure against; everything else is the crate's own.

#![warn(unreachable_pub)]

mod auth;
mod emulator;
pub mod epk;
mod exchange;
pub mod faults;
mod handlers;
mod persist;
pub mod protocol;
mod scripts;
mod server;
pub mod sql;
mod store;

pub use emulator::cli::{run, EmulatorArgs};
pub use emulator::{DetachedEmulator, Emulator, EmulatorBuilder, StartError, WELL_KNOWN_KEY};
pub use exchange::SessionWait;
pub use faults::{FaultInjector, RequestCounters};
pub use scripts::isolation::serve_if_asked as serve_script_worker_if_asked;
pub use sql::run::{QueryLimits, QueryMemoryStats};
pub use store::ReplicationLag;

//! Server-side JavaScript: stored procedures, triggers and user-defined functions. Their
//! definitions ([`definition`]) and every container's scripts ([`Scripts`]).

pub mod definition;
mod registry;

pub use definition::{Script, TriggerOperation, TriggerSpec, TriggerType, WriteOperation};
pub use registry::{Scripts, MAX_SCRIPTS_PER_KIND};
pub mod engine;
mod guards;
mod heap;
#[cfg(test)]
mod runaway_tests;
pub mod udf;
pub mod watch;

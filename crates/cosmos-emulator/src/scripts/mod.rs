//! Server-side JavaScript: stored procedures, triggers and user-defined functions. Their
//! definitions ([`definition`]) and every container's scripts ([`Scripts`]).

pub(crate) mod definition;
mod registry;

pub(crate) use definition::{Script, TriggerType, WriteOperation};
pub(crate) use registry::Scripts;
pub(crate) mod engine;
mod guards;
mod heap;
pub(crate) mod isolation;
#[cfg(test)]
mod runaway_tests;
pub(crate) mod udf;
mod udf_runtime;
pub(crate) mod watch;

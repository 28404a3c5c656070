//! Parsing of command-line values: durations, hedging choices, the account target, PATCH flags,
//! the import and export flags,
//! and the request class (priority and throughput bucket) of the data commands.

pub mod duration;
pub mod hedging;
pub mod patch_flags;
pub mod request_class;
pub mod target;
pub mod transfer;

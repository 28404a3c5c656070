//! Parsing of command-line values: durations, hedging choices, the account target, PATCH flags,
//! and the import and export flags.

pub mod duration;
pub mod hedging;
pub mod patch_flags;
pub mod target;
pub mod transfer;

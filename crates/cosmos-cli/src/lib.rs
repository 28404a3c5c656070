//! The `cosmos` command's library: the benchmark engine, argument parsing and the commands.

#![deny(missing_docs)]

pub mod args;
pub mod bench;
pub mod cli;
pub mod commands;
pub mod exit_code;

//! The `cosmos` command's library: the benchmark engine and the command implementations.

pub mod bench;

//! The crate's integration tests, one binary: each module below was its own test file.
//! One binary links once, which keeps the build's disk and link time small.

mod common;

mod bench_json;
mod changefeed;
mod changefeed_chaos;
mod connection_errors;
mod hostile_server;
mod item_crud;
mod item_export_ranges;
mod item_query;
mod item_transfer;
mod request_class;
mod script_wire;
mod scripting;

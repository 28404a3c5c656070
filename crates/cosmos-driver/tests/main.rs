//! The crate's integration tests, one binary: each module below was its own test file.
//! One binary links once, which keeps the build's disk and link time small.

mod common;

mod account_refresh;
mod adaptive_hedging;
mod auth_and_tls;
mod batch;
mod breaker_unknown_range;
mod bulk;
mod cancel_on_drop;
mod change_feed;
mod container_client;
mod crud;
mod deadline;
mod excluded_regions;
mod feed_pages;
mod hedging;
mod hedging_differential;
mod hedging_load;
mod hostile_server;
mod http2;
mod layers;
mod metadata_hedging;
mod partition_faults;
mod patch;
mod query;
mod query_aggregate_resume;
mod query_cross;
mod query_prefix;
mod query_python_differential;
mod read_attempt_timeout;
mod read_many;
mod readme_examples;
mod recreated_container;
mod regional_failover;
mod regional_start;
mod sessions;
mod third_party_conformance;
mod throttling;
mod throughput_and_settings;
mod typed_lifecycle;
mod typed_streams;
mod write_failover;
mod write_outcome;

//! The crate's integration tests, one binary: each module below was its own test file.
//! One binary links once, which keeps the build's disk and link time small.

mod common;

mod auth;
mod bad_input;
mod bad_input_random;
mod batch;
mod change_feed;
mod consistency;
mod container_replace;
mod container_rules;
mod crud;
mod error_headers;
mod fault_rules;
mod faults_wiring;
mod feed;
mod hardening;
mod hierarchical_keys;
mod http2;
mod item_rules;
mod lifecycle;
mod metadata_queries;
mod offers;
mod outages;
mod partitioning;
mod patch;
mod preconditions;
mod query;
mod query_budget;
mod query_budget_random;
mod query_differential;
mod query_plans;
mod regions;
mod response_headers;
mod scripts;
mod session_paths;
mod split;
mod throughput;
mod tls;
mod unique_keys;

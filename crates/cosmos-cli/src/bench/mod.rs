//! The tail-latency benchmark: an engine generic over a workload, its report, table and plot.

pub mod chaos;
pub mod conclusion;
pub mod engine;
pub mod items;
pub mod meta;
pub mod output;
pub mod progress;
pub mod region_timeline;
pub mod report;
pub mod schedule;
pub mod svg;
pub mod table;
pub mod tally;
pub mod workload;
pub mod workloads;

#[cfg(test)]
mod engine_tests;

pub use engine::{run, EngineConfig, RunMeasurement};
pub use report::{BenchReport, RunLabels, RunReport};
pub use schedule::{Pacing, StopAt, Window};
pub use workload::{HedgeFacts, OpOutcome, OpReport, Workload};

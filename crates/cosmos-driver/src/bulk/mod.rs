//! Bulk: many independent operations sent as non-atomic batches grouped by partition key range,
//! with congestion control per range.
//!
//! - `bulk_operation`: [`BulkOperation`], one operation with its own partition key.
//! - `congestion`: the per-range limit of batches in flight (grows on success, halves on 429).
//! - `range_map`: `RangeMap`, the route (`BulkRoute`) of a partition key.
//! - `batch_outcome`: what a run does with each answer (finished, throttled, misrouted).
//! - `bulk_target`: `BulkTarget`, the seam to the service; `driver_bulk_target`: the driver's, each
//!   batch one operation through the dispatcher.
//! - `executor`: `run_bulk`, the run itself; `bulk_options` and `bulk_response` its inputs and
//!   outputs.

mod batch_outcome;
mod bulk_operation;
mod bulk_options;
mod bulk_response;
mod bulk_target;
mod congestion;
mod driver_bulk_target;
mod executor;
#[cfg(test)]
mod executor_tests;
mod range_map;

pub use bulk_operation::BulkOperation;
pub use bulk_options::BulkOptions;
pub use bulk_response::{BulkItemResult, BulkResponse, BulkStats};
pub(crate) use driver_bulk_target::DriverBulkTarget;
pub(crate) use executor::run_bulk;

//! Bulk: many independent operations sent as non-atomic batches grouped by partition key range,
//! with congestion control per range.
//!
//! - `bulk_operation`: [`BulkOperation`], one operation with its own partition key.
//! - [`congestion`]: the per-range limit of batches in flight (grows on success, halves on 429).
//! - `grouping`: operations grouped into batches within the service's limits, and results put
//!   back in the caller's order.

mod bulk_operation;
pub mod congestion;
mod grouping;

pub use bulk_operation::BulkOperation;
pub use congestion::{BatchSignal, CongestionLimit, RangeCongestion};
pub use grouping::{in_caller_order, plan_batches, PlannedBatch};

//! The benchmark's workloads over this project's driver, and the account setup they need.

mod bulk_insert;
pub mod chaos;
mod mixed;
pub mod op_report;
mod patch_counter;
pub mod priority;
mod query;
mod read;
pub mod setup;

pub use bulk_insert::{bulk_insert, BulkInsertRun};
pub use chaos::ChaosWorkload;
pub use mixed::MixedWorkload;
pub use patch_counter::PatchCounterWorkload;
pub use query::{QueryShape, QueryWorkload};
pub use read::ReadWorkload;

//! The benchmark's workloads over this project's driver, and the account setup they need.

pub mod facts;
mod mixed;
mod patch_counter;
mod query;
mod read;
pub mod setup;

pub use mixed::MixedWorkload;
pub use patch_counter::PatchCounterWorkload;
pub use query::{QueryShape, QueryWorkload};
pub use read::ReadWorkload;

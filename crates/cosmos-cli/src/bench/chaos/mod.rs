//! The chaos benchmark: a mixed workload while a schedule of faults plays, then a read-back that
//! counts lost, phantom and double-applied writes.
//!
//! [`fault_plan`] says when each fault happens; [`fault_player`] applies it to the embedded
//! emulator and records the timeline; the workload (`workloads::chaos`) records every write's
//! reported outcome in the [`ledger`], classified by [`is_ambiguous`]; [`readback`] reads the
//! data back and [`verdict`] turns both into the figures of [`chaos_report`]. [`storm_load`] counts
//! the requests and operations of the 429 storm, the window where hedging could multiply load.

mod ambiguity;
pub mod chaos_report;
pub mod fault_plan;
pub mod fault_player;
pub mod ledger;
pub mod readback;
pub mod storm_load;
pub mod verdict;

pub use ambiguity::is_ambiguous;
pub use chaos_report::{ChaosReport, TimelineEntry};

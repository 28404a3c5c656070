//! The emulator's own native partial update: operations, paths and conditions.

pub mod condition;
mod ops;
mod path;

pub use ops::{apply, parse_operations, PatchOp, MAX_OPERATIONS};
pub use path::PatchPath;

//! The emulator's own native partial update: operations and paths (conditions are
//! [`crate::sql::patch_condition`]).

mod ops;
mod path;

pub(crate) use ops::{apply, parse_operations, PatchOp};

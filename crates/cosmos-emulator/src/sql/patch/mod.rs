//! PATCH evaluation: the native partial update's operations and paths, and the condition a
//! PATCH (or a batch's patch operation) is applied under.

mod condition;
mod operations;
mod path;

pub(crate) use condition::Condition;
pub(crate) use operations::{apply, parse_operations, PatchOp};

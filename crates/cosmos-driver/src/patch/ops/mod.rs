//! Applying patch operations to a JSON document, all or nothing.
//!
//! The operations' semantics are documented in `apply.rs`, each with its source in the Cosmos DB
//! service's documentation.

mod apply;
mod increment;
mod journal;
mod locate;
mod patch_error;
mod pointer;

#[cfg(test)]
mod proptests;
#[cfg(test)]
mod tests;

pub(crate) use patch_error::PathRole;
pub use patch_error::{PatchError, PatchFailure};
pub use pointer::JsonPointer;
pub(crate) use pointer::PointerError;

use serde_json::Value;

use super::instructions::PatchOperation;

/// Applies `operations` to `doc` in order.
///
/// Atomic: when an operation fails, every change made by the earlier ones is undone and `doc` is
/// left exactly as it was (member order included); the error names the failing operation's
/// position, kind and paths, and the reason. Member order is otherwise preserved: new members
/// are appended, overwritten members keep their place, removed members close the gap.
pub fn apply_patch_ops(doc: &mut Value, operations: &[PatchOperation]) -> Result<(), PatchError> {
    let mut journal = journal::Journal::default();
    for (index, op) in operations.iter().enumerate() {
        if let Err(reason) = apply::apply_one(doc, op, &mut journal) {
            let restored = journal.rollback(doc);
            debug_assert!(restored, "the undo journal lost track of a change");
            return Err(PatchError::new(index, op, reason));
        }
    }
    Ok(())
}

//! What each operation does to a document.
//!
//! The semantics follow the Cosmos DB service's own partial document update, so that a patch
//! applied here and the same patch applied by the service give the same document. Sources:
//!
//! - [Partial document update, "Supported operations"][ops] (learn.microsoft.com,
//!   `azure/cosmos-db/partial-document-update`): the per-operation table and the "Add vs Set",
//!   "Add vs Replace" and "Set vs Replace" comparisons.
//! - The service's error for a path whose parent is missing, "Given Operation can only create a
//!   child object of an existing node (array or object) and cannot create path recursively"
//!   (quoted in Azure/azure-cosmos-dotnet-v3 issue 4201; an `add` to `/Products/-` without a
//!   `Products` array is a 400 in AzureCosmosDB/PatchPrivatePreviewFeedbackGroup issue 33).
//!
//! [ops]: https://learn.microsoft.com/azure/cosmos-db/partial-document-update#supported-operations
//!
//! Where the documentation is silent, RFC 6902 decides (the service describes its patch as based
//! on it). An independent server implementation, `@vercel/cosmosdb-server` 1.0.1, whose error
//! texts are the service's, agrees with every choice below except two noted where they are made
//! (it refuses a move onto the same path, and it treats an increment of `null` as a creation).
//!
//! Rules common to every operation:
//! - No operation creates intermediate containers: every ancestor of the target must already be
//!   an object or an array (service error quoted above).
//! - The empty pointer (the whole document) is never a target.
//! - On an array the last token must be a canonical index (`0`, `12`, no leading zeros) or `-`
//!   (one past the last element).

use std::mem;

use serde_json::Value;

use super::super::instructions::{CosmosNumber, PatchOperation};
use super::increment;
use super::journal::Journal;
use super::locate::{array_index, parent_mut, value_mut, Container};
use super::patch_error::{PatchFailure, PathRole};
use super::pointer::JsonPointer;

/// How an `add`-like write treats an existing array element.
#[derive(Clone, Copy, PartialEq, Eq)]
enum ArrayWrite {
    /// Shift the element and everything after it right (`add`).
    Insert,
    /// Overwrite the element (`set`).
    Overwrite,
}

/// Applies one operation, recording every change it makes in `journal` (also the changes made
/// before it failed, so that the caller can roll them back).
pub(super) fn apply_one(
    doc: &mut Value,
    op: &PatchOperation,
    journal: &mut Journal,
) -> Result<(), PatchFailure> {
    match op {
        PatchOperation::Add { path, value } => write(
            doc,
            &target(path, PathRole::Path)?,
            value.clone(),
            ArrayWrite::Insert,
            journal,
        ),
        PatchOperation::Set { path, value } => write(
            doc,
            &target(path, PathRole::Path)?,
            value.clone(),
            ArrayWrite::Overwrite,
            journal,
        ),
        PatchOperation::Replace { path, value } => {
            replace(doc, &target(path, PathRole::Path)?, value.clone(), journal)
        }
        PatchOperation::Remove { path } => remove(
            doc,
            &target(path, PathRole::Path)?,
            PathRole::Path,
            Keep::Nothing,
            journal,
        )
        .map(drop),
        PatchOperation::Increment { path, value } => {
            increment(doc, &target(path, PathRole::Path)?, *value, journal)
        }
        PatchOperation::Move { from, path } => move_value(
            doc,
            &target(from, PathRole::From)?,
            &target(path, PathRole::Path)?,
            journal,
        ),
    }
}

/// Parses an operation's path; the whole document is never a target.
fn target(text: &str, role: PathRole) -> Result<JsonPointer, PatchFailure> {
    let pointer =
        JsonPointer::parse(text).map_err(|error| PatchFailure::InvalidPointer { role, error })?;
    if pointer.is_root() {
        return Err(PatchFailure::RootTarget { role });
    }
    Ok(pointer)
}

/// `add` and `set` (and the second half of `move`, with `add`'s rules).
///
/// - Object member: created when missing (appended to the member order), overwritten in place
///   when present ("Add": "If the target path specifies an element that already exists, its value
///   is replaced"; "Set" is the same for everything but arrays).
/// - Array, `add`: inserts at the index, shifting later elements right; index == length or `-`
///   appends; index > length is an error ("Add" row and its note).
/// - Array, `set`: the index must name an existing element, which is overwritten in place ("Set
///   ... If the target path is a valid array index, the existing element at that index is
///   updated"; "Set operation adds a property if it doesn't already exist (except if there was an
///   Array)"). So `-` and index >= length are errors: `set` never grows an array.
fn write(
    doc: &mut Value,
    pointer: &JsonPointer,
    value: Value,
    mode: ArrayWrite,
    journal: &mut Journal,
) -> Result<(), PatchFailure> {
    let (parent, key) = split(pointer, PathRole::Path)?;
    match parent_mut(doc, parent)? {
        Container::Object(map) => match map.get_mut(key) {
            Some(slot) => journal.member_replaced(parent, key, mem::replace(slot, value)),
            None => {
                map.insert(key.to_owned(), value);
                journal.member_inserted(parent, key);
            }
        },
        Container::Array(items) => match mode {
            ArrayWrite::Insert => {
                let len = items.len();
                let (index, _) = array_index(key, len)?;
                if index > len {
                    return Err(PatchFailure::IndexOutOfBounds { index, len });
                }
                items.insert(index, value);
                journal.element_inserted(parent, index);
            }
            ArrayWrite::Overwrite => {
                let index = existing_index(key, items.len(), PathRole::Path)?;
                journal.element_replaced(parent, index, mem::replace(&mut items[index], value));
            }
        },
    }
    Ok(())
}

/// `replace`: like `set`, but the target must already exist ("Replace operation is similar to Set
/// except it follows strict replace only semantics ... an element or an array that doesn't exist
/// ... results in an error"). On an array the index must be below the length; `-` names nothing.
fn replace(
    doc: &mut Value,
    pointer: &JsonPointer,
    value: Value,
    journal: &mut Journal,
) -> Result<(), PatchFailure> {
    let (parent, key) = split(pointer, PathRole::Path)?;
    match parent_mut(doc, parent)? {
        Container::Object(map) => {
            let slot = map.get_mut(key).ok_or(PatchFailure::TargetMissing {
                role: PathRole::Path,
            })?;
            journal.member_replaced(parent, key, mem::replace(slot, value));
        }
        Container::Array(items) => {
            let index = existing_index(key, items.len(), PathRole::Path)?;
            journal.element_replaced(parent, index, mem::replace(&mut items[index], value));
        }
    }
    Ok(())
}

/// Whether [`remove`] hands back a copy of what it removed (the original goes to the journal).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Keep {
    Nothing,
    Copy,
}

/// `remove` (and the first half of `move`, which asks for a copy of the removed value).
///
/// The target must exist ("Remove": "If the target path specifies an element that doesn't exist,
/// it results in an error"); an array element is deleted and later elements shift left, and an
/// index equal to or greater than the length is an error. Removing an object member keeps the
/// order of the remaining members.
fn remove(
    doc: &mut Value,
    pointer: &JsonPointer,
    role: PathRole,
    keep: Keep,
    journal: &mut Journal,
) -> Result<Option<Value>, PatchFailure> {
    let (parent, key) = split(pointer, role)?;
    match parent_mut(doc, parent)? {
        Container::Object(map) => {
            let missing = PatchFailure::TargetMissing { role };
            let position = map.keys().position(|k| k == key).ok_or(missing.clone())?;
            let old = map.shift_remove(key).ok_or(missing)?;
            let copy = (keep == Keep::Copy).then(|| old.clone());
            journal.member_removed(parent, key, position, old);
            Ok(copy)
        }
        Container::Array(items) => {
            let index = existing_index(key, items.len(), role)?;
            let old = items.remove(index);
            let copy = (keep == Keep::Copy).then(|| old.clone());
            journal.element_removed(parent, index, old);
            Ok(copy)
        }
    }
}

/// `increment` (the service's `incr`).
///
/// - Existing number: summed by the rules of [`increment::add`] (i64 stays i64 and overflow is
///   an error; an integer plus a float is a float).
/// - Missing object member: created with the amount as its value ("Increment": "If the field
///   doesn't exist, it creates the field and sets it to the specified value").
/// - Array: the element must exist (index below the length). The documentation speaks only of
///   fields, and an array has no field to create; `-` and index >= length are errors rather than
///   a guessed append (the independent server refuses them too).
/// - `null` is not a number: incrementing it is a type error, like any other non-number (the
///   documentation creates only a field that "doesn't exist").
/// - Anything but a number is a type error; a non-finite float amount is refused even when the
///   target is missing.
fn increment(
    doc: &mut Value,
    pointer: &JsonPointer,
    by: CosmosNumber,
    journal: &mut Journal,
) -> Result<(), PatchFailure> {
    let fresh = increment::initial_value(by)?;
    let (parent, key) = split(pointer, PathRole::Path)?;
    match parent_mut(doc, parent)? {
        Container::Object(map) => match map.get_mut(key) {
            Some(slot) => {
                let sum = increment::add(slot, by)?;
                journal.member_replaced(parent, key, mem::replace(slot, sum));
            }
            None => {
                map.insert(key.to_owned(), fresh);
                journal.member_inserted(parent, key);
            }
        },
        Container::Array(items) => {
            let index = existing_index(key, items.len(), PathRole::Path)?;
            let sum = increment::add(&items[index], by)?;
            journal.element_replaced(parent, index, mem::replace(&mut items[index], sum));
        }
    }
    Ok(())
}

/// `move`: removes the value at `from` and adds it at `path` with `add`'s rules ("Move": the
/// "from" location must exist; a missing "path" object member is created and an existing one
/// replaced; "Path attribute cannot be a JSON child of the from JSON location"). The documentation
/// speaks only of object members at `path`; for an array position RFC 6902 section 4.4 decides
/// (move is remove then add), so the value is inserted there, as the independent server does.
///
/// `from == path` is a no-op once `from` is known to exist (RFC 6902 allows it; the
/// documentation is silent), which keeps the member where it was in its object.
fn move_value(
    doc: &mut Value,
    from: &JsonPointer,
    path: &JsonPointer,
    journal: &mut Journal,
) -> Result<(), PatchFailure> {
    if path.is_strict_descendant_of(from) {
        return Err(PatchFailure::MoveIntoDescendant);
    }
    if path == from {
        return match value_mut(doc, from.tokens()) {
            Some(_) => Ok(()),
            None => Err(PatchFailure::TargetMissing {
                role: PathRole::From,
            }),
        };
    }
    match remove(doc, from, PathRole::From, Keep::Copy, journal)? {
        Some(value) => write(doc, path, value, ArrayWrite::Insert, journal),
        None => Err(PatchFailure::TargetMissing {
            role: PathRole::From,
        }),
    }
}

fn split(pointer: &JsonPointer, role: PathRole) -> Result<(&[String], &str), PatchFailure> {
    pointer
        .split_last()
        .ok_or(PatchFailure::RootTarget { role })
}

/// The index of an existing array element named by `token`.
fn existing_index(token: &str, len: usize, role: PathRole) -> Result<usize, PatchFailure> {
    match array_index(token, len)? {
        (_, true) => Err(PatchFailure::TargetMissing { role }),
        (index, false) if index < len => Ok(index),
        (index, false) => Err(PatchFailure::IndexOutOfBounds { index, len }),
    }
}

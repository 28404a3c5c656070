//! Checks made before a PATCH sends anything: the refusals the spec lists, each naming the
//! operation and the reason.

use std::fmt;

use super::instructions::{PatchInstructions, PatchOpKind, PatchOperation};
use super::ops::{JsonPointer, PathRole, PointerError};
use crate::routing::partition_key_path_segments;

/// Top-level properties the service owns. The id and the system properties cannot be patched
/// (the service's FAQ: "We do not support partial document update for system-generated
/// properties like _id, _ts, _etag, _rid"; `_self` and `_attachments` are system-generated too).
pub(crate) const PROTECTED_PROPERTIES: &[&str] =
    &["id", "_rid", "_self", "_etag", "_ts", "_attachments"];

/// Why a PATCH was refused before any request went out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PatchRefusal {
    /// The outer operation carries a precondition; the loop owns `If-Match` on its Replace.
    CallerPrecondition,
    /// The instruction list is empty.
    NoOperations,
    /// One operation cannot be accepted.
    Operation {
        /// Zero-based position of the operation.
        index: usize,
        /// Its kind.
        kind: PatchOpKind,
        /// The offending path, as written.
        path: String,
        /// Whether the offending path is the target or a move's source.
        role: PathRole,
        /// What is wrong with it.
        reason: OperationRefusal,
    },
}

/// What is wrong with one operation's path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OperationRefusal {
    /// Not an RFC 6901 pointer.
    InvalidPointer(PointerError),
    /// The empty pointer names the whole document.
    WholeDocument,
    /// The path is, or lies inside, the id or a system property.
    SystemProperty(&'static str),
    /// The path equals, contains or lies inside this partition key path: the item would change
    /// logical partition, which a Replace cannot do.
    PartitionKey(String),
}

impl fmt::Display for PatchRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::CallerPrecondition => f.write_str(
                "a PATCH cannot carry a caller precondition: the read-modify-write loop sets If-Match on its \
                 own Replace from the ETag it has just read",
            ),
            Self::NoOperations => f.write_str("the PATCH has no operations"),
            Self::Operation { index, kind, path, role, reason } => {
                write!(f, "patch operation #{index} ({kind}) is refused: its {role} {path:?} ")?;
                match reason {
                    OperationRefusal::InvalidPointer(e) => write!(f, "is not a JSON Pointer: {e}"),
                    OperationRefusal::WholeDocument => f.write_str("names the whole document"),
                    OperationRefusal::SystemProperty(p) => {
                        write!(f, "touches {p:?}, which the service owns and cannot be patched")
                    }
                    OperationRefusal::PartitionKey(pk) => write!(
                        f,
                        "overlaps the partition key path {pk:?}; an item cannot move to another partition"
                    ),
                }
            }
        }
    }
}

impl std::error::Error for PatchRefusal {}

/// Runs every pre-flight check. `partition_key_paths` are the container's partition key paths
/// (`/tenant`, or up to three for a hierarchical key).
pub(crate) fn check(
    instructions: &PatchInstructions,
    caller_precondition: bool,
    partition_key_paths: &[String],
) -> Result<(), PatchRefusal> {
    if caller_precondition {
        return Err(PatchRefusal::CallerPrecondition);
    }
    if instructions.operations.is_empty() {
        return Err(PatchRefusal::NoOperations);
    }
    let pk_pointers: Vec<(JsonPointer, &str)> = partition_key_paths
        .iter()
        .map(|p| (partition_key_pointer(p), p.as_str()))
        .collect();
    for (index, op) in instructions.operations.iter().enumerate() {
        let refuse = |path: &str, role, reason| PatchRefusal::Operation {
            index,
            kind: op.kind(),
            path: path.to_owned(),
            role,
            reason,
        };
        for (path, role) in paths(op) {
            if let Err(reason) = check_path(path, &pk_pointers) {
                return Err(refuse(path, role, reason));
            }
        }
    }
    Ok(())
}

/// The paths an operation touches: its target, and a move's source.
fn paths(op: &PatchOperation) -> impl Iterator<Item = (&str, PathRole)> {
    std::iter::once((op.path(), PathRole::Path)).chain(op.from().map(|from| (from, PathRole::From)))
}

fn check_path(path: &str, partition_keys: &[(JsonPointer, &str)]) -> Result<(), OperationRefusal> {
    let pointer = JsonPointer::parse(path).map_err(OperationRefusal::InvalidPointer)?;
    let Some(first) = pointer.tokens().first() else {
        return Err(OperationRefusal::WholeDocument);
    };
    if let Some(p) = PROTECTED_PROPERTIES.iter().find(|p| **p == first.as_str()) {
        return Err(OperationRefusal::SystemProperty(p));
    }
    match partition_keys.iter().find(|(pk, _)| pk.overlaps(&pointer)) {
        Some((_, text)) => Err(OperationRefusal::PartitionKey((*text).to_owned())),
        None => Ok(()),
    }
}

/// A partition key path as a pointer (its names read by
/// the driver's one partition key path reader: quoted names, `~` literal).
pub(crate) fn partition_key_pointer(path: &str) -> JsonPointer {
    JsonPointer::from_tokens(partition_key_path_segments(path))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pk(paths: &[&str]) -> Vec<String> {
        paths.iter().map(|p| (*p).to_owned()).collect()
    }

    fn refusal(spec: &PatchInstructions, pks: &[&str]) -> Option<PatchRefusal> {
        check(spec, false, &pk(pks)).err()
    }

    fn op_refusal(
        index: usize,
        kind: PatchOpKind,
        path: &str,
        role: PathRole,
        reason: OperationRefusal,
    ) -> Option<PatchRefusal> {
        Some(PatchRefusal::Operation {
            index,
            kind,
            path: path.to_owned(),
            role,
            reason,
        })
    }

    #[test]
    fn refuses_what_the_spec_lists() {
        let p = PatchInstructions::new;
        let one = || p().set("/ok", json!(1));
        assert_eq!(
            check(&one(), true, &pk(&["/pk"])),
            Err(PatchRefusal::CallerPrecondition)
        );
        assert_eq!(refusal(&p(), &["/pk"]), Some(PatchRefusal::NoOperations));

        use OperationRefusal::*;
        use PatchOpKind as K;
        use PathRole::{From, Path};
        let pk_reason = |s: &str| PartitionKey(s.to_owned());
        let cases: Vec<(PatchInstructions, &[&str], Option<PatchRefusal>)> = vec![
            (one(), &["/pk"], None),
            (
                p().set("/pk", json!(1)),
                &["/pk"],
                op_refusal(0, K::Set, "/pk", Path, pk_reason("/pk")),
            ),
            (
                p().set("/ok", json!(1)).remove("/pk/inner"),
                &["/pk"],
                op_refusal(1, K::Remove, "/pk/inner", Path, pk_reason("/pk")),
            ),
            (
                p().replace("/a", json!({})),
                &["/a/b"],
                op_refusal(0, K::Replace, "/a", Path, pk_reason("/a/b")),
            ),
            (p().increment("/a/c", 1), &["/a/b"], None),
            (p().increment("/pkx", 1), &["/pk"], None),
            (
                p().move_from("/pk", "/elsewhere"),
                &["/pk"],
                op_refusal(0, K::Move, "/pk", From, pk_reason("/pk")),
            ),
            (
                p().move_from("/elsewhere", "/pk"),
                &["/pk"],
                op_refusal(0, K::Move, "/pk", Path, pk_reason("/pk")),
            ),
            (
                p().move_from("/x", "/t/2"),
                &["/tenant", "/t/2"],
                op_refusal(0, K::Move, "/t/2", Path, pk_reason("/t/2")),
            ),
            (p().add("/tenant/id", json!(1)), &["/\"tenant/id\""], None),
            (
                p().add("/tenant~1id", json!(1)),
                &["/\"tenant/id\""],
                op_refusal(0, K::Add, "/tenant~1id", Path, pk_reason("/\"tenant/id\"")),
            ),
            (
                p().set("/id", json!("x")),
                &["/pk"],
                op_refusal(0, K::Set, "/id", Path, SystemProperty("id")),
            ),
            (
                p().set("/_etag", json!("x")),
                &["/pk"],
                op_refusal(0, K::Set, "/_etag", Path, SystemProperty("_etag")),
            ),
            (
                p().remove("/_ts"),
                &["/pk"],
                op_refusal(0, K::Remove, "/_ts", Path, SystemProperty("_ts")),
            ),
            (
                p().remove("/_rid"),
                &["/pk"],
                op_refusal(0, K::Remove, "/_rid", Path, SystemProperty("_rid")),
            ),
            (
                p().set("/_self/x", json!(1)),
                &["/pk"],
                op_refusal(0, K::Set, "/_self/x", Path, SystemProperty("_self")),
            ),
            (
                p().move_from("/_attachments", "/a"),
                &["/pk"],
                op_refusal(
                    0,
                    K::Move,
                    "/_attachments",
                    From,
                    SystemProperty("_attachments"),
                ),
            ),
            (
                p().set("/nested/id", json!(1)).set("/_custom", json!(1)),
                &["/pk"],
                None,
            ),
            (
                p().set("", json!({})),
                &["/pk"],
                op_refusal(0, K::Set, "", Path, WholeDocument),
            ),
            (
                p().remove("nope"),
                &["/pk"],
                op_refusal(
                    0,
                    K::Remove,
                    "nope",
                    Path,
                    InvalidPointer(PointerError::MissingLeadingSlash),
                ),
            ),
            (
                p().move_from("/a~9", "/b"),
                &["/pk"],
                op_refusal(
                    0,
                    K::Move,
                    "/a~9",
                    From,
                    InvalidPointer(PointerError::BadEscape { position: 2 }),
                ),
            ),
        ];
        for (spec, pks, expected) in cases {
            assert_eq!(refusal(&spec, pks), expected, "{spec:?} with {pks:?}");
        }
    }

    #[test]
    fn messages_name_the_operation_and_the_reason() {
        let spec = PatchInstructions::new()
            .set("/a", json!(1))
            .move_from("/pk", "/b");
        let text = refusal(&spec, &["/pk"]).unwrap().to_string();
        assert_eq!(
            text,
            "patch operation #1 (move) is refused: its from \"/pk\" overlaps the partition key path \"/pk\"; \
             an item cannot move to another partition"
        );
        let text = refusal(&PatchInstructions::new().remove("/_ts"), &[])
            .unwrap()
            .to_string();
        assert!(
            text.contains("#0 (remove)") && text.contains("\"_ts\""),
            "{text}"
        );
        assert!(PatchRefusal::CallerPrecondition
            .to_string()
            .contains("If-Match"));
    }

    #[test]
    fn partition_key_paths_become_pointers() {
        let cases: &[(&str, &[&str])] = &[
            ("/pk", &["pk"]),
            ("/a/b/c", &["a", "b", "c"]),
            ("/\"a/b\"", &["a/b"]),
            ("/\"q\\\"x\"/y", &["q\"x", "y"]),
            ("/m~n", &["m~n"]),
        ];
        for (path, tokens) in cases {
            assert_eq!(partition_key_pointer(path).tokens(), *tokens, "{path}");
        }
    }
}

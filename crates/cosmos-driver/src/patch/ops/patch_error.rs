//! Why a patch operation could not be applied.

use std::fmt;

use super::super::instructions::{PatchOpKind, PatchOperation};
use super::pointer::PointerError;

/// A patch operation that could not be applied: which one (position and kind), on which paths,
/// and why. The document it was applied to is left unchanged.
#[derive(Clone, Debug, PartialEq)]
pub struct PatchError {
    /// Zero-based position of the operation in the list.
    pub index: usize,
    /// The operation's kind.
    pub kind: PatchOpKind,
    /// The operation's target path (the destination, for `move`).
    pub path: String,
    /// The source path of a `move`.
    pub from: Option<String>,
    /// What went wrong.
    pub reason: PatchFailure,
}

impl PatchError {
    /// The error for operation `index` failing for `reason`.
    pub fn new(index: usize, op: &PatchOperation, reason: PatchFailure) -> Self {
        Self {
            index,
            kind: op.kind(),
            path: op.path().to_owned(),
            from: op.from().map(str::to_owned),
            reason,
        }
    }
}

impl fmt::Display for PatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "patch operation #{} ({}", self.index, self.kind)?;
        match &self.from {
            Some(from) => write!(f, " from {from:?} to {:?}", self.path)?,
            None => write!(f, " at {:?}", self.path)?,
        }
        write!(f, ") failed: {}", self.reason)
    }
}

impl std::error::Error for PatchError {}

/// Which of an operation's two paths a failure is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathRole {
    /// The target (`path`).
    Path,
    /// The source of a `move` (`from`).
    From,
}

impl fmt::Display for PathRole {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Path => "path",
            Self::From => "from",
        })
    }
}

/// The reason a single operation failed.
#[derive(Clone, Debug, PartialEq)]
pub enum PatchFailure {
    /// The path is not an RFC 6901 pointer.
    InvalidPointer {
        /// Which path.
        role: PathRole,
        /// What is wrong with it.
        error: PointerError,
    },
    /// The path is the empty pointer, which names the whole document.
    RootTarget {
        /// Which path.
        role: PathRole,
    },
    /// An ancestor of the target does not exist; operations only create a direct child of an
    /// existing object or array.
    ParentMissing {
        /// The first missing ancestor.
        missing: String,
    },
    /// An ancestor of the target is a scalar, so it has no children.
    NotAContainer {
        /// The scalar's location.
        at: String,
        /// Its JSON type.
        found: &'static str,
    },
    /// The target (or a move's source) must exist and does not.
    TargetMissing {
        /// Which path.
        role: PathRole,
    },
    /// A token applied to an array is neither a canonical index nor `-`.
    NotAnArrayIndex {
        /// The offending token.
        token: String,
    },
    /// An array index beyond what the operation allows.
    IndexOutOfBounds {
        /// The requested index.
        index: usize,
        /// The array's length.
        len: usize,
    },
    /// An increment's target holds something other than a number.
    NotANumber {
        /// The JSON type found.
        found: &'static str,
    },
    /// An integer increment whose result does not fit a 64-bit integer.
    IntegerOverflow,
    /// An increment amount or result that is not a finite number.
    NotFinite,
    /// A move whose destination lies inside its own source.
    MoveIntoDescendant,
}

impl fmt::Display for PatchFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidPointer { role, error } => write!(f, "{role} is not a JSON Pointer: {error}"),
            Self::RootTarget { role } => {
                write!(f, "{role} names the whole document, which cannot be the target")
            }
            Self::ParentMissing { missing } => write!(
                f,
                "{missing:?} does not exist; an operation creates only a direct child of an existing object or array"
            ),
            Self::NotAContainer { at, found } => {
                write!(f, "{at:?} is a {found}, which has no members or elements")
            }
            Self::TargetMissing { role } => write!(f, "nothing exists at the {role} location"),
            Self::NotAnArrayIndex { token } => write!(
                f,
                "{token:?} is not an array index (a decimal number without leading zeros, or '-')"
            ),
            Self::IndexOutOfBounds { index, len } => {
                write!(f, "index {index} is out of bounds for an array of length {len}")
            }
            Self::NotANumber { found } => write!(f, "the target is a {found}, not a number"),
            Self::IntegerOverflow => f.write_str("the sum overflows a 64-bit integer"),
            Self::NotFinite => f.write_str("the amount or the sum is not a finite number"),
            Self::MoveIntoDescendant => {
                f.write_str("the destination lies inside the source; a value cannot move into itself")
            }
        }
    }
}

/// The JSON type name of a value, for error messages.
pub(super) fn type_name(value: &serde_json::Value) -> &'static str {
    use serde_json::Value;
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

//! The PATCH wire format: a list of operations on RFC 6901 paths.
//!
//! ```json
//! {"operations":[{"op":"add","path":"/a","value":1},{"op":"move","from":"/b","path":"/c"}]}
//! ```
//!
//! Operation names are `add`, `set`, `replace`, `remove`, `increment` and `move`; parsing also
//! accepts the service's spelling `incr` for `increment`. An optional `condition` (`from c where
//! ...`) is sent with a native PATCH (`PatchStrategy::Native`); the read-modify-write loop cannot
//! evaluate it and refuses it. Other unknown top-level members are refused rather than silently
//! ignored.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

/// The body of a PATCH operation: the operations, applied in order, all or nothing.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PatchInstructions {
    /// The operations, in application order.
    pub operations: Vec<PatchOperation>,
    /// A filter predicate (`from c where ...`) the item must satisfy, checked by the service; a
    /// native PATCH answers 412 when it is false. Only a native PATCH can carry one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condition: Option<String>,
}

/// One operation of a PATCH.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "lowercase", deny_unknown_fields)]
pub enum PatchOperation {
    /// Adds an object member (replacing an existing one) or inserts into an array (`/-` appends).
    Add {
        /// Target location.
        path: String,
        /// The value to add.
        value: Value,
    },
    /// Like `Add`, except that an existing array element is overwritten instead of shifted.
    Set {
        /// Target location.
        path: String,
        /// The value to set.
        value: Value,
    },
    /// Overwrites a value that must already exist.
    Replace {
        /// Target location; must exist.
        path: String,
        /// The new value.
        value: Value,
    },
    /// Deletes a value that must exist; never the document root.
    Remove {
        /// Target location; must exist.
        path: String,
    },
    /// Adds a number to a numeric field (creating the field when it is missing).
    #[serde(alias = "incr")]
    Increment {
        /// Target location.
        path: String,
        /// The amount to add; negative to subtract.
        value: CosmosNumber,
    },
    /// Removes the value at `from` and adds it at `path`; `path` may not lie inside `from`.
    Move {
        /// Source location; must exist.
        from: String,
        /// Destination location.
        path: String,
    },
}

/// The kind of a [`PatchOperation`], named as on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PatchOpKind {
    /// `add`
    Add,
    /// `set`
    Set,
    /// `replace`
    Replace,
    /// `remove`
    Remove,
    /// `increment`
    Increment,
    /// `move`
    Move,
}

impl PatchOpKind {
    /// The wire name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Add => "add",
            Self::Set => "set",
            Self::Replace => "replace",
            Self::Remove => "remove",
            Self::Increment => "increment",
            Self::Move => "move",
        }
    }
}

impl fmt::Display for PatchOpKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PatchOperation {
    /// The operation's kind.
    pub const fn kind(&self) -> PatchOpKind {
        match self {
            Self::Add { .. } => PatchOpKind::Add,
            Self::Set { .. } => PatchOpKind::Set,
            Self::Replace { .. } => PatchOpKind::Replace,
            Self::Remove { .. } => PatchOpKind::Remove,
            Self::Increment { .. } => PatchOpKind::Increment,
            Self::Move { .. } => PatchOpKind::Move,
        }
    }

    /// The target path (the destination, for `move`).
    pub fn path(&self) -> &str {
        match self {
            Self::Add { path, .. }
            | Self::Set { path, .. }
            | Self::Replace { path, .. }
            | Self::Remove { path }
            | Self::Increment { path, .. }
            | Self::Move { path, .. } => path,
        }
    }

    /// The source path of a `move`; `None` for every other kind.
    pub fn from(&self) -> Option<&str> {
        match self {
            Self::Move { from, .. } => Some(from),
            _ => None,
        }
    }
}

impl PatchInstructions {
    /// An empty list; add operations with the builder methods.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends an `add`.
    pub fn add(mut self, path: impl Into<String>, value: Value) -> Self {
        self.operations.push(PatchOperation::Add {
            path: path.into(),
            value,
        });
        self
    }

    /// Appends a `set`.
    pub fn set(mut self, path: impl Into<String>, value: Value) -> Self {
        self.operations.push(PatchOperation::Set {
            path: path.into(),
            value,
        });
        self
    }

    /// Appends a `replace`.
    pub fn replace(mut self, path: impl Into<String>, value: Value) -> Self {
        self.operations.push(PatchOperation::Replace {
            path: path.into(),
            value,
        });
        self
    }

    /// Appends a `remove`.
    pub fn remove(mut self, path: impl Into<String>) -> Self {
        self.operations
            .push(PatchOperation::Remove { path: path.into() });
        self
    }

    /// Appends an `increment` by an integer or a float.
    pub fn increment(mut self, path: impl Into<String>, by: impl Into<CosmosNumber>) -> Self {
        self.operations.push(PatchOperation::Increment {
            path: path.into(),
            value: by.into(),
        });
        self
    }

    /// Sets the filter predicate (`from c where ...`) of a native PATCH.
    pub fn with_condition(mut self, condition: impl Into<String>) -> Self {
        self.condition = Some(condition.into());
        self
    }

    /// Appends a `move` of the value at `from` to `path`.
    pub fn move_from(mut self, from: impl Into<String>, path: impl Into<String>) -> Self {
        self.operations.push(PatchOperation::Move {
            from: from.into(),
            path: path.into(),
        });
        self
    }
}

impl From<Vec<PatchOperation>> for PatchInstructions {
    fn from(operations: Vec<PatchOperation>) -> Self {
        Self {
            operations,
            condition: None,
        }
    }
}

/// An increment amount: a 64-bit integer or a finite double, kept apart so that integer
/// arithmetic stays exact. Serializes as a plain JSON number (`5`, `-2`, `0.5`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CosmosNumber {
    /// An exact integer.
    Int(i64),
    /// A double; must be finite to be serialized or applied.
    Float(f64),
}

impl From<i64> for CosmosNumber {
    fn from(v: i64) -> Self {
        Self::Int(v)
    }
}

impl From<i32> for CosmosNumber {
    fn from(v: i32) -> Self {
        Self::Int(i64::from(v))
    }
}

impl From<u32> for CosmosNumber {
    fn from(v: u32) -> Self {
        Self::Int(i64::from(v))
    }
}

impl From<f64> for CosmosNumber {
    fn from(v: f64) -> Self {
        Self::Float(v)
    }
}

impl fmt::Display for CosmosNumber {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Int(v) => write!(f, "{v}"),
            Self::Float(v) => write!(f, "{v}"),
        }
    }
}

impl Serialize for CosmosNumber {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match *self {
            Self::Int(v) => serializer.serialize_i64(v),
            Self::Float(v) if v.is_finite() => serializer.serialize_f64(v),
            Self::Float(_) => Err(serde::ser::Error::custom(
                "an increment amount must be a finite number",
            )),
        }
    }
}

impl<'de> Deserialize<'de> for CosmosNumber {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(NumberVisitor)
    }
}

struct NumberVisitor;

impl serde::de::Visitor<'_> for NumberVisitor {
    type Value = CosmosNumber;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a number (a 64-bit signed integer or a finite double)")
    }

    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<CosmosNumber, E> {
        Ok(CosmosNumber::Int(v))
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<CosmosNumber, E> {
        i64::try_from(v).map(CosmosNumber::Int).map_err(|_| {
            E::custom(format!(
                "increment amount {v} does not fit a 64-bit signed integer"
            ))
        })
    }

    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<CosmosNumber, E> {
        if v.is_finite() {
            Ok(CosmosNumber::Float(v))
        } else {
            Err(E::custom("an increment amount must be a finite number"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn serializes_with_the_wire_names() {
        let spec = PatchInstructions::new()
            .add("/a", json!(1))
            .set("/s", json!("x"))
            .replace("/r", json!(null))
            .remove("/gone")
            .increment("/n", 2)
            .increment("/f", 0.5)
            .move_from("/b", "/c");
        let text = serde_json::to_string(&spec).unwrap();
        assert_eq!(
            text,
            r#"{"operations":[{"op":"add","path":"/a","value":1},{"op":"set","path":"/s","value":"x"},{"op":"replace","path":"/r","value":null},{"op":"remove","path":"/gone"},{"op":"increment","path":"/n","value":2},{"op":"increment","path":"/f","value":0.5},{"op":"move","from":"/b","path":"/c"}]}"#
        );
        let back: PatchInstructions = serde_json::from_str(&text).unwrap();
        assert_eq!(back, spec);
    }

    #[test]
    fn accepts_the_service_spelling_incr() {
        let spec: PatchInstructions =
            serde_json::from_str(r#"{"operations":[{"op":"incr","path":"/n","value":-3}]}"#)
                .unwrap();
        assert_eq!(spec, PatchInstructions::new().increment("/n", -3));
    }

    #[test]
    fn numbers_round_trip_without_precision_loss() {
        let cases: &[(CosmosNumber, &str)] = &[
            (CosmosNumber::Int(i64::MAX), "9223372036854775807"),
            (CosmosNumber::Int(i64::MIN), "-9223372036854775808"),
            (CosmosNumber::Int(9_007_199_254_740_993), "9007199254740993"),
            (CosmosNumber::Float(0.1), "0.1"),
            (CosmosNumber::Float(-2.5e-300), "-2.5e-300"),
            (CosmosNumber::Float(1.0), "1.0"),
        ];
        for (number, text) in cases {
            assert_eq!(serde_json::to_string(number).unwrap(), *text);
            assert_eq!(
                serde_json::from_str::<CosmosNumber>(text).unwrap(),
                *number,
                "{text}"
            );
        }
    }

    #[test]
    fn refuses_numbers_it_cannot_hold_exactly() {
        let err = serde_json::from_str::<CosmosNumber>("9223372036854775808").unwrap_err();
        assert!(err.to_string().contains("does not fit"), "{err}");
        assert!(serde_json::from_str::<CosmosNumber>("\"1\"").is_err());
        assert!(serde_json::to_string(&CosmosNumber::Float(f64::NAN)).is_err());
        assert!(serde_json::to_string(&CosmosNumber::Float(f64::INFINITY)).is_err());
    }

    #[test]
    fn refuses_malformed_operations() {
        let cases = [
            r#"{"operations":[{"op":"copy","from":"/a","path":"/b"}]}"#,
            r#"{"operations":[{"op":"add","path":"/a"}]}"#,
            r#"{"operations":[{"op":"move","path":"/a"}]}"#,
            r#"{"operations":[{"path":"/a","value":1}]}"#,
            r#"{"operations":[{"op":"remove","path":"/a","from":"/b"}]}"#,
            r#"{"operations":[{"op":"incr","path":"/a","value":"1"}]}"#,
            r#"{"operations":[{"op":"set","path":"/a","value":1}],"condition":1}"#,
            r#"{"operations":[{"op":"set","path":"/a","value":1}],"filter":"from c"}"#,
            r#"{"ops":[]}"#,
            r#"[]"#,
        ];
        for text in cases {
            assert!(
                serde_json::from_str::<PatchInstructions>(text).is_err(),
                "{text}"
            );
        }
    }

    #[test]
    fn a_condition_is_read_and_written_back() {
        let text = r#"{"operations":[{"op":"set","path":"/a","value":1}],"condition":"from c where c.x = 1"}"#;
        let spec: PatchInstructions = serde_json::from_str(text).unwrap();
        assert_eq!(spec.condition.as_deref(), Some("from c where c.x = 1"));
        assert_eq!(serde_json::to_string(&spec).unwrap(), text);
        let plain = PatchInstructions::new().set("/a", serde_json::json!(1));
        assert!(!serde_json::to_string(&plain).unwrap().contains("condition"));
    }

    #[test]
    fn op_values_keep_their_member_order() {
        let text = r#"{"operations":[{"op":"set","path":"/o","value":{"z":1,"a":2,"m":3}}]}"#;
        let spec: PatchInstructions = serde_json::from_str(text).unwrap();
        assert_eq!(serde_json::to_string(&spec).unwrap(), text);
    }

    #[test]
    fn accessors_name_kind_and_paths() {
        let spec = PatchInstructions::new().move_from("/a", "/b").remove("/c");
        assert_eq!(spec.operations[0].kind(), PatchOpKind::Move);
        assert_eq!(spec.operations[0].path(), "/b");
        assert_eq!(spec.operations[0].from(), Some("/a"));
        assert_eq!(spec.operations[1].kind().to_string(), "remove");
        assert_eq!(spec.operations[1].from(), None);
    }
}

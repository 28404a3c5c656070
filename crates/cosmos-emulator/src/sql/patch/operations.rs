//! Patch operations (add, set, replace, remove, incr, move) applied to a document.
//!
//! `incr` follows the service's partial document update documentation: it adds the value to a
//! number, and a missing field is created holding the value. The documentation gives `incr` no
//! array-append form (the `-` position belongs to `add`), so `incr` on an array's `-`, or on an
//! index past its end, answers 400 rather than appending. A `move` onto its own path changes
//! nothing, as in RFC 6902: the field keeps its place in the object.

use serde_json::{Number, Value};

use super::path::PatchPath;

/// At most this many operations per request.
pub(crate) const MAX_OPERATIONS: usize = 10;

/// One operation of a patch request.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum PatchOp {
    Add { path: PatchPath, value: Value },
    Set { path: PatchPath, value: Value },
    Replace { path: PatchPath, value: Value },
    Remove { path: PatchPath },
    Incr { path: PatchPath, value: Number },
    Move { from: PatchPath, path: PatchPath },
}

/// The start of the service's answer to a patch it cannot parse.
const SYNTAX: &str = "Invalid patch request: check syntax of patch specification";

/// Parses the `operations` array of a patch body; a refusal uses the service's words.
pub(crate) fn parse_operations(value: Option<&Value>) -> Result<Vec<PatchOp>, String> {
    let Some(Value::Array(items)) = value else {
        return Err(format!(
            "{SYNTAX}: the patch body needs an \"operations\" array."
        ));
    };
    if items.is_empty() {
        return Err(format!("{SYNTAX}: the patch has no operations."));
    }
    if items.len() > MAX_OPERATIONS {
        return Err(format!(
            "The number of patch operations cannot exceed {MAX_OPERATIONS} (this patch has {}).",
            items.len()
        ));
    }
    items
        .iter()
        .enumerate()
        .map(|(i, item)| parse_one(item).map_err(|e| format!("{SYNTAX}: operation {i}: {e}.")))
        .collect()
}

fn parse_one(item: &Value) -> Result<PatchOp, String> {
    let Value::Object(map) = item else {
        return Err("each operation must be an object".into());
    };
    let op = map
        .get("op")
        .and_then(Value::as_str)
        .ok_or("missing \"op\"")?;
    let path = PatchPath::parse(
        map.get("path")
            .and_then(Value::as_str)
            .ok_or("missing \"path\"")?,
    )?;
    let value = || {
        map.get("value")
            .cloned()
            .ok_or_else(|| format!("{op} needs a \"value\""))
    };
    Ok(match op.to_ascii_lowercase().as_str() {
        "add" => PatchOp::Add {
            path,
            value: value()?,
        },
        "set" => PatchOp::Set {
            path,
            value: value()?,
        },
        "replace" => PatchOp::Replace {
            path,
            value: value()?,
        },
        "remove" => PatchOp::Remove { path },
        "incr" | "increment" => match value()? {
            Value::Number(n) => PatchOp::Incr { path, value: n },
            other => return Err(format!("incr needs a number value, not {other}")),
        },
        "move" => {
            let from = PatchPath::parse(
                map.get("from")
                    .and_then(Value::as_str)
                    .ok_or("move needs a \"from\" path")?,
            )?;
            PatchOp::Move { from, path }
        }
        other => {
            return Err(format!(
                "unknown op {other:?}; use add, set, replace, remove, incr or move"
            ))
        }
    })
}

impl PatchOp {
    /// The paths the operation writes or removes.
    pub(crate) fn touched(&self) -> Vec<&PatchPath> {
        match self {
            Self::Add { path, .. }
            | Self::Set { path, .. }
            | Self::Replace { path, .. }
            | Self::Remove { path } => {
                vec![path]
            }
            Self::Incr { path, .. } => vec![path],
            Self::Move { from, path } => vec![from, path],
        }
    }
}

/// Applies `ops` in order; the first failure leaves `doc` partly changed (callers discard it).
/// A refusal uses the service's words: `For Operation(i): ...`, `i` counting from 0.
pub(crate) fn apply(doc: &mut Value, ops: &[PatchOp]) -> Result<(), String> {
    for (i, op) in ops.iter().enumerate() {
        apply_one(doc, op).map_err(|e| format!("For Operation({i}): {e}"))?;
    }
    Ok(())
}

/// The service's refusal of an operation whose path's parent does not exist: `what` is `Add` or
/// `Given`, and the path named is the deepest part of `path` the document holds.
fn no_parent(doc: &Value, path: &PatchPath, what: &str) -> String {
    let found = (0..path.0.len())
        .rev()
        .map(|n| PatchPath(path.0[..n].to_vec()))
        .find(|prefix| prefix.0.is_empty() || prefix.get(doc).is_some())
        .map(|prefix| prefix.to_string())
        .unwrap_or_default();
    let found = if found.is_empty() {
        "/".to_owned()
    } else {
        found
    };
    format!(
        "{what} Operation can only create a child object of an existing node(array or object) \
         and cannot create path recursively, no path found beyond: {found}."
    )
}

/// The parent of `path` in `doc` and its last segment, or the service's refusal when the parent
/// is missing (`what`: see [`no_parent`]; `None`: the node is absent, for replace and remove).
fn parent_or<'a>(
    doc: &'a mut Value,
    path: &'a PatchPath,
    absent: impl FnOnce(&Value) -> String,
) -> Result<(&'a mut Value, &'a str), String> {
    if path.parent_mut(doc).is_err() {
        return Err(absent(doc));
    }
    path.parent_mut(doc)
}

fn replaced_absent(path: &PatchPath) -> String {
    format!("Node({path}) to be replaced is absent.")
}

fn removed_absent(path: &PatchPath) -> String {
    format!(
        "Node({path}) to be removed is absent. Note: it may also have been removed earlier in \
         the transaction."
    )
}

fn apply_one(doc: &mut Value, op: &PatchOp) -> Result<(), String> {
    match op {
        PatchOp::Add { path, value } => insert(doc, path, value.clone(), ArrayMode::Insert, "Add"),
        PatchOp::Set { path, value } => {
            insert(doc, path, value.clone(), ArrayMode::Overwrite, "Given")
        }
        PatchOp::Replace { path, value } => {
            let (parent, last) = parent_or(doc, path, |_| replaced_absent(path))?;
            let slot = slot_mut(parent, last).ok_or_else(|| replaced_absent(path))?;
            *slot = value.clone();
            Ok(())
        }
        PatchOp::Remove { path } => remove(doc, path).map(|_| ()),
        PatchOp::Incr { path, value } => {
            let (parent, last) = parent_or(doc, path, |d| no_parent(d, path, "Given"))?;
            let parent_is_array = parent.is_array();
            match slot_mut(parent, last) {
                Some(Value::Number(current)) => {
                    *current = add_numbers(current, value)?;
                    Ok(())
                }
                Some(_) => Err(format!("Node({path}) is not a number.")),
                None if parent_is_array => Err(format!(
                    "Index({last}) to operate on is out of array bounds (increment names an \
                     element; append with add)."
                )),
                None => insert_into(
                    parent,
                    last,
                    Value::Number(value.clone()),
                    ArrayMode::Insert,
                    path,
                    "Given",
                ),
            }
        }
        PatchOp::Move { from, path } => {
            if path == from {
                // RFC 6902: a move onto its own location leaves the document as it was (the field
                // keeps its place); the location must still exist.
                return from
                    .get(doc)
                    .map(|_| ())
                    .ok_or_else(|| removed_absent(from));
            }
            if path.0.starts_with(&from.0) && path.0.len() > from.0.len() {
                return Err(format!(
                    "Invalid patch request: cannot move Node({from}) into itself ({path})."
                ));
            }
            let value = remove(doc, from)?;
            insert(doc, path, value, ArrayMode::Insert, "Given")
        }
    }
}

#[derive(Clone, Copy)]
enum ArrayMode {
    Insert,
    Overwrite,
}

fn insert(
    doc: &mut Value,
    path: &PatchPath,
    value: Value,
    mode: ArrayMode,
    what: &str,
) -> Result<(), String> {
    let (parent, last) = parent_or(doc, path, |d| no_parent(d, path, what))?;
    insert_into(parent, last, value, mode, path, what)
}

fn insert_into(
    parent: &mut Value,
    last: &str,
    value: Value,
    mode: ArrayMode,
    path: &PatchPath,
    what: &str,
) -> Result<(), String> {
    match parent {
        Value::Object(map) => {
            map.insert(last.to_owned(), value);
            Ok(())
        }
        Value::Array(items) => {
            let index = if last == "-" {
                items.len()
            } else {
                last.parse::<usize>().map_err(|_| {
                    format!("Invalid patch request: {last:?} in {path} is not an array index.")
                })?
            };
            match mode {
                ArrayMode::Overwrite if index < items.len() => items[index] = value,
                ArrayMode::Insert if index <= items.len() => items.insert(index, value),
                _ => {
                    return Err(format!(
                        "Index({index}) to operate on is out of array bounds (the array at {path} \
                         has {} elements).",
                        items.len()
                    ))
                }
            }
            Ok(())
        }
        other => Err(format!(
            "{what} Operation can only create a child object of an existing node(array or \
             object) and cannot create path recursively, no path found beyond: {path} (its \
             parent is {}).",
            kind(other)
        )),
    }
}

fn slot_mut<'a>(parent: &'a mut Value, last: &str) -> Option<&'a mut Value> {
    match parent {
        Value::Object(map) => map.get_mut(last),
        Value::Array(items) => items.get_mut(last.parse::<usize>().ok()?),
        _ => None,
    }
}

fn remove(doc: &mut Value, path: &PatchPath) -> Result<Value, String> {
    let (parent, last) = parent_or(doc, path, |_| removed_absent(path))?;
    let missing = || removed_absent(path);
    match parent {
        Value::Object(map) => map.shift_remove(last).ok_or_else(missing),
        Value::Array(items) => {
            let index = last.parse::<usize>().map_err(|_| missing())?;
            if index < items.len() {
                Ok(items.remove(index))
            } else {
                Err(missing())
            }
        }
        _ => Err(missing()),
    }
}

fn add_numbers(a: &Number, b: &Number) -> Result<Number, String> {
    if let (Some(x), Some(y)) = (a.as_i64(), b.as_i64()) {
        if let Some(sum) = x.checked_add(y) {
            return Ok(Number::from(sum));
        }
    }
    let sum = a.as_f64().unwrap_or(0.0) + b.as_f64().unwrap_or(0.0);
    Number::from_f64(sum).ok_or_else(|| "incr: the result is not a finite number".to_owned())
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(doc: Value, ops: Value) -> Result<Value, String> {
        let ops = parse_operations(Some(&ops))?;
        let mut doc = doc;
        apply(&mut doc, &ops)?;
        Ok(doc)
    }

    #[test]
    fn each_op_does_what_it_says() {
        let base = json!({"a": 1, "list": [1, 2], "o": {"x": "y"}});
        let table: Vec<(Value, Value)> = vec![
            (
                json!([{"op": "add", "path": "/b", "value": 2}]),
                json!({"a": 1, "list": [1, 2], "o": {"x": "y"}, "b": 2}),
            ),
            (
                json!([{"op": "add", "path": "/list/1", "value": 9}]),
                json!({"a": 1, "list": [1, 9, 2], "o": {"x": "y"}}),
            ),
            (
                json!([{"op": "add", "path": "/list/-", "value": 9}]),
                json!({"a": 1, "list": [1, 2, 9], "o": {"x": "y"}}),
            ),
            (
                json!([{"op": "set", "path": "/list/0", "value": 7}]),
                json!({"a": 1, "list": [7, 2], "o": {"x": "y"}}),
            ),
            (
                json!([{"op": "incr", "path": "/list/1", "value": 4}]),
                json!({"a": 1, "list": [1, 6], "o": {"x": "y"}}),
            ),
            (
                json!([{"op": "move", "from": "/list/0", "path": "/list/0"}]),
                json!({"a": 1, "list": [1, 2], "o": {"x": "y"}}),
            ),
            (
                json!([{"op": "move", "from": "/a", "path": "/list/0"}]),
                json!({"list": [1, 1, 2], "o": {"x": "y"}}),
            ),
            (
                json!([{"op": "move", "from": "/a", "path": "/o/x"}]),
                json!({"list": [1, 2], "o": {"x": 1}}),
            ),
            (
                json!([{"op": "replace", "path": "/a", "value": "z"}]),
                json!({"a": "z", "list": [1, 2], "o": {"x": "y"}}),
            ),
            (
                json!([{"op": "remove", "path": "/o/x"}]),
                json!({"a": 1, "list": [1, 2], "o": {}}),
            ),
            (
                json!([{"op": "incr", "path": "/a", "value": 5}]),
                json!({"a": 6, "list": [1, 2], "o": {"x": "y"}}),
            ),
            (
                json!([{"op": "incr", "path": "/a", "value": 0.5}]),
                json!({"a": 1.5, "list": [1, 2], "o": {"x": "y"}}),
            ),
            (
                json!([{"op": "incr", "path": "/n", "value": 3}]),
                json!({"a": 1, "list": [1, 2], "o": {"x": "y"}, "n": 3}),
            ),
            (
                json!([{"op": "move", "from": "/a", "path": "/o/a"}]),
                json!({"list": [1, 2], "o": {"x": "y", "a": 1}}),
            ),
        ];
        for (ops, want) in table {
            assert_eq!(run(base.clone(), ops.clone()).unwrap(), want, "{ops}");
        }
    }

    #[test]
    fn a_move_onto_its_own_path_keeps_the_field_in_place() {
        let base = json!({"a": 1, "b": 2, "c": {"x": 1, "y": 2}});
        for path in ["/a", "/b", "/c", "/c/x"] {
            let ops = json!([{"op": "move", "from": path, "path": path}]);
            let out = run(base.clone(), ops).unwrap();
            // Compare the text: map equality ignores key order.
            assert_eq!(out.to_string(), base.to_string(), "move {path} onto itself");
        }
    }

    #[test]
    fn incr_creates_a_missing_field_but_never_appends_to_an_array() {
        let base = json!({"list": [1], "o": {}});
        let out = run(
            base.clone(),
            json!([{"op": "incr", "path": "/o/n", "value": -2}]),
        )
        .unwrap();
        assert_eq!(out["o"]["n"], -2);
        // On an object, "-" is an ordinary member name.
        let out = run(
            base.clone(),
            json!([{"op": "incr", "path": "/o/-", "value": 1}]),
        )
        .unwrap();
        assert_eq!(out["o"]["-"], 1);
        let err = run(base, json!([{"op": "incr", "path": "/list/-", "value": 1}])).unwrap_err();
        assert!(
            err.contains("append with add") && err.contains("out of array bounds"),
            "{err}"
        );
    }

    #[test]
    fn failures_say_why() {
        // The service's words (its partial document update troubleshooting table), with the
        // index of the failing operation counted from 0.
        let base = json!({"a": 1, "s": "x", "list": [1], "o": {"p": {}}});
        let absent_removed = "Node(/zz) to be removed is absent. Note: it may also have been \
                              removed earlier in the transaction.";
        let table: Vec<(Value, &str)> = vec![
            (
                json!([{"op": "replace", "path": "/zz", "value": 1}]),
                "For Operation(0): Node(/zz) to be replaced is absent.",
            ),
            (
                json!([{"op": "replace", "path": "/q/r", "value": 1}]),
                "For Operation(0): Node(/q/r) to be replaced is absent.",
            ),
            (json!([{"op": "remove", "path": "/zz"}]), absent_removed),
            (
                json!([{"op": "set", "path": "/b", "value": 1}, {"op": "incr", "path": "/s", "value": 1}]),
                "For Operation(1): Node(/s) is not a number.",
            ),
            (
                json!([{"op": "incr", "path": "/a", "value": "1"}]),
                "Invalid patch request: check syntax of patch specification: operation 0: incr needs a number",
            ),
            (
                json!([{"op": "add", "path": "/list/5", "value": 1}]),
                "For Operation(0): Index(5) to operate on is out of array bounds",
            ),
            (
                json!([{"op": "set", "path": "/list/1", "value": 1}]),
                "For Operation(0): Index(1) to operate on is out of array bounds",
            ),
            (
                json!([{"op": "incr", "path": "/list/3", "value": 1}]),
                "For Operation(0): Index(3) to operate on is out of array bounds",
            ),
            (
                json!([{"op": "incr", "path": "/list/-", "value": 1}]),
                "For Operation(0): Index(-) to operate on is out of array bounds",
            ),
            (json!([{"op": "move", "from": "/zz", "path": "/zz"}]), absent_removed),
            (
                json!([{"op": "add", "path": "/q/r", "value": 1}]),
                "For Operation(0): Add Operation can only create a child object of an existing \
                 node(array or object) and cannot create path recursively, no path found beyond: /.",
            ),
            (
                json!([{"op": "set", "path": "/o/p/x/y", "value": 1}]),
                "For Operation(0): Given Operation can only create a child object of an existing \
                 node(array or object) and cannot create path recursively, no path found beyond: /o/p.",
            ),
            (json!([{"op": "move", "from": "/zz", "path": "/b"}]), absent_removed),
            (
                json!([{"op": "frob", "path": "/a"}]),
                "Invalid patch request: check syntax of patch specification: operation 0: unknown op",
            ),
            (
                json!([]),
                "Invalid patch request: check syntax of patch specification: the patch has no operations.",
            ),
        ];
        for (ops, reason) in table {
            let err = run(base.clone(), ops.clone()).unwrap_err();
            assert!(err.contains(reason), "{ops}: {err}");
        }
        let eleven: Vec<Value> = (0..11)
            .map(|i| json!({"op": "set", "path": format!("/k{i}"), "value": i}))
            .collect();
        assert!(run(base, Value::Array(eleven))
            .unwrap_err()
            .starts_with("The number of patch operations cannot exceed 10"));
    }
}

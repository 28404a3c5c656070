//! The service's PATCH verb: the operations (and the optional condition) in one request, applied
//! by the service. Its wire spelling differs from the driver's in one name (`incr`).

use serde::Serialize;
use serde_json::Value;

use super::instructions::{CosmosNumber, PatchInstructions, PatchOperation};

/// The body of a native PATCH: `{"operations":[...], "condition": "from c where ..."}`.
#[derive(Serialize)]
struct NativeBody<'a> {
    operations: Vec<NativeOp<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    condition: Option<&'a str>,
}

/// One operation as the service spells it.
#[derive(Serialize)]
#[serde(tag = "op", rename_all = "lowercase")]
enum NativeOp<'a> {
    Add {
        path: &'a str,
        value: &'a Value,
    },
    Set {
        path: &'a str,
        value: &'a Value,
    },
    Replace {
        path: &'a str,
        value: &'a Value,
    },
    Remove {
        path: &'a str,
    },
    Incr {
        path: &'a str,
        value: &'a CosmosNumber,
    },
    Move {
        from: &'a str,
        path: &'a str,
    },
}

impl<'a> From<&'a PatchOperation> for NativeOp<'a> {
    fn from(op: &'a PatchOperation) -> Self {
        match op {
            PatchOperation::Add { path, value } => NativeOp::Add { path, value },
            PatchOperation::Set { path, value } => NativeOp::Set { path, value },
            PatchOperation::Replace { path, value } => NativeOp::Replace { path, value },
            PatchOperation::Remove { path } => NativeOp::Remove { path },
            PatchOperation::Increment { path, value } => NativeOp::Incr { path, value },
            PatchOperation::Move { from, path } => NativeOp::Move { from, path },
        }
    }
}

/// The native PATCH body of `instructions`.
pub(crate) fn native_body(instructions: &PatchInstructions) -> Result<Vec<u8>, serde_json::Error> {
    serde_json::to_vec(&NativeBody {
        operations: instructions.operations.iter().map(NativeOp::from).collect(),
        condition: instructions.condition.as_deref(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_operation_in_the_services_spelling() {
        let spec = PatchInstructions::new()
            .add("/a", json!(1))
            .set("/b", json!("x"))
            .replace("/c", json!([1]))
            .remove("/d")
            .increment("/e", 2)
            .increment("/f", 0.5)
            .move_from("/g", "/h");
        let body: Value = serde_json::from_slice(&native_body(&spec).unwrap()).unwrap();
        assert_eq!(
            body,
            json!({"operations": [
                {"op": "add", "path": "/a", "value": 1},
                {"op": "set", "path": "/b", "value": "x"},
                {"op": "replace", "path": "/c", "value": [1]},
                {"op": "remove", "path": "/d"},
                {"op": "incr", "path": "/e", "value": 2},
                {"op": "incr", "path": "/f", "value": 0.5},
                {"op": "move", "from": "/g", "path": "/h"},
            ]})
        );
        let conditional = PatchInstructions::new()
            .increment("/n", 1)
            .with_condition("from c where c.n < 10");
        let body: Value = serde_json::from_slice(&native_body(&conditional).unwrap()).unwrap();
        assert_eq!(body["condition"], "from c where c.n < 10");
    }
}

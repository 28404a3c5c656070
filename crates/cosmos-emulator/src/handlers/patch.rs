//! PATCH .../docs/{id}: native partial update with an optional `from c where ...` condition.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::consistency::require_write_region;
use super::item_reply::{item_reply, write_error};
use super::items::{commit_item, current_for_write};
use super::target::Target;
use crate::exchange::{Reply, RequestCtx};
use crate::patch::{apply, parse_operations, PatchOp};
use crate::protocol::{charge, ApiError};
use crate::sql::patch_condition::Condition;
use crate::store::document::SYSTEM_PROPERTIES;
use crate::store::{DocKey, Partition, StoredDoc};

/// Applies a patch request to one item.
pub fn patch(ctx: &RequestCtx<'_>, db: &str, coll: &str, id: &str) -> Result<Reply, ApiError> {
    require_write_region(ctx)?;
    let target = Target::locate(ctx, db, coll)?;
    let request = parse_request(&ctx.body, &target.container.pk.paths)?;
    let key = target.key(id);
    let mut partition = target.write(ctx)?;
    let existing = current_for_write(ctx, &target, &partition, &key)?;
    let (doc, lsn, charge) =
        patch_existing(ctx, &target, &mut partition, &key, &existing, &request)?;
    Ok(item_reply(
        ctx,
        &target,
        &partition,
        200,
        Some(&doc),
        lsn,
        charge,
    ))
}

/// A parsed patch request: its operations and optional condition.
pub struct PatchRequest {
    pub ops: Vec<PatchOp>,
    pub condition: Option<Condition>,
}

/// Parses a patch body: `{"operations": [...], "condition": "from c where ..."}`, or a bare JSON
/// array of operations (what the Node.js SDK sends); 400 for anything else.
pub fn parse_request(body: &[u8], pk_paths: &[Vec<String>]) -> Result<PatchRequest, ApiError> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("The request payload is invalid JSON: {e}")))?;
    parse_request_value(&value, pk_paths)
}

/// [`parse_request`] over an already decoded body (a batch operation's `resourceBody`).
pub fn parse_request_value(
    value: &Value,
    pk_paths: &[Vec<String>],
) -> Result<PatchRequest, ApiError> {
    let (operations, condition) = match value {
        Value::Array(_) => (Some(value), None),
        Value::Object(map) => (map.get("operations"), map.get("condition")),
        _ => {
            return Err(ApiError::bad_request(
                "The patch body must be a JSON object {\"operations\": [...]} or a JSON array of operations.",
            ))
        }
    };
    let ops = parse_operations(operations).map_err(ApiError::bad_request)?;
    check_protected_paths(&ops, pk_paths)?;
    let condition =
        match condition {
            None | Some(Value::Null) => None,
            Some(Value::String(text)) => Some(Condition::parse(text).map_err(|e| {
                ApiError::bad_request(format!("The patch condition is invalid: {e}"))
            })?),
            Some(_) => {
                return Err(ApiError::bad_request(
                    "The patch \"condition\" must be a string like \"from c where ...\".",
                ))
            }
        };
    Ok(PatchRequest { ops, condition })
}

/// Applies `request` to `existing` (the committed version of `key`) and commits the result;
/// returns the new item, its LSN and the charge. A condition that does not hold is 412, an
/// operation the item refuses 400 (both with the partition's headers).
pub fn patch_existing(
    ctx: &RequestCtx<'_>,
    target: &Target,
    partition: &mut Partition,
    key: &DocKey,
    existing: &StoredDoc,
    request: &PatchRequest,
) -> Result<(Arc<StoredDoc>, u64, f64), ApiError> {
    let map = patched(existing, request).map_err(|e| {
        if e.status == 500 {
            e
        } else {
            write_error(ctx, target, partition, e)
        }
    })?;
    let (doc, lsn) = commit_item(ctx, target, partition, key, map, existing.rid)
        .map_err(|e| write_error(ctx, target, partition, e))?;
    let charge = charge::patch(doc.body.len(), request.condition.is_some());
    Ok((doc, lsn, charge))
}

/// The item `existing` becomes under `request`, not yet sealed or committed: 412 when the
/// condition does not hold, 400 when an operation cannot apply.
pub fn patched(
    existing: &StoredDoc,
    request: &PatchRequest,
) -> Result<Map<String, Value>, ApiError> {
    let mut doc: Value = serde_json::from_slice(&existing.body)
        .map_err(|e| ApiError::new(500, format!("The stored item could not be read: {e}")))?;
    if let Some(cond) = &request.condition {
        let held = cond
            .holds(&doc)
            .map_err(|e| ApiError::bad_request(format!("The patch condition is invalid: {e}")))?;
        if !held {
            return Err(ApiError::precondition_failed());
        }
    }
    apply(&mut doc, &request.ops)
        .map_err(|e| ApiError::bad_request(format!("The patch could not be applied: {e}")))?;
    match doc {
        Value::Object(map) => Ok(map),
        _ => Err(ApiError::new(500, "The stored item is not a JSON object.")),
    }
}

/// 400 for operations on `/id`, system properties or the partition key path.
fn check_protected_paths(ops: &[PatchOp], pk_paths: &[Vec<String>]) -> Result<(), ApiError> {
    for op in ops {
        for path in op.touched() {
            let root = path.root();
            if root == "id" || SYSTEM_PROPERTIES.contains(&root) {
                return Err(ApiError::bad_request(format!(
                    "The path {path} cannot be patched: it is a system property or the id."
                )));
            }
            if pk_paths
                .iter()
                .any(|pk| path.0.len() <= pk.len() && pk.starts_with(&path.0))
            {
                return Err(ApiError::bad_request(format!(
                    "The path {path} cannot be patched: it holds the partition key."
                )));
            }
        }
    }
    Ok(())
}

//! PATCH .../docs/{id}: native partial update with an optional `from c where ...` condition.

use serde_json::Value;

use super::consistency::require_write_region;
use super::item_reply::{item_reply, write_error};
use super::items::{commit_item, current_for_write};
use super::target::Target;
use crate::patch::{apply, parse_operations, PatchOp};
use crate::protocol::{charge, ApiError};
use crate::server::{Reply, RequestCtx};
use crate::sql::condition::Condition;
use crate::store::document::{parse_object, SYSTEM_PROPERTIES};

/// Applies a patch request to one item.
pub fn patch(ctx: &RequestCtx<'_>, db: &str, coll: &str, id: &str) -> Result<Reply, ApiError> {
    require_write_region(ctx)?;
    let target = Target::locate(ctx, db, coll)?;
    let request = parse_object(&ctx.body)?;
    let ops = parse_operations(request.get("operations")).map_err(ApiError::bad_request)?;
    check_protected_paths(&ops, &target.container.pk_segments)?;
    let condition =
        match request.get("condition") {
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
    let key = target.key(id);
    let mut partition = target.write()?;
    let existing = current_for_write(ctx, &target, &partition, &key)?;
    let refuse = |error| write_error(ctx, &target, &partition, error);
    let mut doc: Value = serde_json::from_slice(&existing.body)
        .map_err(|e| ApiError::new(500, format!("The stored item could not be read: {e}")))?;
    if let Some(cond) = &condition {
        let held = cond.holds(&doc).map_err(|e| {
            refuse(ApiError::bad_request(format!(
                "The patch condition is invalid: {e}"
            )))
        })?;
        if !held {
            return Err(refuse(ApiError::precondition_failed()));
        }
    }
    apply(&mut doc, &ops).map_err(|e| {
        refuse(ApiError::bad_request(format!(
            "The patch could not be applied: {e}"
        )))
    })?;
    let Value::Object(map) = doc else {
        return Err(ApiError::new(500, "The stored item is not a JSON object."));
    };
    let (doc, lsn) = commit_item(ctx, &target, &mut partition, &key, map, existing.rid);
    let charge = charge::patch(doc.body.len(), condition.is_some());
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

/// 400 for operations on `/id`, system properties or the partition key path.
fn check_protected_paths(ops: &[PatchOp], pk_segments: &[String]) -> Result<(), ApiError> {
    for op in ops {
        for path in op.touched() {
            let root = path.root();
            if root == "id" || SYSTEM_PROPERTIES.contains(&root) {
                return Err(ApiError::bad_request(format!(
                    "The path {path} cannot be patched: it is a system property or the id."
                )));
            }
            if path.0.len() <= pk_segments.len() && pk_segments.starts_with(&path.0) {
                return Err(ApiError::bad_request(format!(
                    "The path {path} cannot be patched: it holds the partition key."
                )));
            }
        }
    }
    Ok(())
}

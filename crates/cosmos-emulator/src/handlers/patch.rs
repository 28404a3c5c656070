//! PATCH .../docs/{id}: native partial update with an optional `from c where ...` condition.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::consistency::require_write_region;
use super::item_reply::{item_reply, write_error};
use super::item_write::prepare_item;
use super::items::{commit_prepared, current_for_write};
use super::target::Target;
use crate::exchange::{Reply, RequestCtx};
use crate::protocol::{charge, ApiError};
use crate::sql::meter::Meter;
use crate::sql::patch::Condition;
use crate::sql::patch::{apply, parse_operations, PatchOp};
use crate::sql::sql_error::Limit;
use crate::sql::SqlError;
use crate::store::document::SYSTEM_PROPERTIES;
use crate::store::{DocKey, Partition, StoredDoc};

/// Times a patch is evaluated outside the partition's lock before it is evaluated under it (each
/// retry follows a write to the item that landed while the patch was being evaluated).
const OPTIMISTIC_ATTEMPTS: usize = 3;

/// Applies a patch request to one item.
///
/// The condition and the operations are evaluated against the item as it is, without holding
/// the partition's lock (they may take up to the condition budget); the lock is then taken only
/// to check the item is still that version and to commit. A write that landed in between makes
/// the patch evaluate again against the new version.
pub(super) fn patch(
    ctx: &RequestCtx<'_>,
    db: &str,
    coll: &str,
    id: &str,
) -> Result<Reply, ApiError> {
    require_write_region(ctx)?;
    let target = Target::locate(ctx, db, coll)?;
    let request = parse_request(&ctx.body, &target.container.pk.paths)?;
    let key = target.key(id);
    for attempt in 0.. {
        let existing = {
            let partition = target.read()?;
            current_for_write(ctx, &target, &partition, &key)?
        };
        let optimistic = attempt < OPTIMISTIC_ATTEMPTS;
        let outcome = optimistic.then(|| {
            patched(&existing, &request, &condition_meter(ctx))
                .and_then(|map| prepare_item(&target, map, existing.rid, existing.indexed))
        });
        let mut partition = target.write(ctx)?;
        let current = current_for_write(ctx, &target, &partition, &key)?;
        let outcome = match outcome {
            Some(outcome) if Arc::ptr_eq(&current, &existing) => outcome,
            Some(_) => continue,
            None => patched(&current, &request, &condition_meter(ctx))
                .and_then(|map| prepare_item(&target, map, current.rid, current.indexed)),
        };
        let (doc, lsn, charge) =
            commit_patched(ctx, &target, &mut partition, &key, &request, outcome)?;
        return Ok(item_reply(
            ctx,
            &target,
            &partition,
            200,
            Some(&doc),
            lsn,
            charge,
        ));
    }
    unreachable!("the last attempt is made under the lock")
}

/// The budget of one patch condition (or of the conditions of one batch): the query page budget.
pub(super) fn condition_meter(ctx: &RequestCtx<'_>) -> Meter {
    let limits = ctx.shared.query_limits;
    Meter::new(limits.page_work, limits.page_time)
}

/// A parsed patch request: its operations and optional condition.
pub(super) struct PatchRequest {
    pub ops: Vec<PatchOp>,
    pub condition: Option<Condition>,
}

/// Parses a patch body: `{"operations": [...], "condition": "from c where ..."}`, or a bare JSON
/// array of operations (what the Node.js SDK sends); 400 for anything else.
pub(super) fn parse_request(
    body: &[u8],
    pk_paths: &[Vec<String>],
) -> Result<PatchRequest, ApiError> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("The request payload is invalid JSON: {e}")))?;
    parse_request_value(&value, pk_paths)
}

/// [`parse_request`] over an already decoded body (a batch operation's `resourceBody`).
pub(super) fn parse_request_value(
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

/// Commits what `request` made of the committed version of `key` (`outcome`: [`patched`], then
/// sealed); returns the new item, its LSN and the charge. A condition that did not hold is 412, an
/// operation the item refused 400 (both with the partition's headers).
fn commit_patched(
    ctx: &RequestCtx<'_>,
    target: &Target,
    partition: &mut Partition,
    key: &DocKey,
    request: &PatchRequest,
    outcome: Result<Arc<StoredDoc>, ApiError>,
) -> Result<(Arc<StoredDoc>, u64, f64), ApiError> {
    let (doc, lsn) = outcome
        .and_then(|doc| commit_prepared(ctx, target, partition, key, doc))
        .map_err(|e| {
            if e.status == 500 {
                e
            } else {
                write_error(ctx, target, partition, e)
            }
        })?;
    let charge = charge::patch(doc.body.len(), request.condition.is_some());
    Ok((doc, lsn, charge))
}

/// The item `existing` becomes under `request`, not yet sealed or committed: 412 when the
/// condition does not hold, 400 when an operation cannot apply or the condition needs more than
/// `meter` allows (naming the limit).
pub(super) fn patched(
    existing: &StoredDoc,
    request: &PatchRequest,
    meter: &Meter,
) -> Result<Map<String, Value>, ApiError> {
    let mut doc: Value = serde_json::from_slice(&existing.body)
        .map_err(|e| ApiError::new(500, format!("The stored item could not be read: {e}")))?;
    if let Some(cond) = &request.condition {
        let held = cond.holds(&doc, meter).map_err(condition_error)?;
        if !held {
            return Err(ApiError::precondition_failed());
        }
    }
    apply(&mut doc, &request.ops).map_err(ApiError::bad_request)?;
    match doc {
        Value::Object(map) => Ok(map),
        _ => Err(ApiError::new(500, "The stored item is not a JSON object.")),
    }
}

/// 400 for a condition that cannot be evaluated, naming the limit when a budget ran out.
fn condition_error(e: SqlError) -> ApiError {
    ApiError::bad_request(match e.limit {
        Some(Limit::Work(units)) => format!(
            "The patch condition is too costly: it needs more than the {units} units of work one condition may use (--query-page-work)."
        ),
        Some(Limit::Time(t)) => format!(
            "The patch condition is too costly: it takes longer than the {} ms one condition may take (--query-page-ms).",
            t.as_millis()
        ),
        None => format!("The patch condition is invalid: {e}"),
    })
}

/// 400 for operations on `/id`, system properties or the partition key path.
fn check_protected_paths(ops: &[PatchOp], pk_paths: &[Vec<String>]) -> Result<(), ApiError> {
    for op in ops {
        for path in op.touched() {
            let root = path.root();
            if root == "id" || SYSTEM_PROPERTIES.contains(&root) {
                return Err(ApiError::bad_request(format!(
                    "Invalid patch request: Cannot patch system property {path}."
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

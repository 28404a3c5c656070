//! POST .../docs with `x-ms-cosmos-is-batch-request: True`: a transactional batch
//! (`x-ms-cosmos-batch-atomic: True`: one partition key, all operations or none, 207 with the
//! failing operation's status and 424 for the others) or a bulk request (`False`: each operation on
//! its own, in the partition key range the request names).

use std::collections::HashMap;
use std::sync::{Arc, RwLockWriteGuard};

use bytes::Bytes;
use serde_json::{json, Map, Value};

use super::batch_ops::{evaluate, op_epk, op_item_id, BatchOp, OpResult, Staged};
use super::consistency::{require_write_region, session_token};
use super::item_write::commit_all;
use super::patch::condition_meter;
use super::replica_headers::{container_paths, replica_headers, replica_state};
use crate::epk::Epk;
use crate::exchange::{Reply, RequestCtx};
use crate::protocol::{headers, ApiError};
use crate::sql::meter::Meter;
use crate::store::{Container, DocKey, Partition, StoredDoc};

/// At most this many operations in one batch.
pub(super) const MAX_OPERATIONS: usize = 100;

/// The status of operations a failed atomic batch did not apply.
const FAILED_DEPENDENCY: u16 = 424;

/// Times operations are evaluated outside the partition's lock before they are evaluated under it
/// (each retry follows a write to an item they address that landed meanwhile).
const OPTIMISTIC_ATTEMPTS: usize = 3;

/// One staged write: the item and its new version (`None`: deleted).
type Write = (DocKey, Option<Arc<StoredDoc>>);

/// What evaluating operations came to: each operation's result (up to the first failure) and the
/// partition, locked for writing, the results hold against.
type Evaluated<'c> = (
    Vec<Result<OpResult, ApiError>>,
    RwLockWriteGuard<'c, Partition>,
);

/// Evaluates `ops` (all on partition key `epk`, in range `range`) in order, stopping at the first
/// failure, and checks the writes against the container's unique keys.
///
/// The operations read a snapshot of the items they address, taken under a short read lock, and
/// are evaluated (patch conditions included, under `meter`) without holding any lock; the write
/// lock is then taken and the results kept only if none of those items changed meanwhile, else
/// they are evaluated again (the last attempt under the lock). So a costly batch never holds its
/// partition for longer than the commit.
fn evaluate_ops<'c>(
    ctx: &RequestCtx<'_>,
    container: &'c Container,
    range: usize,
    epk: Epk,
    ops: &[BatchOp],
    meter: &Meter,
) -> Result<Evaluated<'c>, ApiError> {
    let keys: Vec<DocKey> = ops
        .iter()
        .filter_map(op_item_id)
        .map(|id| DocKey { epk, id })
        .collect();
    let run = |staged: &mut Staged<'_>| {
        let mut results: Vec<Result<OpResult, ApiError>> = Vec::with_capacity(ops.len());
        for op in ops {
            let result = evaluate(op, epk, container, staged, meter);
            let failed = result.is_err();
            if let Ok(r) = &result {
                for w in r.writes() {
                    staged.stage(&w);
                }
            }
            results.push(result);
            if failed {
                break;
            }
        }
        results
    };
    for attempt in 0.. {
        let snapshot = if attempt < OPTIMISTIC_ATTEMPTS {
            let partition = read_lock(container, range)?;
            let items: HashMap<DocKey, Option<Arc<StoredDoc>>> = keys
                .iter()
                .map(|k| (k.clone(), partition.latest(k).cloned()))
                .collect();
            Some(items)
        } else {
            None
        };
        let evaluated = snapshot.as_ref().map(|items| {
            let mut staged = Staged::over_snapshot(items);
            let results = run(&mut staged);
            (results, staged.missed())
        });
        let partition = lock(ctx, container, range)?;
        let mut results = match (snapshot, evaluated) {
            (Some(items), Some((results, false))) if unchanged(&partition, &items) => results,
            (Some(_), _) => continue,
            _ => run(&mut Staged::new(&partition)),
        };
        // Unique keys, against the partition's index and the batch's own writes in order.
        let writes: Vec<(usize, Write)> = results
            .iter()
            .enumerate()
            .flat_map(|(i, r)| {
                let writes = r.as_ref().map(OpResult::writes).unwrap_or_default();
                writes.into_iter().map(move |w| (i, w))
            })
            .collect();
        let just_writes: Vec<_> = writes.iter().map(|(_, w)| w.clone()).collect();
        if let Err((w, e)) = container.unique_keys.check_writes(&partition, &just_writes) {
            results.truncate(writes[w].0);
            results.push(Err(e));
        }
        return Ok((results, partition));
    }
    unreachable!("the last attempt is made under the lock")
}

/// Whether every item in `items` is still the version the snapshot read.
fn unchanged(partition: &Partition, items: &HashMap<DocKey, Option<Arc<StoredDoc>>>) -> bool {
    items
        .iter()
        .all(|(key, was)| match (partition.latest(key), was) {
            (Some(now), Some(was)) => Arc::ptr_eq(now, was),
            (None, None) => true,
            _ => false,
        })
}

/// Serves a batch or bulk request.
pub(super) fn execute(ctx: &RequestCtx<'_>, db: &str, coll: &str) -> Result<Reply, ApiError> {
    require_write_region(ctx)?;
    let container = ctx.shared.store.catalog.container(db, coll)?;
    let ops: Vec<BatchOp> = serde_json::from_slice(&ctx.body).map_err(|e| {
        ApiError::bad_request(format!(
            "A batch body is a JSON array of operations like {{\"operationType\": \"Create\", \"resourceBody\": {{...}}}}: {e}"
        ))
    })?;
    if ops.is_empty() {
        return Err(ApiError::bad_request("Batch request has no operations."));
    }
    if ops.len() > MAX_OPERATIONS {
        return Err(ApiError::bad_request(format!(
            "Batch request has more operations than what is supported. The batch has {} operations; at most {MAX_OPERATIONS} are allowed.",
            ops.len()
        )));
    }
    let atomic = match ctx.header(headers::IS_BATCH_ATOMIC).map(str::trim) {
        None => true,
        Some(v) if v.eq_ignore_ascii_case("true") => true,
        Some(v) if v.eq_ignore_ascii_case("false") => false,
        Some(v) => {
            return Err(ApiError::bad_request(format!(
                "{} must be True or False, not {v:?}.",
                headers::IS_BATCH_ATOMIC
            )))
        }
    };
    if atomic {
        atomic_batch(ctx, db, &container, &ops)
    } else {
        bulk(ctx, db, &container, &ops)
    }
}

/// All operations on the request's partition key, applied only when every one succeeds.
fn atomic_batch(
    ctx: &RequestCtx<'_>,
    db: &str,
    container: &Container,
    ops: &[BatchOp],
) -> Result<Reply, ApiError> {
    let raw = ctx.header(headers::PARTITION_KEY).ok_or_else(|| {
        ApiError::bad_request(format!(
            "A transactional batch needs the {} header naming its one partition key.",
            headers::PARTITION_KEY
        ))
    })?;
    let epk = container.point_epk(raw)?;
    for (i, op) in ops.iter().enumerate() {
        if op_epk(op, container)?.is_some_and(|e| e != epk) {
            return Err(ApiError::bad_request(format!(
                "Operation {i} names another partition key; a transactional batch has one."
            )));
        }
    }
    let range = container.range_index(epk);
    let meter = condition_meter(ctx);
    let (results, mut partition) = evaluate_ops(ctx, container, range, epk, ops, &meter)?;
    let failed = results.iter().any(Result::is_err);
    // Every write of the batch commits at one LSN: replicas, session tokens and change feeds see
    // the whole batch or none of it.
    let lsn = if failed {
        partition.committed_lsn()
    } else {
        let writes = results
            .iter()
            .flatten()
            .flat_map(OpResult::writes)
            .collect();
        commit_all(ctx, &mut partition, writes)
    };
    let mut entries: Vec<Value> = results.iter().map(|r| entry(r, failed)).collect();
    entries.extend((results.len()..ops.len()).map(|_| not_applied()));
    let charge = results
        .iter()
        .flatten()
        .map(|r| r.charge)
        .sum::<f64>()
        .max(1.0);
    let range_id = container.range_id(range);
    let status = if failed { 207 } else { 200 };
    let mut reply = Reply::json(
        status,
        Bytes::from(Value::Array(entries).to_string()),
        charge,
    )
    .header(
        headers::SESSION_TOKEN,
        session_token(ctx, &partition, range_id, lsn),
    )
    .header(headers::PARTITION_KEY_RANGE_ID, range_id);
    for (name, value) in replica_headers(&replica_state(ctx, &partition, lsn, None))
        .into_iter()
        .chain(container_paths(ctx, db, container))
    {
        reply = reply.header(name, value);
    }
    Ok(reply)
}

/// Whether a bulk request goes on after an operation fails (`x-ms-cosmos-batch-continue-on-error`,
/// true unless it says False). Pure.
fn continue_on_error(header: Option<&str>) -> Result<bool, ApiError> {
    match header.map(str::trim) {
        None => Ok(true),
        Some(v) if v.eq_ignore_ascii_case("true") => Ok(true),
        Some(v) if v.eq_ignore_ascii_case("false") => Ok(false),
        Some(v) => Err(ApiError::bad_request(format!(
            "{} must be True or False, not {v:?}.",
            headers::BATCH_CONTINUE_ON_ERROR
        ))),
    }
}

/// Every bulk operation's partition key (its own, or the request's), read before any applies: a
/// 400 leaves nothing half done.
fn bulk_epks(
    ops: &[BatchOp],
    container: &Container,
    header_epk: Option<Epk>,
) -> Result<Vec<Epk>, ApiError> {
    ops.iter()
        .enumerate()
        .map(|(i, op)| {
            op_epk(op, container)?.or(header_epk).ok_or_else(|| {
                ApiError::bad_request(format!(
                    "Operation {i} has no partitionKey and the request has no {} header.",
                    headers::PARTITION_KEY
                ))
            })
        })
        .collect()
}

/// Each operation on its own, on its own partition key, within the range the request names.
fn bulk(
    ctx: &RequestCtx<'_>,
    db: &str,
    container: &Container,
    ops: &[BatchOp],
) -> Result<Reply, ApiError> {
    let header_epk = match ctx.header(headers::PARTITION_KEY) {
        Some(raw) => Some(container.point_epk(raw)?),
        None => None,
    };
    let named_range = match ctx.header(headers::PARTITION_KEY_RANGE_ID) {
        Some(id) => Some(container.range_by_id(id.trim()).ok_or_else(|| {
            ApiError::new(410, format!("Partition key range {id:?} does not exist."))
                .with_sub_status(1002)
        })?),
        None => None,
    };
    let continue_on_error = continue_on_error(ctx.header(headers::BATCH_CONTINUE_ON_ERROR))?;
    let epks = bulk_epks(ops, container, header_epk)?;
    let mut entries = Vec::with_capacity(ops.len());
    let mut charge = 0.0;
    let mut tokens = Vec::new();
    let mut any_failed = false;
    // The conditions of one request share one budget.
    let meter = condition_meter(ctx);
    for (op, epk) in ops.iter().zip(epks) {
        if any_failed && !continue_on_error {
            // Told to stop at the first failure: the rest are not attempted.
            entries.push(not_applied());
            continue;
        }
        let range = container.range_index(epk);
        if named_range.is_some_and(|r| r != range) {
            let e = ApiError::new(410, "The operation's partition key is not in the partition key range the request names.")
                .with_sub_status(1002);
            any_failed = true;
            entries.push(entry(&Err(e), false));
            continue;
        }
        let (mut results, mut partition) =
            match evaluate_ops(ctx, container, range, epk, std::slice::from_ref(op), &meter) {
                Ok(evaluated) => evaluated,
                // Nothing applied yet: the request as a whole is refused (a range that is gone,
                // a region that no longer takes writes).
                Err(e) if entries.is_empty() => return Err(e),
                // Operations before this one are applied (a split or failover came in between):
                // this one, and each after it, reports its own refusal, which the client
                // retries as it would the request's.
                Err(e) => {
                    any_failed = true;
                    charge += 1.0;
                    entries.push(entry(&Err(e), false));
                    continue;
                }
            };
        let result = results
            .pop()
            .unwrap_or_else(|| Err(ApiError::new(500, "An operation was not evaluated.")));
        let writes = result.as_ref().map(OpResult::writes).unwrap_or_default();
        if !writes.is_empty() {
            let lsn = commit_all(ctx, &mut partition, writes);
            tokens.push(session_token(
                ctx,
                &partition,
                container.range_id(range),
                lsn,
            ));
        }
        any_failed |= result.is_err();
        charge += result.as_ref().map_or(1.0, |r| r.charge);
        entries.push(entry(&result, false));
    }
    let status = if any_failed { 207 } else { 200 };
    let mut reply = Reply::json(
        status,
        Bytes::from(Value::Array(entries).to_string()),
        charge.max(1.0),
    )
    .header(headers::CONTENT_PATH, &container.rid)
    .header(
        headers::ALT_CONTENT_PATH,
        container_paths(ctx, db, container)[0].1.clone(),
    );
    if let Some(token) = tokens.last() {
        reply = reply.header(headers::SESSION_TOKEN, token);
    }
    if let Some(range) = named_range {
        reply = reply.header(headers::PARTITION_KEY_RANGE_ID, container.range_id(range));
    }
    Ok(reply)
}

/// The partition of `range`, locked for reading.
fn read_lock(
    container: &Container,
    range: usize,
) -> Result<std::sync::RwLockReadGuard<'_, Partition>, ApiError> {
    container
        .partition(range)
        .and_then(|p| p.read().ok())
        .ok_or_else(|| {
            ApiError::new(
                500,
                "The partition's lock was poisoned by an earlier failure.",
            )
        })
        .and_then(crate::store::live)
}

/// The partition of `range`, locked for writing, once the serving region is checked again under
/// the lock (a failover in between refuses the batch rather than losing it).
fn lock<'c>(
    ctx: &RequestCtx<'_>,
    container: &'c Container,
    range: usize,
) -> Result<RwLockWriteGuard<'c, Partition>, ApiError> {
    let partition = container
        .partition(range)
        .and_then(|p| p.write().ok())
        .ok_or_else(|| {
            ApiError::new(
                500,
                "The partition's lock was poisoned by an earlier failure.",
            )
        })
        .and_then(crate::store::live)?;
    require_write_region(ctx)?;
    Ok(partition)
}

/// One operation's entry in the answer; in a failed atomic batch, successes become 424.
fn entry(result: &Result<OpResult, ApiError>, batch_failed: bool) -> Value {
    match result {
        Ok(_) if batch_failed => not_applied(),
        Ok(r) => {
            let mut e = Map::new();
            e.insert("statusCode".into(), json!(r.status));
            e.insert("requestCharge".into(), json!(r.charge));
            if let Some(doc) = &r.doc {
                e.insert("eTag".into(), json!(doc.etag));
                if let Ok(body) = serde_json::from_slice::<Value>(&doc.body) {
                    e.insert("resourceBody".into(), body);
                }
            }
            Value::Object(e)
        }
        Err(error) => {
            let mut e = Map::new();
            e.insert("statusCode".into(), json!(error.status));
            if error.sub_status != 0 {
                e.insert("subStatusCode".into(), json!(error.sub_status));
            }
            e.insert("requestCharge".into(), json!(1.0));
            e.insert("message".into(), json!(error.message));
            Value::Object(e)
        }
    }
}

fn not_applied() -> Value {
    json!({"statusCode": FAILED_DEPENDENCY, "requestCharge": 0.0,
           "message": "The operation was not applied: another operation of the transactional batch failed."})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn continue_on_error_is_true_unless_the_header_says_false() {
        let table = [
            (None, Some(true)),
            (Some("true"), Some(true)),
            (Some(" True "), Some(true)),
            (Some("FALSE"), Some(false)),
            (Some("no"), None),
            (Some(""), None),
        ];
        for (header, want) in table {
            assert_eq!(continue_on_error(header).ok(), want, "{header:?}");
        }
    }
}

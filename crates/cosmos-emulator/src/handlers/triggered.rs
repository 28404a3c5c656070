//! Item writes that name triggers (`x-ms-documentdb-pre-trigger-include`,
//! `x-ms-documentdb-post-trigger-include`): the pre-triggers run first and may change the
//! request's item, then the write, then the post-triggers, which see the request's and the
//! response's items; all of it in one transaction on the write's partition key, so a trigger
//! that throws (or is stopped) fails the write and leaves nothing behind.

use std::sync::Arc;

use bytes::Bytes;
use serde_json::Value;

use super::consistency::require_write_region;
use super::item_reply::item_reply;
use super::script_txn::{body_value, request_item, transact, Txn};
use super::sproc::{bounds, failure_error, run_charge, self_link};
use super::target::Target;
use crate::exchange::request_class::flag;
pub(super) use crate::exchange::request_class::names_triggers;
use crate::exchange::{Reply, RequestCtx};
use crate::protocol::{headers, ApiError, ScriptKind};
use crate::scripts::engine::{Bounds, Finished, Input, Role};
use crate::scripts::{Script, TriggerType, WriteOperation};
use crate::store::StoredDoc;

/// The most triggers one write may name.
pub(super) const MAX_TRIGGERS_PER_WRITE: usize = 16;

/// The ids a trigger header names (comma-separated, blanks ignored). Pure.
pub(super) fn trigger_ids(header: Option<&str>) -> Vec<String> {
    header
        .map(|h| {
            h.split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// Which write a request is.
#[derive(Clone, Copy, Debug)]
pub(super) enum Write<'a> {
    Create,
    Replace(&'a str),
    Delete(&'a str),
}

fn resolve(
    ctx: &RequestCtx<'_>,
    target: &Target,
    header: &str,
    want: TriggerType,
    write: WriteOperation,
) -> Result<Vec<Arc<Script>>, ApiError> {
    let ids = trigger_ids(ctx.header(header));
    if ids.len() > MAX_TRIGGERS_PER_WRITE {
        return Err(ApiError::bad_request(format!(
            "The request names {} triggers in {header}; the limit is {MAX_TRIGGERS_PER_WRITE}.",
            ids.len()
        )));
    }
    ids.iter()
        .map(|id| {
            let script = ctx
                .shared
                .scripts
                .get(&target.container, ScriptKind::Trigger, id)
                .ok_or_else(|| {
                    ApiError::bad_request(format!(
                        "The trigger {id} named in {header} does not exist in this collection."
                    ))
                })?;
            let spec = script.trigger.ok_or_else(|| {
                ApiError::new(500, format!("The trigger {id} has no trigger settings."))
            })?;
            if spec.trigger_type != want {
                return Err(ApiError::bad_request(format!(
                    "The trigger {id} is a {:?} trigger; it cannot be named in {header}.",
                    spec.trigger_type
                )));
            }
            if !spec.operation.covers(write) {
                return Err(ApiError::bad_request(format!(
                    "The trigger {id} runs on {:?} operations; it cannot run on a {write:?}.",
                    spec.operation
                )));
            }
            Ok(script)
        })
        .collect()
}

/// Serves a create, upsert, replace or delete that names triggers.
/// Runs one trigger where this emulator's scripts run, its collection calls served by `txn`;
/// adds what it cost to `charge`.
fn run_trigger(
    ctx: &RequestCtx<'_>,
    trigger: &Script,
    input: &Input,
    bounds: Bounds,
    txn: &mut Txn<'_>,
    charge: &mut f64,
) -> Result<Finished, ApiError> {
    let isolation = ctx.shared.scripts.isolation();
    let run = crate::scripts::isolation::run(&trigger.source, input, bounds, isolation, &mut |r| {
        txn.serve(r)
    });
    *charge += run_charge(0.0, &run);
    run.result
        .map_err(|f| failure_error("trigger", &trigger.id, &f, &bounds))
}

pub(super) fn write(
    ctx: &RequestCtx<'_>,
    db: &str,
    coll: &str,
    write: Write<'_>,
) -> Result<Reply, ApiError> {
    require_write_region(ctx)?;
    let target = Target::locate(ctx, db, coll)?;
    let upsert = flag(ctx.headers, headers::IS_UPSERT);
    let sent = match write {
        Write::Delete(_) => Value::Null,
        _ => Value::Object(request_item(&ctx.body)?),
    };
    // Upserts run the triggers registered for creates or for all operations.
    let operation = match write {
        Write::Create => WriteOperation::Create,
        Write::Replace(_) => WriteOperation::Replace,
        Write::Delete(_) => WriteOperation::Delete,
    };
    let pre = resolve(
        ctx,
        &target,
        headers::PRE_TRIGGER_INCLUDE,
        TriggerType::Pre,
        operation,
    )?;
    let post = resolve(
        ctx,
        &target,
        headers::POST_TRIGGER_INCLUDE,
        TriggerType::Post,
        operation,
    )?;
    let operation_name = operation_name(write, upsert);
    let (bounds, budget) = bounds();
    let if_match = ctx.header(headers::IF_MATCH);
    let template = Input {
        kind: Role::Pre,
        args: Vec::new(),
        request_body: Value::Null,
        has_response_body: false,
        response_body: Value::Null,
        operation: operation_name.to_owned(),
        self_link: self_link(&target),
        alt_link: target.alt_content_path(),
        logging: false,
        max_response_bytes: super::sproc::MAX_RESPONSE_BYTES,
    };
    let mut attempt = |txn: &mut Txn<'_>| -> Result<Attempted, ApiError> {
        let mut input = template.clone();
        let mut request_body = sent.clone();
        let mut script_charge = 0.0;
        for trigger in &pre {
            input.request_body = request_body.clone();
            let finished = run_trigger(ctx, trigger, &input, bounds, txn, &mut script_charge)?;
            if let Some(changed) = finished.request_body {
                request_body = changed;
            }
        }
        let (status, doc) = apply(txn, write, &mut request_body, upsert, if_match)?;
        let mut response_body = match &doc {
            Some(d) => body_value(d)?,
            None => Value::Null,
        };
        let mut response_changed = false;
        input.kind = Role::Post;
        for trigger in &post {
            input.request_body = request_body.clone();
            input.has_response_body = doc.is_some();
            input.response_body = response_body.clone();
            let finished = run_trigger(ctx, trigger, &input, bounds, txn, &mut script_charge)?;
            if let Some(body) = finished.body {
                if body != response_body {
                    response_body = body;
                    response_changed = true;
                }
            }
        }
        Ok(Attempted {
            status,
            doc,
            response: response_changed.then_some(response_body),
            script_charge,
        })
    };
    let done = transact(ctx, &target, budget, &mut attempt)?;
    let a = done.value;
    let charge = done.charge + a.script_charge;
    let mut reply = item_reply(
        ctx,
        &target,
        &done.partition,
        a.status,
        a.doc.as_deref(),
        done.lsn,
        charge,
    );
    if let (Some(body), false) = (a.response, reply.body.is_empty()) {
        reply.body = Bytes::from(body.to_string());
    }
    Ok(reply)
}

/// The operation's name as triggers see it (`getContext().getRequest().getOperationType()`).
fn operation_name(write: Write<'_>, upsert: bool) -> &'static str {
    match (write, upsert) {
        (Write::Create, true) => "Upsert",
        (Write::Create, false) => "Create",
        (Write::Replace(_), _) => "Replace",
        (Write::Delete(_), _) => "Delete",
    }
}

/// The write itself, between the pre- and post-triggers: its status and the item written (a
/// delete's `request_body` becomes the deleted item, as post-triggers see it).
fn apply(
    txn: &mut Txn<'_>,
    write: Write<'_>,
    request_body: &mut Value,
    upsert: bool,
    if_match: Option<&str>,
) -> Result<(u16, Option<Arc<StoredDoc>>), ApiError> {
    let item = |v: &Value| match v {
        Value::Object(map) => Ok(map.clone()),
        _ => Err(ApiError::bad_request(
            "A pre-trigger set the request's body to something other than a JSON object.",
        )),
    };
    Ok(match write {
        Write::Create => {
            let map = item(request_body)?;
            let (doc, existed) =
                txn.with_partition(|txn, p| txn.create(p, map, upsert, if_match))?;
            (if existed { 200 } else { 201 }, Some(doc))
        }
        Write::Replace(id) => {
            let map = item(request_body)?;
            let doc = txn.with_partition(|txn, p| txn.replace(p, id, map, if_match))?;
            (200, Some(doc))
        }
        Write::Delete(id) => {
            let old = txn.with_partition(|txn, p| txn.delete(p, id, if_match))?;
            *request_body = body_value(&old)?;
            (204, None)
        }
    })
}

/// What one run of a triggered write did.
struct Attempted {
    status: u16,
    doc: Option<Arc<StoredDoc>>,
    /// The response body a post-trigger set, when it changed it.
    response: Option<Value>,
    script_charge: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trigger_headers_name_comma_separated_ids() {
        assert_eq!(trigger_ids(None), Vec::<String>::new());
        assert_eq!(trigger_ids(Some("")), Vec::<String>::new());
        assert_eq!(trigger_ids(Some("t1")), ["t1"]);
        assert_eq!(trigger_ids(Some(" t1 , t2,,")), ["t1", "t2"]);
    }
}

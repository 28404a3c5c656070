//! A multi-write conflict under a `Custom` policy with a merge procedure: the container's stored
//! procedure named by `conflictResolutionProcedure` runs with the service's documented
//! arguments, `incomingItem` (the write that conflicted; `null` for a delete), `existingItem`
//! (the committed version; `null` when there is none), `isTombstone` (whether the committed
//! version is a delete) and `conflictingItems` (the other items of the logical partition the
//! write collides with on a unique key, as committed), and its writes are committed as one
//! transaction. A
//! procedure that is missing, throws, is stopped or whose writes cannot be committed resolves
//! nothing: the caller then puts the conflict in the feed, the service's fallback.

use serde_json::Value;

use super::script_txn::{Access, Txn};
use super::target::Target;
use crate::exchange::RequestCtx;
use crate::protocol::ScriptKind;
use crate::scripts::engine::{Input, Role};
use crate::store::Partition;

/// Runs the merge procedure `name` of the target's container on a conflict and commits its
/// writes; whether it resolved the conflict.
pub(super) fn resolved_by_procedure(
    ctx: &RequestCtx<'_>,
    target: &Target,
    partition: &mut Partition,
    name: &str,
    incoming: Option<Value>,
    existing: Option<Value>,
    conflicting: Vec<Value>,
) -> bool {
    let Some(script) = ctx
        .shared
        .scripts
        .get(&target.container, ScriptKind::StoredProcedure, name)
    else {
        return false;
    };
    let is_tombstone = existing.is_none();
    let args = vec![
        incoming.unwrap_or(Value::Null),
        existing.unwrap_or(Value::Null),
        Value::Bool(is_tombstone),
        Value::Array(conflicting),
    ];
    let (bounds, budget) = super::sproc::bounds();
    let input = Input {
        kind: Role::Sproc,
        request_body: Value::Array(args.clone()),
        args,
        has_response_body: false,
        response_body: Value::Null,
        operation: String::new(),
        self_link: super::sproc::self_link(target),
        alt_link: target.alt_content_path(),
        logging: false,
        max_response_bytes: super::sproc::MAX_RESPONSE_BYTES,
    };
    let writes = {
        let held: &Partition = partition;
        let mut txn = Txn::new(ctx, target, budget, Access::Held(held));
        let run = crate::scripts::isolation::run(
            &script.source,
            &input,
            bounds,
            ctx.shared.scripts.isolation(),
            &mut |request| txn.serve(request),
        );
        if run.result.is_err() {
            return false;
        }
        txn.finish()
    };
    writes.commit_when_met(ctx, target, partition).is_ok()
}

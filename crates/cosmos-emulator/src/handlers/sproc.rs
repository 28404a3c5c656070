//! POST .../sprocs/{id}: runs a stored procedure on the partition key the request names, its
//! writes one transaction (committed when it ends well, dropped when it throws or is stopped).

use bytes::Bytes;
use serde_json::Value;

use super::consistency::require_write_region;
use super::item_reply::item_reply;
use super::script_txn::{transact, AcceptBudget, Txn};
use super::target::Target;
use crate::exchange::request_class::flag;
use crate::exchange::{Reply, RequestCtx};
use crate::protocol::{charge, headers, ApiError, ScriptKind};
use crate::scripts::engine::{self, Bounds, Failure, Input, Role, Run};

/// The largest response body a stored procedure may set.
pub(super) const MAX_RESPONSE_BYTES: usize = 2 * 1024 * 1024;

/// What one execution may use, and when its operations stop being accepted: after half its time,
/// or once they have cost [`ACCEPT_CHARGE`] request units.
pub(super) fn bounds() -> (Bounds, AcceptBudget) {
    let bounds = Bounds::default();
    (
        bounds,
        AcceptBudget {
            time: bounds.time / 2,
            charge: ACCEPT_CHARGE,
        },
    )
}

/// Request units one execution's operations may spend before they are refused.
pub(super) const ACCEPT_CHARGE: f64 = 10_000.0;

/// Interrupt checks of script work that cost one request unit.
pub(super) const TICKS_PER_RU: u64 = 100;

/// The execution's parameters: a JSON array (an empty body or `null`: none).
pub(super) fn parameters(body: &[u8]) -> Result<Vec<Value>, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Vec::new());
    }
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Array(args)) => Ok(args),
        Ok(Value::Null) => Ok(Vec::new()),
        Ok(_) => Err(ApiError::bad_request(
            "The stored procedure's parameters must be a JSON array.",
        )),
        Err(e) => Err(ApiError::bad_request(format!(
            "The stored procedure's parameters are invalid JSON: {e}"
        ))),
    }
}

/// The answer to a script that did not finish: a throw is 400 with its message, running too long
/// 408, too much memory 400 (both name the bound), not started while too many scripts are stuck
/// past their time limits 503.
pub(super) fn failure_error(kind: &str, id: &str, failure: &Failure, bounds: &Bounds) -> ApiError {
    match failure {
        Failure::Thrown(message) => ApiError::bad_request(format!(
            "Encountered exception while executing {kind} {id}. Exception = {message}"
        )),
        Failure::TimedOut => ApiError::new(
            408,
            format!(
                "The {kind} {id} ran longer than its {} ms and was stopped; nothing it wrote was kept. A script that checks the value its collection calls return can stop in time and be called again.",
                bounds.time.as_millis()
            ),
        ),
        Failure::OutOfMemory => ApiError::bad_request(format!(
            "The {kind} {id} used more than its {} MiB of memory and was stopped; nothing it wrote was kept.",
            bounds.memory_bytes / (1024 * 1024)
        )),
        Failure::Busy(message) => ApiError::new(503, format!("The {kind} {id} was not started: {message}")),
    }
}

/// The log header's value: the lines joined by newlines, cut at the log cap
/// ([`engine::cap_logs`]), percent-encoded (unreserved characters and `/` stay as they are). Pure.
pub(super) fn encode_log(lines: &[String]) -> String {
    let text = engine::cap_logs(lines).join("\n");
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~' | b'/') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The charge of a run: the operations' charge plus its own work, at least one unit.
pub(super) fn run_charge(operations: f64, run: &Run) -> f64 {
    (operations + (run.ticks / TICKS_PER_RU) as f64).max(charge::metadata())
}

/// POST .../sprocs/{id}
pub(super) fn execute(
    ctx: &RequestCtx<'_>,
    db: &str,
    coll: &str,
    id: &str,
) -> Result<Reply, ApiError> {
    require_write_region(ctx)?;
    let target = Target::locate(ctx, db, coll)?;
    let script = ctx
        .shared
        .scripts
        .get(&target.container, ScriptKind::StoredProcedure, id)
        .ok_or_else(ApiError::missing_entity)?;
    let args = parameters(&ctx.body)?;
    let logging = flag(ctx.headers, headers::SCRIPT_ENABLE_LOGGING);
    let (bounds, budget) = bounds();
    let input = Input {
        kind: Role::Sproc,
        request_body: Value::Array(args.clone()),
        args,
        has_response_body: false,
        response_body: Value::Null,
        operation: String::new(),
        self_link: self_link(&target),
        alt_link: target.alt_content_path(),
        logging,
        max_response_bytes: MAX_RESPONSE_BYTES,
    };
    let mut attempt = |txn: &mut Txn<'_>| -> Result<(Bytes, f64, Option<String>), ApiError> {
        let isolation = ctx.shared.scripts.isolation();
        let run = crate::scripts::isolation::run(
            &script.source,
            &input,
            bounds,
            isolation,
            &mut |request| txn.serve(request),
        );
        let charge = run_charge(0.0, &run);
        let log = (logging && !run.logs.is_empty()).then(|| encode_log(&run.logs));
        let with_log = |e: ApiError| match &log {
            Some(l) => e.with_header(headers::SCRIPT_LOG_RESULTS, l.clone()),
            None => e,
        };
        let finished = run
            .result
            .map_err(|f| with_log(failure_error("stored procedure", &script.id, &f, &bounds)))?;
        let body = match &finished.body {
            Some(v) => Bytes::from(v.to_string()),
            None => Bytes::new(),
        };
        if body.len() > MAX_RESPONSE_BYTES {
            return Err(with_log(ApiError::new(
                413,
                format!(
                    "The stored procedure's response body is {} bytes; the limit is {MAX_RESPONSE_BYTES}.",
                    body.len()
                ),
            )));
        }
        Ok((body, charge, log))
    };
    let done = transact(ctx, &target, budget, &mut attempt)?;
    let (body, script_charge, log) = done.value;
    let charge = done.charge + script_charge;
    let mut reply = item_reply(ctx, &target, &done.partition, 200, None, done.lsn, charge);
    reply.body = body;
    if let Some(l) = log {
        reply = reply.header(headers::SCRIPT_LOG_RESULTS, l);
    }
    Ok(reply)
}

/// The container's resource-id-based link, `dbs/{db rid}/colls/{coll rid}/` (`getSelfLink()`).
pub(super) fn self_link(target: &Target) -> String {
    format!(
        "dbs/{}/colls/{}/",
        crate::protocol::ids::encode_rid(&target.container.rid_bytes[..4]),
        target.container.rid
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_are_a_json_array_or_nothing() {
        assert_eq!(parameters(b"").unwrap(), Vec::<Value>::new());
        assert_eq!(parameters(b"null").unwrap(), Vec::<Value>::new());
        assert_eq!(parameters(b"[1,\"a\"]").unwrap().len(), 2);
        assert_eq!(parameters(b"{\"a\":1}").unwrap_err().status, 400);
        assert_eq!(parameters(b"[").unwrap_err().status, 400);
    }

    #[test]
    fn logs_are_percent_encoded_as_the_service_sends_them() {
        assert_eq!(
            encode_log(&["The value of x is 1.".into()]),
            "The%20value%20of%20x%20is%201."
        );
        assert_eq!(encode_log(&["a".into(), "b/é".into()]), "a%0Ab/%C3%A9");
    }

    #[test]
    fn failures_answer_the_service_statuses() {
        let b = Bounds::default();
        assert_eq!(
            failure_error("x", "y", &Failure::Thrown("e".into()), &b).status,
            400
        );
        assert_eq!(failure_error("x", "y", &Failure::TimedOut, &b).status, 408);
        assert_eq!(
            failure_error("x", "y", &Failure::OutOfMemory, &b).status,
            400
        );
        assert_eq!(
            failure_error("x", "y", &Failure::Busy("m".into()), &b).status,
            503
        );
    }
}

//! A container deleted and recreated under the same name by another client, found out by the
//! first request: the driver's session token still carries the old container's ranges and LSNs, so
//! the new container answers 404/1002 (its replicas never reach those LSNs) however often the
//! request is retried. When an item operation ends that way with the driver's own token, the
//! container is read again; a resource id other than the one the token belongs to drops the token
//! and the container's caches, and the operation runs once more without it.
//!
//! | the operation ended | the token | the container read again | then |
//! |---|---|---|---|
//! | 404/1002 | the driver's, tied to a resource id | another resource id | drop the token and caches, run once more |
//! | 404/1002 | the driver's | the same resource id (lagging replicas) | the 404/1002 stands |
//! | 404/1002 | the caller's own | not read | the 404/1002 stands (the caller's token is the caller's) |
//! | anything else | any | not read | the answer stands |

use http::HeaderValue;
use serde::Deserialize;

use super::context::OperationContext;
use super::leg_result::LegEnd;
use crate::operation::CosmosOperation;
use crate::options::OperationOptions;
use crate::protocol::{status, sub_status};

/// Whether the leg ended with 404/1002.
pub(crate) fn ended_session_unavailable(end: &LegEnd) -> bool {
    let (code, sub) = match end {
        LegEnd::Response(r) => (r.status.status, r.status.sub_status),
        LegEnd::Error(e) => match (e.status(), e.sub_status()) {
            (Some(code), Some(sub)) => (code, sub),
            _ => return false,
        },
    };
    code == status::NOT_FOUND && sub == sub_status::READ_SESSION_NOT_AVAILABLE
}

/// Notes the resource id `rid` of the container that answered. A different one than the session
/// token's drops the token and what is known of the container, and returns true.
pub(crate) fn observe_container_rid(ctx: &OperationContext<'_>, rid: &HeaderValue) -> bool {
    let (Some(session), Some(container)) = (&ctx.session, ctx.container) else {
        return false;
    };
    if !session.observe_rid(rid) {
        return false;
    }
    tracing::debug!(
        target: "cosmos.session",
        container = %container,
        "the container was recreated: its session token and caches are dropped"
    );
    ctx.core.breaker.forget_ranges(container);
    ctx.core.containers.forget(container);
    true
}

#[derive(Deserialize)]
struct ContainerRid {
    #[serde(rename = "_rid")]
    rid: String,
}

/// The read that tells whether the operation's container was recreated: `None` when the token is
/// the caller's, there is no driver session, no container, or no time left. The caller runs it
/// and hands its body to [`observe_reread`].
pub(crate) fn reread_request(
    ctx: &OperationContext<'_>,
) -> Option<(CosmosOperation, OperationOptions)> {
    if ctx.session.is_none() || ctx.caller_session_token.is_some() {
        return None;
    }
    let container = ctx.operation.container()?;
    let read = CosmosOperation::read_container(container.clone());
    let mut options = OperationOptions::new();
    if let Some(deadline) = ctx.deadline {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        if left.is_zero() {
            return None;
        }
        options = options.with_end_to_end_timeout(left);
    }
    Some((read, options))
}

/// Whether the container read again (its body `body`) is another container than the one the
/// driver's session token belongs to (dropping the token if so). A body without a resource id
/// leaves things as they are (false).
pub(crate) fn observe_reread(ctx: &OperationContext<'_>, body: &[u8]) -> bool {
    let Ok(ContainerRid { rid }) = serde_json::from_slice(body) else {
        return false;
    };
    match HeaderValue::from_str(&rid) {
        Ok(rid) => observe_container_rid(ctx, &rid),
        Err(_) => false,
    }
}

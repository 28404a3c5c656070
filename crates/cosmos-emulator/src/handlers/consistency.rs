//! Region rules shared by the item handlers: who may write, which replica LSN a read sees, and the
//! session token a response carries.

use crate::exchange::request_class::flag;
use crate::exchange::RequestCtx;
use crate::protocol::headers;
use crate::protocol::session_token::{format_token, required_lsn};
use crate::protocol::{sub_status, ApiError};
use crate::store::Partition;

/// 403/3 unless the serving region takes writes.
pub(super) fn require_write_region(ctx: &RequestCtx<'_>) -> Result<(), ApiError> {
    if ctx.shared.store.topology.can_write(ctx.region) {
        Ok(())
    } else {
        Err(ApiError::write_forbidden(ctx.region_name()))
    }
}

/// The LSN a read in the serving region sees in `partition`: the committed state for hub-only reads
/// (403/3 outside the hub), else the region's replica; either must have reached the session token's
/// LSN (404/1002 otherwise).
pub(super) fn read_lsn(
    ctx: &RequestCtx<'_>,
    partition: &Partition,
    range_id: &str,
) -> Result<u64, ApiError> {
    let topology = &ctx.shared.store.topology;
    if flag(ctx.headers, headers::HUB_REGION_ONLY) {
        if topology.hub() != ctx.region {
            return Err(ApiError::new(
                403,
                format!(
                    "The read asked for hub-region processing only, and {} is not the hub region.",
                    ctx.region_name()
                ),
            )
            .with_sub_status(sub_status::WRITE_FORBIDDEN));
        }
        // The hub holds every committed write: a token past them names writes that never
        // happened in this container (it belongs to a deleted one of the same name).
        let committed = partition.committed_lsn();
        session_reached(ctx, range_id, committed)?;
        return Ok(committed);
    }
    let visible = partition.visible_lsn(ctx.region, ctx.now);
    session_reached(ctx, range_id, visible)?;
    Ok(visible)
}

/// 404/1002 unless `visible` reaches the request's session token for `range_id`.
fn session_reached(ctx: &RequestCtx<'_>, range_id: &str, visible: u64) -> Result<(), ApiError> {
    if let Some(token) = ctx.header(headers::SESSION_TOKEN) {
        let wanted = required_lsn(token, range_id).map_err(ApiError::bad_request)?;
        if wanted.is_some_and(|lsn| lsn > visible) {
            return Err(ApiError::not_found(format!(
                "The read session is not available for the input session token: {} has reached LSN {visible} of partition key range {range_id}, the token asks for {}.",
                ctx.region_name(),
                wanted.unwrap_or_default()
            ))
            .with_sub_status(sub_status::READ_SESSION_NOT_AVAILABLE));
        }
    }
    Ok(())
}

/// The session token for `range_id` at `lsn` (multi-write accounts add each region's progress).
pub(super) fn session_token(
    ctx: &RequestCtx<'_>,
    partition: &Partition,
    range_id: &str,
    lsn: u64,
) -> String {
    if ctx.shared.store.topology.multi_write() {
        let progress = partition.progress(ctx.now);
        format_token(range_id, lsn, Some(&progress))
    } else {
        format_token(range_id, lsn, None)
    }
}

/// Whether an `If-None-Match` header names `etag` (the answer is then 304).
pub(super) fn if_none_match_hit(ctx: &RequestCtx<'_>, etag: &str) -> bool {
    ctx.header(headers::IF_NONE_MATCH)
        .is_some_and(|tag| tag.trim() == etag)
}

/// Whether an `If-Match` header (when present) matches `etag`; `*` matches anything.
pub(super) fn if_match_ok(ctx: &RequestCtx<'_>, etag: Option<&str>) -> bool {
    match ctx.header(headers::IF_MATCH) {
        None => true,
        Some(wanted) => {
            let wanted = wanted.trim();
            match etag {
                Some(current) => wanted == "*" || wanted == current,
                None => false,
            }
        }
    }
}

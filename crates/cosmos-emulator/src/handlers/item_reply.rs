//! What an item answer carries from its partition: the session token, `lsn`, range id and the
//! container's paths (`x-ms-alt-content-path`, `x-ms-content-path`: how the SDKs learn which
//! container a session token belongs to), on successes and on the errors the partition decided.

use super::consistency::session_token;
use super::replica_headers::{replica_headers, replica_state};
use super::target::Target;
use crate::exchange::{Reply, RequestCtx};
use crate::protocol::{headers, ApiError};
use crate::store::{Partition, StoredDoc};

/// The partition's headers on an item answer: the session token at `lsn`, the range id, the
/// container's paths and the replica headers (`lsn` among them, once).
fn partition_headers(
    ctx: &RequestCtx<'_>,
    target: &Target,
    partition: &Partition,
    lsn: u64,
) -> Vec<(&'static str, String)> {
    let mut out = vec![
        (headers::ALT_CONTENT_PATH, target.alt_content_path()),
        (headers::CONTENT_PATH, target.container.rid.clone()),
        (
            headers::SESSION_TOKEN,
            session_token(ctx, partition, target.range_id(), lsn),
        ),
        (
            headers::PARTITION_KEY_RANGE_ID,
            target.range_id().to_owned(),
        ),
    ];
    out.extend(replica_headers(&replica_state(ctx, partition, lsn, None)));
    out
}

/// The headers every item answer carries.
pub(super) fn item_reply(
    ctx: &RequestCtx<'_>,
    target: &Target,
    partition: &Partition,
    status: u16,
    doc: Option<&StoredDoc>,
    lsn: u64,
    charge: f64,
) -> Reply {
    let minimal = *ctx.method != http::Method::GET && prefers_minimal(ctx.header(headers::PREFER));
    let body = match (status, doc) {
        (204 | 304, _) | (_, None) => bytes::Bytes::new(),
        _ if minimal => bytes::Bytes::new(),
        (_, Some(d)) => d.body.clone(),
    };
    let mut reply = Reply::json(status, body, charge);
    for (name, value) in partition_headers(ctx, target, partition, lsn) {
        reply = reply.header(name, value);
    }
    if let Some(d) = doc {
        reply = reply.header(headers::ETAG, &d.etag);
    }
    // The item's own LSN: the commit's for a write (a read sets the version's, see `with_item_lsn`).
    with_item_lsn(reply, lsn)
}

/// Whether a `Prefer` header asks for `return=minimal` (a write answered without the item, as
/// the SDKs' option to leave the content out of write responses asks). Pure.
pub(super) fn prefers_minimal(prefer: Option<&str>) -> bool {
    prefer.is_some_and(|p| {
        p.split([',', ';'])
            .any(|part| part.trim().eq_ignore_ascii_case("return=minimal"))
    })
}

/// An error the partition itself decided (409, 412, a missing item's 404, a patch the item
/// refused): like a success it carries the session token, `lsn` and range id, at `lsn` (the state
/// the decision saw).
pub(super) fn partition_error(
    ctx: &RequestCtx<'_>,
    target: &Target,
    partition: &Partition,
    lsn: u64,
    error: ApiError,
) -> ApiError {
    partition_headers(ctx, target, partition, lsn)
        .into_iter()
        .fold(error, |e, (name, value)| e.with_header(name, value))
}

/// [`partition_error`] for a write, decided on the committed state.
pub(super) fn write_error(
    ctx: &RequestCtx<'_>,
    target: &Target,
    partition: &Partition,
    error: ApiError,
) -> ApiError {
    partition_error(ctx, target, partition, partition.committed_lsn(), error)
}

/// `reply` naming `item_lsn` as the LSN of the item it is about.
pub(super) fn with_item_lsn(reply: Reply, item_lsn: u64) -> Reply {
    reply
        .replace_header(headers::ITEM_LSN, item_lsn.to_string())
        .replace_header(headers::COSMOS_ITEM_LLSN, item_lsn.to_string())
}

#[cfg(test)]
mod tests {
    use super::prefers_minimal;

    #[test]
    fn return_minimal_is_read_from_the_prefer_header() {
        for (prefer, minimal) in [
            (None, false),
            (Some("return=minimal"), true),
            (Some(" Return=Minimal "), true),
            (Some("respond-async, return=minimal"), true),
            (Some("return=representation"), false),
            (Some(""), false),
        ] {
            assert_eq!(prefers_minimal(prefer), minimal, "{prefer:?}");
        }
    }
}

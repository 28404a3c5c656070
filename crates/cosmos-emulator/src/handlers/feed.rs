//! GET .../docs: the read feed, paged with `x-ms-max-item-count` and `x-ms-continuation`, across the
//! container or within one partition key (header) or one range (`x-ms-documentdb-partitionkeyrangeid`).

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use serde_json::json;

use super::consistency::{read_lsn, session_token};
use super::replica_headers::{container_paths, replica_headers, replica_state};
use crate::epk::{epk_hex, Epk};
use crate::exchange::{Reply, RequestCtx};
use crate::protocol::{charge, headers, ApiError};
use crate::store::DocKey;

/// Default and largest page sizes.
const DEFAULT_PAGE: usize = 100;
const MAX_PAGE: usize = 1000;
/// A page ends once its items reach this many bytes (it always holds at least one item).
pub(super) const MAX_PAGE_BYTES: usize = 4 * 1024 * 1024;
/// The longest continuation token accepted.
pub(super) const MAX_CONTINUATION_BYTES: usize = 4096;

/// Where the next page starts: a range and the last key returned in it.
#[derive(Debug)]
struct Continuation {
    range: usize,
    after: Option<DocKey>,
}

fn encode(range: usize, key: &DocKey) -> String {
    let text = json!({"range": range, "epk": epk_hex(key.epk), "id": key.id}).to_string();
    URL_SAFE_NO_PAD.encode(text)
}

fn decode(token: &str) -> Result<Continuation, ApiError> {
    let bad = || ApiError::bad_request("The continuation token is malformed.");
    if token.len() > MAX_CONTINUATION_BYTES {
        return Err(ApiError::bad_request(format!(
            "The continuation token is {} bytes long; tokens are at most {MAX_CONTINUATION_BYTES} bytes.",
            token.len()
        )));
    }
    let bytes = URL_SAFE_NO_PAD.decode(token.trim()).map_err(|_| bad())?;
    let value: serde_json::Value = serde_json::from_slice(&bytes).map_err(|_| bad())?;
    let range = value["range"].as_u64().ok_or_else(bad)? as usize;
    let epk = Epk::parse_hex(value["epk"].as_str().ok_or_else(bad)?).map_err(|_| bad())?;
    let id = value["id"].as_str().ok_or_else(bad)?.to_owned();
    Ok(Continuation {
        range,
        after: Some(DocKey { epk, id }),
    })
}

/// The page size `x-ms-max-item-count` asks for (default when absent or 0, the largest when
/// negative); 400 when it is not a number.
pub(super) fn page_size(ctx: &RequestCtx<'_>) -> Result<usize, ApiError> {
    match ctx.header(headers::MAX_ITEM_COUNT).map(str::trim) {
        None | Some("") => Ok(DEFAULT_PAGE),
        Some(text) => match text.parse::<i64>() {
            Ok(n) if n < 0 => Ok(MAX_PAGE),
            Ok(0) => Ok(DEFAULT_PAGE),
            Ok(n) => Ok((n as usize).min(MAX_PAGE)),
            Err(_) => Err(ApiError::bad_request(format!(
                "{} must be a number, not {text:?}",
                headers::MAX_ITEM_COUNT
            ))),
        },
    }
}

/// Headers that would narrow or date a feed but that the plain read feed does not implement: a
/// request carrying one gets a 400 instead of an answer that ignores it.
const NOT_FOR_THE_READ_FEED: [&str; 4] = [
    headers::START_EPK,
    headers::END_EPK,
    headers::READ_KEY_TYPE,
    headers::IF_MODIFIED_SINCE,
];

/// How many of the items (by their sizes, in order) one page holds: at most `page_size`, and it ends
/// with the item that reaches [`MAX_PAGE_BYTES`] (at least one item).
pub(super) fn page_end(sizes: impl Iterator<Item = usize>, page_size: usize) -> usize {
    let mut bytes = 0;
    let mut count = 0;
    for size in sizes {
        if count == page_size || (count > 0 && bytes >= MAX_PAGE_BYTES) {
            break;
        }
        bytes += size;
        count += 1;
    }
    count
}

/// [`page_end`] for a change feed, whose items carry LSNs (`lsns`, ascending): the page is
/// extended to the end of its last item's LSN, because a transactional batch commits several
/// items at one LSN and a continuation (an LSN) cannot point inside it.
pub(super) fn page_end_whole_lsn(
    sizes: impl Iterator<Item = usize>,
    page_size: usize,
    lsns: &[u64],
) -> usize {
    let end = page_end(sizes, page_size);
    match end.checked_sub(1).and_then(|last| lsns.get(last)) {
        Some(&lsn) => end + lsns[end..].iter().take_while(|l| **l == lsn).count(),
        None => end,
    }
}

/// Serves one page of the read feed.
pub(super) fn read_feed(ctx: &RequestCtx<'_>, db: &str, coll: &str) -> Result<Reply, ApiError> {
    if let Some(name) = NOT_FOR_THE_READ_FEED
        .iter()
        .find(|h| ctx.header(h).is_some())
    {
        return Err(ApiError::bad_request(format!(
            "The read feed does not implement {name}; it is served with the change feed (A-IM: Incremental feed)."
        )));
    }
    let container = ctx.shared.store.catalog.container(db, coll)?;
    let page_size = page_size(ctx)?;
    let only_epk = match ctx.header(headers::PARTITION_KEY) {
        Some(raw) => Some(container.header_filter(raw)?),
        None => None,
    };
    let ranges: Vec<usize> = match (&only_epk, ctx.header(headers::PARTITION_KEY_RANGE_ID)) {
        (Some(filter), _) => container.ranges_of(filter),
        (None, Some(id)) => vec![container.range_by_id(id.trim()).ok_or_else(|| {
            ApiError::new(410, format!("Partition key range {id:?} does not exist."))
                .with_sub_status(1002)
        })?],
        (None, None) => (0..container.partitions().len()).collect(),
    };
    let start = match ctx
        .header(headers::CONTINUATION)
        .filter(|t| !t.trim().is_empty())
    {
        Some(token) => decode(token)?,
        None => Continuation {
            range: ranges.first().copied().unwrap_or(0),
            after: None,
        },
    };
    let mut docs = Vec::new();
    let mut tokens = Vec::new();
    let mut next = None;
    let mut replica = None;
    for &range in ranges.iter().filter(|r| **r >= start.range) {
        let Some(lock) = container.partition(range) else {
            continue;
        };
        let partition = lock
            .read()
            .map_err(|_| ApiError::new(500, "A partition lock was poisoned."))
            .and_then(crate::store::live)?;
        let range_id = container.range_id(range);
        let lsn = read_lsn(ctx, &partition, range_id)?;
        tokens.push(session_token(ctx, &partition, range_id, lsn));
        replica = Some(replica_state(ctx, &partition, lsn, None));
        // Keys ascend across ranges, so the last key returned bounds every later range too (a
        // split since the continuation was issued may have moved that key to the next range).
        let after = start.after.as_ref();
        let wanted = page_size + 1 - docs.len();
        let from = after.map_or(std::ops::Bound::Unbounded, std::ops::Bound::Excluded);
        let found = partition.scan_from_in(lsn, from, only_epk, wanted, Some(ctx.region));
        docs.extend(found.into_iter().map(|(k, d)| (range, k, d)));
        let kept = page_end(docs.iter().map(|(_, _, d)| d.body.len()), page_size);
        if kept < docs.len() {
            docs.truncate(kept);
            next = docs.last().map(|(r, k, _)| encode(*r, k));
            break;
        }
    }
    let bytes: usize = docs.iter().map(|(_, _, d)| d.body.len()).sum();
    let mut body = Vec::with_capacity(bytes + docs.len() + 64);
    body.extend_from_slice(format!("{{\"_rid\":\"{}\",\"Documents\":[", container.rid).as_bytes());
    for (i, (_, _, doc)) in docs.iter().enumerate() {
        if i > 0 {
            body.push(b',');
        }
        body.extend_from_slice(&doc.body);
    }
    body.extend_from_slice(format!("],\"_count\":{}}}", docs.len()).as_bytes());
    let mut reply = Reply::json(200, body.into(), charge::read_feed(bytes))
        .header(headers::ITEM_COUNT, docs.len().to_string())
        .header(headers::SESSION_TOKEN, tokens.join(","));
    if let [range] = ranges.as_slice() {
        reply = reply.header(headers::PARTITION_KEY_RANGE_ID, container.range_id(*range));
        for (name, value) in replica.iter().flat_map(replica_headers) {
            reply = reply.header(name, value);
        }
    }
    for (name, value) in container_paths(ctx, db, &container) {
        reply = reply.header(name, value);
    }
    if let Some(token) = next {
        reply = reply.header(headers::CONTINUATION, token);
    }
    Ok(reply)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_feed_page_never_ends_inside_one_lsn() {
        // (sizes, page size, LSNs, items on the page)
        let table: &[(&[usize], usize, &[u64], usize)] = &[
            (&[1, 1, 1, 1], 1, &[5, 6, 6, 7], 1),
            (&[1, 1, 1, 1], 2, &[5, 6, 6, 7], 3),
            (&[1, 1, 1, 1], 1, &[6, 6, 6, 7], 3),
            (&[1, 1, 1, 1], 9, &[6, 6, 6, 7], 4),
            (&[], 3, &[], 0),
        ];
        for (sizes, page, lsns, want) in table {
            assert_eq!(
                page_end_whole_lsn(sizes.iter().copied(), *page, lsns),
                *want,
                "{lsns:?} page {page}"
            );
        }
    }

    #[test]
    fn pages_end_at_the_item_count_or_the_byte_budget() {
        const MB: usize = 1024 * 1024;
        let table: &[(&[usize], usize, usize)] = &[
            (&[10, 10, 10], 2, 2),
            (&[10, 10], 5, 2),
            (&[], 5, 0),
            (&[3 * MB, 3 * MB, MB], 10, 2),
            (&[4 * MB, 1], 10, 1),
            (&[5 * MB], 10, 1),
            (&[MB, MB, MB, MB - 1, 1, 1], 10, 5),
        ];
        for (sizes, page_size, want) in table {
            assert_eq!(
                page_end(sizes.iter().copied(), *page_size),
                *want,
                "{sizes:?}"
            );
        }
    }

    #[test]
    fn long_continuation_tokens_name_the_limit() {
        let err = decode(&"A".repeat(MAX_CONTINUATION_BYTES + 1)).unwrap_err();
        assert!(err.message.contains("4096"), "{}", err.message);
    }
}

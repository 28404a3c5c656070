//! GET .../docs with `A-IM`: the change feed of one partition key range, one feed range within it
//! or one partition key, as the serving region's replica sees it (a lagging region's feed lags).
//!
//! The etag of each answer is the partition's LSN the feed has been read to; sending it back in
//! `If-None-Match` continues after it (the SDKs read the etag as the change feed's continuation,
//! not `x-ms-continuation`). 304 when nothing is new. A start at a point in time is first
//! answered, as the service does, with an empty 200 whose etag is the position that time names. Every page and 304 carries the headers the
//! SDKs read: the etag, `x-ms-item-count`, the session token, the range id, the replica headers
//! (`lsn` and the others of [`super::replica_headers`]), the range's quota and usage, and the
//! container paths the Python SDK files the session token under.

use bytes::Bytes;
use serde_json::{json, Map, Value};

use super::consistency::{read_lsn, session_token};
use super::feed::{page_end_whole_lsn, page_size};
use super::replica_headers::{container_paths, quota_headers, replica_headers, replica_state};
use crate::epk::EpkFilter;
use crate::exchange::{Reply, RequestCtx};
use crate::protocol::change_feed_request::{self, etag, FeedMode, FeedStart};
use crate::protocol::{charge, headers, ApiError};
use crate::store::{Container, DocKey, HistoryEntry, Partition};

/// Serves one change-feed page; `a_im` is the request's `A-IM` value.
pub(super) fn read(
    ctx: &RequestCtx<'_>,
    db: &str,
    coll: &str,
    a_im: &str,
) -> Result<Reply, ApiError> {
    let request =
        change_feed_request::parse(a_im, |name| ctx.header(name)).map_err(ApiError::bad_request)?;
    let container = ctx.shared.store.catalog.container(db, coll)?;
    let limit = page_size(ctx)?;
    let only_epk = match ctx.header(headers::PARTITION_KEY) {
        Some(raw) => Some(container.header_filter(raw)?),
        None => None,
    };
    let range = scope(ctx, &container, only_epk, request.epk_range.as_ref())?;
    // The feed range's bounds in the container's own EPK form ("FF": the end of the space).
    let epk_range = match &request.epk_range {
        Some((min, max)) => Some(container.pk.parse_epk_range(min, max).map_err(|e| {
            ApiError::bad_request(format!("The change feed's feed range is invalid: {e}"))
        })?),
        None => None,
    };
    let lock = container
        .partition(range)
        .ok_or_else(|| ApiError::new(500, "The partition key range has no partition."))?;
    let partition = lock
        .read()
        .map_err(|_| ApiError::new(500, "A partition lock was poisoned."))
        .and_then(crate::store::live)?;
    let range_id = container.range_id(range);
    let upto = read_lsn(ctx, &partition, range_id)?;
    let wanted = |key: &DocKey| {
        only_epk.is_none_or(|f| f.contains(key.epk))
            && epk_range.is_none_or(|(min, max)| min <= key.epk && key.epk < max)
    };
    let after = match request.start {
        FeedStart::Beginning => 0,
        FeedStart::Now => upto,
        // A continuation ahead of this replica (issued by a region further along) waits here.
        FeedStart::After(lsn) => lsn,
    };
    let position = request.answers_a_position();
    let (items, read_to) = match (position, request.mode) {
        (Some(since), _) => (Vec::new(), partition.position_at(since, upto)),
        (None, FeedMode::LatestVersion) => {
            latest_page(&partition, after, upto, request.since_unix, wanted, limit)
        }
        (None, FeedMode::AllVersionsAndDeletes) => {
            all_versions_page(&partition, &container, after, upto, wanted, limit)?
        }
    };
    let mut reply = if position.is_some() {
        Reply::json(
            200,
            super::feed_body(&container.rid, "Documents", &[]),
            charge::read_feed(0),
        )
    } else if items.is_empty() {
        Reply::empty(304, charge::not_modified())
    } else {
        let refs: Vec<&Bytes> = items.iter().collect();
        let bytes = items.iter().map(Bytes::len).sum();
        Reply::json(
            200,
            super::feed_body(&container.rid, "Documents", &refs),
            charge::read_feed(bytes),
        )
    };
    reply = reply
        .header(headers::ETAG, etag(read_to))
        .header(headers::ITEM_COUNT, items.len().to_string())
        .header(
            headers::SESSION_TOKEN,
            session_token(ctx, &partition, range_id, upto),
        )
        .header(headers::PARTITION_KEY_RANGE_ID, range_id);
    // The replica headers (`lsn` is the LSN the feed was read at) and the range's quota and
    // usage, as the service's backend sends with every feed page (and 304).
    let (documents, bytes) = partition.usage();
    let replica = replica_headers(&replica_state(ctx, &partition, upto, None));
    for (name, value) in replica.into_iter().chain(quota_headers(documents, bytes)) {
        reply = reply.header(name, value);
    }
    for (name, value) in container_paths(ctx, db, &container) {
        reply = reply.header(name, value);
    }
    Ok(reply)
}

/// The partition key range a change-feed request reads: the one its partition key lies in, the
/// one it names (410/1002 when that range does not exist), or the only one the container has.
fn scope(
    ctx: &RequestCtx<'_>,
    container: &Container,
    only_epk: Option<EpkFilter>,
    epk_range: Option<&(String, String)>,
) -> Result<usize, ApiError> {
    if let Some(filter) = only_epk {
        return match container.ranges_of(&filter).as_slice() {
            [one] => Ok(*one),
            many => Err(ApiError::bad_request(format!(
                "The partition key prefix spans {} partition key ranges; a change feed reads one: send {} with {} and {}.",
                many.len(),
                headers::PARTITION_KEY_RANGE_ID,
                headers::START_EPK,
                headers::END_EPK
            ))),
        };
    }
    if let Some(id) = ctx.header(headers::PARTITION_KEY_RANGE_ID) {
        return container.range_by_id(id.trim()).ok_or_else(|| {
            ApiError::new(410, format!("Partition key range {id:?} does not exist."))
                .with_sub_status(1002)
        });
    }
    if container.partitions().len() == 1 {
        return Ok(0);
    }
    let what = if epk_range.is_some() {
        "with a feed range also "
    } else {
        ""
    };
    Err(ApiError::bad_request(format!(
        "A change feed reads one partition key range: {what}send {} (the container has {} ranges; read them from its pkranges feed) or a partition key.",
        headers::PARTITION_KEY_RANGE_ID,
        container.partitions().len()
    )))
}

/// Latest-version items: each changed item once, newest version, commit order, with `_lsn`.
/// Returns the bodies and the LSN read to (the last item's when the page is full).
fn latest_page(
    partition: &Partition,
    after: u64,
    upto: u64,
    since_unix: Option<u64>,
    wanted: impl Fn(&DocKey) -> bool,
    limit: usize,
) -> (Vec<Bytes>, u64) {
    let mut changes = partition.changes(after, upto, since_unix, wanted, limit);
    let fetched = changes.len();
    // A page also ends at about 4 MB, like the read feed's.
    let lsns: Vec<u64> = changes.iter().map(|c| c.lsn).collect();
    changes.truncate(page_end_whole_lsn(
        changes.iter().map(|c| c.doc.body.len()),
        limit,
        &lsns,
    ));
    let read_to = match changes.last() {
        Some(last) if fetched >= limit || changes.len() < fetched => last.lsn,
        _ => upto.max(after),
    };
    let bodies = changes
        .iter()
        .map(|c| with_lsn(&c.doc.body, c.lsn))
        .collect();
    (bodies, read_to)
}

/// All-versions-and-deletes items in the 2021-09-15 wire format: `current`, `metadata` (operation
/// type, LSN, commit time, the replaced version's LSN) and `previous` for replaces and deletes.
/// 400 when the continuation lies before the retention window.
fn all_versions_page(
    partition: &Partition,
    container: &Container,
    after: u64,
    upto: u64,
    wanted: impl Fn(&DocKey) -> bool,
    limit: usize,
) -> Result<(Vec<Bytes>, u64), ApiError> {
    let mut entries = partition.history(after, upto, wanted, limit).map_err(|first| {
        ApiError::bad_request(format!(
            "The continuation (LSN {after}) lies before the change feed's retention window ({} minutes or {} changes per partition); the oldest change still held has LSN {first}. Start again from now.",
            crate::store::RETENTION_SECONDS / 60,
            crate::store::RETENTION_CHANGES
        ))
    })?;
    let fetched = entries.len();
    let size = |e: &HistoryEntry| {
        e.doc.as_ref().map_or(0, |d| d.body.len())
            + e.previous.as_ref().map_or(0, |(_, d)| d.body.len())
    };
    let lsns: Vec<u64> = entries.iter().map(|e| e.lsn).collect();
    entries.truncate(page_end_whole_lsn(entries.iter().map(size), limit, &lsns));
    let read_to = match entries.last() {
        Some(last) if fetched >= limit || entries.len() < fetched => last.lsn,
        _ => upto.max(after),
    };
    let bodies = entries
        .iter()
        .map(|e| all_versions_item(e, container))
        .collect::<Result<_, _>>()?;
    Ok((bodies, read_to))
}

fn all_versions_item(entry: &HistoryEntry, container: &Container) -> Result<Bytes, ApiError> {
    let parse = |body: &Bytes| -> Result<Value, ApiError> {
        serde_json::from_slice(body)
            .map_err(|e| ApiError::new(500, format!("A stored item could not be read: {e}")))
    };
    let previous = entry
        .previous
        .as_ref()
        .map(|(_, d)| parse(&d.body))
        .transpose()?;
    let previous_lsn = entry.previous.as_ref().map(|(lsn, _)| json!(lsn));
    let operation = match (&entry.doc, &entry.previous) {
        (None, _) => "delete",
        (Some(_), None) => "create",
        (Some(_), Some(_)) => "replace",
    };
    let mut metadata = Map::new();
    metadata.insert("operationType".into(), json!(operation));
    metadata.insert("lsn".into(), json!(entry.lsn));
    metadata.insert("crts".into(), json!(entry.unix_ts));
    metadata.insert(
        "timeToLiveExpired".into(),
        json!(deleted_by_expiry(entry, container.default_ttl())),
    );
    if let Some(lsn) = previous_lsn {
        metadata.insert("previousImageLSN".into(), lsn);
    }
    let mut item = Map::new();
    match &entry.doc {
        Some(doc) => {
            let mut current = parse(&doc.body)?;
            if let Some(obj) = current.as_object_mut() {
                obj.insert("_lsn".into(), json!(entry.lsn));
            }
            item.insert("current".into(), current);
        }
        None => {
            item.insert("current".into(), json!({}));
            metadata.insert("id".into(), json!(entry.key.id));
            if let Some(pk) = previous
                .as_ref()
                .and_then(|p| pk_object(p, &container.pk.paths))
            {
                metadata.insert("partitionKey".into(), pk);
            }
        }
    }
    item.insert("metadata".into(), Value::Object(metadata));
    // A replace points back at the version it replaced by `previousImageLSN` only: the service
    // sends a replace's previous image only when the container asks for pre-images, which a
    // change feed retention policy alone does not.
    if let (Some(p), "delete") = (previous, operation) {
        item.insert("previous".into(), p);
    }
    Ok(Bytes::from(
        serde_json::to_vec(&Value::Object(item)).unwrap_or_default(),
    ))
}

/// Whether `entry` is a delete of a version that had outlived its time to live (under the
/// container's `default_ttl`) when it was deleted: the expiry sweep's delete, not a client's (a
/// client cannot reach an expired item). Pure.
fn deleted_by_expiry(entry: &HistoryEntry, default_ttl: Option<i64>) -> bool {
    entry.doc.is_none()
        && entry.previous.as_ref().is_some_and(|(_, gone)| {
            crate::store::ttl::expired(default_ttl, &gone.body, entry.unix_ts)
        })
}

/// `{"<last path segment>": value}` for the partition key inside `doc`.
fn pk_object(doc: &Value, paths: &[Vec<String>]) -> Option<Value> {
    let mut out = serde_json::Map::new();
    for segments in paths {
        let value = segments.iter().try_fold(doc, |v, s| v.get(s))?;
        out.insert(segments.last()?.clone(), value.clone());
    }
    Some(Value::Object(out))
}

/// `body` (a JSON object) with `"_lsn": lsn` added before its closing brace.
fn with_lsn(body: &Bytes, lsn: u64) -> Bytes {
    match body.iter().rposition(|b| *b == b'}') {
        Some(end) => {
            let mut out = Vec::with_capacity(body.len() + 24);
            out.extend_from_slice(&body[..end]);
            let empty = body[..end].iter().rev().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
            if !empty {
                out.push(b',');
            }
            out.extend_from_slice(format!("\"_lsn\":{lsn}}}").as_bytes());
            out.into()
        }
        None => body.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lsn_joins_the_object() {
        let got = with_lsn(&Bytes::from_static(br#"{"id":"a"}"#), 7);
        assert_eq!(&got[..], br#"{"id":"a","_lsn":7}"#);
        let got = with_lsn(&Bytes::from_static(b"{}"), 1);
        assert_eq!(&got[..], br#"{"_lsn":1}"#);
        let v: Value =
            serde_json::from_slice(&with_lsn(&Bytes::from_static(br#"{"a":{"b":1}}"#), 3)).unwrap();
        assert_eq!(v, json!({"a": {"b": 1}, "_lsn": 3}));
    }

    #[test]
    fn the_partition_key_object_names_the_last_segment() {
        let doc = json!({"a": {"b": "x"}});
        assert_eq!(
            pk_object(&doc, &[vec!["a".into(), "b".into()]]),
            Some(json!({"b": "x"}))
        );
        assert_eq!(pk_object(&doc, &[vec!["z".into()]]), None);
    }
}

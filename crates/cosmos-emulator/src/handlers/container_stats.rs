//! What a container read adds when asked: per partition key range statistics in the body
//! (`x-ms-documentdb-populatepartitionstatistics: true`) and the index transformation progress
//! header (`x-ms-documentdb-populatequotainfo: true`). The emulator applies an indexing policy
//! change at once, so the progress is always 100 (percent).

use bytes::Bytes;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::exchange::request_class::flag;
use crate::exchange::RequestCtx;
use crate::protocol::headers;
use crate::store::Container;

/// One range's entry of `statistics`.
#[derive(Serialize, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub(super) struct RangeStatistics {
    pub id: String,
    #[serde(rename = "sizeInKB")]
    pub size_in_kb: u64,
    pub document_count: u64,
    pub sampled_distinct_partition_key_count: u64,
    pub partition_keys: Vec<Value>,
}

/// The statistics of `container`'s ranges: their items, size and distinct keys.
pub(super) fn statistics(container: &Container) -> Vec<RangeStatistics> {
    container
        .partitions()
        .iter()
        .enumerate()
        .filter_map(|(i, p)| {
            let p = p.read().ok()?;
            let (documents, bytes) = p.usage();
            Some(RangeStatistics {
                id: container.range_id(i).to_owned(),
                size_in_kb: bytes.div_ceil(1024),
                document_count: documents,
                sampled_distinct_partition_key_count: p.distinct_epks().len() as u64,
                partition_keys: Vec::new(),
            })
        })
        .collect()
}

/// The container's body as a read answers it: with `statistics` when asked.
pub(super) fn body(ctx: &RequestCtx<'_>, container: &Container, definition: &Bytes) -> Bytes {
    if !flag(ctx.headers, headers::POPULATE_PARTITION_STATISTICS) {
        return definition.clone();
    }
    let Ok(mut map) = serde_json::from_slice::<Map<String, Value>>(definition) else {
        return definition.clone();
    };
    let stats = serde_json::to_value(statistics(container)).unwrap_or(Value::Null);
    map.insert("statistics".into(), stats);
    serde_json::to_vec(&map)
        .map(Bytes::from)
        .unwrap_or_else(|_| definition.clone())
}

/// The headers a read adds when asked for quota information.
pub(super) fn headers(ctx: &RequestCtx<'_>) -> Vec<(&'static str, String)> {
    if flag(ctx.headers, headers::POPULATE_QUOTA_INFO) {
        vec![(headers::INDEX_TRANSFORMATION_PROGRESS, "100".to_owned())]
    } else {
        Vec::new()
    }
}

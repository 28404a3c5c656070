//! A container: its definition, its partition key ranges and their physical partitions.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

use bytes::Bytes;
use serde_json::{json, Map, Value};

use super::computed_properties::ComputedProperty;
use super::container_definition::{check_default_ttl, replaced, Definition};
use super::document::{seal, Sealed};
pub(super) use super::item_rid::{item_rid, item_rid_parts};
use super::partition::Partition;
use crate::epk::{range_bounds, range_of, Epk, EpkFilter, PartitionKeyValue, PkDefinition};
use crate::protocol::ids::{encode_rid, new_etag, unix_seconds};
use crate::protocol::ApiError;

/// Sub-status of a 400 whose partition key does not fit the container's definition.
pub(crate) const PARTITION_KEY_MISMATCH: u32 = 1001;

/// A container with `N` physical partitions, one per partition key range.
pub(crate) struct Container {
    pub id: String,
    pub rid_bytes: [u8; 8],
    pub rid: String,
    /// The container's resource JSON and etag (replaced by a container replace).
    pub(super) definition: RwLock<Definition>,
    /// The partition key definition (its paths, `Hash` or `MultiHash`).
    pub pk: PkDefinition,
    pub(super) boundaries: Vec<Epk>,
    pub(super) partitions: Vec<RwLock<Partition>>,
    pub(super) range_ids: Vec<String>,
    /// Per range, the ranges it was split from (empty for the container's first ranges).
    pub(super) range_parents: Vec<Vec<String>>,
    /// The pkranges feed body and its etag.
    pub pkranges_body: Bytes,
    pub pkranges_etag: String,
    /// Per range (by index), the counter of the next item resource id ([`Container::next_item_rid`]).
    pub(super) next_item: Box<[AtomicU64]>,
    /// The unique key constraints (`uniqueKeyPolicy`, fixed at creation).
    pub unique_keys: super::unique_keys::UniqueKeys,
    /// `defaultTtl` as last set ([`NO_TTL`]: expiry off), kept beside the definition so reads need
    /// not parse it.
    pub(super) default_ttl: AtomicI64,
    /// The computed properties as last defined (`computedProperties`).
    pub(super) computed: RwLock<Arc<Vec<ComputedProperty>>>,
    /// The property paths of the vector embedding policy (fixed at creation), whose embeddings
    /// an item keeps from the moment it is written.
    pub vector_paths: Arc<[Box<[String]>]>,
    /// The conflicts feed: writes a `Custom` conflict resolution policy left to the application.
    pub conflicts: super::conflicts::ConflictLog,
}

/// What [`Container::default_ttl`] holds when expiry is off.
const NO_TTL: i64 = i64::MIN;

/// A container body's `defaultTtl` as [`Container::default_ttl`] keeps it (checked already).
fn ttl_setting(map: &Map<String, Value>) -> i64 {
    map.get("defaultTtl")
        .and_then(Value::as_i64)
        .unwrap_or(NO_TTL)
}

impl Container {
    /// Checks a create request's body as [`Container::create`] will (partition key definition,
    /// `defaultTtl`, unique key policy), so a bad definition answers 400 before the id is looked
    /// up, as the service answers it before a 409.
    pub(crate) fn check_definition(map: &Map<String, Value>) -> Result<(), ApiError> {
        PkDefinition::from_container_body(&mut map.clone()).map_err(ApiError::bad_request)?;
        check_default_ttl(map)?;
        super::search_policy::check(map)?;
        super::computed_properties::from_definition(map)?;
        super::unique_keys::UniqueKeys::from_definition(map).map(|_| ())
    }

    /// Builds a container from a create request's body.
    pub(crate) fn create(
        mut map: Map<String, Value>,
        id: String,
        db_rid: [u8; 4],
        ordinal: u32,
        partition_count: usize,
        regions: usize,
    ) -> Result<Self, ApiError> {
        let pk = PkDefinition::from_container_body(&mut map).map_err(ApiError::bad_request)?;
        check_default_ttl(&map)?;
        let vector_paths = super::search_policy::check(&map)?
            .vectors
            .into_iter()
            .map(|v| v.path.into_boxed_slice())
            .collect();
        let unique_keys = super::unique_keys::UniqueKeys::from_definition(&map)?;
        let default_ttl = ttl_setting(&map);
        let computed = super::computed_properties::from_definition(&map)?;
        let mut rid_bytes = [0u8; 8];
        rid_bytes[..4].copy_from_slice(&db_rid);
        rid_bytes[4..].copy_from_slice(&(ordinal | 0x8000_0000).to_be_bytes());
        let rid = encode_rid(&rid_bytes);
        let db_rid_text = encode_rid(&db_rid);
        let indexing = super::indexing_policy::filled(map.get("indexingPolicy"));
        map.insert("indexingPolicy".into(), indexing);
        map.entry("conflictResolutionPolicy").or_insert_with(|| {
            json!({"mode": "LastWriterWins", "conflictResolutionPath": "/_ts", "conflictResolutionProcedure": ""})
        });
        map.entry("geospatialConfig")
            .or_insert_with(|| json!({"type": "Geography"}));
        let definition = sealed_definition(map, &rid_bytes);
        let count = partition_count.clamp(1, 1024);
        let boundaries = pk.boundaries(count);
        let range_ids: Vec<String> = (0..count).map(|i| i.to_string()).collect();
        let range_parents = vec![Vec::new(); count];
        let (pkranges_body, pkranges_etag) = pkranges_feed(
            &rid,
            &db_rid_text,
            &pk,
            &boundaries,
            &range_ids,
            &range_parents,
        );
        Ok(Self {
            id,
            rid_bytes,
            rid,
            definition: RwLock::new(definition),
            pk,
            partitions: (0..count)
                .map(|_| RwLock::new(Partition::new(regions)))
                .collect(),
            boundaries,
            range_ids,
            range_parents,
            pkranges_body,
            pkranges_etag,
            next_item: (0..count).map(|_| AtomicU64::new(1)).collect(),
            unique_keys,
            default_ttl: AtomicI64::new(default_ttl),
            computed: RwLock::new(Arc::new(computed)),
            vector_paths,
            conflicts: Default::default(),
        })
    }

    /// The container's resource JSON and etag now.
    pub(crate) fn definition(&self) -> Definition {
        match self.definition.read() {
            Ok(d) => d.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// Replaces the container's settings with those of a replace request's body (see
    /// `container_definition::replaced` for what may change); `if_match` other than `*` must name
    /// the current etag.
    pub(crate) fn replace_definition(
        &self,
        map: Map<String, Value>,
        if_match: Option<&str>,
    ) -> Result<Definition, ApiError> {
        let mut guard = self
            .definition
            .write()
            .map_err(|_| ApiError::new(500, "A container definition lock was poisoned."))?;
        if if_match.is_some_and(|tag| tag.trim() != "*" && tag.trim() != guard.etag) {
            return Err(ApiError::precondition_failed());
        }
        let current: Map<String, Value> = serde_json::from_slice(&guard.body).unwrap_or_default();
        let map = replaced(&current, map, &self.id)?;
        let default_ttl = ttl_setting(&map);
        let computed = super::computed_properties::from_definition(&map)?;
        *guard = sealed_definition(map, &self.rid_bytes);
        self.default_ttl.store(default_ttl, Ordering::Relaxed);
        match self.computed.write() {
            Ok(mut c) => *c = Arc::new(computed),
            Err(poisoned) => *poisoned.into_inner() = Arc::new(computed),
        }
        Ok(guard.clone())
    }

    /// What queries need of the container's search policies now.
    pub(crate) fn search_policy(&self) -> crate::sql::search::SearchPolicy {
        super::search_policy::of_definition(&self.definition().body)
    }

    /// The computed properties queries see now.
    pub(crate) fn computed(&self) -> Arc<Vec<ComputedProperty>> {
        match self.computed.read() {
            Ok(c) => c.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// The container's `defaultTtl` (`None`: expiry is off).
    pub(crate) fn default_ttl(&self) -> Option<i64> {
        Some(self.default_ttl.load(Ordering::Relaxed)).filter(|t| *t != NO_TTL)
    }

    /// Whether the stored item `body` has outlived its time to live at `unix_now` (seconds).
    pub(crate) fn expired(&self, body: &[u8], unix_now: u64) -> bool {
        self.default_ttl()
            .is_some_and(|t| super::ttl::expired(Some(t), body, unix_now))
    }

    /// The physical partition (range index) an EPK belongs to.
    pub(crate) fn range_index(&self, epk: Epk) -> usize {
        range_of(epk, &self.boundaries)
    }

    /// The EPK of the full partition key a point operation's header names: 400 when the header
    /// is unreadable; 400 with sub-status 1001 (the key does not fit the definition) when its
    /// component count is not the definition's.
    pub(crate) fn point_epk(&self, header: &str) -> Result<Epk, ApiError> {
        let key = PartitionKeyValue::from_header(header).map_err(ApiError::bad_request)?;
        self.pk
            .point_epk(&key)
            .map_err(|e| ApiError::bad_request(e).with_sub_status(PARTITION_KEY_MISMATCH))
    }

    /// The keys a read's partition key header selects: one key, or a hierarchical prefix's range.
    pub(crate) fn header_filter(&self, header: &str) -> Result<EpkFilter, ApiError> {
        let key = PartitionKeyValue::from_header(header).map_err(ApiError::bad_request)?;
        self.pk.filter(&key).map_err(ApiError::bad_request)
    }

    /// The range indexes holding keys that `filter` may pass, in order.
    pub(crate) fn ranges_of(&self, filter: &EpkFilter) -> Vec<usize> {
        match filter {
            EpkFilter::Key(k) => vec![self.range_index(*k)],
            EpkFilter::Range(min, max) => {
                let first = self.range_index(*min);
                let last = first.max(self.boundaries.partition_point(|b| b < max));
                (first..=last).collect()
            }
        }
    }

    /// The `[min, max)` bounds of range `index`.
    pub(crate) fn range_epks(&self, index: usize) -> (Epk, Option<Epk>) {
        let min = if index == 0 {
            Epk::MIN
        } else {
            self.boundaries.get(index - 1).copied().unwrap_or(Epk::MIN)
        };
        (min, self.boundaries.get(index).copied())
    }

    /// The partition at a range index.
    pub(crate) fn partition(&self, index: usize) -> Option<&RwLock<Partition>> {
        self.partitions.get(index)
    }

    /// All partitions, in range order.
    pub(crate) fn partitions(&self) -> &[RwLock<Partition>] {
        &self.partitions
    }

    /// How many partition key ranges it has.
    pub(crate) fn range_count(&self) -> usize {
        self.range_ids.len()
    }

    /// The string id of range `index` ("0", "1", ...).
    pub(crate) fn range_id(&self, index: usize) -> &str {
        self.range_ids.get(index).map(String::as_str).unwrap_or("0")
    }

    /// The range index named by a range id string.
    pub(crate) fn range_by_id(&self, id: &str) -> Option<usize> {
        self.range_ids.iter().position(|r| r == id)
    }

    /// The `_self` link of an item with resource id `rid`.
    pub(crate) fn item_self_link(&self, rid: &[u8; 16]) -> String {
        format!(
            "dbs/{}/colls/{}/docs/{}/",
            encode_rid(&self.rid_bytes[..4]),
            self.rid,
            encode_rid(rid)
        )
    }

    /// Resource-id bytes for a new item of range index `range` ([`item_rid`]).
    pub(crate) fn next_item_rid(&self, range: usize) -> [u8; 16] {
        let n = self
            .next_item
            .get(range)
            .map_or(1, |c| c.fetch_add(1, Ordering::Relaxed));
        item_rid(&self.rid_bytes, range_marker(self.range_id(range)), n)
    }
}

/// The marker of range `range_id` in its items' resource ids: the range id, as the 2 bytes it
/// has room for. Range ids are numbered from 0 and a split takes the next two, so markers are
/// distinct while a container has had fewer than 65,536 ranges ([`MAX_RANGE_ID`]).
pub(super) fn range_marker(range_id: &str) -> u16 {
    range_id.parse::<u64>().map_or(0, |id| (id & 0xFFFF) as u16)
}

/// The highest range id a split may give (markers stay distinct up to it).
pub(super) const MAX_RANGE_ID: u64 = 0xFFFF;

/// Seals a container body: system properties, its `_self` link and the links of its feeds.
fn sealed_definition(map: Map<String, Value>, rid_bytes: &[u8; 8]) -> Definition {
    let rid = encode_rid(rid_bytes);
    let db_rid_text = encode_rid(&rid_bytes[..4]);
    let Sealed { body, etag } = seal(map, rid_bytes, format!("dbs/{db_rid_text}/colls/{rid}/"));
    let mut doc: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    if let Some(obj) = doc.as_object_mut() {
        obj.remove("_attachments");
        for (k, v) in [
            ("_docs", "docs/"),
            ("_sprocs", "sprocs/"),
            ("_triggers", "triggers/"),
            ("_udfs", "udfs/"),
            ("_conflicts", "conflicts/"),
        ] {
            obj.insert(k.into(), Value::from(v));
        }
    }
    let body = Bytes::from(serde_json::to_vec(&doc).unwrap_or_default());
    Definition { body, etag }
}

/// The pkranges feed of ranges `ids` (with their `parents`) split at `boundaries`, and its etag.
pub(super) fn pkranges_feed(
    coll_rid: &str,
    db_rid: &str,
    pk: &PkDefinition,
    boundaries: &[Epk],
    ids: &[String],
    parents: &[Vec<String>],
) -> (Bytes, String) {
    let etag = new_etag();
    let ts = unix_seconds();
    let ranges: Vec<Value> = ids
        .iter()
        .enumerate()
        .map(|(i, id)| {
            let (min, max) = range_bounds(i, boundaries, |b| pk.boundary_text(b));
            json!({
                "_rid": format!("{coll_rid}{id}"),
                "id": id,
                "_etag": etag,
                "minInclusive": min,
                "maxExclusive": max,
                "ridPrefix": id.parse::<u64>().unwrap_or(i as u64),
                "_self": format!("dbs/{db_rid}/colls/{coll_rid}/pkranges/{id}/"),
                "throughputFraction": 1.0 / ids.len() as f64,
                "status": "online",
                "parents": parents.get(i).cloned().unwrap_or_default(),
                "_ts": ts,
                "_lsn": 1
            })
        })
        .collect();
    let feed = json!({"_rid": coll_rid, "PartitionKeyRanges": ranges, "_count": ids.len()});
    (
        Bytes::from(serde_json::to_vec(&feed).unwrap_or_default()),
        etag,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::document::parse_object;

    fn make(body: &str) -> Result<Container, ApiError> {
        let map = parse_object(body.as_bytes()).unwrap();
        Container::create(map, "c".into(), [0, 0, 0, 1], 1, 4, 2)
    }

    #[test]
    fn item_rids_count_per_range_and_carry_the_range_marker() {
        let c = make(r#"{"id":"c","partitionKey":{"paths":["/pk"],"kind":"Hash"}}"#).unwrap();
        let firsts: Vec<[u8; 16]> = (0..4).map(|r| c.next_item_rid(r)).collect();
        let second = c.next_item_rid(0);
        for (range, rid) in firsts.iter().enumerate() {
            assert_eq!(rid[..8], c.rid_bytes);
            assert_eq!(item_rid_parts(rid), (range as u16, 1), "range {range}");
        }
        assert_eq!(item_rid_parts(&second), (0, 2));
        let mut all = firsts.clone();
        all.push(second);
        all.sort();
        all.dedup();
        assert_eq!(all.len(), 5, "every resource id is distinct");
    }

    #[test]
    fn item_rids_sorted_as_text_interleave_the_ranges_by_arrival() {
        // (range, counter) pairs in the order their text sorts: the first item of every range,
        // then the second of every range, ranges in id order at an equal counter.
        let container = [1, 2, 3, 4, 5, 6, 7, 8];
        let mut texts: Vec<(String, (u16, u64))> = [(1, 2), (0, 2), (1, 1), (0, 1), (2, 1)]
            .into_iter()
            .map(|(m, n)| (encode_rid(&item_rid(&container, m, n)), (m, n)))
            .collect();
        texts.sort();
        let order: Vec<(u16, u64)> = texts.into_iter().map(|(_, p)| p).collect();
        assert_eq!(order, [(0, 1), (1, 1), (2, 1), (0, 2), (1, 2)]);
    }

    #[test]
    fn item_rid_parts_table() {
        let container = [9; 8];
        for (marker, counter) in [
            (0u16, 1u64),
            (1, 255),
            (300, 70_000),
            (0xFFFF, (1 << 40) - 1),
        ] {
            let rid = item_rid(&container, marker, counter);
            assert_eq!(item_rid_parts(&rid), (marker, counter));
            assert_eq!(rid[15], 0, "the type byte of an item is 0");
        }
        assert_eq!(range_marker("0"), 0);
        assert_eq!(range_marker("17"), 17);
        assert_eq!(range_marker("not a number"), 0);
    }

    #[test]
    fn the_default_ttl_follows_creation_and_replaces() {
        let body = br#"{"id":"a","_ts":1000}"#;
        let c = make(r#"{"id":"c","partitionKey":{"paths":["/pk"]},"defaultTtl":10}"#).unwrap();
        assert_eq!(c.default_ttl(), Some(10));
        assert!(!c.expired(body, 1009) && c.expired(body, 1010));
        let off = parse_object(br#"{"id":"c","partitionKey":{"paths":["/pk"]}}"#).unwrap();
        c.replace_definition(off, None).unwrap();
        assert_eq!(c.default_ttl(), None);
        assert!(!c.expired(body, 5000), "expiry switched off");
        let on = parse_object(br#"{"id":"c","partitionKey":{"paths":["/pk"]},"defaultTtl":-1}"#)
            .unwrap();
        c.replace_definition(on, None).unwrap();
        assert_eq!(c.default_ttl(), Some(-1));
        assert!(
            !c.expired(body, 5000),
            "-1: only an item's own ttl expires it"
        );
        assert!(c.expired(br#"{"id":"a","_ts":1000,"ttl":5}"#, 1005));
    }

    #[test]
    fn accepts_a_v2_hash_definition_and_lists_its_ranges() {
        let c = make(r#"{"id":"c","partitionKey":{"paths":["/pk"],"kind":"Hash","version":2}}"#)
            .unwrap();
        assert_eq!(c.pk.paths, vec![vec!["pk".to_owned()]]);
        let doc: Value = serde_json::from_slice(&c.definition().body).unwrap();
        assert_eq!(doc["partitionKey"]["version"], Value::from(2));
        // Without a version: the legacy V1 container, read back without one.
        let legacy = make(r#"{"id":"c","partitionKey":{"paths":["/pk"],"kind":"Hash"}}"#).unwrap();
        assert!(legacy.pk.hash_v1);
        let doc: Value = serde_json::from_slice(&legacy.definition().body).unwrap();
        assert_eq!(doc["partitionKey"].get("version"), None);
        let feed: Value = serde_json::from_slice(&c.pkranges_body).unwrap();
        let ranges = feed["PartitionKeyRanges"].as_array().unwrap();
        assert_eq!(ranges.len(), 4);
        assert_eq!(ranges[0]["id"], Value::from("0"));
        assert_eq!(ranges[0]["minInclusive"], Value::from(""));
        assert_eq!(ranges[3]["maxExclusive"], Value::from("FF"));
        assert_eq!(ranges[1]["minInclusive"], ranges[0]["maxExclusive"]);
    }

    #[test]
    fn multi_hash_definitions_are_echoed_as_given() {
        let c = make(
            r#"{"id":"c","partitionKey":{"paths":["/t","/u"],"kind":"MultiHash","version":2}}"#,
        )
        .unwrap();
        assert!(c.pk.multi_hash);
        let doc: Value = serde_json::from_slice(&c.definition().body).unwrap();
        assert_eq!(
            doc["partitionKey"],
            json!({"paths": ["/t", "/u"], "kind": "MultiHash", "version": 2})
        );
    }

    #[test]
    fn a_prefix_selects_every_range_its_keys_can_lie_in() {
        let c = make(
            r#"{"id":"c","partitionKey":{"paths":["/t","/u"],"kind":"MultiHash","version":2}}"#,
        )
        .unwrap();
        let b = |i: usize| c.boundaries[i];
        let full = |min: Epk, max: Epk| EpkFilter::Range(min, max);
        assert_eq!(
            c.ranges_of(&full(Epk::MIN, Epk::parse_hex("FF").unwrap())),
            vec![0, 1, 2, 3]
        );
        assert_eq!(c.ranges_of(&full(b(0), b(0).prefix_end())), vec![1]);
        let below = Epk::single(b(0).first() - 1);
        assert_eq!(c.ranges_of(&full(below, below.prefix_end())), vec![0]);
        assert_eq!(c.ranges_of(&full(below, b(1))), vec![0, 1]);
        assert_eq!(c.ranges_of(&EpkFilter::Key(b(2))), vec![3]);
    }

    #[test]
    fn refuses_unsupported_definitions() {
        for body in [
            r#"{"id":"c"}"#,
            r#"{"id":"c","partitionKey":{"paths":["/a","/b"],"kind":"Hash","version":2}}"#,
            r#"{"id":"c","partitionKey":{"paths":["/a","/b","/c","/d"],"kind":"MultiHash","version":2}}"#,
            r#"{"id":"c","partitionKey":{"paths":["/a"],"kind":"Hash","version":3}}"#,
            r#"{"id":"c","partitionKey":{"paths":["/a","/b"],"kind":"MultiHash","version":1}}"#,
            r#"{"id":"c","partitionKey":{"paths":["pk"],"kind":"Hash"}}"#,
            r#"{"id":"c","partitionKey":{"paths":["/a//b"],"kind":"Hash"}}"#,
        ] {
            assert_eq!(make(body).err().map(|e| e.status), Some(400), "{body}");
        }
    }
}

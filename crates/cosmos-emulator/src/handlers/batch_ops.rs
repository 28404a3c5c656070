//! One batch operation evaluated against a partition plus the writes staged by the operations
//! before it: what it answers and what it would write. Nothing is committed here.

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Map, Value};

use super::patch::{parse_request_value, patched};
use crate::epk::Epk;
use crate::protocol::{charge, ApiError};
use crate::sql::meter::Meter;
use crate::store::document::{id_of, seal};
use crate::store::embeddings::Embeddings;
use crate::store::item_limits::{check_depth, check_size};
use crate::store::{Container, DocKey, Partition, StoredDoc};

/// A batch operation as the SDKs send it.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct BatchOp {
    pub operation_type: String,
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub resource_body: Option<Value>,
    /// The operation's own partition key (bulk), as header text: `["value"]`.
    #[serde(default)]
    pub partition_key: Option<String>,
    #[serde(default)]
    pub if_match: Option<String>,
    #[serde(default)]
    pub if_none_match: Option<String>,
}

/// What an operation answered, and the write it stages (`None` inside: a delete).
pub(super) struct OpResult {
    pub status: u16,
    pub charge: f64,
    pub doc: Option<Arc<StoredDoc>>,
    pub write: Option<(DocKey, Option<Arc<StoredDoc>>)>,
    /// A replace that renamed the item: its old key, deleted at the same LSN.
    pub renamed_from: Option<DocKey>,
}

impl OpResult {
    /// The writes the operation stages, in order: a rename's delete of the old id first.
    pub(super) fn writes(&self) -> Vec<(DocKey, Option<Arc<StoredDoc>>)> {
        let removed = self.renamed_from.iter().map(|k| (k.clone(), None));
        removed.chain(self.write.clone()).collect()
    }
}

/// The items the operations read, as the operations so far would leave them: over the
/// partition itself (locked), or over a snapshot of the items the operations address taken under
/// a short lock (then evaluated without holding it).
pub(super) struct Staged<'p> {
    base: Base<'p>,
    writes: HashMap<DocKey, Option<Arc<StoredDoc>>>,
    /// Set when an operation read an item the snapshot does not hold.
    missed: Cell<bool>,
}

enum Base<'p> {
    Partition(&'p Partition),
    Snapshot(&'p HashMap<DocKey, Option<Arc<StoredDoc>>>),
}

impl<'p> Staged<'p> {
    pub(super) fn new(partition: &'p Partition) -> Self {
        Self {
            base: Base::Partition(partition),
            writes: HashMap::new(),
            missed: Cell::new(false),
        }
    }

    /// Over `snapshot`: each item an operation may address, as it was read.
    pub(super) fn over_snapshot(snapshot: &'p HashMap<DocKey, Option<Arc<StoredDoc>>>) -> Self {
        Self {
            base: Base::Snapshot(snapshot),
            writes: HashMap::new(),
            missed: Cell::new(false),
        }
    }

    fn current(&self, key: &DocKey) -> Option<Arc<StoredDoc>> {
        if let Some(staged) = self.writes.get(key) {
            return staged.clone();
        }
        match &self.base {
            Base::Partition(p) => p.latest(key).cloned(),
            Base::Snapshot(items) => match items.get(key) {
                Some(doc) => doc.clone(),
                None => {
                    self.missed.set(true);
                    None
                }
            },
        }
    }

    /// Whether an operation read an item the snapshot does not hold (the evaluation must be
    /// repeated over the partition).
    pub(super) fn missed(&self) -> bool {
        self.missed.get()
    }

    /// Records an operation's write so later operations see it.
    pub(super) fn stage(&mut self, write: &(DocKey, Option<Arc<StoredDoc>>)) {
        self.writes.insert(write.0.clone(), write.1.clone());
    }
}

/// The id of the item `op` addresses, when it names one.
pub(super) fn op_item_id(op: &BatchOp) -> Option<String> {
    match op.operation_type.to_ascii_lowercase().as_str() {
        "create" | "upsert" => op
            .resource_body
            .as_ref()
            .and_then(|b| b.get("id"))
            .and_then(Value::as_str)
            .map(str::to_owned),
        _ => op.id.clone(),
    }
}

/// The operation's partition key EPK, when it names one; 400 when it is unreadable.
pub(super) fn op_epk(op: &BatchOp, container: &Container) -> Result<Option<Epk>, ApiError> {
    op.partition_key
        .as_deref()
        .map(|raw| {
            container.point_epk(raw).map_err(|e| {
                ApiError::bad_request(format!(
                    "An operation's partitionKey is invalid: {}",
                    e.message
                ))
            })
        })
        .transpose()
}

/// Evaluates `op` on the item with partition key `epk` in `container`.
pub(super) fn evaluate(
    op: &BatchOp,
    epk: Epk,
    container: &Container,
    staged: &Staged<'_>,
    meter: &Meter,
) -> Result<OpResult, ApiError> {
    let one = OneOp {
        op,
        epk,
        container,
        staged,
    };
    let kind = op.operation_type.to_ascii_lowercase();
    match kind.as_str() {
        "create" => one.create_or_upsert(true),
        "upsert" => one.create_or_upsert(false),
        "read" => one.read(),
        "replace" => one.replace(),
        "delete" => one.delete(),
        "patch" => one.patch(meter),
        other => Err(ApiError::bad_request(format!(
            "Operation type {other:?} is not a batch operation: use Create, Upsert, Read, Replace, Delete or Patch."
        ))),
    }
}

/// One operation of a batch and where it applies.
struct OneOp<'a, 'b> {
    op: &'a BatchOp,
    epk: Epk,
    container: &'a Container,
    staged: &'a Staged<'b>,
}

impl OneOp<'_, '_> {
    fn body_map(&self) -> Result<Map<String, Value>, ApiError> {
        match &self.op.resource_body {
            Some(Value::Object(map)) => Ok(map.clone()),
            _ => Err(ApiError::bad_request(format!(
                "A {} operation needs a JSON object as its resourceBody.",
                self.op.operation_type
            ))),
        }
    }

    fn op_id(&self) -> Result<String, ApiError> {
        self.op.id.clone().ok_or_else(|| {
            ApiError::bad_request(format!(
                "A {} operation needs an id.",
                self.op.operation_type
            ))
        })
    }

    fn key(&self, id: &str) -> DocKey {
        DocKey {
            epk: self.epk,
            id: id.to_owned(),
        }
    }

    /// Whether the operation's If-Match (if any) matches `current`.
    fn matches(&self, current: &StoredDoc) -> bool {
        self.op
            .if_match
            .as_deref()
            .is_none_or(|tag| tag.trim() == "*" || tag.trim() == current.etag)
    }

    /// The stored form of `map` under `rid`. Unique keys are checked when the batch commits,
    /// against the partition's index.
    fn sealed(&self, map: Map<String, Value>, rid: [u8; 16]) -> Result<Arc<StoredDoc>, ApiError> {
        check_depth(&map)?;
        crate::store::ttl::check_item_ttl(&map).map_err(ApiError::bad_request)?;
        let unique = self.container.unique_keys.entries(&map);
        let vectors = Embeddings::of_item(&map, &self.container.vector_paths);
        let link = self.container.item_self_link(&rid);
        let s = seal(map, &rid, link);
        check_size(s.body.len())?;
        Ok(Arc::new(StoredDoc {
            body: s.body,
            etag: s.etag,
            rid,
            unique,
            vectors,
            indexed: true,
        }))
    }

    fn check_key(&self, map: &Map<String, Value>) -> Result<(), ApiError> {
        let inside = self
            .container
            .pk
            .epk_of_document(map)
            .map_err(ApiError::bad_request)?;
        if inside != self.epk {
            return Err(ApiError::bad_request(
                "PartitionKey extracted from document doesn't match the one specified in the operation.",
            ));
        }
        Ok(())
    }

    /// The item at `id` as staged, whose If-Match must match; 404 or 412 otherwise.
    fn current_matching(&self, k: &DocKey) -> Result<Arc<StoredDoc>, ApiError> {
        let current = self
            .staged
            .current(k)
            .ok_or_else(ApiError::missing_entity)?;
        if !self.matches(&current) {
            return Err(ApiError::precondition_failed());
        }
        Ok(current)
    }

    fn create_or_upsert(&self, create: bool) -> Result<OpResult, ApiError> {
        let map = self.body_map()?;
        let id = id_of(&map)?;
        self.check_key(&map)?;
        let k = self.key(&id);
        let existing = self.staged.current(&k);
        match &existing {
            Some(_) if create => return Err(ApiError::already_exists()),
            // An upsert of a missing item creates it whatever its If-Match says.
            Some(current) if !self.matches(current) => return Err(ApiError::precondition_failed()),
            _ => {}
        }
        let rid = existing.as_ref().map_or_else(
            || {
                self.container
                    .next_item_rid(self.container.range_index(self.epk))
            },
            |d| d.rid,
        );
        let status = if existing.is_some() { 200 } else { 201 };
        Ok(write_result(status, k, self.sealed(map, rid)?))
    }

    fn read(&self) -> Result<OpResult, ApiError> {
        let current = self
            .staged
            .current(&self.key(&self.op_id()?))
            .ok_or_else(ApiError::missing_entity)?;
        if self
            .op
            .if_none_match
            .as_deref()
            .is_some_and(|tag| tag.trim() == current.etag)
        {
            return Ok(OpResult {
                status: 304,
                charge: charge::not_modified(),
                doc: None,
                write: None,
                renamed_from: None,
            });
        }
        Ok(OpResult {
            status: 200,
            charge: charge::point_read(current.body.len()),
            doc: Some(current),
            write: None,
            renamed_from: None,
        })
    }

    fn replace(&self) -> Result<OpResult, ApiError> {
        let id = self.op_id()?;
        let map = self.body_map()?;
        let body_id = id_of(&map)?;
        self.check_key(&map)?;
        let k = self.key(&id);
        let current = self.current_matching(&k)?;
        if body_id == id {
            return Ok(write_result(200, k, self.sealed(map, current.rid)?));
        }
        // A body naming another id renames the item, as a replace outside a batch does.
        let renamed = self.key(&body_id);
        if self.staged.current(&renamed).is_some() {
            return Err(ApiError::already_exists());
        }
        let mut result = write_result(200, renamed, self.sealed(map, current.rid)?);
        result.renamed_from = Some(k);
        Ok(result)
    }

    fn delete(&self) -> Result<OpResult, ApiError> {
        let k = self.key(&self.op_id()?);
        let current = self.current_matching(&k)?;
        Ok(OpResult {
            status: 204,
            charge: charge::write(current.body.len()),
            doc: None,
            write: Some((k, None)),
            renamed_from: None,
        })
    }

    fn patch(&self, meter: &Meter) -> Result<OpResult, ApiError> {
        let body = self.op.resource_body.as_ref().ok_or_else(|| {
            ApiError::bad_request("A Patch operation needs a resourceBody with its operations.")
        })?;
        let request = parse_request_value(body, &self.container.pk.paths)?;
        let k = self.key(&self.op_id()?);
        let current = self.current_matching(&k)?;
        let map = patched(&current, &request, meter)?;
        let doc = self.sealed(map, current.rid)?;
        Ok(OpResult {
            status: 200,
            charge: charge::patch(doc.body.len(), request.condition.is_some()),
            doc: Some(doc.clone()),
            write: Some((k, Some(doc))),
            renamed_from: None,
        })
    }
}

/// The result of a write of `doc` at `k`.
fn write_result(status: u16, k: DocKey, doc: Arc<StoredDoc>) -> OpResult {
    OpResult {
        status,
        charge: charge::write(doc.body.len()),
        doc: Some(doc.clone()),
        write: Some((k, Some(doc))),
        renamed_from: None,
    }
}

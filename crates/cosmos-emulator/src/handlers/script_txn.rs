//! The transaction one script execution (a stored procedure, or a write with its triggers) works
//! in: the item writes it makes are kept aside, read back by its own reads and queries, and
//! committed together at one LSN when it ends well, or dropped when it does not. It works on one
//! logical partition (the request's partition key).
//!
//! A script first runs without holding its partition: each operation reads under a short read
//! lock, and the transaction records what it saw (each item's etag, and a fingerprint of the
//! logical partition when it queried). At commit, under the write lock, that record is checked:
//! when nothing it saw changed, its writes commit; otherwise the script runs again holding the
//! write lock throughout ([`Access::Held`]), so the outcome is that of a serial execution. A
//! script that runs long, or forever, therefore holds no lock others wait for.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, RwLockWriteGuard};
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::item_reply::write_error;
use super::item_write::{commit_all, commit_all_when_met, prepare_item};
use super::target::Target;
use crate::epk::EpkFilter;
use crate::exchange::RequestCtx;
use crate::protocol::ids::{activity_id, unix_seconds};
use crate::protocol::{charge, ApiError};
use crate::store::document::{id_of, parse_object};
use crate::store::{DocKey, Partition, StoredDoc};

/// The most items one page of a script's query answers (its `pageSize` may ask for fewer; -1 asks
/// for this many).
pub(super) const MAX_SCRIPT_PAGE: usize = 1000;
/// The page size of a script's query that names none (the service's default).
pub(super) const DEFAULT_SCRIPT_PAGE: usize = 100;

/// When a script's operations stop being accepted: past this share of its time, or once it has
/// spent this many request units. The script is told `false` and may return, to be called again.
#[derive(Clone, Copy, Debug)]
pub(super) struct AcceptBudget {
    pub time: Duration,
    pub charge: f64,
}

/// Whether one more operation is accepted. Pure.
pub(super) fn accepts(budget: AcceptBudget, elapsed: Duration, charge_so_far: f64) -> bool {
    elapsed < budget.time && charge_so_far < budget.charge
}

/// One operation a script sends (see `prelude.js`).
#[derive(Deserialize)]
#[serde(tag = "op", rename_all = "lowercase")]
enum Op {
    Create {
        link: String,
        doc: Value,
        upsert: bool,
        #[serde(rename = "disableAutomaticIdGeneration", default)]
        no_auto_id: bool,
    },
    Replace {
        link: String,
        doc: Value,
        #[serde(rename = "ifMatch", default)]
        if_match: Option<String>,
    },
    Delete {
        link: String,
        #[serde(rename = "ifMatch", default)]
        if_match: Option<String>,
    },
    Read {
        link: String,
    },
    Query {
        link: String,
        query: Value,
        #[serde(rename = "pageSize", default)]
        page_size: Option<f64>,
        #[serde(default)]
        continuation: Option<String>,
    },
}

#[derive(Deserialize)]
struct QuerySpec {
    query: String,
    #[serde(default)]
    parameters: Vec<QueryParam>,
}

#[derive(Deserialize)]
struct QueryParam {
    name: String,
    value: Value,
}

/// How a transaction reaches its partition.
#[derive(Clone, Copy)]
pub(super) enum Access<'a> {
    /// A short read lock per operation (the first, optimistic run).
    Shared,
    /// The caller holds the write lock for the whole run.
    Held(&'a Partition),
}

/// What a finished transaction read and wrote.
pub(super) struct Writes {
    written: HashMap<String, Option<Arc<StoredDoc>>>,
    order: Vec<String>,
    /// Each item read from the partition, with the etag it had (`None`: it did not exist).
    reads: HashMap<String, Option<String>>,
    /// The logical partition's fingerprint when the transaction first queried it.
    scanned: Option<u64>,
}

/// The transaction: the items it wrote (by id, `None` once deleted), in the order first written.
pub(super) struct Txn<'t> {
    ctx: &'t RequestCtx<'t>,
    target: &'t Target,
    access: Access<'t>,
    written: HashMap<String, Option<Arc<StoredDoc>>>,
    order: Vec<String>,
    reads: HashMap<String, Option<String>>,
    scanned: Option<u64>,
    /// Request units the operations used.
    pub charge: f64,
    started: Instant,
    budget: AcceptBudget,
    refused: bool,
}

impl<'t> Txn<'t> {
    pub(super) fn new(
        ctx: &'t RequestCtx<'t>,
        target: &'t Target,
        budget: AcceptBudget,
        access: Access<'t>,
    ) -> Self {
        Self {
            ctx,
            target,
            access,
            written: HashMap::new(),
            order: Vec::new(),
            reads: HashMap::new(),
            scanned: None,
            charge: 0.0,
            started: Instant::now(),
            budget,
            refused: false,
        }
    }

    /// Runs `f` on the partition as this transaction reaches it.
    pub(super) fn with_partition<R>(
        &mut self,
        f: impl FnOnce(&mut Self, &Partition) -> Result<R, ApiError>,
    ) -> Result<R, ApiError> {
        match self.access {
            Access::Held(partition) => f(self, partition),
            Access::Shared => {
                let target = self.target;
                let partition = target.read()?;
                f(self, &partition)
            }
        }
    }

    /// The item `id` as the transaction sees it (recorded as read when it comes from the
    /// partition).
    pub(super) fn current(&mut self, partition: &Partition, id: &str) -> Option<Arc<StoredDoc>> {
        if let Some(doc) = self.written.get(id) {
            return doc.clone();
        }
        let found = partition.latest(&self.target.key(id)).cloned();
        self.reads
            .entry(id.to_owned())
            .or_insert_with(|| found.as_ref().map(|d| d.etag.clone()));
        found.filter(|d| !self.target.container.expired(&d.body, unix_seconds()))
    }

    fn put(&mut self, id: &str, doc: Option<Arc<StoredDoc>>) {
        if !self.written.contains_key(id) {
            self.order.push(id.to_owned());
        }
        self.written.insert(id.to_owned(), doc);
    }

    /// Creates (or upserts) an item; answers it and whether it existed. 409 when it exists and
    /// this is no upsert; 400 when its partition key is not the transaction's.
    pub(super) fn create(
        &mut self,
        partition: &Partition,
        map: Map<String, Value>,
        upsert: bool,
        if_match: Option<&str>,
    ) -> Result<(Arc<StoredDoc>, bool), ApiError> {
        let id = id_of(&map)?;
        self.target.check_document_key(&map)?;
        let existing = self.current(partition, &id);
        if existing.is_some() && !upsert {
            return Err(ApiError::already_exists());
        }
        if let (Some(tag), Some(doc)) = (if_match, &existing) {
            if !etag_ok(tag, &doc.etag) {
                return Err(ApiError::precondition_failed());
            }
        }
        let rid = existing
            .as_ref()
            .map(|d| d.rid)
            .unwrap_or_else(|| self.target.container.next_item_rid(self.target.range));
        let doc = prepare_item(self.target, map, rid, true)?;
        self.charge += charge::write(doc.body.len());
        self.put(&id, Some(doc.clone()));
        Ok((doc, existing.is_some()))
    }

    /// Replaces item `id` (renaming it when the body names another id).
    pub(super) fn replace(
        &mut self,
        partition: &Partition,
        id: &str,
        map: Map<String, Value>,
        if_match: Option<&str>,
    ) -> Result<Arc<StoredDoc>, ApiError> {
        let new_id = id_of(&map)?;
        self.target.check_document_key(&map)?;
        let existing = self
            .current(partition, id)
            .ok_or_else(ApiError::missing_entity)?;
        if if_match.is_some_and(|tag| !etag_ok(tag, &existing.etag)) {
            return Err(ApiError::precondition_failed());
        }
        if new_id != id && self.current(partition, &new_id).is_some() {
            return Err(ApiError::already_exists());
        }
        let doc = prepare_item(self.target, map, existing.rid, true)?;
        self.charge += charge::write(doc.body.len());
        if new_id != id {
            self.put(id, None);
        }
        self.put(&new_id, Some(doc.clone()));
        Ok(doc)
    }

    /// Deletes item `id`; answers what it was.
    pub(super) fn delete(
        &mut self,
        partition: &Partition,
        id: &str,
        if_match: Option<&str>,
    ) -> Result<Arc<StoredDoc>, ApiError> {
        let existing = self
            .current(partition, id)
            .ok_or_else(ApiError::missing_entity)?;
        if if_match.is_some_and(|tag| !etag_ok(tag, &existing.etag)) {
            return Err(ApiError::precondition_failed());
        }
        self.charge += charge::write(existing.body.len());
        self.put(id, None);
        Ok(existing)
    }

    /// Every item of the logical partition as the transaction sees it, in id order (the
    /// partition's state recorded as read).
    fn items(&mut self, partition: &Partition) -> Vec<Arc<StoredDoc>> {
        let committed = logical_items(partition, self.target);
        self.scanned.get_or_insert_with(|| fingerprint(&committed));
        let mut by_id: BTreeMap<String, Arc<StoredDoc>> = committed
            .into_iter()
            .filter(|(_, d)| !self.target.container.expired(&d.body, unix_seconds()))
            .collect();
        for (id, doc) in &self.written {
            match doc {
                Some(d) => by_id.insert(id.clone(), d.clone()),
                None => by_id.remove(id),
            };
        }
        by_id.into_values().collect()
    }

    fn query(
        &mut self,
        partition: &Partition,
        query: &Value,
        page_size: Option<f64>,
        continuation: Option<&str>,
    ) -> Result<(Vec<Value>, Option<String>), ApiError> {
        let spec = match query {
            Value::String(text) => QuerySpec {
                query: text.clone(),
                parameters: Vec::new(),
            },
            other => serde_json::from_value(other.clone()).map_err(|e| {
                ApiError::bad_request(format!(
                    "A script's query must be a string or {{query, parameters}}: {e}"
                ))
            })?,
        };
        let parsed = crate::sql::parse_query(&spec.query)
            .map_err(|e| ApiError::bad_request(format!("The query is invalid: {e}")))?;
        let params: HashMap<String, Value> = spec
            .parameters
            .into_iter()
            .map(|p| (p.name, p.value))
            .collect();
        let docs = self
            .items(partition)
            .iter()
            .map(|d| serde_json::from_slice::<Value>(&d.body))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| ApiError::new(500, format!("A stored item is not JSON: {e}")))?;
        let rows =
            crate::sql::run::run_whole(&parsed, &docs, &params, &self.ctx.shared.query_limits)?;
        let skip = match continuation {
            None => 0,
            Some(token) => token.parse::<usize>().map_err(|_| {
                ApiError::bad_request(format!(
                    "The continuation {token:?} was not made by this query."
                ))
            })?,
        };
        let size = match page_size {
            None => DEFAULT_SCRIPT_PAGE,
            Some(n) if n < 0.0 => MAX_SCRIPT_PAGE,
            Some(n) => (n as usize).clamp(1, MAX_SCRIPT_PAGE),
        };
        let page: Vec<Value> = rows.iter().skip(skip).take(size).cloned().collect();
        let next = (skip + page.len() < rows.len()).then(|| (skip + page.len()).to_string());
        let done = charge::QueryWork {
            read: docs.len(),
            loaded: docs.len(),
            ..Default::default()
        };
        self.charge += charge::query(done, page.iter().map(|v| v.to_string().len()));
        Ok((page, next))
    }

    /// Serves one operation a script sent (JSON text), answering JSON text: `accepted`, and the
    /// error or the resource and options its callback receives.
    pub(super) fn serve(&mut self, request: &str) -> String {
        if self.refused || !accepts(self.budget, self.started.elapsed(), self.charge) {
            self.refused = true;
            return json!({"accepted": false}).to_string();
        }
        let answer = match serde_json::from_str::<Op>(request) {
            Ok(op) => self.with_partition(|txn, partition| txn.apply(partition, op)),
            Err(e) => Err(ApiError::bad_request(format!(
                "The script's collection call is malformed: {e}"
            ))),
        };
        match answer {
            Ok((resource, options)) => {
                json!({"accepted": true, "resource": resource, "options": options}).to_string()
            }
            Err(e) => json!({"accepted": true, "err": {
                "number": e.status, "code": e.code(), "message": e.message}})
            .to_string(),
        }
    }

    fn apply(&mut self, partition: &Partition, op: Op) -> Result<(Value, Value), ApiError> {
        let empty = || json!({});
        match op {
            Op::Create {
                link,
                doc,
                upsert,
                no_auto_id,
            } => {
                self.check_collection_link(&link)?;
                let mut map = object(doc)?;
                if !map.contains_key("id") {
                    if no_auto_id {
                        return Err(ApiError::bad_request(
                            "The document has no id and automatic id generation is disabled.",
                        ));
                    }
                    map.insert("id".into(), Value::String(activity_id()));
                }
                let (doc, _) = self.create(partition, map, upsert, None)?;
                Ok((body_value(&doc)?, empty()))
            }
            Op::Replace {
                link,
                doc,
                if_match,
            } => {
                let id = self.document_id(partition, &link)?;
                let doc = self.replace(partition, &id, object(doc)?, if_match.as_deref())?;
                Ok((body_value(&doc)?, empty()))
            }
            Op::Delete { link, if_match } => {
                let id = self.document_id(partition, &link)?;
                self.delete(partition, &id, if_match.as_deref())?;
                Ok((Value::Null, empty()))
            }
            Op::Read { link } => {
                let id = self.document_id(partition, &link)?;
                let doc = self
                    .current(partition, &id)
                    .ok_or_else(ApiError::missing_entity)?;
                self.charge += charge::point_read(doc.body.len());
                Ok((body_value(&doc)?, empty()))
            }
            Op::Query {
                link,
                query,
                page_size,
                continuation,
            } => {
                self.check_collection_link(&link)?;
                let (page, next) =
                    self.query(partition, &query, page_size, continuation.as_deref())?;
                Ok((Value::Array(page), json!({ "continuation": next })))
            }
        }
    }

    /// The container's links, name-based and resource-id-based, without outer slashes.
    fn collection_links(&self) -> [String; 2] {
        let c = &self.target.container;
        [
            self.target.alt_content_path(),
            format!(
                "dbs/{}/colls/{}",
                crate::protocol::ids::encode_rid(&c.rid_bytes[..4]),
                c.rid
            ),
        ]
    }

    fn check_collection_link(&self, link: &str) -> Result<bool, ApiError> {
        let trimmed = link.trim_matches('/');
        match self.collection_links().iter().position(|l| l == trimmed) {
            Some(i) => Ok(i == 1),
            None => Err(ApiError::bad_request(format!(
                "The link {link:?} does not name the stored procedure's collection; a script works on its own collection only."
            ))),
        }
    }

    /// The id of the item a document link names (`<collection link>/docs/<id or _rid>`).
    fn document_id(&mut self, partition: &Partition, link: &str) -> Result<String, ApiError> {
        let trimmed = link.trim_matches('/');
        let (collection, last) = trimmed.rsplit_once("/docs/").ok_or_else(|| {
            ApiError::bad_request(format!("The link {link:?} does not name a document."))
        })?;
        let by_rid = self.check_collection_link(collection)?;
        if !by_rid {
            return Ok(last.to_owned());
        }
        self.items(partition)
            .iter()
            .find(|d| crate::protocol::ids::encode_rid(&d.rid) == last)
            .and_then(|d| body_value(d).ok())
            .and_then(|v| v.get("id").and_then(Value::as_str).map(str::to_owned))
            .ok_or_else(ApiError::missing_entity)
    }

    /// What the transaction read and wrote, to validate and commit.
    pub(super) fn finish(self) -> Writes {
        Writes {
            written: self.written,
            order: self.order,
            reads: self.reads,
            scanned: self.scanned,
        }
    }
}

/// A transaction that committed: what its attempt answered, the commit's LSN, the charge of its
/// operations, and the partition (still write-locked) for the answer's headers.
pub(super) struct Committed<'p, T> {
    pub value: T,
    pub lsn: u64,
    pub charge: f64,
    pub partition: RwLockWriteGuard<'p, Partition>,
}

/// Runs `attempt` in a transaction: first without holding the partition; then, under its write
/// lock, commits when nothing the attempt read has changed, or else runs `attempt` again holding
/// the lock and commits that. An attempt's error commits nothing and carries the partition's
/// headers.
pub(super) fn transact<'p, T>(
    ctx: &'p RequestCtx<'p>,
    target: &'p Target,
    budget: AcceptBudget,
    attempt: &mut dyn FnMut(&mut Txn<'_>) -> Result<T, ApiError>,
) -> Result<Committed<'p, T>, ApiError> {
    let mut txn = Txn::new(ctx, target, budget, Access::Shared);
    let first = attempt(&mut txn);
    let charge = txn.charge;
    let writes = txn.finish();
    let value = match first {
        Ok(v) => v,
        Err(e) => {
            let partition = target.read()?;
            return Err(write_error(ctx, target, &partition, e));
        }
    };
    let mut partition = target.write(ctx)?;
    let (value, charge, writes) = if writes.still_valid(&partition, target) {
        (value, charge, writes)
    } else {
        let held: &Partition = &partition;
        let mut txn = Txn::new(ctx, target, budget, Access::Held(held));
        let again = attempt(&mut txn);
        let charge = txn.charge;
        let writes = txn.finish();
        match again {
            Ok(v) => (v, charge, writes),
            Err(e) => return Err(write_error(ctx, target, &partition, e)),
        }
    };
    let lsn = writes
        .commit(ctx, target, &mut partition)
        .map_err(|e| write_error(ctx, target, &partition, e))?;
    Ok(Committed {
        value,
        lsn,
        charge,
        partition,
    })
}

/// The committed items of the target's logical partition, by id.
fn logical_items(partition: &Partition, target: &Target) -> Vec<(String, Arc<StoredDoc>)> {
    partition
        .scan(
            partition.committed_lsn(),
            None,
            Some(EpkFilter::Key(target.epk)),
            usize::MAX,
        )
        .into_iter()
        .map(|(k, d)| (k.id, d))
        .collect()
}

/// A fingerprint of a logical partition's items (their ids and etags).
fn fingerprint(items: &[(String, Arc<StoredDoc>)]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for (id, doc) in items {
        id.hash(&mut h);
        doc.etag.hash(&mut h);
    }
    h.finish()
}

impl Writes {
    /// Whether everything the transaction read is as it was (so its writes may commit now).
    pub(super) fn still_valid(&self, partition: &Partition, target: &Target) -> bool {
        let reads_hold = self
            .reads
            .iter()
            .all(|(id, etag)| partition.latest(&target.key(id)).map(|d| &d.etag) == etag.as_ref());
        reads_hold
            && self
                .scanned
                .is_none_or(|f| fingerprint(&logical_items(partition, target)) == f)
    }

    /// Commits every write at one LSN (none: the committed LSN); 409, writing nothing, when the
    /// writes break a unique key.
    pub(super) fn commit(
        self,
        ctx: &RequestCtx<'_>,
        target: &Target,
        partition: &mut Partition,
    ) -> Result<u64, ApiError> {
        self.commit_by(ctx, target, partition, commit_all)
    }

    /// As [`Writes::commit`], for a merge procedure's writes: they reach every region, the
    /// serving one included, only once the conflicting versions have met
    /// ([`commit_all_when_met`]).
    pub(super) fn commit_when_met(
        self,
        ctx: &RequestCtx<'_>,
        target: &Target,
        partition: &mut Partition,
    ) -> Result<u64, ApiError> {
        self.commit_by(ctx, target, partition, commit_all_when_met)
    }

    fn commit_by(
        self,
        ctx: &RequestCtx<'_>,
        target: &Target,
        partition: &mut Partition,
        commit: CommitFn,
    ) -> Result<u64, ApiError> {
        let mut writes = Vec::with_capacity(self.order.len());
        for id in &self.order {
            let key = target.key(id);
            let doc = self.written.get(id).cloned().flatten();
            if doc.is_none() && partition.latest(&key).is_none() {
                continue;
            }
            writes.push((key, doc));
        }
        if writes.is_empty() {
            return Ok(partition.committed_lsn());
        }
        target
            .container
            .unique_keys
            .check_writes(partition, &writes)
            .map_err(|(_, e)| e)?;
        Ok(commit(ctx, partition, writes))
    }
}

/// How a transaction's writes are committed.
type CommitFn = fn(&RequestCtx<'_>, &mut Partition, Vec<(DocKey, Option<Arc<StoredDoc>>)>) -> u64;

fn etag_ok(tag: &str, etag: &str) -> bool {
    tag.trim() == "*" || tag.trim() == etag
}

fn object(doc: Value) -> Result<Map<String, Value>, ApiError> {
    match doc {
        Value::Object(map) => Ok(map),
        _ => Err(ApiError::bad_request("The document must be a JSON object.")),
    }
}

/// A stored item's JSON.
pub(super) fn body_value(doc: &StoredDoc) -> Result<Value, ApiError> {
    serde_json::from_slice(&doc.body)
        .map_err(|e| ApiError::new(500, format!("A stored item is not JSON: {e}")))
}

/// A request body as an item: a JSON object (400 otherwise).
pub(super) fn request_item(body: &[u8]) -> Result<Map<String, Value>, ApiError> {
    parse_object(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operations_are_accepted_within_the_time_and_charge_budget() {
        let budget = AcceptBudget {
            time: Duration::from_secs(2),
            charge: 100.0,
        };
        let table = [
            (Duration::ZERO, 0.0, true),
            (Duration::from_millis(1999), 99.9, true),
            (Duration::from_secs(2), 0.0, false),
            (Duration::ZERO, 100.0, false),
        ];
        for (elapsed, spent, want) in table {
            assert_eq!(accepts(budget, elapsed, spent), want, "{elapsed:?} {spent}");
        }
    }
}

//! The store's state as plain data for a data directory (databases, container definitions,
//! items), and putting it back after a restart.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use serde_json::{Map, Value};

use super::container::Container;
use super::item_log::ItemSink;
use super::stored_doc::{DocKey, StoredDoc};
use super::Store;

/// A kept item version: its body, etag, `_rid` bytes and whether it is indexed.
pub(crate) type KeptDoc = (Bytes, String, [u8; 16], bool);

/// A database as kept: its id, `_rid` bytes, body and etag, and its containers.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct DatabaseImage {
    pub id: String,
    pub rid_bytes: [u8; 4],
    pub body: Bytes,
    pub etag: String,
    pub containers: Vec<ContainerImage>,
}

/// A container as kept: its id, `_rid` bytes and definition (body and etag). Its partition key
/// ranges are not kept: after a restart it has the configured number again (splits are undone).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ContainerImage {
    pub id: String,
    pub rid_bytes: [u8; 8],
    pub body: Bytes,
    pub etag: String,
    /// The partition key ranges it was created with (sized from its throughput, or `--partitions`).
    pub partitions: usize,
}

impl Store {
    /// Every database and container definition now.
    pub(crate) fn catalog_image(&self) -> Vec<DatabaseImage> {
        self.catalog
            .databases()
            .iter()
            .map(|db| DatabaseImage {
                id: db.id.clone(),
                rid_bytes: db.rid_bytes,
                body: db.body.clone(),
                etag: db.etag.clone(),
                containers: db
                    .containers()
                    .iter()
                    .map(|c| {
                        let definition = c.definition();
                        ContainerImage {
                            id: c.id.clone(),
                            rid_bytes: c.rid_bytes,
                            body: definition.body,
                            etag: definition.etag,
                            partitions: c.partitions().len(),
                        }
                    })
                    .collect(),
            })
            .collect()
    }

    /// Makes the databases and containers those of `image`: missing ones are created with their
    /// kept resource ids, bodies and etags, ones not in it deleted, changed definitions replaced.
    /// Returns the containers (re)created, whose items are then to be put back.
    pub(crate) fn restore_catalog(
        &self,
        image: &[DatabaseImage],
    ) -> Result<Vec<Arc<Container>>, String> {
        let mut created = Vec::new();
        for db in self.catalog.databases() {
            let kept = image
                .iter()
                .any(|d| d.id == db.id && d.rid_bytes == db.rid_bytes);
            if !kept {
                let _ = self.catalog.delete_database(&db.id);
                self.offers.remove_under(&db.rid_bytes);
            }
        }
        for wanted in image {
            let db = match self.catalog.database(&wanted.id) {
                Some(db) if db.rid_bytes == wanted.rid_bytes => db,
                _ => self
                    .catalog
                    .restore_database(
                        &wanted.id,
                        wanted.rid_bytes,
                        wanted.body.clone(),
                        wanted.etag.clone(),
                    )
                    .map_err(|e| e.message)?,
            };
            for container in db.containers() {
                if !wanted
                    .containers
                    .iter()
                    .any(|c| c.id == container.id && c.rid_bytes == container.rid_bytes)
                {
                    let _ = db.delete_container(&container.id);
                }
            }
            for c in &wanted.containers {
                match db.container(&c.id) {
                    Some(existing) if existing.rid_bytes == c.rid_bytes => {
                        existing.restore_definition(c.body.clone(), c.etag.clone())?;
                    }
                    _ => {
                        let container = self.rebuild_container(wanted.rid_bytes, c)?;
                        let ordinal = ordinal_of(&c.rid_bytes);
                        created.push(
                            db.restore_container(container, ordinal)
                                .map_err(|e| e.message)?,
                        );
                    }
                }
            }
        }
        Ok(created)
    }

    fn rebuild_container(&self, db_rid: [u8; 4], c: &ContainerImage) -> Result<Container, String> {
        let map: Map<String, Value> = serde_json::from_slice(&c.body).map_err(|e| {
            format!(
                "the kept definition of container {:?} is not JSON: {e}",
                c.id
            )
        })?;
        let container = Container::create(
            map,
            c.id.clone(),
            db_rid,
            ordinal_of(&c.rid_bytes),
            c.partitions.clamp(1, 1024),
            self.topology.regions().len(),
        )
        .map_err(|e| format!("the kept container {:?} is refused: {}", c.id, e.message))?;
        container.restore_definition(c.body.clone(), c.etag.clone())?;
        Ok(container)
    }

    /// Every container, by `_rid`.
    pub(crate) fn containers_by_rid(&self) -> std::collections::HashMap<String, Arc<Container>> {
        self.catalog
            .databases()
            .iter()
            .flat_map(|db| db.containers())
            .map(|c| (c.rid.clone(), c))
            .collect()
    }
}

impl Container {
    /// Sets the definition to a kept body and etag.
    fn restore_definition(&self, body: Bytes, etag: String) -> Result<(), String> {
        let map: Map<String, Value> = serde_json::from_slice(&body).map_err(|e| {
            format!(
                "the kept definition of container {:?} is not JSON: {e}",
                self.id
            )
        })?;
        let ttl = map
            .get("defaultTtl")
            .and_then(Value::as_i64)
            .unwrap_or(i64::MIN);
        let mut guard = self
            .definition
            .write()
            .map_err(|_| "a container definition lock was poisoned".to_owned())?;
        *guard = super::Definition { body, etag };
        self.default_ttl.store(ttl, Ordering::Relaxed);
        Ok(())
    }

    /// Makes every partition record its commits in `sink` from now on.
    pub(crate) fn record_to(&self, sink: ItemSink) {
        for partition in self.partitions() {
            match partition.write() {
                Ok(mut p) => p.set_sink(sink.clone()),
                Err(poisoned) => poisoned.into_inner().set_sink(sink.clone()),
            }
        }
    }

    /// Every item in its committed version, partition by partition.
    pub(crate) fn latest_items(&self) -> Vec<(DocKey, Option<Arc<StoredDoc>>)> {
        let mut out = Vec::new();
        for partition in self.partitions() {
            let Ok(p) = partition.read() else { continue };
            if p.is_retired() {
                continue;
            }
            out.extend(
                p.scan(p.committed_lsn(), None, None, usize::MAX)
                    .into_iter()
                    .map(|(key, doc)| (key, Some(doc))),
            );
        }
        out
    }

    /// Puts back one kept item version (`None`: the item is gone), committed in the write region
    /// `hub` and already replicated everywhere. Later items get later resource ids.
    pub(crate) fn restore_item(
        &self,
        key: DocKey,
        doc: Option<KeptDoc>,
        hub: usize,
        regions: usize,
    ) -> Result<(), String> {
        let doc = match doc {
            None => None,
            Some((body, etag, rid, indexed)) => {
                let map: Map<String, Value> = serde_json::from_slice(&body).map_err(|e| {
                    format!("a kept item of container {:?} is not JSON: {e}", self.id)
                })?;
                let (marker, counter) = super::container::item_rid_parts(&rid);
                let range = (0..self.range_ids.len())
                    .find(|&i| super::container::range_marker(&self.range_ids[i]) == marker);
                if let Some(next) = range.and_then(|i| self.next_item.get(i)) {
                    next.fetch_max(counter.saturating_add(1), Ordering::Relaxed);
                }
                // The range holding it now counts above it too (creation order within a range).
                if let Some(next) = self.next_item.get(self.range_index(key.epk)) {
                    next.fetch_max(counter.saturating_add(1), Ordering::Relaxed);
                }
                Some(Arc::new(StoredDoc {
                    unique: self.unique_keys.entries(&map),
                    // Kept as a write keeps them, so the first vector search after a start
                    // costs what later ones do.
                    vectors: super::embeddings::Embeddings::of_item(&map, &self.vector_paths),
                    body,
                    etag,
                    rid,
                    indexed,
                }))
            }
        };
        let index = self.range_index(key.epk);
        let partition = self
            .partition(index)
            .ok_or_else(|| "a kept item has no partition".to_owned())?;
        let mut partition = partition
            .write()
            .map_err(|_| "a partition lock was poisoned".to_owned())?;
        let lags = vec![Duration::ZERO; regions];
        partition.commit(key, doc, hub, tokio::time::Instant::now(), &lags);
        Ok(())
    }
}

/// The creation ordinal a container's `_rid` carries.
fn ordinal_of(rid_bytes: &[u8; 8]) -> u32 {
    let mut ordinal = [0u8; 4];
    ordinal.copy_from_slice(&rid_bytes[4..]);
    u32::from_be_bytes(ordinal) & 0x7fff_ffff
}

//! Databases and their containers, by name (and by `_rid`). Metadata is account-wide: every
//! region sees a database or container as soon as it is created.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, RwLock};

use bytes::Bytes;
use serde_json::{Map, Value};

use super::container::Container;
use super::document::{seal, Sealed};
use crate::protocol::ids::encode_rid;
use crate::protocol::ApiError;

/// A database and its containers.
pub(crate) struct Database {
    pub id: String,
    pub rid_bytes: [u8; 4],
    pub rid: String,
    pub body: Bytes,
    pub etag: String,
    containers: RwLock<BTreeMap<String, Arc<Container>>>,
    next_container: AtomicU32,
}

/// All databases of the account.
#[derive(Default)]
pub(crate) struct Catalog {
    databases: RwLock<BTreeMap<String, Arc<Database>>>,
    next_database: AtomicU32,
}

fn lookup<T>(
    map: &BTreeMap<String, Arc<T>>,
    name_or_rid: &str,
    rid: impl Fn(&T) -> &str,
) -> Option<Arc<T>> {
    map.get(name_or_rid)
        .cloned()
        .or_else(|| map.values().find(|v| rid(v) == name_or_rid).cloned())
}

/// Removes the entry named (or with `_rid`) `name_or_rid`; 404 when there is none.
fn remove<T>(
    map: &mut BTreeMap<String, Arc<T>>,
    name_or_rid: &str,
    rid: impl Fn(&T) -> &str,
) -> Result<(), ApiError> {
    let key = if map.contains_key(name_or_rid) {
        name_or_rid.to_owned()
    } else {
        map.iter()
            .find(|(_, v)| rid(v) == name_or_rid)
            .map(|(k, _)| k.clone())
            .ok_or_else(ApiError::missing_entity)?
    };
    map.remove(&key);
    Ok(())
}

impl Catalog {
    /// Creates a database from a create request's body.
    pub(crate) fn create_database(
        &self,
        map: Map<String, Value>,
        id: String,
    ) -> Result<Arc<Database>, ApiError> {
        let mut dbs = self.databases.write().map_err(|_| poisoned())?;
        if dbs.contains_key(&id) {
            return Err(ApiError::already_exists());
        }
        let ordinal = self.next_database.fetch_add(1, Ordering::Relaxed) + 1;
        let rid_bytes = ordinal.to_be_bytes();
        let rid = encode_rid(&rid_bytes);
        let mut map = map;
        map.insert("_colls".into(), Value::from("colls/"));
        map.insert("_users".into(), Value::from("users/"));
        let Sealed { body, etag } = seal(map, &rid_bytes, format!("dbs/{rid}/"));
        let db = Arc::new(Database {
            id: id.clone(),
            rid_bytes,
            rid,
            body: strip_attachments(body),
            etag,
            containers: RwLock::new(BTreeMap::new()),
            next_container: AtomicU32::new(1),
        });
        dbs.insert(id, db.clone());
        Ok(db)
    }

    /// Puts a database back as a data directory kept it (same `_rid`, body and etag), in place
    /// of any database with its id; new databases get later resource ids.
    pub(super) fn restore_database(
        &self,
        id: &str,
        rid_bytes: [u8; 4],
        body: Bytes,
        etag: String,
    ) -> Result<Arc<Database>, ApiError> {
        let mut dbs = self.databases.write().map_err(|_| poisoned())?;
        self.next_database
            .fetch_max(u32::from_be_bytes(rid_bytes), Ordering::Relaxed);
        let db = Arc::new(Database {
            id: id.to_owned(),
            rid_bytes,
            rid: encode_rid(&rid_bytes),
            body,
            etag,
            containers: RwLock::new(BTreeMap::new()),
            next_container: AtomicU32::new(1),
        });
        dbs.insert(id.to_owned(), db.clone());
        Ok(db)
    }

    /// The database named (or with `_rid`) `name`.
    pub(crate) fn database(&self, name: &str) -> Option<Arc<Database>> {
        let dbs = self.databases.read().ok()?;
        lookup(&dbs, name, |d| d.rid.as_str())
    }

    /// All databases, by id.
    pub(crate) fn databases(&self) -> Vec<Arc<Database>> {
        self.databases
            .read()
            .map(|d| d.values().cloned().collect())
            .unwrap_or_default()
    }

    /// Deletes a database and its containers.
    pub(crate) fn delete_database(&self, name: &str) -> Result<(), ApiError> {
        let mut dbs = self.databases.write().map_err(|_| poisoned())?;
        remove(&mut dbs, name, |d| d.rid.as_str())
    }

    /// The database a request on its containers names; 404/1003 (owner missing) otherwise.
    pub(crate) fn owner_database(&self, db: &str) -> Result<Arc<Database>, ApiError> {
        self.database(db)
            .ok_or_else(|| ApiError::missing_owner(&format!("database {db}")))
    }

    /// The container `coll` of database `db`; a 404 saying which is missing otherwise.
    pub(crate) fn container(&self, db: &str, coll: &str) -> Result<Arc<Container>, ApiError> {
        self.owner_database(db)?
            .container(coll)
            .ok_or_else(|| ApiError::missing_owner(&format!("container {coll} in database {db}")))
    }
}

impl Database {
    /// Adds a container built by `make(ordinal)`; 409 when the id is taken.
    pub(crate) fn add_container(
        &self,
        id: &str,
        make: impl FnOnce(u32) -> Result<Container, ApiError>,
    ) -> Result<Arc<Container>, ApiError> {
        let mut colls = self.containers.write().map_err(|_| poisoned())?;
        if colls.contains_key(id) {
            return Err(ApiError::already_exists());
        }
        let container = Arc::new(make(self.next_container.fetch_add(1, Ordering::Relaxed))?);
        colls.insert(id.to_owned(), container.clone());
        Ok(container)
    }

    /// Puts a container back (built with `ordinal`) in place of any container with its id.
    pub(super) fn restore_container(
        &self,
        container: Container,
        ordinal: u32,
    ) -> Result<Arc<Container>, ApiError> {
        let mut colls = self.containers.write().map_err(|_| poisoned())?;
        self.next_container
            .fetch_max(ordinal.saturating_add(1), Ordering::Relaxed);
        let container = Arc::new(container);
        colls.insert(container.id.clone(), container.clone());
        Ok(container)
    }

    /// The container named (or with `_rid`) `name`.
    pub(crate) fn container(&self, name: &str) -> Option<Arc<Container>> {
        let colls = self.containers.read().ok()?;
        lookup(&colls, name, |c| c.rid.as_str())
    }

    /// All containers, by id.
    pub(crate) fn containers(&self) -> Vec<Arc<Container>> {
        self.containers
            .read()
            .map(|c| c.values().cloned().collect())
            .unwrap_or_default()
    }

    /// Splits range `range_id` of the container named (or with `_rid`) `name`, putting the
    /// rebuilt container in its place; splits of one database run one at a time.
    pub(crate) fn split_container(
        &self,
        name: &str,
        range_id: &str,
    ) -> Result<Arc<Container>, ApiError> {
        let mut colls = self.containers.write().map_err(|_| poisoned())?;
        let current = lookup(&colls, name, |c| c.rid.as_str()).ok_or_else(|| {
            ApiError::missing_owner(&format!("container {name} in database {}", self.id))
        })?;
        let split = Arc::new(current.split_range(range_id)?);
        colls.insert(split.id.clone(), split.clone());
        Ok(split)
    }

    /// Replaces the settings of the container named (or with `_rid`) `name` (see
    /// [`Container::replace_definition`]); under the same lock as a split, so neither loses the
    /// other's change.
    pub(crate) fn replace_container(
        &self,
        name: &str,
        map: Map<String, Value>,
        if_match: Option<&str>,
    ) -> Result<super::Definition, ApiError> {
        let colls = self.containers.write().map_err(|_| poisoned())?;
        let current =
            lookup(&colls, name, |c| c.rid.as_str()).ok_or_else(ApiError::missing_entity)?;
        current.replace_definition(map, if_match)
    }

    /// Deletes a container.
    pub(crate) fn delete_container(&self, name: &str) -> Result<(), ApiError> {
        let mut colls = self.containers.write().map_err(|_| poisoned())?;
        remove(&mut colls, name, |c| c.rid.as_str())
    }
}

fn strip_attachments(body: Bytes) -> Bytes {
    match serde_json::from_slice::<Value>(&body) {
        Ok(Value::Object(mut m)) => {
            m.remove("_attachments");
            Bytes::from(serde_json::to_vec(&m).unwrap_or_default())
        }
        _ => body,
    }
}

fn poisoned() -> ApiError {
    ApiError::new(
        500,
        "The emulator's catalog lock was poisoned by an earlier failure.",
    )
}

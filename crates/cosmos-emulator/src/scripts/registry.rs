//! The scripts of every container, by the container's resource id: created, replaced, deleted
//! and listed in creation order.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

use serde_json::{Map, Value};

use super::definition::{check, seal, Script};
use super::isolation::Isolation;
use crate::protocol::ids::encode_rid;
use crate::protocol::{ApiError, ScriptKind};
use crate::store::Container;

/// The most scripts of one kind a container holds (the service's quota is far lower per kind for
/// most accounts; this bounds what a client can make the emulator keep).
pub(crate) const MAX_SCRIPTS_PER_KIND: usize = 1000;

/// One container's scripts, per kind.
#[derive(Default)]
struct ContainerScripts {
    lists: [RwLock<Vec<Arc<Script>>>; 3],
}

impl ContainerScripts {
    fn list(&self, kind: ScriptKind) -> &RwLock<Vec<Arc<Script>>> {
        &self.lists[match kind {
            ScriptKind::StoredProcedure => 0,
            ScriptKind::Trigger => 1,
            ScriptKind::UserDefinedFunction => 2,
        }]
    }
}

/// Every container's scripts, and where they run.
#[derive(Default)]
pub(crate) struct Scripts {
    containers: RwLock<HashMap<[u8; 8], Arc<ContainerScripts>>>,
    next: AtomicU64,
    isolation: Isolation,
}

fn poisoned() -> ApiError {
    ApiError::new(500, "The scripts' lock was poisoned by an earlier failure.")
}

impl Scripts {
    /// No scripts yet; they will run as `isolation` says.
    pub(crate) fn new(isolation: Isolation) -> Self {
        Self {
            isolation,
            ..Self::default()
        }
    }

    /// Where this emulator's scripts run.
    pub(crate) fn isolation(&self) -> &Isolation {
        &self.isolation
    }

    fn of(&self, container: &Container) -> Result<Arc<ContainerScripts>, ApiError> {
        if let Some(found) = self
            .containers
            .read()
            .map_err(|_| poisoned())?
            .get(&container.rid_bytes)
        {
            return Ok(found.clone());
        }
        let mut all = self.containers.write().map_err(|_| poisoned())?;
        Ok(all.entry(container.rid_bytes).or_default().clone())
    }

    fn new_rid(&self, container: &Container, kind: ScriptKind) -> [u8; 16] {
        let n = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        let mut rid = [0u8; 16];
        rid[..8].copy_from_slice(&container.rid_bytes);
        rid[8..15].copy_from_slice(&n.to_le_bytes()[..7]);
        rid[15] = kind.rid_marker();
        rid
    }

    fn self_link(container: &Container, kind: ScriptKind, rid: &[u8; 16]) -> String {
        format!(
            "dbs/{}/colls/{}/{}/{}/",
            encode_rid(&container.rid_bytes[..4]),
            container.rid,
            kind.segment(),
            encode_rid(rid)
        )
    }

    /// Creates a script: 400 for a bad definition, 409 when the id is taken.
    pub(crate) fn create(
        &self,
        container: &Container,
        kind: ScriptKind,
        map: Map<String, Value>,
    ) -> Result<Arc<Script>, ApiError> {
        let checked = check(kind, &map)?;
        let scripts = self.of(container)?;
        let mut list = scripts.list(kind).write().map_err(|_| poisoned())?;
        if list.iter().any(|s| s.id == checked.id) {
            return Err(ApiError::already_exists());
        }
        if list.len() >= MAX_SCRIPTS_PER_KIND {
            return Err(ApiError::new(
                403,
                format!(
                    "The container holds {MAX_SCRIPTS_PER_KIND} {}, the most the emulator keeps.",
                    kind.segment()
                ),
            ));
        }
        let rid = self.new_rid(container, kind);
        let script = Arc::new(seal(
            kind,
            map,
            checked,
            rid,
            Self::self_link(container, kind, &rid),
        ));
        list.push(script.clone());
        Ok(script)
    }

    /// Replaces a script: 404 when missing, 412 when `if_match` names another version, 400 for a
    /// bad definition or one whose id is not the path's.
    pub(crate) fn replace(
        &self,
        container: &Container,
        kind: ScriptKind,
        id: &str,
        map: Map<String, Value>,
        if_match: Option<&str>,
    ) -> Result<Arc<Script>, ApiError> {
        let checked = check(kind, &map)?;
        let scripts = self.of(container)?;
        let mut list = scripts.list(kind).write().map_err(|_| poisoned())?;
        let at = list
            .iter()
            .position(|s| s.id == id)
            .ok_or_else(ApiError::missing_entity)?;
        if !etag_matches(if_match, &list[at].etag) {
            return Err(ApiError::precondition_failed());
        }
        if checked.id != id {
            return Err(ApiError::bad_request(format!(
                "The id in the body ({}) is not the id in the path ({id}): a script cannot be renamed.",
                checked.id
            )));
        }
        let rid = list[at].rid;
        let script = Arc::new(seal(
            kind,
            map,
            checked,
            rid,
            Self::self_link(container, kind, &rid),
        ));
        list[at] = script.clone();
        Ok(script)
    }

    /// Deletes a script: 404 when missing, 412 when `if_match` names another version.
    pub(crate) fn delete(
        &self,
        container: &Container,
        kind: ScriptKind,
        id: &str,
        if_match: Option<&str>,
    ) -> Result<(), ApiError> {
        let scripts = self.of(container)?;
        let mut list = scripts.list(kind).write().map_err(|_| poisoned())?;
        let at = list
            .iter()
            .position(|s| s.id == id)
            .ok_or_else(ApiError::missing_entity)?;
        if !etag_matches(if_match, &list[at].etag) {
            return Err(ApiError::precondition_failed());
        }
        list.remove(at);
        Ok(())
    }

    /// A script by id (or by its `_rid`).
    pub(crate) fn get(
        &self,
        container: &Container,
        kind: ScriptKind,
        id: &str,
    ) -> Option<Arc<Script>> {
        let scripts = self.of(container).ok()?;
        let list = scripts.list(kind).read().ok()?;
        list.iter()
            .find(|s| s.id == id)
            .or_else(|| list.iter().find(|s| encode_rid(&s.rid) == id))
            .cloned()
    }

    /// A container's scripts of one kind, in creation order.
    pub(crate) fn list(&self, container: &Container, kind: ScriptKind) -> Vec<Arc<Script>> {
        self.of(container)
            .ok()
            .and_then(|s| s.list(kind).read().ok().map(|l| l.clone()))
            .unwrap_or_default()
    }

    /// Every script of the container with `_rid` bytes `rid_bytes`, kind by kind in creation order
    /// (what a data directory keeps).
    pub(crate) fn kept(&self, rid_bytes: &[u8; 8]) -> Vec<Arc<Script>> {
        let Some(scripts) = self
            .containers
            .read()
            .ok()
            .and_then(|all| all.get(rid_bytes).cloned())
        else {
            return Vec::new();
        };
        ScriptKind::ALL
            .into_iter()
            .flat_map(|kind| {
                scripts
                    .list(kind)
                    .read()
                    .map(|l| l.clone())
                    .unwrap_or_default()
            })
            .collect()
    }

    /// Makes the scripts of the container with `_rid` bytes `rid_bytes` those kept (they replace
    /// whatever it had); later scripts get later resource ids.
    pub(crate) fn restore(&self, rid_bytes: [u8; 8], kept: Vec<Script>) -> Result<(), String> {
        let restored = ContainerScripts::default();
        for script in kept {
            let mut counter = [0u8; 8];
            counter[..7].copy_from_slice(&script.rid[8..15]);
            self.next
                .fetch_max(u64::from_le_bytes(counter), Ordering::Relaxed);
            restored
                .list(script.kind)
                .write()
                .map_err(|_| "the scripts' lock was poisoned".to_owned())?
                .push(Arc::new(script));
        }
        self.containers
            .write()
            .map_err(|_| "the scripts' lock was poisoned".to_owned())?
            .insert(rid_bytes, Arc::new(restored));
        Ok(())
    }

    /// Forgets the scripts of every container `keep` says no to (containers that no longer exist).
    pub(crate) fn retain(&self, keep: impl Fn(&[u8; 8]) -> bool) {
        if let Ok(mut all) = self.containers.write() {
            all.retain(|rid, _| keep(rid));
        }
    }

    /// Forgets a deleted container's scripts.
    pub(crate) fn drop_container(&self, rid_bytes: &[u8; 8]) {
        if let Ok(mut all) = self.containers.write() {
            all.remove(rid_bytes);
        }
    }
}

/// Whether an `If-Match` header allows a write to the version with `etag`.
fn etag_matches(if_match: Option<&str>, etag: &str) -> bool {
    if_match.is_none_or(|tag| tag.trim() == "*" || tag.trim() == etag)
}

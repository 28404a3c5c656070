//! Puts what a data directory's records say back into a store and its scripts.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use super::record::{self, ConflictRecord, ItemRecord, Record, ScriptRecord, UserRecord};
use crate::scripts::Scripts;
use crate::store::{Container, Store};

/// Puts kept state back into a store: catalog records replace the catalog (and drop the
/// scripts and users of what it no longer has), scripts and users records replace those of their
/// container or database, item and conflicts records go to their container. A record naming a
/// container or database not known yet is held back (a write can be recorded just before the
/// catalog record of its new container): items and conflicts in order, scripts and users the
/// latest.
pub(super) struct Loader<'a> {
    store: &'a Store,
    scripts: &'a Scripts,
    token: &'a dyn Fn(&str) -> String,
    containers: HashMap<String, Arc<Container>>,
    databases: HashSet<String>,
    held: HashMap<String, Vec<ItemRecord>>,
    held_scripts: HashMap<String, Vec<ScriptRecord>>,
    held_users: HashMap<String, Vec<UserRecord>>,
    held_conflicts: HashMap<String, Vec<HeldConflicts>>,
}

/// A conflicts record held back: its counter, conflicts added and ids removed.
type HeldConflicts = (u64, Vec<ConflictRecord>, Vec<String>);

/// The keys of `held` that `known` has.
fn known_keys<T>(held: &HashMap<String, T>, known: impl Fn(&str) -> bool) -> Vec<String> {
    held.keys().filter(|k| known(k)).cloned().collect()
}

impl<'a> Loader<'a> {
    /// A loader into `store` and `scripts`; `token` makes a kept permission's resource token.
    pub(super) fn new(
        store: &'a Store,
        scripts: &'a Scripts,
        token: &'a dyn Fn(&str) -> String,
    ) -> Self {
        Loader {
            store,
            scripts,
            token,
            containers: HashMap::new(),
            databases: HashSet::new(),
            held: HashMap::new(),
            held_scripts: HashMap::new(),
            held_users: HashMap::new(),
            held_conflicts: HashMap::new(),
        }
    }

    /// The messages about records held back and never placed (their container or database
    /// is gone).
    pub(super) fn leftovers(&self) -> Vec<String> {
        let mut messages = Vec::new();
        let held: usize = self.held.values().map(Vec::len).sum();
        if held > 0 {
            messages.push(format!(
                "{held} item writes name containers that no longer exist; dropped"
            ));
        }
        let held = self.held_scripts.len() + self.held_users.len();
        if held > 0 {
            messages.push(format!(
                "{held} records of scripts or users name containers or databases that no longer exist; dropped"
            ));
        }
        let held: usize = self.held_conflicts.values().map(Vec::len).sum();
        if held > 0 {
            messages.push(format!(
                "{held} records of conflicts name containers that no longer exist; dropped"
            ));
        }
        messages
    }

    pub(super) fn apply(&mut self, record: Record) -> Result<(), String> {
        match record {
            Record::Catalog { databases, offers } => {
                let images = record::database_images(&databases)?;
                self.store.restore_catalog(&images)?;
                self.store.offers.restore(record::offers(&offers)?);
                self.containers = self.store.containers_by_rid();
                self.databases = self
                    .store
                    .catalog
                    .databases()
                    .iter()
                    .map(|d| d.rid.clone())
                    .collect();
                let rids: HashSet<[u8; 8]> =
                    self.containers.values().map(|c| c.rid_bytes).collect();
                self.scripts.retain(|rid| rids.contains(rid));
                self.store
                    .users
                    .retain_databases(|db| self.databases.contains(db));
                for rid in known_keys(&self.held, |k| self.containers.contains_key(k)) {
                    for item in self.held.remove(&rid).unwrap_or_default() {
                        self.put(&rid, &item)?;
                    }
                }
                for rid in known_keys(&self.held_scripts, |k| self.containers.contains_key(k)) {
                    let scripts = self.held_scripts.remove(&rid).unwrap_or_default();
                    self.put_scripts(&rid, &scripts)?;
                }
                for rid in known_keys(&self.held_conflicts, |k| self.containers.contains_key(k)) {
                    for (next, added, removed) in
                        self.held_conflicts.remove(&rid).unwrap_or_default()
                    {
                        self.put_conflicts(&rid, next, &added, &removed)?;
                    }
                }
                for rid in known_keys(&self.held_users, |k| self.databases.contains(k)) {
                    let users = self.held_users.remove(&rid).unwrap_or_default();
                    self.put_users(&rid, &users)?;
                }
                Ok(())
            }
            Record::Scripts { container, scripts } => {
                if self.containers.contains_key(&container) {
                    self.put_scripts(&container, &scripts)
                } else {
                    self.held_scripts.insert(container, scripts);
                    Ok(())
                }
            }
            Record::Users { database, users } => {
                if self.databases.contains(&database) {
                    self.put_users(&database, &users)
                } else {
                    self.held_users.insert(database, users);
                    Ok(())
                }
            }
            Record::Items { container, writes } => {
                if self.containers.contains_key(&container) {
                    for item in &writes {
                        self.put(&container, item)?;
                    }
                } else {
                    self.held.entry(container).or_default().extend(writes);
                }
                Ok(())
            }
            Record::Conflicts {
                container,
                next,
                added,
                removed,
            } => {
                if self.containers.contains_key(&container) {
                    self.put_conflicts(&container, next, &added, &removed)
                } else {
                    self.held_conflicts
                        .entry(container)
                        .or_default()
                        .push((next, added, removed));
                    Ok(())
                }
            }
            Record::End => Ok(()),
        }
    }

    fn put_scripts(&self, container: &str, scripts: &[ScriptRecord]) -> Result<(), String> {
        let Some(c) = self.containers.get(container) else {
            return Ok(());
        };
        self.scripts.restore(c.rid_bytes, record::scripts(scripts)?)
    }

    fn put_conflicts(
        &self,
        container: &str,
        next: u64,
        added: &[ConflictRecord],
        removed: &[String],
    ) -> Result<(), String> {
        let Some(c) = self.containers.get(container) else {
            return Ok(());
        };
        c.conflicts.restore(next, record::conflicts(added)?);
        for id in removed {
            c.conflicts.restore_removal(id);
        }
        Ok(())
    }

    fn put_users(&self, database: &str, users: &[UserRecord]) -> Result<(), String> {
        self.store
            .users
            .restore(database, record::users(users)?, self.token)
    }

    fn put(&self, container: &str, item: &ItemRecord) -> Result<(), String> {
        let Some(c) = self.containers.get(container) else {
            return Ok(());
        };
        let (key, doc) = record::item(item)?;
        c.restore_item(
            key,
            doc,
            self.store.topology.hub(),
            self.store.topology.regions().len(),
        )
    }
}

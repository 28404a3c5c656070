//! A data directory (`--data-dir`): databases, containers, items, offers, scripts, users and
//! permissions survive a restart.
//!
//! The directory holds one snapshot (`snapshot-G`, the state when log `G` began) and the logs
//! from it on (`log-G`, `log-G+1` during a compaction). A log record is the whole catalog after a
//! change (databases, container definitions, offers), the scripts of one container or the users
//! and permissions of one database after a change to them, or the item writes of one commit,
//! queued under the partition's lock so the log's order per item is the commit order. A write is
//! answered only once its records are fsync'd; one fsync covers every record queued meanwhile.
//! Loading applies the snapshot, then each log, stopping at a torn tail (a record cut short or
//! failing its checksum: a write that was never answered), which is dropped with a message.
//! Each start writes a new snapshot and log; a log past the compaction size is folded into a new
//! snapshot while writes go on.

mod frame;
mod journal;
mod record;

use std::collections::{HashMap, HashSet};
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use http::Method;

pub use journal::Journal;
use record::{ItemRecord, Record, ScriptRecord, UserRecord};

use crate::protocol::route::Resource;
use crate::scripts::Scripts;
use crate::store::item_log::{ItemLog, ItemSink};
use crate::store::{Container, Store};

/// What a data directory keeps: the store and every container's scripts.
pub trait State: Send + Sync + 'static {
    fn store(&self) -> &Store;
    fn scripts(&self) -> &Scripts;
}

/// What a request that succeeded changed, as a data directory records it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change<'r> {
    /// Databases, containers or offers: the whole catalog is recorded.
    Catalog,
    /// The scripts of container `coll` of database `db` (by id or `_rid`).
    Scripts { db: &'r str, coll: &'r str },
    /// The users or permissions of database `db` (by id or `_rid`).
    Users { db: &'r str },
}

/// The log size past which it is folded into a new snapshot, unless configured otherwise.
pub const DEFAULT_COMPACT_BYTES: u64 = 64 << 20;

/// An open data directory.
pub struct DataDir {
    dir: PathBuf,
    journal: Arc<Journal>,
    generation: AtomicU64,
    compacting: AtomicBool,
    compact_bytes: u64,
    /// Orders catalog records as the changes they follow.
    catalog_lock: std::sync::Mutex<()>,
}

impl std::fmt::Debug for DataDir {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DataDir").field("dir", &self.dir).finish()
    }
}

/// What loading found: the messages to show (torn tails dropped and the like) and counts.
#[derive(Debug, Default)]
pub struct LoadReport {
    pub messages: Vec<String>,
    pub records: u64,
}

/// Files of one kind by generation.
fn generations(dir: &Path, prefix: &str) -> Result<Vec<u64>, String> {
    let mut out = Vec::new();
    let entries = fs::read_dir(dir)
        .map_err(|e| format!("cannot list the data directory {}: {e}", dir.display()))?;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if let Some(g) = name
            .strip_prefix(prefix)
            .and_then(|g| u64::from_str_radix(g, 16).ok())
        {
            out.push(g);
        }
    }
    out.sort_unstable();
    Ok(out)
}

fn snapshot_path(dir: &Path, g: u64) -> PathBuf {
    dir.join(format!("snapshot-{g:016x}"))
}

fn log_path(dir: &Path, g: u64) -> PathBuf {
    dir.join(format!("log-{g:016x}"))
}

fn sync_dir(dir: &Path) -> Result<(), String> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| format!("cannot sync the data directory {}: {e}", dir.display()))
}

/// Puts kept state back into a store: catalog records replace the catalog (and drop the
/// scripts and users of what it no longer has), scripts and users records replace those of their
/// container or database, item records go to their container. A record naming a container or
/// database not known yet is held back (a write can be recorded just before the catalog record
/// of its new container): items in order, scripts and users the latest.
struct Loader<'a> {
    store: &'a Store,
    scripts: &'a Scripts,
    token: &'a dyn Fn(&str) -> String,
    containers: HashMap<String, Arc<Container>>,
    databases: HashSet<String>,
    held: HashMap<String, Vec<ItemRecord>>,
    held_scripts: HashMap<String, Vec<ScriptRecord>>,
    held_users: HashMap<String, Vec<UserRecord>>,
}

/// The keys of `held` that `known` has.
fn known_keys<T>(held: &HashMap<String, T>, known: impl Fn(&str) -> bool) -> Vec<String> {
    held.keys().filter(|k| known(k)).cloned().collect()
}

impl Loader<'_> {
    fn apply(&mut self, record: Record) -> Result<(), String> {
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
            Record::End => Ok(()),
        }
    }

    fn put_scripts(&self, container: &str, scripts: &[ScriptRecord]) -> Result<(), String> {
        let Some(c) = self.containers.get(container) else {
            return Ok(());
        };
        self.scripts.restore(c.rid_bytes, record::scripts(scripts)?)
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

/// Reads one file's records into `loader`; a torn tail is reported in `report`, a whole record
/// that does not parse stops the load.
fn load_file(
    path: &Path,
    loader: &mut Loader<'_>,
    report: &mut LoadReport,
) -> Result<bool, String> {
    let bytes = fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let decoded = frame::decode(&bytes);
    let mut ended = false;
    for payload in &decoded.records {
        let record: Record = serde_json::from_slice(payload).map_err(|e| {
            format!(
                "{} holds a whole record this emulator cannot read ({e}); move the directory away to start empty",
                path.display()
            )
        })?;
        ended = record == Record::End;
        loader.apply(record)?;
        report.records += 1;
    }
    if let Some(why) = decoded.torn {
        report.messages.push(format!(
            "{}: dropped a torn tail of {} bytes at offset {} ({why}); it held a write that was never acknowledged",
            path.display(),
            bytes.len() - decoded.good_len,
            decoded.good_len
        ));
        return Ok(false);
    }
    Ok(ended)
}

impl DataDir {
    /// Opens (creating it when missing) the data directory `dir`, puts what it keeps into
    /// `store` and `scripts`, writes a new snapshot of it and starts a new log. `token` makes a
    /// kept permission's resource token from its identity (with the key the emulator runs with).
    pub fn open(
        dir: &Path,
        store: &Store,
        scripts: &Scripts,
        token: &dyn Fn(&str) -> String,
        compact_bytes: u64,
    ) -> Result<(Arc<DataDir>, LoadReport), String> {
        fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create the data directory {}: {e}", dir.display()))?;
        for entry in fs::read_dir(dir).map_err(|e| e.to_string())?.flatten() {
            if entry.file_name().to_string_lossy().ends_with(".tmp") {
                let _ = fs::remove_file(entry.path());
            }
        }
        let mut report = LoadReport::default();
        let mut loader = Loader {
            store,
            scripts,
            token,
            containers: HashMap::new(),
            databases: HashSet::new(),
            held: HashMap::new(),
            held_scripts: HashMap::new(),
            held_users: HashMap::new(),
        };
        let snapshots = generations(dir, "snapshot-")?;
        let logs = generations(dir, "log-")?;
        // The newest complete snapshot; one that is not complete is passed over.
        let mut base = None;
        for &g in snapshots.iter().rev() {
            let bytes = fs::read(snapshot_path(dir, g)).map_err(|e| e.to_string())?;
            let decoded = frame::decode(&bytes);
            let complete = decoded.torn.is_none()
                && decoded
                    .records
                    .last()
                    .is_some_and(|r| serde_json::from_slice::<Record>(r).ok() == Some(Record::End));
            if complete {
                base = Some(g);
                break;
            }
            report.messages.push(format!(
                "{}: not a complete snapshot, passed over",
                snapshot_path(dir, g).display()
            ));
        }
        if let Some(g) = base {
            load_file(&snapshot_path(dir, g), &mut loader, &mut report)?;
        }
        let from = base.unwrap_or(0);
        for &g in logs.iter().filter(|&&g| g >= from) {
            load_file(&log_path(dir, g), &mut loader, &mut report)?;
        }
        let held: usize = loader.held.values().map(Vec::len).sum();
        if held > 0 {
            report.messages.push(format!(
                "{held} item writes name containers that no longer exist; dropped"
            ));
        }
        let held = loader.held_scripts.len() + loader.held_users.len();
        if held > 0 {
            report.messages.push(format!(
                "{held} records of scripts or users name containers or databases that no longer exist; dropped"
            ));
        }
        let next = snapshots.iter().chain(&logs).max().map_or(1, |g| g + 1);
        write_snapshot(dir, next, store, scripts)?;
        let path = log_path(dir, next);
        let file = new_log(&path)?;
        sync_dir(dir)?;
        remove_before(dir, next);
        let journal = Journal::start(file, path, 0)
            .map_err(|e| format!("cannot start the data directory's writer: {e}"))?;
        let data = Arc::new(DataDir {
            dir: dir.to_owned(),
            journal,
            generation: AtomicU64::new(next),
            compacting: AtomicBool::new(false),
            compact_bytes: compact_bytes.max(1),
            catalog_lock: std::sync::Mutex::new(()),
        });
        for container in store.containers_by_rid().values() {
            data.record(container);
        }
        Ok((data, report))
    }

    /// Makes `container`'s partitions record their commits here.
    pub fn record(&self, container: &Container) {
        let log: Arc<dyn ItemLog> = self.journal.clone();
        container.record_to(ItemSink::new(log, &container.rid));
    }

    /// The journal.
    pub fn journal(&self) -> &Arc<Journal> {
        &self.journal
    }

    /// After a request that may have changed something: records what `change` names as it is
    /// now (the whole catalog, a container's scripts or a database's users), then waits until
    /// everything recorded before now is on disk. Err when the log cannot be written.
    pub async fn settle(
        &self,
        store: &Store,
        scripts: &Scripts,
        change: Option<Change<'_>>,
    ) -> Result<(), String> {
        if let Some(change) = change {
            // Each record is the state after the change, taken and queued in one step: the last
            // record of a thing holds every change to it acknowledged before.
            let _order = self.catalog_lock.lock().unwrap_or_else(|p| p.into_inner());
            match change {
                Change::Catalog => {
                    for container in store.containers_by_rid().values() {
                        self.record(container);
                    }
                    self.journal.append(&Record::catalog(
                        &store.catalog_image(),
                        &store.offers.list(),
                    ));
                }
                Change::Scripts { db, coll } => {
                    // Gone meanwhile: the catalog record of its deletion drops its scripts.
                    if let Ok(c) = store.catalog.container(db, coll) {
                        self.journal
                            .append(&Record::scripts(&c.rid, &scripts.kept(&c.rid_bytes)));
                    }
                }
                Change::Users { db } => {
                    if let Some(d) = store.catalog.database(db) {
                        self.journal
                            .append(&Record::users(&d.rid, &store.users.kept(&d.rid)));
                    }
                }
            }
        }
        self.journal.durable(self.journal.queued()).await
    }

    /// Whether the log has grown past the compaction size and no compaction runs; if so the
    /// caller is to run [`DataDir::compact`].
    pub fn wants_compaction(&self) -> bool {
        self.journal.log_bytes() >= self.compact_bytes
            && self
                .compacting
                .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
    }

    /// Folds the log into a new snapshot: writes continue in a new log at once; the snapshot of
    /// the state after the switch is written beside it, then the older files go. Run only after
    /// [`DataDir::wants_compaction`] said so.
    pub async fn compact(self: Arc<Self>, state: impl State) {
        let next = self.generation.load(Ordering::Acquire) + 1;
        let result = async {
            let path = log_path(&self.dir, next);
            let file = new_log(&path)?;
            sync_dir(&self.dir)?;
            let before = self.journal.rotate(file, path);
            self.journal.durable(before).await?;
            let dir = self.dir.clone();
            tokio::task::spawn_blocking(move || {
                write_snapshot(&dir, next, state.store(), state.scripts())?;
                remove_before(&dir, next);
                Ok::<(), String>(())
            })
            .await
            .map_err(|e| e.to_string())?
        }
        .await;
        match result {
            Ok(()) => self.generation.store(next, Ordering::Release),
            Err(e) => tracing::error!("the data directory's compaction failed: {e}"),
        }
        self.compacting.store(false, Ordering::Release);
    }

    /// Stops the writer once what is queued is written.
    pub fn close(&self) {
        self.journal.stop();
    }
}

fn new_log(path: &Path) -> Result<File, String> {
    OpenOptions::new()
        .create(true)
        .write(true)
        .truncate(true)
        .open(path)
        .map_err(|e| format!("cannot create {}: {e}", path.display()))
}

/// Writes `snapshot-g` (through a temporary file, fsync'd, then renamed): the catalog, then every
/// container's scripts and every database's users, then the items.
fn write_snapshot(dir: &Path, g: u64, store: &Store, scripts: &Scripts) -> Result<(), String> {
    let tmp = dir.join(format!("snapshot-{g:016x}.tmp"));
    let fail = |e: std::io::Error| format!("cannot write the snapshot {}: {e}", tmp.display());
    let mut file = std::io::BufWriter::new(File::create(&tmp).map_err(fail)?);
    let put = |record: &Record, file: &mut std::io::BufWriter<File>| -> Result<(), String> {
        let payload = serde_json::to_vec(record).map_err(|e| e.to_string())?;
        let mut framed = Vec::with_capacity(payload.len() + 8);
        frame::encode(&payload, &mut framed);
        file.write_all(&framed).map_err(fail)
    };
    let catalog = store.catalog_image();
    put(&Record::catalog(&catalog, &store.offers.list()), &mut file)?;
    let containers = store.containers_by_rid();
    for container in containers.values() {
        let kept = scripts.kept(&container.rid_bytes);
        if !kept.is_empty() {
            put(&Record::scripts(&container.rid, &kept), &mut file)?;
        }
    }
    for db in store.users.databases() {
        let kept = store.users.kept(&db);
        if !kept.is_empty() {
            put(&Record::users(&db, &kept), &mut file)?;
        }
    }
    for db in &catalog {
        for image in &db.containers {
            let Some(container) = containers.values().find(|c| c.rid_bytes == image.rid_bytes)
            else {
                continue;
            };
            for chunk in container.latest_items().chunks(1024) {
                put(&Record::items(&container.rid, chunk), &mut file)?;
            }
        }
    }
    put(&Record::End, &mut file)?;
    let file = file.into_inner().map_err(|e| fail(e.into_error()))?;
    file.sync_all().map_err(fail)?;
    drop(file);
    fs::rename(&tmp, snapshot_path(dir, g)).map_err(fail)?;
    sync_dir(dir)
}

/// Removes the snapshots and logs older than generation `g`.
fn remove_before(dir: &Path, g: u64) {
    for prefix in ["snapshot-", "log-"] {
        for old in generations(dir, prefix).unwrap_or_default() {
            if old < g {
                let path = dir.join(format!("{prefix}{old:016x}"));
                if let Err(e) = fs::remove_file(&path) {
                    tracing::warn!("cannot remove {}: {e}", path.display());
                }
            }
        }
    }
}

/// What a request that succeeded changed, if anything a data directory records apart from item
/// writes (which their partitions record): databases, containers or offers; a container's
/// scripts (not a stored procedure's run, a POST to the procedure itself); a database's users or
/// permissions. Queries change nothing.
pub fn change_of<'r>(
    method: &Method,
    resource: &'r Resource,
    is_query: bool,
) -> Option<Change<'r>> {
    let writes = matches!(
        *method,
        Method::POST | Method::PUT | Method::DELETE | Method::PATCH
    );
    if !writes || is_query {
        return None;
    }
    match resource {
        Resource::Databases
        | Resource::Database { .. }
        | Resource::Containers { .. }
        | Resource::Container { .. }
        | Resource::Offers
        | Resource::Offer { .. } => Some(Change::Catalog),
        Resource::Scripts { db, coll, .. } => Some(Change::Scripts { db, coll }),
        Resource::Script { db, coll, .. } if *method != Method::POST => {
            Some(Change::Scripts { db, coll })
        }
        Resource::Users { db }
        | Resource::User { db, .. }
        | Resource::Permissions { db, .. }
        | Resource::Permission { db, .. } => Some(Change::Users { db }),
        _ => None,
    }
}

/// Whether a request may have written anything (only reads are answered without waiting).
pub fn may_write(method: &Method) -> bool {
    !matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_request_changes() {
        use crate::protocol::ScriptKind;
        let db = Resource::Database { db: "d".into() };
        let items = Resource::Items {
            db: "d".into(),
            coll: "c".into(),
        };
        let sprocs = Resource::Scripts {
            db: "d".into(),
            coll: "c".into(),
            kind: ScriptKind::StoredProcedure,
        };
        let sproc = Resource::Script {
            db: "d".into(),
            coll: "c".into(),
            kind: ScriptKind::StoredProcedure,
            id: "s".into(),
        };
        let udf = Resource::Script {
            db: "d".into(),
            coll: "c".into(),
            kind: ScriptKind::UserDefinedFunction,
            id: "u".into(),
        };
        let user = Resource::User {
            db: "d".into(),
            user: "u".into(),
        };
        let permissions = Resource::Permissions {
            db: "d".into(),
            user: "u".into(),
        };
        let permission = Resource::Permission {
            db: "d".into(),
            user: "u".into(),
            id: "p".into(),
        };
        let scripts = Some(Change::Scripts { db: "d", coll: "c" });
        let users = Some(Change::Users { db: "d" });
        let cases = [
            (
                Method::POST,
                Resource::Databases,
                false,
                Some(Change::Catalog),
            ),
            (Method::POST, Resource::Databases, true, None),
            (Method::GET, Resource::Databases, false, None),
            (Method::DELETE, db.clone(), false, Some(Change::Catalog)),
            (
                Method::PUT,
                Resource::Offer { id: "x".into() },
                false,
                Some(Change::Catalog),
            ),
            (Method::POST, items, false, None),
            (Method::POST, sprocs.clone(), false, scripts),
            (Method::POST, sprocs, true, None),
            (Method::PUT, sproc.clone(), false, scripts),
            (Method::DELETE, udf.clone(), false, scripts),
            (Method::GET, udf, false, None),
            // Running a stored procedure writes items, not scripts.
            (Method::POST, sproc, false, None),
            (
                Method::POST,
                Resource::Users { db: "d".into() },
                false,
                users,
            ),
            (Method::POST, Resource::Users { db: "d".into() }, true, None),
            (Method::PUT, user.clone(), false, users),
            (Method::DELETE, user.clone(), false, users),
            (Method::GET, user, false, None),
            (Method::POST, permissions, false, users),
            (Method::PUT, permission.clone(), false, users),
            (Method::DELETE, permission, false, users),
        ];
        for (method, resource, query, expected) in cases {
            assert_eq!(
                change_of(&method, &resource, query),
                expected,
                "{method} {resource:?} query={query}"
            );
        }
        assert!(!may_write(&Method::GET) && may_write(&Method::POST) && may_write(&Method::DELETE));
    }
}

//! A data directory (`--data-dir`): databases, containers, items, offers, scripts, users,
//! permissions and conflicts feeds survive a restart.
//!
//! The directory holds one snapshot (`snapshot-G`, the state when log `G` began) and the logs
//! from it on (`log-G`, `log-G+1` during a compaction). A log record is the whole catalog after a
//! change (databases, container definitions, offers), the scripts of one container or the users
//! and permissions of one database after a change to them, the item writes of one commit,
//! queued under the partition's lock so the log's order per item is the commit order, or one
//! conflict added to or deleted from a container's conflicts feed, queued under the feed's lock. A write is
//! answered only once its records are fsync'd; one fsync covers every record queued meanwhile.
//!
//! Loading ([`load`]) applies the snapshot, then each log. A torn tail (the last record cut short
//! by a crash, nothing whole after it: a write that was never answered) is dropped with a
//! message. Anything else wrong ([`classify`]: a damaged record, a damaged snapshot, a missing
//! snapshot or log) refuses the start, naming the file and offset, and changes nothing; with
//! `recover` the history up to the first damage is loaded and the damaged files are moved into
//! `damaged-<seconds>/` ([`dir`]), never deleted.
//!
//! Each start writes a new snapshot and log; a log past the compaction size is folded into a new
//! snapshot while writes go on. A snapshot ([`snapshot`]) is written under a temporary name,
//! fsync'd, read back and checked, renamed and the directory fsync'd before the files it
//! replaces are removed.

mod classify;
mod dir;
mod frame;
mod journal;
mod load;
mod loader;
mod record;
mod snapshot;

use std::fs::{self, File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use http::Method;

use dir::{log_path, sync_dir};
pub(crate) use journal::Journal;
use loader::Loader;
use record::Record;

use crate::protocol::route::Resource;
use crate::scripts::Scripts;
use crate::store::conflicts::{ConflictJournal, ConflictSink};
use crate::store::item_log::{ItemLog, ItemSink};
use crate::store::{Container, Store};

/// What a data directory keeps: the store and every container's scripts.
pub(crate) trait State: Send + Sync + 'static {
    fn store(&self) -> &Store;
    fn scripts(&self) -> &Scripts;
}

/// What a request that succeeded changed, as a data directory records it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Change<'r> {
    /// Databases, containers or offers: the whole catalog is recorded.
    Catalog,
    /// The scripts of container `coll` of database `db` (by id or `_rid`).
    Scripts { db: &'r str, coll: &'r str },
    /// The users or permissions of database `db` (by id or `_rid`).
    Users { db: &'r str },
}

/// The log size past which it is folded into a new snapshot, unless configured otherwise.
pub(crate) const DEFAULT_COMPACT_BYTES: u64 = 64 << 20;

/// An open data directory.
pub(crate) struct DataDir {
    dir: PathBuf,
    journal: Arc<Journal>,
    generation: AtomicU64,
    compacting: AtomicBool,
    compact_bytes: u64,
    /// Orders catalog records as the changes they follow.
    catalog_lock: std::sync::Mutex<()>,
    /// The directory's lock file, held while this emulator uses it (released by [`DataDir::close`]).
    held: std::sync::Mutex<Option<File>>,
}

impl std::fmt::Debug for DataDir {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DataDir").field("dir", &self.dir).finish()
    }
}

/// What loading found: the messages to show (torn tails dropped and the like) and counts.
#[derive(Debug, Default)]
pub(crate) struct LoadReport {
    pub messages: Vec<String>,
    pub records: u64,
}

impl DataDir {
    /// Opens (creating it when missing) the data directory `dir`, puts what it keeps into
    /// `store` and `scripts`, writes a new snapshot of it and starts a new log. `token` makes a
    /// kept permission's resource token from its identity (with the key the emulator runs with).
    /// A damaged or missing file is Err (naming it; nothing in the directory is changed), unless
    /// `recover`: then what comes before the first damage is loaded and the damaged files are
    /// moved aside (see [`load`]).
    pub(crate) fn open(
        dir: &Path,
        store: &Store,
        scripts: &Scripts,
        token: &dyn Fn(&str) -> String,
        compact_bytes: u64,
        recover: bool,
    ) -> Result<(Arc<DataDir>, LoadReport), String> {
        fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create the data directory {}: {e}", dir.display()))?;
        let held = dir::hold(dir)?;
        let mut report = LoadReport::default();
        let mut loader = Loader::new(store, scripts, token);
        let next = load::load(dir, &mut loader, recover, &mut report)?;
        dir::remove_temporary(dir);
        snapshot::write(dir, next, store, scripts)?;
        let path = log_path(dir, next);
        let file = new_log(&path)?;
        sync_dir(dir)?;
        dir::remove_before(dir, next);
        let journal = Journal::start(file, path, 0)
            .map_err(|e| format!("cannot start the data directory's writer: {e}"))?;
        let data = Arc::new(DataDir {
            dir: dir.to_owned(),
            journal,
            generation: AtomicU64::new(next),
            compacting: AtomicBool::new(false),
            compact_bytes: compact_bytes.max(1),
            catalog_lock: std::sync::Mutex::new(()),
            held: std::sync::Mutex::new(Some(held)),
        });
        for container in store.containers_by_rid().values() {
            data.record(container);
        }
        Ok((data, report))
    }

    /// Makes `container`'s partitions record their commits here, and its conflicts feed its
    /// changes.
    pub(crate) fn record(&self, container: &Container) {
        let log: Arc<dyn ItemLog> = self.journal.clone();
        container.record_to(ItemSink::new(log, &container.rid));
        let log: Arc<dyn ConflictJournal> = self.journal.clone();
        container
            .conflicts
            .record_to(ConflictSink::new(log, &container.rid));
    }

    /// After a request that may have changed something: records what `change` names as it is
    /// now (the whole catalog, a container's scripts or a database's users), then waits until
    /// everything recorded before now is on disk. Err when the log cannot be written.
    pub(crate) async fn settle(
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

    /// Why the data directory can no longer be written, once it cannot.
    pub(crate) fn failure(&self) -> Option<String> {
        self.journal.failure()
    }

    /// Whether the log has grown past the compaction size and no compaction runs; if so the
    /// caller is to run [`DataDir::compact`].
    pub(crate) fn wants_compaction(&self) -> bool {
        self.journal.log_bytes() >= self.compact_bytes
            && self
                .compacting
                .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
    }

    /// Folds the log into a new snapshot: writes continue in a new log at once; the snapshot of
    /// the state after the switch is written beside it, then the older files go. Run only after
    /// [`DataDir::wants_compaction`] said so.
    pub(crate) async fn compact(self: Arc<Self>, state: impl State) {
        let next = self.generation.load(Ordering::Acquire) + 1;
        let result = async {
            let path = log_path(&self.dir, next);
            let file = new_log(&path)?;
            sync_dir(&self.dir)?;
            let before = self.journal.rotate(file, path);
            // Writes go to log `next` from now on, whatever becomes of the snapshot: the next
            // compaction starts a log after it (never over it).
            self.generation.store(next, Ordering::Release);
            self.journal.durable(before).await?;
            let dir = self.dir.clone();
            tokio::task::spawn_blocking(move || {
                snapshot::write(&dir, next, state.store(), state.scripts())?;
                dir::remove_before(&dir, next);
                Ok::<(), String>(())
            })
            .await
            .map_err(|e| e.to_string())?
        }
        .await;
        if let Err(e) = result {
            tracing::error!(
                "the data directory's compaction failed, its snapshot and logs are kept as they were: {e}"
            );
        }
        self.compacting.store(false, Ordering::Release);
    }

    /// Stops the writer once what is queued is written.
    pub(crate) fn close(&self) {
        self.journal.stop();
        // Another emulator may open the directory from here on.
        self.held.lock().unwrap_or_else(|p| p.into_inner()).take();
    }
}

/// Creates log file `path`, which must not exist yet (a log is never started over another).
fn new_log(path: &Path) -> Result<File, String> {
    OpenOptions::new()
        .create_new(true)
        .write(true)
        .open(path)
        .map_err(|e| format!("cannot create {}: {e}", path.display()))
}

/// What a request that succeeded changed, if anything a data directory records apart from item
/// writes (which their partitions record): databases, containers or offers; a container's
/// scripts (not a stored procedure's run, a POST to the procedure itself); a database's users or
/// permissions. Queries change nothing.
pub(crate) fn change_of<'r>(
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
pub(crate) fn may_write(method: &Method) -> bool {
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

//! The append-only log: records are queued in memory by whoever commits, and one writer thread
//! appends what has queued and fsyncs it, so concurrent writes share an fsync (group commit).
//! A request is answered only once the records queued before it finished are on disk.

use std::fs::File;
use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex};

use tokio::sync::watch;

use super::frame;
use super::record::Record;
use crate::store::conflicts::ConflictJournal;
use crate::store::item_log::ItemLog;
use crate::store::{DocKey, StoredDoc};

/// What has reached the disk.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Progress {
    /// Records up to this sequence number are fsync'd.
    pub durable: u64,
    /// Set when a write or fsync failed: nothing after `durable` is kept.
    pub failed: Option<String>,
}

struct Rotation {
    file: File,
    path: PathBuf,
    before: Vec<u8>,
    before_last: u64,
}

#[derive(Default)]
struct Queue {
    bytes: Vec<u8>,
    /// Sequence number of the last record queued.
    queued: u64,
    /// Set to switch to a new log file (compaction): the new file, and what was queued before
    /// the switch (with its last sequence number), which still goes to the old file.
    rotate_to: Option<Rotation>,
    stop: bool,
}

/// The log of a data directory.
pub(crate) struct Journal {
    queue: Mutex<Queue>,
    wake: Condvar,
    progress: watch::Sender<Progress>,
    /// Held while a catalog change is made and recorded, so catalog records follow the order of
    /// the changes. Nothing takes it yet.
    #[allow(dead_code)]
    pub catalog_lock: tokio::sync::Mutex<()>,
    /// Bytes in the current log file (compaction starts past a threshold).
    log_bytes: std::sync::atomic::AtomicU64,
}

impl std::fmt::Debug for Journal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Journal")
            .field("progress", &*self.progress.borrow())
            .finish_non_exhaustive()
    }
}

impl Journal {
    /// A journal appending to `file` (already positioned at its end, holding `len` bytes), with
    /// its writer thread started.
    pub(crate) fn start(file: File, path: PathBuf, len: u64) -> std::io::Result<Arc<Journal>> {
        let journal = Arc::new(Journal {
            queue: Mutex::new(Queue::default()),
            wake: Condvar::new(),
            progress: watch::Sender::new(Progress::default()),
            catalog_lock: tokio::sync::Mutex::new(()),
            log_bytes: len.into(),
        });
        let writer = journal.clone();
        std::thread::Builder::new()
            .name("cosmos-emulator-journal".into())
            .spawn(move || writer.write_loop(file, path))?;
        Ok(journal)
    }

    /// Queues one record; returns its sequence number.
    pub(crate) fn append(&self, record: &Record) -> u64 {
        let payload = match serde_json::to_vec(record) {
            Ok(p) => p,
            Err(e) => {
                self.fail(format!("a record could not be encoded: {e}"));
                return u64::MAX;
            }
        };
        let mut queue = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        frame::encode(&payload, &mut queue.bytes);
        queue.queued += 1;
        let seq = queue.queued;
        drop(queue);
        self.wake.notify_one();
        seq
    }

    /// Why the log can no longer be written, once it cannot.
    pub(crate) fn failure(&self) -> Option<String> {
        self.progress.borrow().failed.clone()
    }

    /// The sequence number of the last record queued.
    pub(crate) fn queued(&self) -> u64 {
        self.queue.lock().unwrap_or_else(|p| p.into_inner()).queued
    }

    /// Bytes written to the current log file.
    pub(crate) fn log_bytes(&self) -> u64 {
        self.log_bytes.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Waits until every record up to `seq` is on disk; Err when the log can no longer be
    /// written.
    pub(crate) async fn durable(&self, seq: u64) -> Result<(), String> {
        let mut progress = self.progress.subscribe();
        let reached = progress
            .wait_for(|p| p.durable >= seq || p.failed.is_some())
            .await
            .map_err(|_| "the data directory's writer has stopped".to_owned())?;
        match (&reached.failed, reached.durable >= seq) {
            (_, true) => Ok(()),
            (Some(why), false) => Err(why.clone()),
            (None, false) => Err("the data directory's writer has stopped".into()),
        }
    }

    /// Makes the writer continue in `file` (a new, empty log) from the next record on; returns
    /// the sequence number of the last record that goes to the old one.
    pub(crate) fn rotate(&self, file: File, path: PathBuf) -> u64 {
        let mut queue = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        let before = std::mem::take(&mut queue.bytes);
        let last = queue.queued;
        queue.rotate_to = Some(Rotation {
            file,
            path,
            before,
            before_last: last,
        });
        drop(queue);
        self.wake.notify_one();
        last
    }

    /// Stops the writer once what is queued is written.
    pub(crate) fn stop(&self) {
        self.queue.lock().unwrap_or_else(|p| p.into_inner()).stop = true;
        self.wake.notify_one();
    }

    fn fail(&self, why: String) {
        tracing::error!("{why}");
        self.progress.send_modify(|p| {
            p.failed.get_or_insert(why);
        });
    }

    fn write_loop(&self, mut file: File, mut path: PathBuf) {
        loop {
            let (bytes, last, rotate, stop) = {
                let mut queue = self.queue.lock().unwrap_or_else(|p| p.into_inner());
                while queue.bytes.is_empty() && queue.rotate_to.is_none() && !queue.stop {
                    queue = self.wake.wait(queue).unwrap_or_else(|p| p.into_inner());
                }
                (
                    std::mem::take(&mut queue.bytes),
                    queue.queued,
                    queue.rotate_to.take(),
                    queue.stop,
                )
            };
            // What was queued before a rotation goes to the old file: the rotation's caller
            // snapshots the state after it, and records queued after it go to the new file.
            if let Some(rotation) = rotate {
                if !self.write(&mut file, &path, &rotation.before, rotation.before_last) {
                    return;
                }
                file = rotation.file;
                path = rotation.path;
                self.log_bytes
                    .store(0, std::sync::atomic::Ordering::Relaxed);
            }
            if !self.write(&mut file, &path, &bytes, last) {
                return;
            }
            if stop && bytes.is_empty() {
                return;
            }
        }
    }
}

impl Journal {
    /// Appends and fsyncs `bytes`, then marks records up to `last` durable; false once failed.
    fn write(&self, file: &mut File, path: &std::path::Path, bytes: &[u8], last: u64) -> bool {
        if bytes.is_empty() {
            return true;
        }
        if let Err(e) = file.write_all(bytes).and_then(|()| file.sync_data()) {
            self.fail(format!(
                "cannot write the data directory's log {}: {e}; writes are refused from now on",
                path.display()
            ));
            return false;
        }
        self.log_bytes
            .fetch_add(bytes.len() as u64, std::sync::atomic::Ordering::Relaxed);
        self.progress
            .send_modify(|p| p.durable = p.durable.max(last));
        true
    }
}

impl ConflictJournal for Journal {
    fn added(&self, container_rid: &str, next: u64, id: &str, body: &bytes::Bytes) {
        self.append(&Record::conflicts(
            container_rid,
            next,
            &[(id.to_owned(), body.clone())],
            &[],
        ));
    }

    fn removed(&self, container_rid: &str, id: &str) {
        self.append(&Record::conflicts(container_rid, 0, &[], &[id]));
    }
}

impl ItemLog for Journal {
    fn record(&self, container_rid: &str, writes: &[(DocKey, Option<Arc<StoredDoc>>)]) {
        self.append(&Record::items(container_rid, writes));
    }
}

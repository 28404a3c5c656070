//! What the chaos workload did, operation by operation: every write with its reported outcome
//! (kept for the read-back), and counts of reads and errors. Shared by every in-flight operation.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;
use std::time::Duration;

use serde::Serialize;

/// How the driver reported a write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WriteOutcome {
    /// Success.
    Acknowledged,
    /// An error that does not tell whether the write landed (see [`super::is_ambiguous`]).
    Ambiguous,
    /// An error that says the write did not happen.
    Failed,
}

/// One create: the item it wrote and its outcome.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CreateRecord {
    /// The new item's id (also its partition key).
    pub id: String,
    /// How it was reported.
    pub outcome: WriteOutcome,
}

/// One replace of a replace target, writing `version` into it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReplaceRecord {
    /// Which target.
    pub target: usize,
    /// The version written (unique per replace, never 0: 0 is the seeded body).
    pub version: u64,
    /// When the operation started, from the ledger's zero.
    pub started: Duration,
    /// When it returned.
    pub finished: Duration,
    /// How it was reported.
    pub outcome: WriteOutcome,
}

/// Increments sent to one counter, by reported outcome.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CounterTally {
    /// Reported successful.
    pub acknowledged: u64,
    /// Reported with an ambiguous error.
    pub ambiguous: u64,
    /// Reported failed.
    pub failed: u64,
}

/// Everything recorded, as plain data.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LedgerSnapshot {
    /// Every create.
    pub creates: Vec<CreateRecord>,
    /// Every replace.
    pub replaces: Vec<ReplaceRecord>,
    /// Increments per counter.
    pub counters: Vec<CounterTally>,
    /// When each acknowledged write returned, from the ledger's zero, sorted.
    pub write_acks: Vec<Duration>,
    /// Point reads and queries that succeeded.
    pub reads_ok: u64,
    /// Point reads and queries that failed.
    pub read_errors: u64,
    /// Errors by description (`create 409/0`, `read transport`), a sample for the report.
    pub error_kinds: BTreeMap<String, u64>,
}

/// The most distinct error descriptions kept.
const MAX_ERROR_KINDS: usize = 40;

/// The recording side, shared by every operation.
#[derive(Debug, Default)]
pub struct Ledger {
    creates: Mutex<Vec<CreateRecord>>,
    acknowledged_ids: Mutex<Vec<String>>,
    replaces: Mutex<Vec<ReplaceRecord>>,
    counters: Mutex<Vec<CounterTally>>,
    write_acks: Mutex<Vec<Duration>>,
    reads_ok: AtomicU64,
    read_errors: AtomicU64,
    error_kinds: Mutex<BTreeMap<String, u64>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Ledger {
    /// A ledger for `counters` counters.
    pub fn new(counters: usize) -> Self {
        Ledger {
            counters: Mutex::new(vec![CounterTally::default(); counters]),
            ..Ledger::default()
        }
    }

    fn write_done(&self, outcome: WriteOutcome, finished: Duration) {
        if outcome == WriteOutcome::Acknowledged {
            lock(&self.write_acks).push(finished);
        }
    }

    /// Records a create that returned at `finished`.
    pub fn create(&self, id: String, outcome: WriteOutcome, finished: Duration) {
        if outcome == WriteOutcome::Acknowledged {
            lock(&self.acknowledged_ids).push(id.clone());
        }
        lock(&self.creates).push(CreateRecord { id, outcome });
        self.write_done(outcome, finished);
    }

    /// Records a replace.
    pub fn replace(&self, record: ReplaceRecord) {
        lock(&self.replaces).push(record);
        self.write_done(record.outcome, record.finished);
    }

    /// Records an increment of counter `counter`.
    pub fn increment(&self, counter: usize, outcome: WriteOutcome, finished: Duration) {
        if let Some(tally) = lock(&self.counters).get_mut(counter) {
            match outcome {
                WriteOutcome::Acknowledged => tally.acknowledged += 1,
                WriteOutcome::Ambiguous => tally.ambiguous += 1,
                WriteOutcome::Failed => tally.failed += 1,
            }
        }
        self.write_done(outcome, finished);
    }

    /// Records a read or query.
    pub fn read(&self, ok: bool) {
        if ok {
            self.reads_ok.fetch_add(1, Relaxed);
        } else {
            self.read_errors.fetch_add(1, Relaxed);
        }
    }

    /// Counts an error under `description` (only the first few distinct descriptions are kept).
    pub fn error(&self, description: String) {
        let mut kinds = lock(&self.error_kinds);
        if let Some(n) = kinds.get_mut(&description) {
            *n += 1;
        } else if kinds.len() < MAX_ERROR_KINDS {
            kinds.insert(description, 1);
        }
    }

    /// An acknowledged create's id, picked by `seq` (none before the first acknowledgement).
    pub fn acknowledged_id(&self, seq: u64) -> Option<String> {
        let ids = lock(&self.acknowledged_ids);
        if ids.is_empty() {
            return None;
        }
        ids.get((seq % ids.len() as u64) as usize).cloned()
    }

    /// Everything recorded so far.
    pub fn snapshot(&self) -> LedgerSnapshot {
        let mut write_acks = lock(&self.write_acks).clone();
        write_acks.sort();
        LedgerSnapshot {
            creates: lock(&self.creates).clone(),
            replaces: lock(&self.replaces).clone(),
            counters: lock(&self.counters).clone(),
            write_acks,
            reads_ok: self.reads_ok.load(Relaxed),
            read_errors: self.read_errors.load(Relaxed),
            error_kinds: lock(&self.error_kinds).clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_add_up() {
        let ms = Duration::from_millis;
        let ledger = Ledger::new(2);
        assert_eq!(ledger.acknowledged_id(0), None);
        ledger.create("a".into(), WriteOutcome::Acknowledged, ms(30));
        ledger.create("b".into(), WriteOutcome::Failed, ms(10));
        ledger.increment(1, WriteOutcome::Ambiguous, ms(5));
        ledger.increment(1, WriteOutcome::Acknowledged, ms(20));
        ledger.increment(7, WriteOutcome::Acknowledged, ms(21));
        ledger.read(true);
        ledger.read(false);
        ledger.error("read transport".into());
        ledger.error("read transport".into());
        let s = ledger.snapshot();
        assert_eq!(s.creates.len(), 2);
        assert_eq!(ledger.acknowledged_id(5), Some("a".into()));
        assert_eq!(
            s.counters,
            vec![
                CounterTally::default(),
                CounterTally {
                    acknowledged: 1,
                    ambiguous: 1,
                    failed: 0
                }
            ]
        );
        assert_eq!(s.write_acks, vec![ms(20), ms(21), ms(30)]);
        assert_eq!((s.reads_ok, s.read_errors), (1, 1));
        assert_eq!(s.error_kinds.get("read transport"), Some(&2));
    }
}

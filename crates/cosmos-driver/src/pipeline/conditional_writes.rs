//! The conditional Replaces this driver has sent, per item and precondition, so that a PATCH whose
//! Replace lost its answer can tell its own write from a sibling's.
//!
//! Two PATCH calls of one driver that read the same version of an item send Replaces conditioned on
//! the same ETag; at most one of them lands. When one of them loses its answer and reads the item
//! again, it finds a new ETag; if the body stored is the one it meant to write, it was either its
//! own write or the sibling's byte-identical one (two increments from the same read). The siblings'
//! outcomes decide it ([`judge`]):
//!
//! | siblings on the same item and ETag | verdict |
//! |---|---|
//! | one landed (its answer came back 2xx, or it settled as landed) | [`SiblingVerdict::TheirsLanded`]: this write did not land; the loop goes on from the item as read |
//! | none landed, one still waiting for its answer | [`SiblingVerdict::Wait`]: ask again when it has one |
//! | none landed or waiting, one whose outcome is unknown | [`SiblingVerdict::CannotTell`]: the outcome is reported unknown |
//! | none, or all refused with 412 | [`SiblingVerdict::NoSibling`]: the stored body is this write's |
//!
//! A group of siblings is kept while any of its writers' calls is running, so a sibling that has
//! already returned still answers for its write. Writers of other processes are out of sight: the
//! driver README says what that leaves open.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use tokio::sync::Notify;

/// What one writer's conditional Replace came to, as far as it knows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum WriterOutcome {
    /// Sent; no answer yet.
    Pending,
    /// It landed.
    Landed,
    /// Refused (412) or otherwise known not to have been carried out.
    NotLanded,
    /// Sent, and its answer lost: it may or may not have landed.
    Unknown,
}

/// What the siblings say about a write whose re-read found its own body under a new ETag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SiblingVerdict {
    /// No sibling can have written the body: it is this write's.
    NoSibling,
    /// A sibling landed, so this write (on the same precondition) did not.
    TheirsLanded,
    /// A sibling is waiting for its answer.
    Wait,
    /// A sibling's outcome is unknown too: nobody can tell which one landed.
    CannotTell,
}

/// Decides from the siblings' outcomes (this writer's own excluded). Pure.
pub(crate) fn judge(siblings: &[WriterOutcome]) -> SiblingVerdict {
    if siblings.contains(&WriterOutcome::Landed) {
        SiblingVerdict::TheirsLanded
    } else if siblings.contains(&WriterOutcome::Pending) {
        SiblingVerdict::Wait
    } else if siblings.contains(&WriterOutcome::Unknown) {
        SiblingVerdict::CannotTell
    } else {
        SiblingVerdict::NoSibling
    }
}

/// One item under one precondition: `(item link, partition key header, If-Match ETag)`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct WriteKey {
    pub item: String,
    pub partition_key: String,
    pub if_match: String,
}

#[derive(Debug)]
struct Writer {
    id: u64,
    outcome: WriterOutcome,
    /// Whether the writer's call is still running.
    active: bool,
}

/// The registry: one per driver.
#[derive(Debug, Default)]
pub(crate) struct ConditionalWrites {
    groups: Mutex<HashMap<WriteKey, Vec<Writer>>>,
    next_id: AtomicU64,
    changed: Notify,
}

impl ConditionalWrites {
    /// A writer for one call; its entries are released when it is dropped.
    pub(crate) fn writer(&self) -> WriterHandle<'_> {
        WriterHandle {
            registry: self,
            id: self.next_id.fetch_add(1, Ordering::Relaxed),
            keys: Vec::new(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<WriteKey, Vec<Writer>>> {
        // A panic while holding the lock cannot leave a group half-written: every change is one
        // assignment or push.
        self.groups.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The number of groups held (for tests).
    #[cfg(test)]
    fn len(&self) -> usize {
        self.lock().len()
    }
}

/// One call's view of the registry.
#[derive(Debug)]
pub(crate) struct WriterHandle<'a> {
    registry: &'a ConditionalWrites,
    id: u64,
    keys: Vec<WriteKey>,
}

impl WriterHandle<'_> {
    /// Records this writer's outcome for `key` (registering it on first use).
    pub(crate) fn record(&mut self, key: &WriteKey, outcome: WriterOutcome) {
        {
            let mut groups = self.registry.lock();
            let group = groups.entry(key.clone()).or_default();
            match group.iter_mut().find(|w| w.id == self.id) {
                Some(writer) => writer.outcome = outcome,
                None => group.push(Writer {
                    id: self.id,
                    outcome,
                    active: true,
                }),
            }
        }
        if !self.keys.contains(key) {
            self.keys.push(key.clone());
        }
        self.registry.changed.notify_waiters();
    }

    /// What the siblings on `key` say, waiting up to `patience` while one of them still waits for
    /// its answer (then [`SiblingVerdict::CannotTell`]).
    pub(crate) async fn siblings(&self, key: &WriteKey, patience: Duration) -> SiblingVerdict {
        let deadline = tokio::time::Instant::now() + patience;
        loop {
            let notified = self.registry.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let verdict = {
                let groups = self.registry.lock();
                let outcomes: Vec<WriterOutcome> = groups
                    .get(key)
                    .map(|g| {
                        g.iter()
                            .filter(|w| w.id != self.id)
                            .map(|w| w.outcome.clone())
                            .collect()
                    })
                    .unwrap_or_default();
                judge(&outcomes)
            };
            if verdict != SiblingVerdict::Wait {
                return verdict;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return SiblingVerdict::CannotTell;
            }
        }
    }
}

impl Drop for WriterHandle<'_> {
    fn drop(&mut self) {
        if self.keys.is_empty() {
            return;
        }
        {
            let mut groups = self.registry.lock();
            for key in &self.keys {
                let Some(group) = groups.get_mut(key) else {
                    continue;
                };
                for writer in group.iter_mut().filter(|w| w.id == self.id) {
                    writer.active = false;
                    // A writer that leaves while its answer is outstanding leaves it unknown.
                    if writer.outcome == WriterOutcome::Pending {
                        writer.outcome = WriterOutcome::Unknown;
                    }
                }
                if group.iter().all(|w| !w.active) {
                    groups.remove(key);
                }
            }
        }
        self.registry.changed.notify_waiters();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use WriterOutcome::*;

    #[test]
    fn the_siblings_decide_whose_write_it_was() {
        let table: &[(&[WriterOutcome], SiblingVerdict)] = &[
            (&[], SiblingVerdict::NoSibling),
            (&[NotLanded], SiblingVerdict::NoSibling),
            (&[NotLanded, NotLanded], SiblingVerdict::NoSibling),
            (&[Landed], SiblingVerdict::TheirsLanded),
            (&[Unknown, Landed], SiblingVerdict::TheirsLanded),
            (&[Pending, Landed], SiblingVerdict::TheirsLanded),
            (&[Pending], SiblingVerdict::Wait),
            (&[Pending, Unknown], SiblingVerdict::Wait),
            (&[Unknown], SiblingVerdict::CannotTell),
            (&[NotLanded, Unknown], SiblingVerdict::CannotTell),
        ];
        for (siblings, verdict) in table {
            assert_eq!(judge(siblings), *verdict, "{siblings:?}");
        }
    }

    fn key(etag: &str) -> WriteKey {
        WriteKey {
            item: "dbs/d/colls/c/docs/a".into(),
            partition_key: "[\"p\"]".into(),
            if_match: etag.into(),
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_returned_sibling_still_answers_while_another_writer_runs() {
        let registry = ConditionalWrites::default();
        let mut a = registry.writer();
        let mut b = registry.writer();
        a.record(&key("e1"), Unknown);
        b.record(&key("e1"), Landed);
        drop(b);
        assert_eq!(
            a.siblings(&key("e1"), Duration::ZERO).await,
            SiblingVerdict::TheirsLanded
        );
        assert_eq!(
            a.siblings(&key("e2"), Duration::ZERO).await,
            SiblingVerdict::NoSibling
        );
        drop(a);
        assert_eq!(registry.len(), 0, "groups go when their last writer does");
    }

    #[tokio::test(start_paused = true)]
    async fn a_pending_sibling_is_waited_for_until_it_answers_or_patience_ends() {
        let registry = ConditionalWrites::default();
        let mut a = registry.writer();
        a.record(&key("e1"), Unknown);
        {
            let mut b = registry.writer();
            b.record(&key("e1"), Pending);
            let k = key("e1");
            let waited = a.siblings(&k, Duration::from_millis(50));
            let answered = async {
                tokio::time::sleep(Duration::from_millis(10)).await;
                b.record(&key("e1"), NotLanded);
            };
            let (verdict, ()) = tokio::join!(waited, answered);
            assert_eq!(verdict, SiblingVerdict::NoSibling);
        }
        let mut c = registry.writer();
        c.record(&key("e1"), Pending);
        let started = tokio::time::Instant::now();
        assert_eq!(
            a.siblings(&key("e1"), Duration::from_millis(50)).await,
            SiblingVerdict::CannotTell
        );
        assert_eq!(started.elapsed(), Duration::from_millis(50));
        drop(c);
        assert_eq!(
            a.siblings(&key("e1"), Duration::ZERO).await,
            SiblingVerdict::CannotTell,
            "a writer that left with its answer outstanding leaves it unknown"
        );
    }
}

//! One processor instance at work: the state its tasks share (the leases it holds, each behind
//! its own lock so that renewals and checkpoints write it one at a time with the latest etag),
//! the coordinator task (renew every renew interval, acquire every acquire interval), and taking
//! a lease into work. Every lease write of the instance goes through `write`, which reports it.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex as StdMutex};
use std::time::SystemTime;

use futures::future::BoxFuture;
use tokio::sync::{watch, Mutex};
use tokio::task::JoinHandle;

use super::balance::{leases_to_take, LeaseView};
use super::events::{EventSink, LeaseWrite, ProcessorEvent};
use super::lease::{format_timestamp, Lease};
use super::options::ProcessorOptions;
use super::store::{is_lost, LeaseStore};
use crate::change_feed::FeedRange;
use crate::client::ContainerClient;
use crate::error::CosmosError;

/// What the handler is told besides the changes.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ProcessorContext {
    /// The lease token (partition key range id) of the batch.
    pub lease: String,
    /// The span of the key space the lease covers.
    pub feed_range: FeedRange,
    /// This instance's name.
    pub instance: String,
}

/// The handler, boxed: its error as text.
pub(crate) type Handler<T> =
    Arc<dyn Fn(Vec<T>, ProcessorContext) -> BoxFuture<'static, Result<(), String>> + Send + Sync>;

/// A lease this instance works on.
pub(crate) struct Held {
    pub(crate) cell: Arc<Mutex<Lease>>,
    pub(crate) lost: watch::Sender<bool>,
    pub(crate) task: Option<JoinHandle<()>>,
}

/// What the instance's tasks share.
pub(crate) struct Shared<T> {
    pub(crate) monitored: ContainerClient,
    pub(crate) store: LeaseStore,
    pub(crate) instance: String,
    pub(crate) name: String,
    pub(crate) options: ProcessorOptions,
    pub(crate) handler: Handler<T>,
    pub(crate) events: EventSink,
    /// By lease id.
    pub(crate) held: StdMutex<HashMap<String, Held>>,
    pub(crate) stop: watch::Sender<bool>,
}

/// The face of [`Shared`] the processor handle needs, whatever the item type.
pub(crate) trait Control: Send + Sync {
    /// Tells every task to stop.
    fn signal_stop(&self);
    /// Takes the handles of every lease task.
    fn take_tasks(&self) -> Vec<JoinHandle<()>>;
    /// The tokens of the leases held now.
    fn owned(&self) -> Vec<String>;
}

impl<T: Send + Sync + 'static> Control for Shared<T> {
    fn signal_stop(&self) {
        self.stop.send_replace(true);
    }

    fn take_tasks(&self) -> Vec<JoinHandle<()>> {
        let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        held.values_mut().filter_map(|h| h.task.take()).collect()
    }

    fn owned(&self) -> Vec<String> {
        let held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        let mut ids: Vec<String> = held
            .keys()
            .map(|id| {
                id.strip_prefix(&super::lease::lease_prefix(&self.name))
                    .unwrap_or(id)
                    .to_owned()
            })
            .collect();
        ids.sort();
        ids
    }
}

impl<T> Shared<T> {
    pub(crate) fn stopping(&self) -> bool {
        *self.stop.borrow()
    }

    /// Writes `next` over the lease (If-Match the etag it carries) and reports the write.
    pub(crate) async fn write(&self, next: Lease, why: LeaseWrite) -> Result<Lease, CosmosError> {
        let previous_etag = next.etag.clone();
        let written = self.store.replace(&next).await?;
        self.events.emit(ProcessorEvent::LeaseWritten {
            lease: written.lease_token.clone(),
            write: why,
            owner: written.owner.clone(),
            previous_etag,
            etag: written.etag.clone(),
        });
        Ok(written)
    }

    /// Stops work on a lease found taken: tells its task and forgets it.
    pub(crate) fn mark_lost(&self, id: &str, token: &str, reason: String) {
        let gone = self
            .held
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(id);
        if let Some(h) = gone {
            h.lost.send_replace(true);
            self.events.emit(ProcessorEvent::Lost {
                lease: token.to_owned(),
                reason,
            });
        }
    }

    /// Forgets the lease `id` if `cell` is the one held under it.
    pub(crate) fn forget(&self, id: &str, cell: &Arc<Mutex<Lease>>) {
        let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        if held.get(id).is_some_and(|h| Arc::ptr_eq(&h.cell, cell)) {
            held.remove(id);
        }
    }
}

/// Takes `lease` (owned by this instance already) into work: a task reads its range. When the
/// instance is stopping, the lease is answered back for the caller to release.
#[must_use]
pub(crate) fn adopt<T>(shared: &Arc<Shared<T>>, lease: Lease) -> Option<Lease>
where
    T: serde::de::DeserializeOwned + Send + Sync + 'static,
{
    let mut held = shared.held.lock().unwrap_or_else(|p| p.into_inner());
    if shared.stopping() {
        return Some(lease);
    }
    let id = lease.id.clone();
    let cell = Arc::new(Mutex::new(lease));
    let (lost_tx, lost_rx) = watch::channel(false);
    let task = tokio::spawn(super::worker::run(shared.clone(), cell.clone(), lost_rx));
    held.insert(
        id,
        Held {
            cell,
            lost: lost_tx,
            task: Some(task),
        },
    );
    None
}

/// The coordinator: renews and acquires at their intervals until the instance stops.
pub(crate) async fn coordinate<T>(shared: Arc<Shared<T>>)
where
    T: serde::de::DeserializeOwned + Send + Sync + 'static,
{
    let mut stop = shared.stop.subscribe();
    let mut renew = tokio::time::interval(shared.options.renew_interval);
    let mut acquire = tokio::time::interval(shared.options.acquire_interval);
    renew.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    acquire.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    renew.tick().await;
    loop {
        if *stop.borrow() {
            return;
        }
        let round = tokio::select! {
            _ = stop.changed() => return,
            _ = acquire.tick() => true,
            _ = renew.tick() => false,
        };
        // A round runs to its end (a lease it takes while the instance stops is released).
        if round {
            acquire_round(&shared).await;
        } else {
            renew_round(&shared).await;
        }
    }
}

/// Writes each held lease's timestamp; a lease found taken stops its work.
pub(crate) async fn renew_round<T>(shared: &Arc<Shared<T>>) {
    let cells: Vec<(String, Arc<Mutex<Lease>>)> = shared
        .held
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .iter()
        .map(|(id, h)| (id.clone(), h.cell.clone()))
        .collect();
    for (id, cell) in cells {
        let mut lease = cell.lock().await;
        let mut next = lease.clone();
        next.timestamp = format_timestamp(SystemTime::now());
        match shared.write(next, LeaseWrite::Renew).await {
            Ok(written) => *lease = written,
            Err(e) if is_lost(&e) => {
                let token = lease.lease_token.clone();
                drop(lease);
                shared.mark_lost(&id, &token, format!("renew answered {}", status_of(&e)));
            }
            Err(e) => shared.events.emit(ProcessorEvent::Failed {
                lease: lease.lease_token.clone(),
                error: format!("renew: {}", e.message()),
            }),
        }
    }
}

/// Lists the leases, decides which to take, and takes them (a 412 means another instance was
/// faster: skipped).
pub(crate) async fn acquire_round<T>(shared: &Arc<Shared<T>>)
where
    T: serde::de::DeserializeOwned + Send + Sync + 'static,
{
    let leases = match shared.store.list().await {
        Ok(l) => l,
        Err(e) => {
            shared.events.emit(ProcessorEvent::Failed {
                lease: String::new(),
                error: format!("listing the leases: {}", e.message()),
            });
            return;
        }
    };
    let held: HashSet<String> = shared
        .held
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .keys()
        .cloned()
        .collect();
    // A held lease the store shows with another owner was taken: stop its work now.
    for l in &leases {
        if held.contains(&l.id) && l.owner.as_deref() != Some(shared.instance.as_str()) {
            shared.mark_lost(
                &l.id,
                &l.lease_token,
                format!("now owned by {:?}", l.owner.as_deref().unwrap_or("")),
            );
        }
    }
    let views: Vec<LeaseView> = leases
        .iter()
        .map(|l| LeaseView {
            id: l.id.clone(),
            owner: l.owner.clone(),
            renewed_at: l.renewed_at(),
            held: held.contains(&l.id),
        })
        .collect();
    let now = SystemTime::now();
    let take = leases_to_take(
        &views,
        &shared.instance,
        now,
        shared.options.expiration_interval,
    );
    for id in take {
        if shared.stopping() {
            return;
        }
        let Some(lease) = leases.iter().find(|l| l.id == id) else {
            continue;
        };
        let mut next = lease.clone();
        next.owner = Some(shared.instance.clone());
        next.timestamp = format_timestamp(SystemTime::now());
        match shared.write(next, LeaseWrite::Acquire).await {
            Ok(written) => {
                shared.events.emit(ProcessorEvent::Acquired {
                    lease: written.lease_token.clone(),
                });
                if let Some(back) = adopt(shared, written) {
                    super::worker::release(shared, back).await;
                }
            }
            Err(e) if is_lost(&e) => {}
            Err(e) => shared.events.emit(ProcessorEvent::Failed {
                lease: lease.lease_token.clone(),
                error: format!("acquire: {}", e.message()),
            }),
        }
    }
}

/// A status for a message: `412`, `404/1002`.
pub(crate) fn status_of(e: &CosmosError) -> String {
    match (e.status(), e.sub_status()) {
        (Some(s), Some(sub)) if sub != 0 => format!("{s}/{sub}"),
        (Some(s), _) => s.to_string(),
        _ => e.message().to_owned(),
    }
}

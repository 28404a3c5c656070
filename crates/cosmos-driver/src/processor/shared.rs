//! What the tasks of one processor instance share: the leases it holds, each behind its own
//! lock so that renewals and checkpoints write it one at a time with the latest etag, the stop
//! signal, the handler and the event sink. Every lease write of the instance goes through
//! [`Shared::write`], which reports it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex as StdMutex};

use futures::future::BoxFuture;
use tokio::sync::{watch, Mutex};
use tokio::task::JoinHandle;

use super::events::{EventSink, LeaseWrite, ProcessorEvent};
use super::lease::Lease;
use super::options::ProcessorOptions;
use super::store::LeaseStore;
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

/// A status for a message: `412`, `404/1002`.
pub(crate) fn status_of(e: &CosmosError) -> String {
    match (e.status(), e.sub_status()) {
        (Some(s), Some(sub)) if sub != 0 => format!("{s}/{sub}"),
        (Some(s), _) => s.to_string(),
        _ => e.message().to_owned(),
    }
}

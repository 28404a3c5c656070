//! The coordinator of one processor instance: renew every renew interval, acquire every
//! acquire interval (the balancing decision over the listed leases), and taking a lease into work
//! (a task per lease; a split's children are taken when their parent's task ends).

use std::collections::HashSet;
use std::sync::Arc;
use std::time::SystemTime;

use tokio::sync::{watch, Mutex};

use super::balance::{leases_to_take, LeaseView};
use super::events::{LeaseWrite, ProcessorEvent};
use super::lease::{format_timestamp, Lease};
use super::shared::{status_of, Held, Shared};
use super::store::is_lost;
use super::worker;

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
    let task = tokio::spawn(run_lease(shared.clone(), cell.clone(), lost_rx));
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
        Ok((leases, malformed)) => {
            for (id, error) in malformed {
                shared
                    .events
                    .emit(ProcessorEvent::Failed { lease: id, error });
            }
            leases
        }
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
                    worker::release(shared, back).await;
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

/// A lease's task: the work on it, then its split's children, if any, taken into work.
async fn run_lease<T>(shared: Arc<Shared<T>>, cell: Arc<Mutex<Lease>>, lost: watch::Receiver<bool>)
where
    T: serde::de::DeserializeOwned + Send + Sync + 'static,
{
    let children = worker::run(shared.clone(), cell, lost).await;
    for child in children {
        if let Some(back) = adopt(&shared, child) {
            worker::release(&shared, back).await;
        }
    }
}

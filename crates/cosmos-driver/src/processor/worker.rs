//! The work on one lease: read its feed range from the lease's continuation, hand each page of
//! at most `max_items` changes to the handler (a failure is retried with backoff and reported),
//! write the page's continuation to the lease with If-Match after the handler returns `Ok`
//! (at-least-once), and replace the lease by its children when its range has split. A lost lease
//! (412/404 on a write, or the coordinator finding another owner) ends the work before the next
//! batch; a stop ends it after the batch in flight, checkpointed, and releases the lease.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio::sync::{watch, Mutex};

use super::events::{LeaseWrite, ProcessorEvent};
use super::lease::{format_timestamp, Lease};
use super::options::ProcessorStart;
use super::shared::{status_of, ProcessorContext, Shared};
use super::split::{child_continuation, range_change, RangeChange};
use super::store::is_lost;
use crate::change_feed::{ChangeFeedOptions, ChangeFeedStart, FeedRange, FeedScope};
use crate::operations::partition_key_ranges;
use crate::options::OperationOptions;

/// How the work on a lease ended.
#[derive(Debug)]
enum Exit {
    Stopped,
    Lost,
    /// Replaced by these children (owned by this instance, to be taken into work).
    Split(Vec<Lease>),
}

/// The change feed start of a range without a checkpoint.
pub(crate) fn first_start(start: ProcessorStart) -> ChangeFeedStart {
    match start {
        ProcessorStart::Beginning => ChangeFeedStart::Beginning,
        ProcessorStart::Now => ChangeFeedStart::Now,
        ProcessorStart::PointInTime(t) => ChangeFeedStart::PointInTime(t),
    }
}

/// The work on one lease until it stops, is lost or splits; answers a split's children.
pub(crate) async fn run<T>(
    shared: Arc<Shared<T>>,
    cell: Arc<Mutex<Lease>>,
    lost: watch::Receiver<bool>,
) -> Vec<Lease>
where
    T: DeserializeOwned + Send + Sync + 'static,
{
    let id = cell.lock().await.id.clone();
    let exit = work(&shared, &cell, lost).await;
    // Released before it is forgotten: stop() awaits the tasks of the leases still held.
    if matches!(exit, Exit::Stopped) {
        let lease = cell.lock().await.clone();
        release(&shared, lease).await;
    }
    shared.forget(&id, &cell);
    match exit {
        Exit::Split(children) => children,
        Exit::Stopped | Exit::Lost => Vec::new(),
    }
}

/// Clears the owner of `lease` (If-Match), so another instance takes it at once.
pub(crate) async fn release<T>(shared: &Shared<T>, lease: Lease) {
    let token = lease.lease_token.clone();
    let mut next = lease;
    next.owner = None;
    next.timestamp = format_timestamp(SystemTime::now());
    match shared.write(next, LeaseWrite::Release).await {
        Ok(_) => shared
            .events
            .emit(ProcessorEvent::Released { lease: token }),
        Err(e) => shared.events.emit(ProcessorEvent::Failed {
            lease: token,
            error: format!("release answered {}", status_of(&e)),
        }),
    }
}

/// Waits `delay`; `false` when the instance stops or the lease is lost meanwhile.
async fn pause(
    delay: Duration,
    stop: &mut watch::Receiver<bool>,
    lost: &mut watch::Receiver<bool>,
) -> bool {
    tokio::select! {
        _ = tokio::time::sleep(delay) => true,
        _ = stop.wait_for(|s| *s) => false,
        _ = lost.wait_for(|s| *s) => false,
    }
}

async fn work<T>(
    shared: &Arc<Shared<T>>,
    cell: &Arc<Mutex<Lease>>,
    mut lost: watch::Receiver<bool>,
) -> Exit
where
    T: DeserializeOwned + Send + Sync + 'static,
{
    let mut stop = shared.stop.subscribe();
    let (token, range) = {
        let l = cell.lock().await;
        (l.lease_token.clone(), l.range())
    };
    let range = match range {
        Ok(r) => r,
        Err(e) => {
            shared.events.emit(ProcessorEvent::Failed {
                lease: token.clone(),
                error: e.message().to_owned(),
            });
            return Exit::Lost;
        }
    };
    let context = ProcessorContext {
        lease: token.clone(),
        feed_range: range.clone(),
        instance: shared.instance.clone(),
    };
    let options = ChangeFeedOptions::new().with_max_item_count(shared.options.max_items);
    let mut failures = 0u32;
    'feed: loop {
        if let Some(exit) = check_split(shared, cell, &range).await {
            return exit;
        }
        let start = match cell.lock().await.continuation.clone() {
            Some(c) => ChangeFeedStart::Continuation(c),
            None => first_start(shared.options.start),
        };
        let mut feed = shared.monitored.change_feed_with::<Value>(
            start,
            FeedScope::FeedRange(range.clone()),
            options.clone(),
        );
        loop {
            if *lost.borrow() {
                return Exit::Lost;
            }
            if *stop.borrow() {
                return Exit::Stopped;
            }
            let page = tokio::select! {
                page = feed.next_page() => page,
                _ = stop.wait_for(|s| *s) => return Exit::Stopped,
                _ = lost.wait_for(|s| *s) => return Exit::Lost,
            };
            let page = match page {
                Ok(p) => p,
                Err(e) => {
                    failures += 1;
                    shared.events.emit(ProcessorEvent::Failed {
                        lease: token.clone(),
                        error: format!("reading the feed: {}", e.message()),
                    });
                    if !pause(shared.options.backoff(failures), &mut stop, &mut lost).await {
                        continue;
                    }
                    continue 'feed;
                }
            };
            failures = 0;
            if page.is_caught_up() {
                if let Some(exit) = check_split(shared, cell, &range).await {
                    return exit;
                }
                pause(shared.options.poll_delay, &mut stop, &mut lost).await;
                continue;
            }
            let continuation = page.continuation().to_owned();
            let changes = page.into_items();
            if let Some(exit) = deliver(shared, &context, &changes, &mut stop, &mut lost).await {
                return exit;
            }
            if let Some(exit) = checkpoint(shared, cell, continuation, &mut stop, &mut lost).await {
                return exit;
            }
            if let Some(exit) = check_split(shared, cell, &range).await {
                return exit;
            }
        }
    }
}

/// Calls the handler until it returns `Ok`; `Some` when the work must end instead (the lease was
/// lost, or the instance stops while a failed batch waits for its retry: not checkpointed).
async fn deliver<T>(
    shared: &Arc<Shared<T>>,
    context: &ProcessorContext,
    changes: &[Value],
    stop: &mut watch::Receiver<bool>,
    lost: &mut watch::Receiver<bool>,
) -> Option<Exit>
where
    T: DeserializeOwned + Send + Sync + 'static,
{
    let mut attempt = 0u32;
    loop {
        if *lost.borrow() {
            return Some(Exit::Lost);
        }
        let batch: Result<Vec<T>, _> = changes.iter().map(T::deserialize).collect();
        let outcome = match batch {
            Ok(batch) => (shared.handler)(batch, context.clone()).await,
            Err(e) => Err(format!("a change does not fit the handler's type: {e}")),
        };
        let Err(error) = outcome else {
            return None;
        };
        attempt += 1;
        shared.events.emit(ProcessorEvent::HandlerFailed {
            lease: context.lease.clone(),
            attempt,
            error,
        });
        if !pause(shared.options.backoff(attempt), stop, lost).await {
            return Some(if *lost.borrow() {
                Exit::Lost
            } else {
                Exit::Stopped
            });
        }
    }
}

/// Writes `continuation` to the lease (If-Match); retried on passing failures.
async fn checkpoint<T>(
    shared: &Arc<Shared<T>>,
    cell: &Arc<Mutex<Lease>>,
    continuation: String,
    stop: &mut watch::Receiver<bool>,
    lost: &mut watch::Receiver<bool>,
) -> Option<Exit> {
    let mut attempt = 0u32;
    loop {
        let mut lease = cell.lock().await;
        let id = lease.id.clone();
        let token = lease.lease_token.clone();
        let mut next = lease.clone();
        next.continuation = Some(continuation.clone());
        next.timestamp = format_timestamp(SystemTime::now());
        match shared.write(next, LeaseWrite::Checkpoint).await {
            Ok(written) => {
                *lease = written;
                return None;
            }
            Err(e) if is_lost(&e) => {
                drop(lease);
                shared.mark_lost(
                    &id,
                    &token,
                    format!("checkpoint answered {}", status_of(&e)),
                );
                return Some(Exit::Lost);
            }
            Err(e) => {
                drop(lease);
                attempt += 1;
                shared.events.emit(ProcessorEvent::Failed {
                    lease: token,
                    error: format!("checkpoint: {}", e.message()),
                });
                // On stop, one more try after the wait, then give up (the batch is redelivered).
                let go_on = pause(shared.options.backoff(attempt), stop, lost).await;
                if !go_on && (*lost.borrow() || attempt > 3) {
                    return Some(if *lost.borrow() {
                        Exit::Lost
                    } else {
                        Exit::Stopped
                    });
                }
            }
        }
    }
}

/// Replaces the lease by its children when the container's ranges (as the driver knows them;
/// a page read that met the split refreshed them) show its range split.
async fn check_split<T>(
    shared: &Arc<Shared<T>>,
    cell: &Arc<Mutex<Lease>>,
    range: &FeedRange,
) -> Option<Exit>
where
    T: DeserializeOwned + Send + Sync + 'static,
{
    let reference = shared.monitored.reference().ok()?;
    let core = shared.monitored.driver().core();
    let ranges = partition_key_ranges(core, reference, false, &OperationOptions::default())
        .await
        .ok()?;
    let RangeChange::Split(children) = range_change(range, &ranges) else {
        return None;
    };
    let parent = cell.lock().await;
    let now = SystemTime::now();
    let mut created = Vec::new();
    let mut tokens = Vec::new();
    for (child_id, part) in &children {
        let continuation = match child_continuation(parent.continuation.as_deref(), part) {
            Ok(c) => c,
            Err(e) => {
                shared.events.emit(ProcessorEvent::Failed {
                    lease: parent.lease_token.clone(),
                    error: format!("split: {}", e.message()),
                });
                return None;
            }
        };
        let child = Lease::new(
            &shared.name,
            child_id,
            part,
            continuation,
            Some(shared.instance.clone()),
            now,
        );
        tokens.push(child_id.clone());
        match shared.store.create(&child).await {
            Ok(Some(written)) => {
                shared.events.emit(ProcessorEvent::LeaseWritten {
                    lease: written.lease_token.clone(),
                    write: LeaseWrite::Create,
                    owner: written.owner.clone(),
                    previous_etag: None,
                    etag: written.etag.clone(),
                });
                created.push(written);
            }
            // Made by an earlier try that died before deleting the parent: taken when expired.
            Ok(None) => {}
            Err(e) => {
                shared.events.emit(ProcessorEvent::Failed {
                    lease: parent.lease_token.clone(),
                    error: format!("split: creating a child lease: {}", e.message()),
                });
                return None;
            }
        }
    }
    match shared.store.delete(&parent).await {
        Ok(()) => shared.events.emit(ProcessorEvent::LeaseWritten {
            lease: parent.lease_token.clone(),
            write: LeaseWrite::Delete,
            owner: parent.owner.clone(),
            previous_etag: parent.etag.clone(),
            etag: None,
        }),
        Err(e) if is_lost(&e) => {
            let (id, token) = (parent.id.clone(), parent.lease_token.clone());
            drop(parent);
            shared.mark_lost(
                &id,
                &token,
                format!("split: delete answered {}", status_of(&e)),
            );
            return Some(Exit::Lost);
        }
        Err(e) => {
            shared.events.emit(ProcessorEvent::Failed {
                lease: parent.lease_token.clone(),
                error: format!("split: deleting the parent lease: {}", e.message()),
            });
            return None;
        }
    }
    shared.events.emit(ProcessorEvent::Split {
        lease: parent.lease_token.clone(),
        children: tokens,
    });
    drop(parent);
    Some(Exit::Split(created))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The wait between polls and retries runs its whole delay, unless the instance stops or the
    /// lease is lost: then it ends at once (so `stop()` does not wait out a 5 s poll delay).
    #[tokio::test(start_paused = true)]
    async fn a_wait_ends_at_its_delay_or_at_once_on_stop_or_loss() {
        let delay = Duration::from_secs(5);
        // (signal stop after, signal loss after, answer, time taken)
        let table: [(Option<u64>, Option<u64>, bool, u64); 4] = [
            (None, None, true, 5_000),
            (Some(1_200), None, false, 1_200),
            (None, Some(300), false, 300),
            (Some(0), None, false, 0),
        ];
        for (stop_at, lost_at, want, took_ms) in table {
            let (stop_tx, mut stop) = watch::channel(false);
            let (lost_tx, mut lost) = watch::channel(false);
            let signal = tokio::spawn(async move {
                for (at, tx) in [(stop_at, &stop_tx), (lost_at, &lost_tx)] {
                    if let Some(ms) = at {
                        tokio::time::sleep(Duration::from_millis(ms)).await;
                        tx.send_replace(true);
                    }
                }
                tokio::time::sleep(Duration::from_secs(60)).await;
                drop((stop_tx, lost_tx));
            });
            let t = tokio::time::Instant::now();
            let answer = pause(delay, &mut stop, &mut lost).await;
            assert_eq!(answer, want, "{stop_at:?} {lost_at:?}");
            assert_eq!(
                t.elapsed(),
                Duration::from_millis(took_ms),
                "{stop_at:?} {lost_at:?}"
            );
            signal.abort();
        }
    }

    #[test]
    fn a_range_without_a_checkpoint_starts_where_the_processor_starts() {
        let t = std::time::UNIX_EPOCH + Duration::from_secs(60);
        assert_eq!(
            first_start(ProcessorStart::Beginning),
            ChangeFeedStart::Beginning
        );
        assert_eq!(first_start(ProcessorStart::Now), ChangeFeedStart::Now);
        assert_eq!(
            first_start(ProcessorStart::PointInTime(t)),
            ChangeFeedStart::PointInTime(t)
        );
    }
}

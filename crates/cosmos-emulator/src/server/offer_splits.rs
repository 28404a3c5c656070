//! Starts the splits a raise of a container's throughput scheduled
//! ([`crate::store::offer_splits`]): each runs as a task shortly after the replace was answered.
//! A task holds the emulator only weakly, so it never keeps a stopped emulator's store alive; one
//! that wakes after the emulator is gone does nothing.

use std::sync::{Arc, Weak};
use std::time::Duration;

use crate::exchange::Shared;

/// How long after the replace the splits begin (the service takes minutes; tests should not).
const SPLITS_AFTER: Duration = Duration::from_millis(50);

/// Starts a task for each offer whose splits were scheduled since the last call.
pub(super) fn start(shared: &Arc<Shared>) {
    for id in shared.store.offers.take_scheduled() {
        let shared = Arc::downgrade(shared);
        tokio::spawn(run(shared, id));
    }
}

async fn run(shared: Weak<Shared>, offer: String) {
    tokio::time::sleep(SPLITS_AFTER).await;
    let Some(shared) = shared.upgrade() else {
        return;
    };
    // Splitting moves every item of the container: off the request threads.
    let _ = tokio::task::spawn_blocking(move || {
        crate::store::offer_splits::split_for_offer(&shared.store, &offer)
    })
    .await;
}

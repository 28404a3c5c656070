//! Accounts for script threads of this process (scripts run on threads, not in worker
//! processes): how many are running, and how many are still running after their
//! request was answered (a script stuck where its runtime cannot stop it). A stuck thread is
//! logged when it is left and when it finally ends; while [`MAX_STUCK`] are stuck, no new script
//! starts, so stuck scripts cannot take every core.

use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// How many script threads may be left running past their requests before new scripts are refused.
pub(crate) const MAX_STUCK: usize = 2;

/// How long after a script's deadline its caller still waits for the thread to end on its own
/// (the interrupt handler's next check, the runtime's teardown) before answering without it.
pub(crate) const SLACK: Duration = Duration::from_millis(500);

static RUNNING: AtomicUsize = AtomicUsize::new(0);
static STUCK: AtomicUsize = AtomicUsize::new(0);

const ACTIVE: u8 = 0;
const ENDED: u8 = 1;
const LEFT: u8 = 2;

/// Script threads alive after their requests were answered.
pub(crate) fn stuck() -> usize {
    STUCK.load(Ordering::SeqCst)
}

/// Whether a new script may start while `stuck` threads are stuck. Pure.
pub(crate) fn admits(stuck: usize) -> bool {
    stuck < MAX_STUCK
}

/// The error a script gets when it may not start. Pure.
pub(crate) fn refusal() -> String {
    format!(
        "{MAX_STUCK} scripts are still running past their time limits; no script starts until one ends."
    )
}

/// One script thread's state, shared by the thread and its caller.
#[derive(Clone)]
pub(crate) struct Watch {
    state: Arc<AtomicU8>,
}

/// Held by the script's thread; its drop marks the thread ended.
pub(crate) struct Running {
    state: Arc<AtomicU8>,
}

impl Watch {
    /// A watch for a thread about to start, or the refusal when too many are stuck.
    pub(crate) fn start() -> Result<(Watch, Running), String> {
        if !admits(stuck()) {
            return Err(refusal());
        }
        RUNNING.fetch_add(1, Ordering::SeqCst);
        let state = Arc::new(AtomicU8::new(ACTIVE));
        Ok((
            Watch {
                state: state.clone(),
            },
            Running { state },
        ))
    }

    /// The caller answers without the thread: counted stuck until it ends (unless it just has).
    pub(crate) fn leave(&self, what: &str) {
        STUCK.fetch_add(1, Ordering::SeqCst);
        if self
            .state
            .compare_exchange(ACTIVE, LEFT, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
        {
            tracing::warn!(
                stuck = stuck(),
                "a {what} ran past its time limit and its thread could not be stopped; the request was answered without it"
            );
        } else {
            STUCK.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        RUNNING.fetch_sub(1, Ordering::SeqCst);
        if self
            .state
            .compare_exchange(ACTIVE, ENDED, Ordering::SeqCst, Ordering::SeqCst)
            .is_err()
        {
            STUCK.fetch_sub(1, Ordering::SeqCst);
            tracing::warn!(
                stuck = stuck(),
                "a script thread left running past its request has ended"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_scripts_are_refused_once_enough_are_stuck() {
        assert!(admits(0));
        assert!(admits(MAX_STUCK - 1));
        assert!(!admits(MAX_STUCK));
        assert!(!admits(MAX_STUCK + 5));
        assert!(refusal().contains(&MAX_STUCK.to_string()));
    }
}

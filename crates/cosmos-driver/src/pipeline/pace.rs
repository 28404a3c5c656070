//! The pace of a race's alternate: while the primary leg is still out, the alternate sends no more
//! attempts than the primary has sent. So a read that the primary answers late (one slow attempt)
//! costs at most two requests however often the alternate's region asks it to retry, and a
//! throttled primary and alternate retry in step. Once the primary has ended, the alternate is
//! what the read without hedging would do next, and goes at its own pace.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use tokio::sync::Notify;

/// Shared by the two legs of one race, on the race's stack frame (nothing allocated).
#[derive(Debug, Default)]
pub(crate) struct AlternatePace {
    primary_attempts: AtomicU32,
    primary_ended: AtomicBool,
    changed: Notify,
}

/// Which side of the race a leg is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PaceRole {
    Primary,
    Alternate,
}

/// Whether the alternate, having sent `sent` attempts, may send the next one.
pub(crate) fn may_send(sent: u32, primary_attempts: u32, primary_ended: bool) -> bool {
    primary_ended || sent < primary_attempts
}

impl AlternatePace {
    /// The primary sends an attempt.
    pub(crate) fn primary_sent(&self) {
        self.primary_attempts.fetch_add(1, Ordering::AcqRel);
        self.changed.notify_waiters();
    }

    /// The primary leg has ended.
    pub(crate) fn primary_ended(&self) {
        self.primary_ended.store(true, Ordering::Release);
        self.changed.notify_waiters();
    }

    /// Waits until the alternate, having sent `sent` attempts, may send the next one.
    pub(crate) async fn turn(&self, sent: u32) {
        loop {
            let notified = self.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if may_send(
                sent,
                self.primary_attempts.load(Ordering::Acquire),
                self.primary_ended.load(Ordering::Acquire),
            ) {
                return;
            }
            notified.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use futures::FutureExt;

    use super::*;

    #[test]
    fn the_alternate_never_gets_ahead_of_a_primary_still_out() {
        // (alternate sent, primary sent, primary ended, may send)
        let rows = [
            (0, 1, false, true),
            (1, 1, false, false),
            (1, 2, false, true),
            (3, 3, false, false),
            (3, 1, true, true),
            (9, 0, true, true),
        ];
        for (sent, primary, ended, want) in rows {
            assert_eq!(
                may_send(sent, primary, ended),
                want,
                "{sent} {primary} {ended}"
            );
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_waiting_alternate_goes_when_the_primary_sends_or_ends() {
        let pace = AlternatePace::default();
        pace.primary_sent();
        let waiting = pace.turn(1);
        tokio::pin!(waiting);
        assert!(waiting.as_mut().now_or_never().is_none());
        pace.primary_sent();
        assert!(waiting.as_mut().now_or_never().is_some());
        let waiting = pace.turn(5);
        tokio::pin!(waiting);
        assert!(waiting.as_mut().now_or_never().is_none());
        pace.primary_ended();
        assert!(waiting.as_mut().now_or_never().is_some());
    }
}

//! How long the gateway waits for a lagging replica before it answers 404/1002 (read session not
//! available). The service does not answer a read whose session token is ahead of the serving
//! region's replica at once: it reads again while the replica catches up, backing off, and answers
//! 404/1002 only when the window has passed (the Java SDK documents the same policy for its own
//! retries: a 5 s window, a backoff doubling from 5 ms up to 50 ms). An SDK that retries 1002 in the
//! same region without its token would otherwise read stale data where the service would not.

use std::time::Duration;

/// The wait for a replica to reach a request's session token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SessionWait {
    /// How long a read may wait in all; zero answers 404/1002 at once.
    pub window: Duration,
    /// The first pause between reads.
    pub initial_backoff: Duration,
    /// The longest pause between reads.
    pub max_backoff: Duration,
}

impl Default for SessionWait {
    /// The service's policy: 5 s, backing off from 5 ms to 50 ms.
    fn default() -> Self {
        Self {
            window: Duration::from_secs(5),
            initial_backoff: Duration::from_millis(5),
            max_backoff: Duration::from_millis(50),
        }
    }
}

impl SessionWait {
    /// No wait: a read ahead of the replica answers 404/1002 at once.
    pub const OFF: Self = Self {
        window: Duration::ZERO,
        initial_backoff: Duration::ZERO,
        max_backoff: Duration::ZERO,
    };

    /// The service's backoff within a window of `window`.
    pub fn within(window: Duration) -> Self {
        Self {
            window,
            ..Self::default()
        }
    }

    /// The pause before read `attempt` (1 for the first read again) after `waited` in all, or
    /// `None` when the window is spent (the 404/1002 is then the answer). Pure.
    pub fn next_pause(&self, attempt: u32, waited: Duration) -> Option<Duration> {
        let left = self.window.checked_sub(waited).filter(|d| !d.is_zero())?;
        let doubled = self
            .initial_backoff
            .checked_mul(
                1u32.checked_shl(attempt.saturating_sub(1))
                    .unwrap_or(u32::MAX),
            )
            .unwrap_or(self.max_backoff);
        let pause = doubled.min(self.max_backoff).max(Duration::from_millis(1));
        Some(pause.min(left))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn the_pause_doubles_up_to_its_cap_and_ends_with_the_window() {
        let wait = SessionWait::default();
        let table = [
            (1, ms(0), Some(ms(5))),
            (2, ms(5), Some(ms(10))),
            (3, ms(15), Some(ms(20))),
            (4, ms(35), Some(ms(40))),
            (5, ms(75), Some(ms(50))),
            (40, ms(1000), Some(ms(50))),
            (90, ms(4990), Some(ms(10))),
            (91, ms(5000), None),
            (92, ms(6000), None),
        ];
        for (attempt, waited, want) in table {
            assert_eq!(
                wait.next_pause(attempt, waited),
                want,
                "{attempt} after {waited:?}"
            );
        }
        assert_eq!(SessionWait::OFF.next_pause(1, Duration::ZERO), None);
        assert_eq!(SessionWait::within(ms(3)).next_pause(1, ms(0)), Some(ms(3)));
    }
}

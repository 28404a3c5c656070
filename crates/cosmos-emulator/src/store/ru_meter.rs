//! Request units used per partition key range per second, for `--enforce-throughput`: each range
//! may use its share of the provisioned RU/s in each one-second window; past it, requests are
//! refused until the window ends.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

/// One range's current window.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Window {
    pub started: Instant,
    pub used: f64,
}

const SECOND: Duration = Duration::from_secs(1);

/// Whether a request may run now in `window` with `budget` RU per second: `Err(wait)` names how
/// long until the window ends when the budget is used up.
pub(super) fn admit(window: Option<&Window>, budget: f64, now: Instant) -> Result<(), Duration> {
    match window {
        Some(w) if now < w.started + SECOND && w.used >= budget => Err(w.started + SECOND - now),
        _ => Ok(()),
    }
}

/// `window` after a request charged `charge` RU at `now` (a new window when the old one is over).
pub(super) fn record(window: Option<Window>, charge: f64, now: Instant) -> Window {
    match window {
        Some(w) if now < w.started + SECOND => Window {
            started: w.started,
            used: w.used + charge,
        },
        _ => Window {
            started: now,
            used: charge,
        },
    }
}

/// Windows per (container `_rid`, range id).
#[derive(Default)]
pub(crate) struct RuMeter {
    windows: Mutex<HashMap<(String, String), Window>>,
}

impl RuMeter {
    /// The admission decision (the module's `admit`) for one range.
    pub(crate) fn admit(
        &self,
        container: &str,
        range: &str,
        budget: f64,
        now: Instant,
    ) -> Result<(), Duration> {
        let windows = self.windows.lock().map_err(|_| Duration::ZERO)?;
        admit(
            windows.get(&(container.to_owned(), range.to_owned())),
            budget,
            now,
        )
    }

    /// The charge bookkeeping (the module's `record`) for one range.
    pub(crate) fn record(&self, container: &str, range: &str, charge: f64, now: Instant) {
        if let Ok(mut windows) = self.windows.lock() {
            let key = (container.to_owned(), range.to_owned());
            let next = record(windows.get(&key).copied(), charge, now);
            windows.insert(key, next);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_range_is_refused_once_its_share_is_used_until_the_second_ends() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        assert_eq!(admit(None, 100.0, t0), Ok(()));
        let w = record(None, 60.0, t0);
        assert_eq!(admit(Some(&w), 100.0, t0 + ms(10)), Ok(()));
        let w = record(Some(w), 50.0, t0 + ms(10));
        assert_eq!(w.used, 110.0);
        assert_eq!(admit(Some(&w), 100.0, t0 + ms(400)), Err(ms(600)));
        assert_eq!(admit(Some(&w), 100.0, t0 + ms(1000)), Ok(()));
        let next = record(Some(w), 5.0, t0 + ms(1200));
        assert_eq!((next.started, next.used), (t0 + ms(1200), 5.0));
    }

    #[tokio::test(start_paused = true)]
    async fn ranges_are_metered_apart() {
        let meter = RuMeter::default();
        let now = Instant::now();
        meter.record("c", "0", 500.0, now);
        assert!(meter.admit("c", "0", 100.0, now).is_err());
        assert!(meter.admit("c", "1", 100.0, now).is_ok());
        assert!(meter.admit("other", "0", 100.0, now).is_ok());
    }
}

//! Request units used per partition key range per second, for `--enforce-throughput`: each range
//! may use its share of the provisioned RU/s in each one-second window; past it, requests are
//! refused until the window ends.
//!
//! Priority-based execution (`x-ms-cosmos-priority-level`, High by default): either priority may
//! use the whole share when the other is absent, and when both compete, Low is throttled first. A
//! Low request is admitted only while the window's use plus the High demand still expected in it
//! (what High used in the previous window, less what it used so far in this one) is under the
//! share; a High request while the use alone is. Nothing is reserved: without High traffic in the
//! last second, Low gets the whole share.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

/// One range's current window.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Window {
    pub started: Instant,
    pub used: f64,
    /// What High-priority requests used in this window.
    pub high_used: f64,
    /// What High-priority requests used in the window just before this one (0 after a gap).
    pub high_before: f64,
}

/// A request's priority (`x-ms-cosmos-priority-level`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) enum Priority {
    /// The default.
    #[default]
    High,
    /// Throttled first when the share is contended.
    Low,
}

impl Priority {
    /// The header's value (`High` or `Low`, any case); `None` for another value.
    pub(crate) fn parse(value: &str) -> Option<Self> {
        match value.trim().to_ascii_lowercase().as_str() {
            "high" => Some(Self::High),
            "low" => Some(Self::Low),
            _ => None,
        }
    }
}

const SECOND: Duration = Duration::from_secs(1);

/// `window` as it stands at `now`: itself while its second lasts; after it, an empty window
/// starting now that remembers the old one's High use when it ended less than a second ago.
fn at(window: Option<&Window>, now: Instant) -> Window {
    match window {
        Some(w) if now < w.started + SECOND => *w,
        previous => Window {
            started: now,
            used: 0.0,
            high_used: 0.0,
            high_before: previous
                .filter(|w| now < w.started + SECOND + SECOND)
                .map_or(0.0, |w| w.high_used),
        },
    }
}

/// Whether a request of `priority` may run now in `window` with `budget` RU per second:
/// `Err(wait)` names how long until the window ends when it may not.
pub(super) fn admit(
    window: Option<&Window>,
    budget: f64,
    priority: Priority,
    now: Instant,
) -> Result<(), Duration> {
    let w = at(window, now);
    let expected_high = match priority {
        Priority::High => 0.0,
        Priority::Low => (w.high_before - w.high_used).max(0.0),
    };
    if w.used + expected_high >= budget {
        Err((w.started + SECOND - now).max(Duration::from_millis(1)))
    } else {
        Ok(())
    }
}

/// `window` after a request of `priority` charged `charge` RU at `now`.
pub(super) fn record(
    window: Option<Window>,
    charge: f64,
    priority: Priority,
    now: Instant,
) -> Window {
    let w = at(window.as_ref(), now);
    let high = if priority == Priority::High {
        charge
    } else {
        0.0
    };
    Window {
        used: w.used + charge,
        high_used: w.high_used + high,
        ..w
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
        priority: Priority,
        now: Instant,
    ) -> Result<(), Duration> {
        let windows = self.windows.lock().map_err(|_| Duration::ZERO)?;
        admit(
            windows.get(&(container.to_owned(), range.to_owned())),
            budget,
            priority,
            now,
        )
    }

    /// The charge bookkeeping (the module's `record`) for one range.
    pub(crate) fn record(
        &self,
        container: &str,
        range: &str,
        charge: f64,
        priority: Priority,
        now: Instant,
    ) {
        if let Ok(mut windows) = self.windows.lock() {
            let key = (container.to_owned(), range.to_owned());
            let next = record(windows.get(&key).copied(), charge, priority, now);
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
        let high = Priority::High;
        assert_eq!(admit(None, 100.0, high, t0), Ok(()));
        let w = record(None, 60.0, high, t0);
        assert_eq!(admit(Some(&w), 100.0, high, t0 + ms(10)), Ok(()));
        let w = record(Some(w), 50.0, high, t0 + ms(10));
        assert_eq!(w.used, 110.0);
        assert_eq!(admit(Some(&w), 100.0, high, t0 + ms(400)), Err(ms(600)));
        assert_eq!(admit(Some(&w), 100.0, high, t0 + ms(1000)), Ok(()));
        let next = record(Some(w), 5.0, high, t0 + ms(1200));
        assert_eq!((next.started, next.used), (t0 + ms(1200), 5.0));
    }

    #[tokio::test(start_paused = true)]
    async fn ranges_are_metered_apart() {
        let meter = RuMeter::default();
        let now = Instant::now();
        let high = Priority::High;
        meter.record("c", "0", 500.0, high, now);
        assert!(meter.admit("c", "0", 100.0, high, now).is_err());
        assert!(meter.admit("c", "1", 100.0, high, now).is_ok());
        assert!(meter.admit("other", "0", 100.0, high, now).is_ok());
    }

    /// The throttling order as a table: the window's use, the High use of this and the previous
    /// window, and which priorities are admitted with a 100 RU share.
    #[tokio::test(start_paused = true)]
    async fn low_is_throttled_first_when_high_is_competing() {
        let t0 = Instant::now();
        let table: &[(f64, f64, f64, bool, bool)] = &[
            // used, high_used, high_before, High admitted, Low admitted
            (0.0, 0.0, 0.0, true, true),
            // No High traffic last second: Low may use the whole share.
            (99.0, 0.0, 0.0, true, true),
            (100.0, 0.0, 0.0, false, false),
            // High used 30 RU last second and none yet: Low stops at 70, High goes on to 100.
            (69.0, 0.0, 30.0, true, true),
            (70.0, 0.0, 30.0, true, false),
            (95.0, 0.0, 30.0, true, false),
            // High has already used 20 of its expected 30 this second: Low stops at 90.
            (85.0, 20.0, 30.0, true, true),
            (90.0, 20.0, 30.0, true, false),
            // High used more than before: nothing more is held back for it.
            (99.0, 40.0, 30.0, true, true),
        ];
        for &(used, high_used, high_before, high_ok, low_ok) in table {
            let w = Window {
                started: t0,
                used,
                high_used,
                high_before,
            };
            let at = t0 + Duration::from_millis(100);
            assert_eq!(
                admit(Some(&w), 100.0, Priority::High, at).is_ok(),
                high_ok,
                "{w:?} High"
            );
            assert_eq!(
                admit(Some(&w), 100.0, Priority::Low, at).is_ok(),
                low_ok,
                "{w:?} Low"
            );
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_new_window_remembers_the_high_use_of_the_one_just_ended() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let w = record(None, 30.0, Priority::High, t0);
        let w = record(Some(w), 50.0, Priority::Low, t0 + ms(500));
        assert_eq!((w.used, w.high_used), (80.0, 30.0));
        let next = record(Some(w), 10.0, Priority::Low, t0 + ms(1100));
        assert_eq!(
            (next.used, next.high_used, next.high_before),
            (10.0, 0.0, 30.0)
        );
        // Admission looks at the window as it stands: right after a second of High use, a Low
        // request is held back before anything is recorded in the new second.
        let busy = record(None, 120.0, Priority::High, t0);
        assert!(admit(Some(&busy), 100.0, Priority::Low, t0 + ms(1050)).is_err());
        assert!(admit(Some(&busy), 100.0, Priority::High, t0 + ms(1050)).is_ok());
        assert!(admit(Some(&busy), 100.0, Priority::Low, t0 + ms(2100)).is_ok());
        // After a quiet second, nothing is expected of High.
        let later = record(Some(next), 10.0, Priority::Low, t0 + ms(3200));
        assert_eq!(later.high_before, 0.0);
        assert_eq!(Priority::parse("low"), Some(Priority::Low));
        assert_eq!(Priority::parse(" High "), Some(Priority::High));
        assert_eq!(Priority::parse("urgent"), None);
    }
}

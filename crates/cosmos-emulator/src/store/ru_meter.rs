//! Request units used per partition key range per second, for `--enforce-throughput`: each range
//! may use its share of the provisioned RU/s in each one-second window; past it, requests are
//! refused until the window ends.
//!
//! Priority-based execution (`x-ms-cosmos-priority-level`, High by default): either priority may
//! use the whole share when the other is absent, and when both compete, Low is throttled first. A
//! Low request is admitted only while the window's use plus the High demand still expected in it
//! (one and a half times what High asked for in the previous window, less what it used so far in
//! this one) is under the share; a High request while the use alone is, or while High's own use
//! (with what the previous window left owing) is: a High request arriving after Low spent the
//! share borrows from the next window, which starts with the excess, so Low repays it first. Before
//! the borrowing, High traffic that began while Low saturated a range met 429 for the rest of that
//! second (no High demand was yet known to leave room for). High demand counts the High requests refused too
//! (each at the average charge of the window's High requests, 1 RU before any): otherwise a second
//! in which Low crowded High out would expect no High traffic in the next. Nothing is reserved:
//! without High traffic in the last second, Low gets the whole share.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

/// One range's current window.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Window {
    pub started: Instant,
    /// What served requests were charged, plus what admitted ones still running are expected to be.
    pub used: f64,
    /// Requests served in this window, and what they were charged.
    pub served: u32,
    pub charged: f64,
    /// What High-priority requests used in this window.
    pub high_used: f64,
    /// High-priority requests served in this window.
    pub high_served: u32,
    /// What High-priority requests asked for in this window: what they used, and an estimate for
    /// each one refused.
    pub high_wanted: f64,
    /// What High-priority requests asked for in the window just before this one (0 after a gap).
    pub high_before: f64,
    /// What the window just before this one used beyond its budget (0 after a gap): it starts
    /// this window's use, so what High borrowed is paid back (by Low first).
    pub carried: f64,
    /// The budget the window was last admitted against (0 before any admission).
    pub budget: f64,
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

/// How much of the previous second's High demand Low leaves room for: High traffic varies from one
/// second to the next, and a High request that finds the share used up is exactly what priority
/// is meant to prevent.
const HIGH_HEADROOM: f64 = 1.5;

/// `window` as it stands at `now`: itself while its second lasts; after it, an empty window
/// starting now that remembers the old one's High use when it ended less than a second ago.
fn at(window: Option<&Window>, now: Instant) -> Window {
    match window {
        Some(w) if now < w.started + SECOND => *w,
        previous => {
            let just_before = previous.filter(|w| now < w.started + SECOND + SECOND);
            let carried = just_before
                .filter(|w| w.budget > 0.0)
                .map_or(0.0, |w| (w.carried + w.charged - w.budget).max(0.0));
            Window {
                started: now,
                used: carried,
                served: 0,
                charged: 0.0,
                high_used: 0.0,
                high_served: 0,
                high_wanted: 0.0,
                high_before: just_before.map_or(0.0, |w| w.high_wanted),
                carried,
                budget: just_before.map_or(0.0, |w| w.budget),
            }
        }
    }
}

/// Whether a request naming a throughput bucket is within the bucket's share: the bucket's use
/// this second (with what its last second left owing) is under its `cap`, whatever the request's
/// priority.
pub(super) fn admits_bucket(w: &Window, cap: f64) -> bool {
    w.used < cap
}

/// The throttling order, a pure decision over the window as it stands: whether a request of
/// `priority` is admitted with `budget` RU this second, given `expected_high` (the High demand
/// still expected this second, which Low leaves room for). Low is admitted while the window's use
/// plus that room is under the budget. High is admitted while the use is under the budget, and
/// also past it while High's own use plus what the last second left owing is: a High request that
/// finds the share spent by Low borrows from the next second (which starts with the debt, so Low
/// pays it back first) instead of waiting for this one to end.
pub(super) fn admits(w: &Window, budget: f64, priority: Priority, expected_high: f64) -> bool {
    match priority {
        Priority::Low => w.used + expected_high < budget,
        Priority::High => w.used < budget || w.high_used + w.carried < budget,
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
    let expected_high = (w.high_before * HIGH_HEADROOM - w.high_used).max(0.0);
    if admits(&w, budget, priority, expected_high) {
        Ok(())
    } else {
        Err((w.started + SECOND - now).max(Duration::from_millis(1)))
    }
}

/// What an admitted request is expected to cost, set aside in its window until it is served, so
/// that requests admitted at the same moment see each other.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Reservation {
    /// The window it was set aside in.
    window_started: Instant,
    amount: f64,
}

/// `window` with the expected cost of a request of `priority` admitted against `budget` set aside
/// at `now`, and the reservation: the average charge of the window's served requests of that
/// priority, else of all its served requests, else 1 RU.
pub(super) fn reserve(
    window: Option<&Window>,
    budget: f64,
    priority: Priority,
    now: Instant,
) -> (Window, Reservation) {
    let w = at(window, now);
    let (charged, served) = match priority {
        Priority::High => (w.high_used, w.high_served),
        Priority::Low => (w.charged - w.high_used, w.served - w.high_served),
    };
    let amount = if served > 0 {
        charged / f64::from(served)
    } else if w.served > 0 {
        w.charged / f64::from(w.served)
    } else {
        1.0
    };
    let reservation = Reservation {
        window_started: w.started,
        amount,
    };
    (
        Window {
            used: w.used + amount,
            budget,
            ..w
        },
        reservation,
    )
}

/// `window` after a request of `priority` admitted with `reservation` was charged `charge` RU at
/// `now` (`None`: a charge that was not set aside). The reservation is returned to the window it
/// was made in, when that is still the current one.
pub(super) fn record(
    window: Option<Window>,
    charge: f64,
    reservation: Option<Reservation>,
    priority: Priority,
    now: Instant,
) -> Window {
    let w = at(window.as_ref(), now);
    let set_aside = reservation
        .filter(|r| r.window_started == w.started)
        .map_or(0.0, |r| r.amount);
    let (high, high_served) = if priority == Priority::High {
        (charge, 1)
    } else {
        (0.0, 0)
    };
    Window {
        used: (w.used + charge - set_aside).max(0.0),
        served: w.served + 1,
        charged: w.charged + charge,
        high_used: w.high_used + high,
        high_served: w.high_served + high_served,
        high_wanted: w.high_wanted + high,
        ..w
    }
}

/// `window` after a reservation was given back unused (the request was refused on another range).
pub(super) fn release(window: Option<Window>, reservation: Reservation, now: Instant) -> Window {
    let w = at(window.as_ref(), now);
    if reservation.window_started != w.started {
        return w;
    }
    Window {
        used: (w.used - reservation.amount).max(0.0),
        ..w
    }
}

/// `window` after a request of `priority` was refused at `now`: a High one still counts as demand,
/// at the average charge of the window's served High requests (1 RU before any).
pub(super) fn refused(window: Option<Window>, priority: Priority, now: Instant) -> Window {
    let w = at(window.as_ref(), now);
    if priority == Priority::Low {
        return w;
    }
    let estimate = if w.high_served == 0 {
        1.0
    } else {
        w.high_used / f64::from(w.high_served)
    };
    Window {
        high_wanted: w.high_wanted + estimate,
        ..w
    }
}

/// What a window meters on a range: the range's whole share, or what the requests naming one
/// throughput bucket used of it (`store::throughput_buckets`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Lane {
    Range,
    Bucket(u8),
}

/// Windows per (container `_rid`, range id, lane).
#[derive(Default)]
pub(crate) struct RuMeter {
    windows: Mutex<HashMap<(String, String, Lane), Window>>,
}

fn key(container: &str, range: &str, lane: Lane) -> (String, String, Lane) {
    (container.to_owned(), range.to_owned(), lane)
}

impl RuMeter {
    /// The admission decision (the module's `admit`) for one range; an admitted request's expected
    /// cost is set aside until [`RuMeter::record`] (or [`RuMeter::release`]).
    pub(crate) fn admit(
        &self,
        container: &str,
        range: &str,
        budget: f64,
        priority: Priority,
        now: Instant,
    ) -> Result<Reservation, Duration> {
        let mut windows = self.windows.lock().map_err(|_| Duration::ZERO)?;
        let key = key(container, range, Lane::Range);
        match admit(windows.get(&key), budget, priority, now) {
            Ok(()) => {
                let (next, reservation) = reserve(windows.get(&key), budget, priority, now);
                windows.insert(key, next);
                Ok(reservation)
            }
            Err(wait) => {
                let next = refused(windows.get(&key).copied(), priority, now);
                windows.insert(key, next);
                Err(wait)
            }
        }
    }

    /// The same decision for what requests naming throughput bucket `bucket` may use of one range:
    /// `cap` RU per second, whatever their priority (a bucket past its cap refuses even High
    /// requests; within it, the range's own decision still applies).
    pub(crate) fn admit_bucket(
        &self,
        container: &str,
        range: &str,
        bucket: u8,
        cap: f64,
        now: Instant,
    ) -> Result<Reservation, Duration> {
        let mut windows = self.windows.lock().map_err(|_| Duration::ZERO)?;
        let key = key(container, range, Lane::Bucket(bucket));
        let w = at(windows.get(&key), now);
        if !admits_bucket(&w, cap) {
            return Err((w.started + SECOND - now).max(Duration::from_millis(1)));
        }
        let (next, reservation) = reserve(windows.get(&key), cap, Priority::High, now);
        windows.insert(key, next);
        Ok(reservation)
    }

    /// The charge bookkeeping (the module's `record`) for one range's `lane`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn record(
        &self,
        container: &str,
        range: &str,
        lane: Lane,
        charge: f64,
        reservation: Option<Reservation>,
        priority: Priority,
        now: Instant,
    ) {
        if let Ok(mut windows) = self.windows.lock() {
            let key = key(container, range, lane);
            let next = record(
                windows.get(&key).copied(),
                charge,
                reservation,
                priority,
                now,
            );
            windows.insert(key, next);
        }
    }

    /// Gives back a reservation of a request that will not run.
    pub(crate) fn release(
        &self,
        container: &str,
        range: &str,
        lane: Lane,
        reservation: Reservation,
        now: Instant,
    ) {
        if let Ok(mut windows) = self.windows.lock() {
            let key = key(container, range, lane);
            let next = release(windows.get(&key).copied(), reservation, now);
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
        let w = record(None, 60.0, None, high, t0);
        assert_eq!(admit(Some(&w), 100.0, high, t0 + ms(10)), Ok(()));
        let w = record(Some(w), 50.0, None, high, t0 + ms(10));
        assert_eq!(w.used, 110.0);
        assert_eq!(admit(Some(&w), 100.0, high, t0 + ms(400)), Err(ms(600)));
        assert_eq!(admit(Some(&w), 100.0, high, t0 + ms(1000)), Ok(()));
        let next = record(Some(w), 5.0, None, high, t0 + ms(1200));
        assert_eq!((next.started, next.used), (t0 + ms(1200), 5.0));
    }

    #[tokio::test(start_paused = true)]
    async fn ranges_are_metered_apart() {
        let meter = RuMeter::default();
        let now = Instant::now();
        let high = Priority::High;
        meter.record("c", "0", Lane::Range, 500.0, None, high, now);
        assert!(meter.admit("c", "0", 100.0, high, now).is_err());
        assert!(meter.admit("c", "1", 100.0, high, now).is_ok());
        assert!(meter.admit("other", "0", 100.0, high, now).is_ok());
    }

    /// The throttling order as a table: the window's use, the High use of this and the previous
    /// window, what the last window left owing, and which priorities are admitted with a 100 RU
    /// share.
    #[tokio::test(start_paused = true)]
    async fn low_is_throttled_first_when_high_is_competing() {
        let t0 = Instant::now();
        let table: &[(f64, f64, f64, f64, bool, bool)] = &[
            // used, high_used, high_before, carried, High admitted, Low admitted
            (0.0, 0.0, 0.0, 0.0, true, true),
            // No High traffic last second: Low may use the whole share.
            (99.0, 0.0, 0.0, 0.0, true, true),
            // Low has spent the share before any High request came: High borrows from the next
            // second rather than wait for this one to end.
            (100.0, 0.0, 0.0, 0.0, true, false),
            (180.0, 60.0, 0.0, 0.0, true, false),
            // High alone has spent the share: refused like anyone.
            (100.0, 100.0, 0.0, 0.0, false, false),
            // What the last second left owing counts against High's borrowing too.
            (100.0, 50.0, 0.0, 50.0, false, false),
            (100.0, 49.0, 0.0, 50.0, true, false),
            // High asked for 30 RU last second and used none yet: Low leaves room for 1.5 x 30
            // and stops at 55; High goes on to 100.
            (54.0, 0.0, 30.0, 0.0, true, true),
            (55.0, 0.0, 30.0, 0.0, true, false),
            (95.0, 0.0, 30.0, 0.0, true, false),
            // High has already used 20 of the 45 held for it this second: Low stops at 75.
            (74.0, 20.0, 30.0, 0.0, true, true),
            (75.0, 20.0, 30.0, 0.0, true, false),
            // High used more than was held for it: nothing more is held back.
            (99.0, 50.0, 30.0, 0.0, true, true),
        ];
        for &(used, high_used, high_before, carried, high_ok, low_ok) in table {
            let w = Window {
                started: t0,
                used,
                served: 1,
                charged: used - carried,
                high_used,
                high_served: 1,
                high_wanted: high_used,
                high_before,
                carried,
                budget: 100.0,
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

    /// What a second used beyond its budget starts the next one (when it follows at once), so
    /// what High borrowed is paid back; after a gap nothing is owed.
    #[tokio::test(start_paused = true)]
    async fn a_second_over_its_budget_leaves_the_excess_to_the_next() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let (w, r) = reserve(None, 100.0, Priority::Low, t0);
        let w = record(Some(w), 100.0, Some(r), Priority::Low, t0);
        let (w, r) = reserve(Some(&w), 100.0, Priority::High, t0 + ms(10));
        let w = record(Some(w), 30.0, Some(r), Priority::High, t0 + ms(10));
        assert_eq!(w.used, 130.0);
        let next = at(Some(&w), t0 + ms(1_000));
        assert_eq!((next.used, next.carried), (30.0, 30.0));
        // Low leaves room for 1.5 x the 30 High used: 30 + 45 >= 75 stops it.
        assert!(admit(
            Some(&Window { used: 75.0, ..next }),
            100.0,
            Priority::Low,
            t0 + ms(1_000)
        )
        .is_err());
        assert!(admit(Some(&next), 100.0, Priority::High, t0 + ms(1_000)).is_ok());
        let after_gap = at(Some(&w), t0 + ms(2_500));
        assert_eq!((after_gap.used, after_gap.carried), (0.0, 0.0));
        // A window never admitted against (no budget known) carries nothing.
        let unknown = record(None, 500.0, None, Priority::High, t0);
        assert_eq!(at(Some(&unknown), t0 + ms(1_000)).used, 0.0);
        // A bucket is within its share while its use is under its cap, whatever was borrowed.
        let table: &[(f64, f64, bool)] =
            &[(0.0, 20.0, true), (19.0, 20.0, true), (20.0, 20.0, false)];
        for &(used, cap, ok) in table {
            assert_eq!(
                admits_bucket(&Window { used, ..next }, cap),
                ok,
                "{used} {cap}"
            );
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_new_window_remembers_the_high_use_of_the_one_just_ended() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let w = record(None, 30.0, None, Priority::High, t0);
        let w = record(Some(w), 50.0, None, Priority::Low, t0 + ms(500));
        assert_eq!((w.used, w.high_used), (80.0, 30.0));
        let next = record(Some(w), 10.0, None, Priority::Low, t0 + ms(1100));
        assert_eq!(
            (next.used, next.high_used, next.high_before),
            (10.0, 0.0, 30.0)
        );
        // Admission looks at the window as it stands: right after a second of High use, a Low
        // request is held back before anything is recorded in the new second.
        let busy = record(None, 120.0, None, Priority::High, t0);
        assert!(admit(Some(&busy), 100.0, Priority::Low, t0 + ms(1050)).is_err());
        assert!(admit(Some(&busy), 100.0, Priority::High, t0 + ms(1050)).is_ok());
        assert!(admit(Some(&busy), 100.0, Priority::Low, t0 + ms(2100)).is_ok());
        // High requests refused still count as demand for the next second.
        let crowded = record(None, 100.0, None, Priority::Low, t0);
        let crowded = refused(Some(crowded), Priority::High, t0 + ms(10));
        let crowded = refused(Some(crowded), Priority::High, t0 + ms(20));
        assert_eq!((crowded.high_used, crowded.high_wanted), (0.0, 2.0));
        let next_second = record(Some(crowded), 1.0, None, Priority::Low, t0 + ms(1010));
        assert_eq!(next_second.high_before, 2.0);
        assert!(admit(Some(&next_second), 100.0, Priority::Low, t0 + ms(1020)).is_ok());
        let nearly = Window {
            used: 98.5,
            ..next_second
        };
        assert!(admit(Some(&nearly), 100.0, Priority::Low, t0 + ms(1020)).is_err());
        assert!(admit(Some(&nearly), 100.0, Priority::High, t0 + ms(1020)).is_ok());
        assert_eq!(refused(Some(nearly), Priority::Low, t0 + ms(1020)), nearly);
        // After a quiet second, nothing is expected of High.
        let later = record(Some(next), 10.0, None, Priority::Low, t0 + ms(3200));
        assert_eq!(later.high_before, 0.0);
        assert_eq!(Priority::parse("low"), Some(Priority::Low));
        assert_eq!(Priority::parse(" High "), Some(Priority::High));
        assert_eq!(Priority::parse("urgent"), None);
    }

    #[tokio::test(start_paused = true)]
    async fn requests_admitted_together_see_each_others_expected_cost() {
        let meter = RuMeter::default();
        let now = Instant::now();
        let low = Priority::Low;
        // One served request of 30 RU: each admission sets 30 RU aside.
        meter.record("c", "0", Lane::Range, 30.0, None, low, now);
        let admitted: Vec<_> = (0..5)
            .map(|_| meter.admit("c", "0", 100.0, low, now))
            .collect();
        // 30 used + 30 + 30 set aside = 90: the third is admitted, the fourth sees 120.
        assert_eq!(
            admitted.iter().filter(|a| a.is_ok()).count(),
            3,
            "{admitted:?}"
        );
        // Serving one for 10 RU gives back 20 of its 30: 120 - 30 + 10.
        let first = *admitted[0].as_ref().unwrap();
        meter.record("c", "0", Lane::Range, 10.0, Some(first), low, now);
        let w = *meter
            .windows
            .lock()
            .unwrap()
            .get(&key("c", "0", Lane::Range))
            .unwrap();
        assert_eq!((w.used, w.served, w.charged), (100.0, 2, 40.0));
        // A reservation given back frees its amount; one from an ended second frees nothing.
        let second = *admitted[1].as_ref().unwrap();
        meter.release("c", "0", Lane::Range, second, now);
        let w = *meter
            .windows
            .lock()
            .unwrap()
            .get(&key("c", "0", Lane::Range))
            .unwrap();
        assert_eq!(w.used, 70.0);
        let third = *admitted[2].as_ref().unwrap();
        meter.release(
            "c",
            "0",
            Lane::Range,
            third,
            now + Duration::from_millis(1_500),
        );
        let w = *meter
            .windows
            .lock()
            .unwrap()
            .get(&key("c", "0", Lane::Range))
            .unwrap();
        assert_eq!(w.used, 0.0, "a new second starts empty");
    }

    /// A bucket's lane as a table: what the bucket used this second against its cap (20% of a
    /// 400 RU share), and whether a request naming it is admitted; the range's own lane is apart.
    #[tokio::test(start_paused = true)]
    async fn a_bucket_is_admitted_while_its_use_is_under_its_cap() {
        let now = Instant::now();
        let cap = 80.0;
        let table: &[(f64, bool)] = &[(0.0, true), (79.0, true), (80.0, false), (150.0, false)];
        for &(used, admitted) in table {
            let meter = RuMeter::default();
            if used > 0.0 {
                meter.record("c", "0", Lane::Bucket(1), used, None, Priority::High, now);
            }
            assert_eq!(
                meter.admit_bucket("c", "0", 1, cap, now).is_ok(),
                admitted,
                "{used}"
            );
            // Another bucket and the range's whole share are metered apart.
            assert!(meter.admit_bucket("c", "0", 2, cap, now).is_ok());
            assert!(meter.admit("c", "0", 400.0, Priority::Low, now).is_ok());
        }
        // Requests admitted together see each other: with one served 30 RU request, each
        // admission sets 30 RU aside, so the third of three at once finds 30 + 60 over 80.
        let meter = RuMeter::default();
        meter.record("c", "0", Lane::Bucket(1), 30.0, None, Priority::High, now);
        let admitted = (0..3)
            .filter(|_| meter.admit_bucket("c", "0", 1, cap, now).is_ok())
            .count();
        assert_eq!(admitted, 2);
        // The refusal lasts until the second ends.
        let refused = meter.admit_bucket("c", "0", 1, cap, now + Duration::from_millis(250));
        assert_eq!(refused, Err(Duration::from_millis(750)));
        assert!(meter
            .admit_bucket("c", "0", 1, cap, now + Duration::from_millis(1_000))
            .is_ok());
    }

    /// A saturating Low load beside High point reads at a fixed rate, played on the meter with
    /// paused time as the driver plays it (a refused request waits its retry-after and tries
    /// again): High reads should all be admitted at once. Returns (High refusals, High reads).
    async fn high_reads_refused_under_a_low_load(writers: usize, write_ru: f64) -> (u32, u32) {
        use std::sync::atomic::{AtomicU32, Ordering};
        use std::sync::Arc;
        let meter = Arc::new(RuMeter::default());
        let budget = 1_000.0;
        let stop = Instant::now() + Duration::from_secs(10);
        let mut tasks = Vec::new();
        for _ in 0..writers {
            let meter = meter.clone();
            tasks.push(tokio::spawn(async move {
                while Instant::now() < stop {
                    match meter.admit("c", "0", budget, Priority::Low, Instant::now()) {
                        Ok(r) => {
                            tokio::time::sleep(Duration::from_millis(3)).await;
                            let now = Instant::now();
                            meter.record(
                                "c",
                                "0",
                                Lane::Range,
                                write_ru,
                                Some(r),
                                Priority::Low,
                                now,
                            );
                        }
                        Err(wait) => tokio::time::sleep(wait).await,
                    }
                }
            }));
        }
        let refused = Arc::new(AtomicU32::new(0));
        let reads = Arc::new(AtomicU32::new(0));
        let mut tick = tokio::time::interval(Duration::from_millis(20));
        // The load saturates first.
        tokio::time::sleep(Duration::from_secs(2)).await;
        while Instant::now() < stop {
            tick.tick().await;
            reads.fetch_add(1, Ordering::Relaxed);
            loop {
                match meter.admit("c", "0", budget, Priority::High, Instant::now()) {
                    Ok(r) => {
                        tokio::time::sleep(Duration::from_millis(1)).await;
                        let now = Instant::now();
                        meter.record("c", "0", Lane::Range, 1.0, Some(r), Priority::High, now);
                        break;
                    }
                    Err(wait) => {
                        refused.fetch_add(1, Ordering::Relaxed);
                        tokio::time::sleep(wait).await;
                    }
                }
            }
        }
        for t in tasks {
            t.await.unwrap();
        }
        (
            refused.load(Ordering::Relaxed),
            reads.load(Ordering::Relaxed),
        )
    }

    #[tokio::test(start_paused = true)]
    async fn high_point_reads_are_not_refused_beside_a_saturating_low_load() {
        for (writers, write_ru) in [(8, 12.0), (8, 40.0), (32, 12.0)] {
            let (refused, reads) = high_reads_refused_under_a_low_load(writers, write_ru).await;
            assert_eq!(
                refused, 0,
                "{writers} writers of {write_ru} RU: {refused} of {reads} High reads refused"
            );
        }
    }
}

//! The race under paused time with fake attempts.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use super::*;
use crate::hedging::hub_latch_eligible;
use crate::protocol::{OperationType, ResourceType};

#[derive(Debug, Clone, PartialEq)]
struct Fake {
    status: Option<CosmosStatus>,
    pk: Option<&'static str>,
    session_unavailable: bool,
    charge: f64,
}

impl HedgeLegOutput for Fake {
    fn status(&self) -> Option<CosmosStatus> {
        self.status
    }
    fn partition_key_range_id(&self) -> Option<&str> {
        self.pk
    }
    fn observed_session_unavailable(&self) -> bool {
        self.session_unavailable
    }
}

fn out(status: u16, sub: u32) -> Fake {
    Fake {
        status: Some(CosmosStatus::new(status, sub)),
        pk: None,
        session_unavailable: false,
        charge: 1.0,
    }
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// Records whether a fake attempt ran to completion and whether its future was dropped.
#[derive(Clone, Default)]
struct Probe {
    completed: Arc<AtomicBool>,
    dropped: Arc<AtomicBool>,
}

impl Probe {
    fn cancelled(&self) -> bool {
        self.dropped.load(Ordering::SeqCst) && !self.completed.load(Ordering::SeqCst)
    }
}

struct DropGuard(Arc<AtomicBool>);
impl Drop for DropGuard {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// A fake attempt answering `result` after `after`.
fn attempt(after: Duration, result: Fake, probe: &Probe) -> impl Future<Output = Fake> {
    let probe = probe.clone();
    async move {
        let _guard = DropGuard(probe.dropped.clone());
        sleep(after).await;
        probe.completed.store(true, Ordering::SeqCst);
        result
    }
}

fn a() -> Region {
    Region::new("East US")
}
fn b() -> Region {
    Region::new("West US")
}

fn setup<'a>(primary: &'a Region, alternate: &'a Region, threshold_ms: u64) -> RaceSetup<'a> {
    RaceSetup {
        threshold: HedgeThreshold::new(ms(threshold_ms)).unwrap(),
        deadline: None,
        primary_region: primary,
        alternate_region: alternate,
        applicable_regions: 2,
        hub_latch: None,
    }
}

fn no_alternate() -> std::future::Ready<Fake> {
    panic!("the alternate must not be built")
}

#[tokio::test(start_paused = true)]
async fn primary_wins_pre_threshold_alternate_never_built() {
    let (ra, rb) = (a(), b());
    let p = Probe::default();
    let start = Instant::now();
    let race = race_hedged(
        setup(&ra, &rb, 100),
        attempt(ms(10), out(200, 0), &p),
        no_alternate,
    )
    .await;
    assert_eq!(start.elapsed(), ms(10));
    assert_eq!(
        race.terminal_state,
        HedgeTerminalState::PrimaryWonPreThreshold
    );
    assert_eq!(race.output, Some((Leg::Primary, out(200, 0))));
    assert_eq!(race.earlier, None);
    assert_eq!(race.diagnostics.alternate_region(), None);
    assert_eq!(race.diagnostics.response_region(), Some(&ra));
    assert!(!race.diagnostics.was_hedge());
}

#[tokio::test(start_paused = true)]
async fn final_error_pre_threshold_is_returned_without_hedging() {
    let (ra, rb) = (a(), b());
    let p = Probe::default();
    let race = race_hedged(
        setup(&ra, &rb, 100),
        attempt(ms(5), out(404, 0), &p),
        no_alternate,
    )
    .await;
    assert_eq!(
        race.terminal_state,
        HedgeTerminalState::PrimaryWonPreThreshold
    );
    assert_eq!(race.output, Some((Leg::Primary, out(404, 0))));
}

#[tokio::test(start_paused = true)]
async fn alternate_wins_and_primary_is_dropped() {
    let (ra, rb) = (a(), b());
    let (p, q) = (Probe::default(), Probe::default());
    let start = Instant::now();
    let race = race_hedged(
        setup(&ra, &rb, 100),
        attempt(ms(2000), out(200, 0), &p),
        || {
            assert_eq!(
                start.elapsed(),
                ms(100),
                "the alternate is built when the threshold fires"
            );
            attempt(ms(20), out(200, 0), &q)
        },
    )
    .await;
    assert_eq!(start.elapsed(), ms(120));
    assert_eq!(race.terminal_state, HedgeTerminalState::AlternateWon);
    assert_eq!(race.output, Some((Leg::Alternate, out(200, 0))));
    assert!(
        p.cancelled(),
        "the losing primary was dropped before the race returned"
    );
    assert!(race.diagnostics.was_hedge());
    assert_eq!(race.diagnostics.alternate_region(), Some(&rb));
    assert_eq!(race.diagnostics.response_region(), Some(&rb));
}

#[tokio::test(start_paused = true)]
async fn primary_wins_after_hedge_and_alternate_is_dropped() {
    let (ra, rb) = (a(), b());
    let (p, q) = (Probe::default(), Probe::default());
    let start = Instant::now();
    let race = race_hedged(
        setup(&ra, &rb, 100),
        attempt(ms(150), out(200, 0), &p),
        || attempt(ms(500), out(200, 0), &q),
    )
    .await;
    assert_eq!(start.elapsed(), ms(150));
    assert_eq!(
        race.terminal_state,
        HedgeTerminalState::PrimaryWonAfterHedge
    );
    assert_eq!(race.output, Some((Leg::Primary, out(200, 0))));
    assert!(q.cancelled());
    assert!(!race.diagnostics.was_hedge());
    assert_eq!(race.diagnostics.alternate_region(), Some(&rb));
    assert_eq!(race.diagnostics.response_region(), Some(&ra));
}

#[tokio::test(start_paused = true)]
async fn transient_alternate_keeps_primary_racing() {
    let (ra, rb) = (a(), b());
    let (p, q) = (Probe::default(), Probe::default());
    let start = Instant::now();
    let race = race_hedged(
        setup(&ra, &rb, 100),
        attempt(ms(300), out(200, 0), &p),
        || attempt(ms(10), out(503, 0), &q),
    )
    .await;
    assert_eq!(start.elapsed(), ms(300));
    assert_eq!(
        race.terminal_state,
        HedgeTerminalState::PrimaryWonAfterHedge
    );
    assert_eq!(race.earlier, Some((Leg::Alternate, out(503, 0))));
}

#[tokio::test(start_paused = true)]
async fn transient_primary_keeps_alternate_racing() {
    let (ra, rb) = (a(), b());
    let (p, q) = (Probe::default(), Probe::default());
    let race = race_hedged(
        setup(&ra, &rb, 100),
        attempt(ms(120), out(500, 0), &p),
        || attempt(ms(100), out(200, 0), &q),
    )
    .await;
    assert_eq!(race.terminal_state, HedgeTerminalState::AlternateWon);
    assert_eq!(race.earlier, Some((Leg::Primary, out(500, 0))));
}

#[tokio::test(start_paused = true)]
async fn both_transient_returns_the_last_with_what_both_learned() {
    let (ra, rb) = (a(), b());
    let (p, q) = (Probe::default(), Probe::default());
    let primary = Fake {
        pk: None,
        session_unavailable: true,
        charge: 1.5,
        ..out(503, 0)
    };
    let alternate = Fake {
        pk: Some("7"),
        charge: 2.0,
        ..out(404, 1002)
    };
    let start = Instant::now();
    let race = race_hedged(
        setup(&ra, &rb, 100),
        attempt(ms(150), primary.clone(), &p),
        || attempt(ms(200), alternate.clone(), &q),
    )
    .await;
    assert_eq!(start.elapsed(), ms(300));
    assert_eq!(
        race.terminal_state,
        HedgeTerminalState::BothTransient {
            deadline_elapsed: false
        }
    );
    assert_eq!(race.output, Some((Leg::Alternate, alternate)));
    assert_eq!(race.earlier, Some((Leg::Primary, primary)));
    assert_eq!(race.partition_key_range_id(), Some("7"));
    assert!(race.observed_session_unavailable());
    assert!(!race.deadline_exceeded());
    assert!(!race.diagnostics.was_hedge());
    assert_eq!(race.diagnostics.response_region(), None);
}

#[tokio::test(start_paused = true)]
async fn both_transient_keeps_the_first_partition_key_range_id() {
    let (ra, rb) = (a(), b());
    let (p, q) = (Probe::default(), Probe::default());
    let race = race_hedged(
        setup(&ra, &rb, 100),
        attempt(
            ms(150),
            Fake {
                pk: Some("3"),
                ..out(410, 1002)
            },
            &p,
        ),
        || {
            attempt(
                ms(200),
                Fake {
                    pk: Some("7"),
                    ..out(503, 0)
                },
                &q,
            )
        },
    )
    .await;
    assert_eq!(race.partition_key_range_id(), Some("3"));
    assert!(!race.observed_session_unavailable());
}

#[tokio::test(start_paused = true)]
async fn retryable_primary_before_threshold_sends_alternate_at_once() {
    let (ra, rb) = (a(), b());
    let (p, q) = (Probe::default(), Probe::default());
    let start = Instant::now();
    let race = race_hedged(
        setup(&ra, &rb, 100),
        attempt(ms(20), out(503, 0), &p),
        || {
            assert_eq!(start.elapsed(), ms(20));
            attempt(ms(30), out(200, 0), &q)
        },
    )
    .await;
    assert_eq!(start.elapsed(), ms(50));
    assert_eq!(race.terminal_state, HedgeTerminalState::AlternateWon);
    assert_eq!(race.earlier, Some((Leg::Primary, out(503, 0))));
}

#[tokio::test(start_paused = true)]
async fn throttle_that_may_not_hedge_is_returned_before_threshold() {
    let (ra, rb) = (a(), b());
    for sub in [0, 3201] {
        let p = Probe::default();
        let race = race_hedged(
            setup(&ra, &rb, 100),
            attempt(ms(20), out(429, sub), &p),
            no_alternate,
        )
        .await;
        // Returned, but no win: no region answered, and nothing was sent to the alternate.
        assert_eq!(
            race.terminal_state,
            HedgeTerminalState::PrimaryTransientPreThreshold
        );
        assert_eq!(race.output, Some((Leg::Primary, out(429, sub))));
        assert_eq!(race.diagnostics.response_region(), None);
        assert_eq!(race.diagnostics.alternate_region(), None);
        assert!(!race.diagnostics.was_hedge());
    }
    // A throttle that is final for the race (an RU budget) is the primary's answer: a win.
    let p = Probe::default();
    let race = race_hedged(
        setup(&ra, &rb, 100),
        attempt(ms(20), out(429, 3200), &p),
        no_alternate,
    )
    .await;
    assert_eq!(
        race.terminal_state,
        HedgeTerminalState::PrimaryWonPreThreshold
    );
    assert_eq!(race.diagnostics.response_region(), Some(&ra));
    // 429/3092 may start a hedge.
    let (p, q) = (Probe::default(), Probe::default());
    let race = race_hedged(
        setup(&ra, &rb, 100),
        attempt(ms(20), out(429, 3092), &p),
        || attempt(ms(5), out(200, 0), &q),
    )
    .await;
    assert_eq!(race.terminal_state, HedgeTerminalState::AlternateWon);
}

#[tokio::test(start_paused = true)]
async fn deadline_before_threshold_harvests_nothing_after_window() {
    let (ra, rb) = (a(), b());
    let p = Probe::default();
    let start = Instant::now();
    let s = RaceSetup {
        deadline: Some(start + ms(50)),
        ..setup(&ra, &rb, 100)
    };
    let race = race_hedged(s, attempt(ms(1000), out(200, 0), &p), no_alternate).await;
    assert_eq!(start.elapsed(), ms(50) + HARVEST_WINDOW);
    assert_eq!(
        race.terminal_state,
        HedgeTerminalState::DeadlineExceededPreThreshold
    );
    assert_eq!(race.output, None);
    assert!(race.deadline_exceeded());
    assert!(p.cancelled());
    assert_eq!(race.diagnostics.alternate_region(), None);
    assert_eq!(race.diagnostics.response_region(), None);
}

#[tokio::test(start_paused = true)]
async fn deadline_before_threshold_harvests_primary_within_window() {
    let (ra, rb) = (a(), b());
    let p = Probe::default();
    let start = Instant::now();
    let s = RaceSetup {
        deadline: Some(start + ms(50)),
        ..setup(&ra, &rb, 100)
    };
    let race = race_hedged(s, attempt(ms(70), out(408, 0), &p), no_alternate).await;
    assert_eq!(start.elapsed(), ms(70));
    assert_eq!(
        race.terminal_state,
        HedgeTerminalState::DeadlineExceededPreThreshold
    );
    assert_eq!(race.output, Some((Leg::Primary, out(408, 0))));
}

#[tokio::test(start_paused = true)]
async fn deadline_while_both_race_cancels_both() {
    let (ra, rb) = (a(), b());
    let (p, q) = (Probe::default(), Probe::default());
    let start = Instant::now();
    let s = RaceSetup {
        deadline: Some(start + ms(300)),
        ..setup(&ra, &rb, 100)
    };
    let race = race_hedged(s, attempt(ms(2000), out(200, 0), &p), || {
        attempt(ms(1000), out(200, 0), &q)
    })
    .await;
    assert_eq!(start.elapsed(), ms(300) + HARVEST_WINDOW);
    // Neither attempt ended: not "both transient", which needs two results.
    assert_eq!(
        race.terminal_state,
        HedgeTerminalState::CancelledAwaitingPartner
    );
    assert_eq!(race.output, None);
    assert_eq!(race.earlier, None);
    assert!(p.cancelled() && q.cancelled());
    assert!(race.deadline_exceeded());
    assert_eq!(race.diagnostics.alternate_region(), Some(&rb));
}

#[tokio::test(start_paused = true)]
async fn app_cancel_preserves_hedge_diagnostics() {
    // The deadline fires while both race; the alternate answers inside the harvest window.
    let (ra, rb) = (a(), b());
    let (p, q) = (Probe::default(), Probe::default());
    let start = Instant::now();
    let s = RaceSetup {
        deadline: Some(start + ms(300)),
        ..setup(&ra, &rb, 100)
    };
    let harvested = Fake {
        pk: Some("4"),
        charge: 3.0,
        ..out(200, 0)
    };
    let race = race_hedged(s, attempt(ms(2000), out(200, 0), &p), || {
        attempt(ms(230), harvested.clone(), &q)
    })
    .await;
    assert_eq!(start.elapsed(), ms(330));
    assert!(race.deadline_exceeded());
    assert_eq!(race.output, Some((Leg::Alternate, harvested)));
    assert_eq!(race.partition_key_range_id(), Some("4"));
    assert!(p.cancelled());
    assert_eq!(race.diagnostics.primary_region(), &ra);
    assert_eq!(race.diagnostics.alternate_region(), Some(&rb));
    // The primary was still awaited when the deadline fired.
    assert_eq!(
        race.diagnostics.terminal_state(),
        HedgeTerminalState::CancelledAwaitingPartner
    );
    assert_eq!(race.diagnostics.response_region(), None);
}

#[tokio::test(start_paused = true)]
async fn deadline_awaiting_partner() {
    let (ra, rb) = (a(), b());
    let (p, q) = (Probe::default(), Probe::default());
    let start = Instant::now();
    let s = RaceSetup {
        deadline: Some(start + ms(300)),
        ..setup(&ra, &rb, 100)
    };
    let race = race_hedged(s, attempt(ms(150), out(503, 0), &p), || {
        attempt(ms(2000), out(200, 0), &q)
    })
    .await;
    assert_eq!(start.elapsed(), ms(350));
    assert_eq!(
        race.terminal_state,
        HedgeTerminalState::CancelledAwaitingPartner
    );
    assert_eq!(race.earlier, Some((Leg::Primary, out(503, 0))));
    assert_eq!(race.output, None);
    assert!(q.cancelled());
    assert!(race.deadline_exceeded());
}

#[tokio::test(start_paused = true)]
async fn both_transient_at_the_deadline_reports_it_elapsed() {
    let (ra, rb) = (a(), b());
    let (p, q) = (Probe::default(), Probe::default());
    let start = Instant::now();
    let s = RaceSetup {
        deadline: Some(start + ms(300)),
        ..setup(&ra, &rb, 100)
    };
    // The alternate gives up with a 408 exactly at the deadline.
    let race = race_hedged(s, attempt(ms(150), out(503, 0), &p), || {
        attempt(ms(200), out(408, 0), &q)
    })
    .await;
    assert_eq!(start.elapsed(), ms(300));
    assert_eq!(
        race.terminal_state,
        HedgeTerminalState::BothTransient {
            deadline_elapsed: true
        }
    );
    assert_eq!(race.output, Some((Leg::Alternate, out(408, 0))));
}

#[tokio::test(start_paused = true)]
async fn retryable_primary_at_the_deadline_sends_no_alternate() {
    let (ra, rb) = (a(), b());
    let p = Probe::default();
    let start = Instant::now();
    let s = RaceSetup {
        deadline: Some(start + ms(40)),
        ..setup(&ra, &rb, 100)
    };
    let race = race_hedged(s, attempt(ms(40), out(503, 0), &p), no_alternate).await;
    assert_eq!(
        race.terminal_state,
        HedgeTerminalState::DeadlineExceededPreThreshold
    );
    assert_eq!(race.output, Some((Leg::Primary, out(503, 0))));
}

#[tokio::test(start_paused = true)]
async fn shared_hub_region_latch_initialized_when_eligible() {
    let (ra, rb) = (a(), b());
    let latch = HubRegionLatch::new();
    let eligible = hub_latch_eligible(ResourceType::Document, OperationType::Read, false);
    let s = RaceSetup {
        hub_latch: eligible.then_some(&latch),
        ..setup(&ra, &rb, 100)
    };
    let seen_by_primary: Mutex<Vec<Arc<AtomicBool>>> = Mutex::new(Vec::new());
    let seen_by_alternate: Mutex<Vec<Arc<AtomicBool>>> = Mutex::new(Vec::new());
    let primary = async {
        assert!(
            latch.shared().is_none(),
            "no shared latch before the threshold"
        );
        sleep(ms(150)).await;
        seen_by_primary
            .lock()
            .unwrap()
            .extend(latch.shared().cloned());
        sleep(ms(500)).await;
        out(200, 0)
    };
    let race = race_hedged(s, primary, || {
        seen_by_alternate
            .lock()
            .unwrap()
            .extend(latch.shared().cloned());
        async {
            sleep(ms(100)).await;
            out(200, 0)
        }
    })
    .await;
    assert_eq!(race.terminal_state, HedgeTerminalState::AlternateWon);
    let (p, q) = (
        seen_by_primary.lock().unwrap(),
        seen_by_alternate.lock().unwrap(),
    );
    assert_eq!(
        p.len(),
        1,
        "the primary sees the shared latch once the alternate launched"
    );
    assert_eq!(
        q.len(),
        1,
        "the alternate is built with the shared latch in place"
    );
    assert!(Arc::ptr_eq(&p[0], &q[0]), "both attempts share one flag");
}

#[tokio::test(start_paused = true)]
async fn shared_hub_region_latch_none_on_zero_overhead_happy_path() {
    let (ra, rb) = (a(), b());
    let latch = HubRegionLatch::new();
    let s = RaceSetup {
        hub_latch: Some(&latch),
        ..setup(&ra, &rb, 100)
    };
    let p = Probe::default();
    let race = race_hedged(s, attempt(ms(10), out(200, 0), &p), no_alternate).await;
    assert_eq!(
        race.terminal_state,
        HedgeTerminalState::PrimaryWonPreThreshold
    );
    assert!(latch.shared().is_none(), "no Arc<AtomicBool> was created");
}

#[tokio::test(start_paused = true)]
async fn shared_hub_region_latch_none_on_multi_master_or_metadata() {
    let (ra, rb) = (a(), b());
    let cases = [
        (ResourceType::Document, OperationType::Read, true),
        (ResourceType::Container, OperationType::Read, false),
    ];
    for (rt, op, multi_write) in cases {
        let latch = HubRegionLatch::new();
        let eligible = hub_latch_eligible(rt, op, multi_write);
        let s = RaceSetup {
            hub_latch: eligible.then_some(&latch),
            ..setup(&ra, &rb, 100)
        };
        let (p, q) = (Probe::default(), Probe::default());
        let race = race_hedged(s, attempt(ms(500), out(200, 0), &p), || {
            attempt(ms(10), out(200, 0), &q)
        })
        .await;
        assert_eq!(
            race.terminal_state,
            HedgeTerminalState::AlternateWon,
            "{rt:?}"
        );
        assert!(latch.shared().is_none(), "{rt:?} multi_write={multi_write}");
    }
}

#[tokio::test(start_paused = true)]
async fn primary_is_preferred_when_both_finish_together() {
    let (ra, rb) = (a(), b());
    let (p, q) = (Probe::default(), Probe::default());
    let race = race_hedged(
        setup(&ra, &rb, 100),
        attempt(ms(200), out(200, 0), &p),
        || attempt(ms(100), out(200, 0), &q),
    )
    .await;
    assert_eq!(
        race.terminal_state,
        HedgeTerminalState::PrimaryWonAfterHedge
    );
}

#[tokio::test(start_paused = true)]
async fn dropping_the_race_drops_both_attempts() {
    let (ra, rb) = (a(), b());
    let (p, q) = (Probe::default(), Probe::default());
    let race = race_hedged(
        setup(&ra, &rb, 100),
        attempt(ms(2000), out(200, 0), &p),
        || attempt(ms(2000), out(200, 0), &q),
    );
    assert!(tokio::time::timeout(ms(300), race).await.is_err());
    assert!(p.cancelled() && q.cancelled());
}

#[path = "race_events_tests.rs"]
mod events_tests;

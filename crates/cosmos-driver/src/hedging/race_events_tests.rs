//! The `cosmos.hedge.*` events the race emits, captured deterministically (see
//! `crate::event_capture`).

use tracing::Level;

use super::*;
use crate::event_capture::{capture_paused, Events};

/// Runs one race under paused time and returns the hedging events it emitted.
fn race_events<F: Future>(race: impl FnOnce() -> F) -> (F::Output, Events) {
    capture_paused(events::TARGET, race)
}

#[test]
fn happy_path_emits_enabled_and_winner_only() {
    let (_, capture) = race_events(|| async {
        let (ra, rb) = (a(), b());
        let p = Probe::default();
        race_hedged(
            setup(&ra, &rb, 100),
            attempt(ms(10), out(200, 0), &p),
            no_alternate,
        )
        .await;
    });
    assert_eq!(
        capture.names(),
        [
            "cosmos.hedge.enabled_for_operation",
            "cosmos.hedge.winner_selected"
        ]
    );
    let enabled = capture.get("cosmos.hedge.enabled_for_operation");
    assert_eq!(enabled.level, Level::DEBUG);
    assert_eq!(enabled.field("threshold_ms"), Some("100"));
    assert_eq!(enabled.field("region_count"), Some("2"));
    let winner = capture.get("cosmos.hedge.winner_selected");
    assert_eq!(winner.field("winner_region"), Some("East US"));
    assert_eq!(winner.field("was_hedge"), Some("false"));
    assert_eq!(winner.field("elapsed_ms"), Some("10"));
}

#[test]
fn alternate_win_emits_spawn_cancel_and_winner() {
    let (_, capture) = race_events(|| async {
        let (ra, rb) = (a(), b());
        let (p, q) = (Probe::default(), Probe::default());
        race_hedged(
            setup(&ra, &rb, 100),
            attempt(ms(2000), out(200, 0), &p),
            || attempt(ms(20), out(200, 0), &q),
        )
        .await;
    });
    assert_eq!(
        capture.names(),
        [
            "cosmos.hedge.enabled_for_operation",
            "cosmos.hedge.alternate_spawned",
            "cosmos.hedge.canceled",
            "cosmos.hedge.winner_selected"
        ]
    );
    let spawned = capture.get("cosmos.hedge.alternate_spawned");
    assert_eq!(spawned.field("target_region"), Some("West US"));
    assert_eq!(spawned.field("elapsed_ms"), Some("100"));
    let canceled = capture.get("cosmos.hedge.canceled");
    assert_eq!(canceled.field("which"), Some("primary"));
    assert_eq!(canceled.field("target_region"), Some("East US"));
    assert_eq!(canceled.field("reason"), Some("winner_found"));
    let winner = capture.get("cosmos.hedge.winner_selected");
    assert_eq!(winner.field("winner_region"), Some("West US"));
    assert_eq!(winner.field("was_hedge"), Some("true"));
    assert_eq!(winner.field("elapsed_ms"), Some("120"));
}

#[test]
fn both_transient_emits_a_warning() {
    let (_, capture) = race_events(|| async {
        let (ra, rb) = (a(), b());
        let (p, q) = (Probe::default(), Probe::default());
        race_hedged(
            setup(&ra, &rb, 100),
            attempt(ms(150), out(503, 0), &p),
            || attempt(ms(200), out(500, 0), &q),
        )
        .await;
    });
    let warn = capture.get("cosmos.hedge.both_transient");
    assert_eq!(warn.level, Level::WARN);
    assert_eq!(warn.field("last_status_code"), Some("500"));
    assert!(!capture.names().contains(&"cosmos.hedge.winner_selected"));
}

#[test]
fn deadline_cancels_with_reason_deadline() {
    let (_, capture) = race_events(|| async {
        let (ra, rb) = (a(), b());
        let (p, q) = (Probe::default(), Probe::default());
        let s = RaceSetup {
            deadline: Some(Instant::now() + ms(300)),
            ..setup(&ra, &rb, 100)
        };
        race_hedged(s, attempt(ms(2000), out(200, 0), &p), || {
            attempt(ms(2000), out(200, 0), &q)
        })
        .await;
    });
    let canceled = capture.all("cosmos.hedge.canceled");
    assert_eq!(canceled.len(), 2);
    assert!(canceled
        .iter()
        .all(|c| c.field("reason") == Some("deadline")));
    let which: Vec<_> = canceled.iter().filter_map(|c| c.field("which")).collect();
    assert_eq!(which, ["primary", "alternate"]);
}

#[test]
fn deadline_before_threshold_cancels_the_primary_in_flight() {
    let (race, capture) = race_events(|| async {
        let (ra, rb) = (a(), b());
        let p = Probe::default();
        let s = RaceSetup {
            deadline: Some(Instant::now() + ms(50)),
            ..setup(&ra, &rb, 100)
        };
        let race = race_hedged(s, attempt(ms(2000), out(200, 0), &p), no_alternate).await;
        (race.terminal_state, p.cancelled())
    });
    assert_eq!(
        race,
        (HedgeTerminalState::DeadlineExceededPreThreshold, true)
    );
    assert_eq!(
        capture.names(),
        [
            "cosmos.hedge.enabled_for_operation",
            "cosmos.hedge.canceled"
        ]
    );
    let canceled = capture.get("cosmos.hedge.canceled");
    assert_eq!(canceled.field("which"), Some("primary"));
    assert_eq!(canceled.field("target_region"), Some("East US"));
    assert_eq!(canceled.field("reason"), Some("deadline"));
}

#[test]
fn deadline_before_threshold_with_the_primary_harvested_cancels_nothing() {
    let (cancelled, capture) = race_events(|| async {
        let (ra, rb) = (a(), b());
        let p = Probe::default();
        let s = RaceSetup {
            deadline: Some(Instant::now() + ms(50)),
            ..setup(&ra, &rb, 100)
        };
        // The primary answers inside the harvest window: it finished, nothing was cancelled.
        race_hedged(s, attempt(ms(60), out(503, 0), &p), no_alternate).await;
        p.cancelled()
    });
    assert!(!cancelled);
    assert!(!capture.names().contains(&"cosmos.hedge.canceled"));
}

#[test]
fn dropping_the_race_reports_app_canceled() {
    let (timed_out, capture) = race_events(|| async {
        let (ra, rb) = (a(), b());
        let (p, q) = (Probe::default(), Probe::default());
        let race = race_hedged(
            setup(&ra, &rb, 100),
            attempt(ms(2000), out(200, 0), &p),
            || attempt(ms(2000), out(200, 0), &q),
        );
        tokio::time::timeout(ms(300), race).await.is_err()
    });
    assert!(timed_out);
    let reasons: Vec<_> = capture
        .all("cosmos.hedge.canceled")
        .iter()
        .filter_map(|c| c.field("reason"))
        .collect();
    assert_eq!(reasons, ["app_canceled", "app_canceled"]);
}

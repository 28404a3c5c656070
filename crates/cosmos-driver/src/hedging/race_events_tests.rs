//! The `cosmos.hedge.*` events the race emits, captured by a test subscriber.

use std::fmt::Debug;
use std::sync::{Arc, Mutex};

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Metadata, Subscriber};

use super::*;

#[derive(Debug, Clone)]
struct Captured {
    name: &'static str,
    level: Level,
    fields: Vec<(&'static str, String)>,
}

impl Captured {
    fn field(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
    }
}

#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<Captured>>>);

struct Fields<'a>(&'a mut Vec<(&'static str, String)>);
impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn Debug) {
        self.0.push((field.name(), format!("{value:?}")));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.push((field.name(), value.to_string()));
    }
}

impl Subscriber for Capture {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        metadata.target() == events::TARGET
    }
    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        let mut fields = Vec::new();
        event.record(&mut Fields(&mut fields));
        let m = event.metadata();
        self.0.lock().unwrap().push(Captured {
            name: m.name(),
            level: *m.level(),
            fields,
        });
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

impl Capture {
    fn names(&self) -> Vec<&'static str> {
        self.0.lock().unwrap().iter().map(|c| c.name).collect()
    }
    fn get(&self, name: &str) -> Captured {
        let all = self.0.lock().unwrap();
        let found = all.iter().find(|c| c.name == name).cloned();
        found.unwrap_or_else(|| {
            panic!(
                "no {name} event in {:?}",
                all.iter().map(|c| c.name).collect::<Vec<_>>()
            )
        })
    }
}

#[tokio::test(start_paused = true)]
async fn happy_path_emits_enabled_and_winner_only() {
    let capture = Capture::default();
    let _guard = tracing::subscriber::set_default(capture.clone());
    let (ra, rb) = (a(), b());
    let p = Probe::default();
    race_hedged(
        setup(&ra, &rb, 100),
        attempt(ms(10), out(200, 0), &p),
        no_alternate,
    )
    .await;
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

#[tokio::test(start_paused = true)]
async fn alternate_win_emits_spawn_cancel_and_winner() {
    let capture = Capture::default();
    let _guard = tracing::subscriber::set_default(capture.clone());
    let (ra, rb) = (a(), b());
    let (p, q) = (Probe::default(), Probe::default());
    race_hedged(
        setup(&ra, &rb, 100),
        attempt(ms(2000), out(200, 0), &p),
        || attempt(ms(20), out(200, 0), &q),
    )
    .await;
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

#[tokio::test(start_paused = true)]
async fn both_transient_emits_a_warning() {
    let capture = Capture::default();
    let _guard = tracing::subscriber::set_default(capture.clone());
    let (ra, rb) = (a(), b());
    let (p, q) = (Probe::default(), Probe::default());
    race_hedged(
        setup(&ra, &rb, 100),
        attempt(ms(150), out(503, 0), &p),
        || attempt(ms(200), out(500, 0), &q),
    )
    .await;
    let warn = capture.get("cosmos.hedge.both_transient");
    assert_eq!(warn.level, Level::WARN);
    assert_eq!(warn.field("last_status_code"), Some("500"));
    assert!(!capture.names().contains(&"cosmos.hedge.winner_selected"));
}

#[tokio::test(start_paused = true)]
async fn deadline_cancels_with_reason_deadline() {
    let capture = Capture::default();
    let _guard = tracing::subscriber::set_default(capture.clone());
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
    let all = capture.0.lock().unwrap().clone();
    let canceled: Vec<_> = all
        .iter()
        .filter(|c| c.name == "cosmos.hedge.canceled")
        .collect();
    assert_eq!(canceled.len(), 2);
    assert!(canceled
        .iter()
        .all(|c| c.field("reason") == Some("deadline")));
    let which: Vec<_> = canceled.iter().filter_map(|c| c.field("which")).collect();
    assert_eq!(which, ["primary", "alternate"]);
}

#[tokio::test(start_paused = true)]
async fn deadline_before_threshold_cancels_the_primary_in_flight() {
    let capture = Capture::default();
    let _guard = tracing::subscriber::set_default(capture.clone());
    let (ra, rb) = (a(), b());
    let p = Probe::default();
    let s = RaceSetup {
        deadline: Some(Instant::now() + ms(50)),
        ..setup(&ra, &rb, 100)
    };
    let race = race_hedged(s, attempt(ms(2000), out(200, 0), &p), no_alternate).await;
    assert_eq!(
        race.terminal_state,
        HedgeTerminalState::DeadlineExceededPreThreshold
    );
    assert!(p.cancelled());
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

#[tokio::test(start_paused = true)]
async fn deadline_before_threshold_with_the_primary_harvested_cancels_nothing() {
    let capture = Capture::default();
    let _guard = tracing::subscriber::set_default(capture.clone());
    let (ra, rb) = (a(), b());
    let p = Probe::default();
    let s = RaceSetup {
        deadline: Some(Instant::now() + ms(50)),
        ..setup(&ra, &rb, 100)
    };
    // The primary answers inside the harvest window: it finished, nothing was cancelled.
    race_hedged(s, attempt(ms(60), out(503, 0), &p), no_alternate).await;
    assert!(!p.cancelled());
    assert!(!capture.names().contains(&"cosmos.hedge.canceled"));
}

#[tokio::test(start_paused = true)]
async fn dropping_the_race_reports_app_canceled() {
    let capture = Capture::default();
    let _guard = tracing::subscriber::set_default(capture.clone());
    let (ra, rb) = (a(), b());
    let (p, q) = (Probe::default(), Probe::default());
    let race = race_hedged(
        setup(&ra, &rb, 100),
        attempt(ms(2000), out(200, 0), &p),
        || attempt(ms(2000), out(200, 0), &q),
    );
    assert!(tokio::time::timeout(ms(300), race).await.is_err());
    let all = capture.0.lock().unwrap().clone();
    let reasons: Vec<_> = all
        .iter()
        .filter(|c| c.name == "cosmos.hedge.canceled")
        .filter_map(|c| c.field("reason"))
        .collect();
    assert_eq!(reasons, ["app_canceled", "app_canceled"]);
}

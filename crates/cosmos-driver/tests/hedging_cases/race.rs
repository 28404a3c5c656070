//! The race itself over real HTTP: who wins, what is cancelled, what is never hedged, the deadline.

use std::time::Duration;

use cosmos_driver::hedging::{AvailabilityStrategy, HedgeTerminalState, HedgingEnv};
use cosmos_driver::{AttemptReason, CosmosDriver, CosmosOperation, OperationOptions};
use cosmos_emulator::faults::{FaultRule, OpKind, Reaction};
use cosmos_emulator::EmulatorBuilder;
use serde_json::json;
use tokio::time::Instant;

use super::support::{hedging, reads_in, row, rows, slow_reads, Setup, EAST, NORTH, WEST};
use crate::common;
use AttemptReason::{FirstAttempt, Hedge};

#[tokio::test]
async fn hedging_read_primary_slow() {
    let s = Setup::three_regions(200).await;
    let _slow = s.emu.faults().add(slow_reads(EAST, 2_000));
    let started = Instant::now();
    let r = s
        .driver
        .execute(common::read(&s.c, "a", "p"), &OperationOptions::new())
        .await
        .expect("the alternate answers");
    assert!(
        started.elapsed() < Duration::from_millis(1_500),
        "took {:?}",
        started.elapsed()
    );
    let h = r.diagnostics().hedge().expect("hedge diagnostics");
    assert!(h.was_hedge());
    assert_eq!(h.terminal_state(), HedgeTerminalState::AlternateWon);
    assert_eq!(h.primary_region().as_str(), EAST);
    assert_eq!(h.alternate_region().map(|r| r.as_str()), Some(WEST));
    assert_eq!(h.response_region().map(|r| r.as_str()), Some(WEST));
    assert_eq!(h.strategy_config().threshold, Duration::from_millis(200));
    assert_eq!(
        rows(r.diagnostics()),
        [
            row(EAST, FirstAttempt, "cancelled"),
            row(WEST, Hedge, "200")
        ]
    );
    assert_eq!(s.reads(NORTH), 0, "at most one alternate");
}

#[tokio::test]
async fn hedging_read_primary_fast() {
    let s = Setup::three_regions(1_000).await;
    let r = s
        .driver
        .execute(common::read(&s.c, "a", "p"), &OperationOptions::new())
        .await
        .unwrap();
    let h = r
        .diagnostics()
        .hedge()
        .expect("hedging was active, so its diagnostics are attached");
    assert!(!h.was_hedge());
    assert_eq!(
        h.terminal_state(),
        HedgeTerminalState::PrimaryWonPreThreshold
    );
    assert_eq!(h.alternate_region(), None);
    assert_eq!(h.response_region().map(|r| r.as_str()), Some(EAST));
    assert_eq!(rows(r.diagnostics()), [row(EAST, FirstAttempt, "200")]);
    assert_eq!((s.reads(WEST), s.reads(NORTH)), (0, 0));
}

#[tokio::test]
async fn hedging_read_primary_503() {
    // The threshold is far off: the alternate is launched by the 503, not by the timer.
    let s = Setup::three_regions(1_000).await;
    let _down = s
        .emu
        .faults()
        .add(reads_in(EAST, Reaction::respond(503, 0)));
    let before = (s.reads(EAST), s.reads(WEST), s.reads(NORTH));
    let started = Instant::now();
    let r = s
        .driver
        .execute(common::read(&s.c, "a", "p"), &OperationOptions::new())
        .await
        .expect("West serves it");
    assert!(
        started.elapsed() < Duration::from_millis(900),
        "the alternate did not wait for the threshold: {:?}",
        started.elapsed()
    );
    let h = r.diagnostics().hedge().expect("hedge diagnostics");
    // The primary's failover became the hedge: the alternate region won, not a primary that
    // moved there by itself.
    assert_eq!(
        h.terminal_state(),
        HedgeTerminalState::AlternateWon,
        "{h:?}"
    );
    assert!(h.was_hedge());
    assert_eq!(h.primary_region().as_str(), EAST);
    assert_eq!(h.alternate_region().map(|r| r.as_str()), Some(WEST));
    assert_eq!(h.response_region().map(|r| r.as_str()), Some(WEST));
    assert_eq!(
        rows(r.diagnostics()),
        [row(EAST, FirstAttempt, "503"), row(WEST, Hedge, "200")]
    );
    assert_eq!(
        (s.reads(EAST), s.reads(WEST), s.reads(NORTH)),
        (before.0 + 1, before.1 + 1, before.2),
        "East saw only the 503'd attempt, West one read, North nothing"
    );
    // A 503 is one partition's answer: it counts against that partition in East (its circuit
    // breaker) and leaves the endpoint available to the account's other partitions.
    assert!(
        !s.marked_unavailable(EAST),
        "a 503 does not mark the primary's endpoint"
    );
    let range = r.partition_key_range_id().expect("the range header");
    assert_eq!(
        s.driver
            .partition_breaker()
            .consecutive_failures(s.c.link(), range, &EAST.into()),
        1,
        "the 503 counts against the partition in East"
    );
    assert!(!s.marked_unavailable(WEST));

    // Below the breaker's threshold, the next read starts in East again and the alternate takes
    // over at once; the partition's failures in East keep counting.
    let r = s
        .driver
        .execute(common::read(&s.c, "a", "p"), &OperationOptions::new())
        .await
        .unwrap();
    let h = r.diagnostics().hedge().expect("hedged");
    assert_eq!(h.primary_region().as_str(), EAST);
    assert_eq!(h.terminal_state(), HedgeTerminalState::AlternateWon);
    assert_eq!(
        rows(r.diagnostics()),
        [row(EAST, FirstAttempt, "503"), row(WEST, Hedge, "200")]
    );
    assert_eq!(
        s.driver
            .partition_breaker()
            .consecutive_failures(s.c.link(), range, &EAST.into()),
        2
    );
}

#[tokio::test]
async fn hedging_read_both_regions_slow() {
    let s = Setup::three_regions(200).await;
    let _east = s.emu.faults().add(slow_reads(EAST, 1_500));
    let _west = s.emu.faults().add(slow_reads(WEST, 1_500));
    let started = Instant::now();
    let r = s
        .driver
        .execute(common::read(&s.c, "a", "p"), &OperationOptions::new())
        .await
        .unwrap();
    let elapsed = started.elapsed();
    assert!(
        elapsed >= Duration::from_millis(1_500) && elapsed < Duration::from_millis(3_000),
        "took {elapsed:?}"
    );
    let h = r.diagnostics().hedge().unwrap();
    // The primary was sent first and answers first: it wins, the alternate is dropped.
    assert_eq!(h.terminal_state(), HedgeTerminalState::PrimaryWonAfterHedge);
    assert!(!h.was_hedge());
    assert_eq!(h.alternate_region().map(|r| r.as_str()), Some(WEST));
    assert_eq!(
        rows(r.diagnostics()),
        [
            row(EAST, FirstAttempt, "200"),
            row(WEST, Hedge, "cancelled")
        ]
    );
    assert_eq!((s.reads(EAST), s.reads(WEST), s.reads(NORTH)), (1, 1, 0));
}

#[tokio::test]
async fn hedging_cancels_loser() {
    let s = Setup::three_regions(150).await;
    let slow = s.emu.faults().add(slow_reads(EAST, 3_000));
    let started = Instant::now();
    let r = s
        .driver
        .execute(common::read(&s.c, "a", "p"), &OperationOptions::new())
        .await
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_millis(2_000),
        "the loser is not awaited"
    );
    assert!(r.diagnostics().hedge().unwrap().was_hedge());
    assert_eq!(slow.hits(), 1, "the slow region saw exactly one request");
    assert_eq!(s.reads(EAST), 1);
    let east: Vec<_> = rows(r.diagnostics())
        .into_iter()
        .filter(|(region, ..)| region == EAST)
        .collect();
    assert_eq!(
        east,
        [row(EAST, FirstAttempt, "cancelled")],
        "the loser's attempt was cancelled, not retried"
    );
    // Its cancellation is not a failure of the region.
    assert!(!s.marked_unavailable(EAST));
}

#[tokio::test]
async fn hedging_write_not_hedged() {
    let s = Setup::start(EmulatorBuilder::new().multi_write(true), |o| {
        o.with_preferred_regions([EAST, WEST, NORTH])
            .with_availability_strategy(hedging(100))
    })
    .await;
    let _slow = s.emu.faults().add(
        FaultRule::new(Reaction::delay_ms(800))
            .in_regions([EAST])
            .for_ops([OpKind::Create, OpKind::Upsert]),
    );
    let (west_before, north_before) = (
        s.emu.counters().region_total(WEST),
        s.emu.counters().region_total(NORTH),
    );
    let started = Instant::now();
    let body = json!({"id": "w", "pk": "p"});
    let op = CosmosOperation::create_item(s.c.clone())
        .with_partition_key("p")
        .with_json_body(&body)
        .unwrap();
    let r = s
        .driver
        .execute(op, &OperationOptions::new())
        .await
        .unwrap();
    assert!(
        started.elapsed() >= Duration::from_millis(800),
        "the write waited for its region"
    );
    assert!(
        r.diagnostics().hedge().is_none(),
        "writes never enter a race"
    );
    assert_eq!(rows(r.diagnostics()), [row(EAST, FirstAttempt, "201")]);
    assert_eq!(s.emu.counters().region_total(WEST), west_before);
    assert_eq!(s.emu.counters().region_total(NORTH), north_before);
}

#[tokio::test]
async fn hedging_disabled_per_operation() {
    let s = Setup::three_regions(100).await;
    let _slow = s.emu.faults().add(slow_reads(EAST, 600));
    let disabled =
        OperationOptions::new().with_availability_strategy(AvailabilityStrategy::Disabled);
    let started = Instant::now();
    let r = s
        .driver
        .execute(common::read(&s.c, "a", "p"), &disabled)
        .await
        .unwrap();
    assert!(started.elapsed() >= Duration::from_millis(600));
    assert!(r.diagnostics().hedge().is_none());
    assert_eq!(rows(r.diagnostics()), [row(EAST, FirstAttempt, "200")]);
    assert_eq!(s.reads(WEST), 0);

    // A sibling operation still hedges with the client's strategy.
    let r = s
        .driver
        .execute(common::read(&s.c, "a", "p"), &OperationOptions::new())
        .await
        .unwrap();
    assert!(r.diagnostics().hedge().unwrap().was_hedge());
}

/// A driver for `s`'s emulator with `env` as its hedging environment and a 150 ms client strategy.
async fn driver_with_env(s: &Setup, env: HedgingEnv) -> CosmosDriver {
    let options = common::options(&s.emu)
        .with_preferred_regions([EAST, WEST])
        .with_availability_strategy(hedging(150));
    CosmosDriver::with_hedging_env(options, env).await.unwrap()
}

#[tokio::test]
async fn hedging_switches_from_the_environment_win_over_the_code() {
    let s = Setup::three_regions(150).await;
    let _slow = s.emu.faults().add(slow_reads(EAST, 700));
    let disabled =
        OperationOptions::new().with_availability_strategy(AvailabilityStrategy::Disabled);

    // The kill switch forced on: hedges over an operation's Disabled, with the client's threshold.
    let on = driver_with_env(
        &s,
        HedgingEnv::from_lookup(|k| {
            (k == "AZURE_COSMOS_HEDGING_ENABLED_OVERRIDE").then(|| "on".into())
        }),
    )
    .await;
    let r = on
        .execute(common::read(&s.c, "a", "p"), &disabled)
        .await
        .unwrap();
    let h = r.diagnostics().hedge().expect("forced on");
    assert!(h.was_hedge());
    assert_eq!(
        h.strategy_config().threshold,
        Duration::from_millis(150),
        "the client's threshold is kept"
    );

    // Forced off: no race even though the client configured one.
    let off = driver_with_env(
        &s,
        HedgingEnv::from_lookup(|k| {
            (k == "AZURE_COSMOS_HEDGING_ENABLED_OVERRIDE").then(|| "FALSE".into())
        }),
    )
    .await;
    let r = off
        .execute(common::read(&s.c, "a", "p"), &OperationOptions::new())
        .await
        .unwrap();
    assert!(r.diagnostics().hedge().is_none());

    // An unreadable switch does not fail open: hedging is off and the value is reported.
    let garbled = HedgingEnv::from_lookup(|k| {
        (k == "AZURE_COSMOS_HEDGING_ENABLED_OVERRIDE").then(|| "maybe".into())
    });
    assert_eq!(garbled.rejected.len(), 1);
    let unsure = driver_with_env(&s, garbled).await;
    let r = unsure
        .execute(common::read(&s.c, "a", "p"), &OperationOptions::new())
        .await
        .unwrap();
    assert!(r.diagnostics().hedge().is_none());
}

#[tokio::test]
async fn hedging_default_is_on_for_reads_with_two_preferred_regions() {
    // No strategy anywhere: the driver default hedges, with min(1000 ms, request timeout / 2).
    let s = Setup::start(EmulatorBuilder::new(), |o| {
        o.with_preferred_regions([EAST, WEST])
            .with_request_timeout(Duration::from_millis(400))
    })
    .await;
    let slow = s.emu.faults().add(slow_reads(EAST, 1_500));
    let r = s
        .driver
        .execute(common::read(&s.c, "a", "p"), &OperationOptions::new())
        .await
        .unwrap();
    let h = r.diagnostics().hedge().expect("on by default");
    assert_eq!(h.strategy_config().threshold, Duration::from_millis(200));
    assert!(h.was_hedge());
    drop(slow);

    // Without preferred regions there is no deterministic alternate: no race.
    let plain = common::driver(common::options(&s.emu)).await;
    let r = plain
        .execute(common::read(&s.c, "a", "p"), &OperationOptions::new())
        .await
        .unwrap();
    assert!(r.diagnostics().hedge().is_none());
    // Excluding all but one region leaves nothing to hedge to.
    let one = OperationOptions::new().with_excluded_regions([WEST, NORTH]);
    let r = s
        .driver
        .execute(common::read(&s.c, "a", "p"), &one)
        .await
        .unwrap();
    assert!(r.diagnostics().hedge().is_none());
    // Nor is a write hedged, metadata writes included.
    let r = s
        .driver
        .execute(
            CosmosOperation::create_database(
                cosmos_driver::DatabaseReference::new("other").unwrap(),
            ),
            &OperationOptions::new(),
        )
        .await
        .unwrap();
    assert!(r.diagnostics().hedge().is_none());
}

#[tokio::test]
async fn hedging_respects_deadline() {
    let s = Setup::three_regions(1_000).await;
    let _slow = s.emu.faults().add(slow_reads(EAST, 2_000));
    let options = OperationOptions::new().with_end_to_end_timeout(Duration::from_millis(300));
    let started = Instant::now();
    let e = s
        .driver
        .execute(common::read(&s.c, "a", "p"), &options)
        .await
        .unwrap_err();
    assert!(
        started.elapsed() < Duration::from_millis(1_000),
        "took {:?}",
        started.elapsed()
    );
    assert!(e.is_end_to_end_timeout(), "{e}");
    let h = e
        .diagnostics()
        .hedge()
        .expect("the error carries the hedge diagnostics");
    assert_eq!(
        h.terminal_state(),
        HedgeTerminalState::DeadlineExceededPreThreshold
    );
    assert_eq!(h.alternate_region(), None);
    assert_eq!(h.response_region(), None);
    assert_eq!(s.reads(WEST), 0, "no alternate fires after the deadline");
}

#[tokio::test]
async fn app_cancel_preserves_hedge_diagnostics() {
    // The alternate ends transient early; the deadline fires while the primary is still out.
    let s = Setup::two_regions(100).await;
    let _slow = s.emu.faults().add(slow_reads(EAST, 3_000));
    let _down = s.emu.faults().add(reads_in(
        WEST,
        Reaction::Respond {
            status: 503,
            sub_status: 0,
            retry_after_ms: None,
            delay: cosmos_emulator::faults::DelaySpec::Fixed { ms: 20.0 },
        },
    ));
    let options = OperationOptions::new().with_end_to_end_timeout(Duration::from_millis(700));
    let started = Instant::now();
    let e = s
        .driver
        .execute(common::read(&s.c, "a", "p"), &options)
        .await
        .unwrap_err();
    assert!(
        started.elapsed() < Duration::from_millis(2_000),
        "took {:?}",
        started.elapsed()
    );
    assert!(e.is_end_to_end_timeout(), "{e}");
    let h = e
        .diagnostics()
        .hedge()
        .expect("hedge diagnostics on the cancellation error");
    // The primary's own attempt gives up at the deadline too, so the race ends either waiting for
    // it or with its timeout in hand: both are deadline states.
    assert!(deadline_state(h.terminal_state()), "{h:?}");
    assert!(!h.was_hedge());
    assert_eq!(h.alternate_region().map(|r| r.as_str()), Some(WEST));
    let got = e.diagnostics().requests();
    let first = got.first().expect("rows");
    assert_eq!(
        (
            first.region().map(|r| r.as_str()),
            first.reason(),
            first.status()
        ),
        (Some(EAST), FirstAttempt, None)
    );
    let west: Vec<_> = rows(e.diagnostics())
        .into_iter()
        .filter(|(region, ..)| region == WEST)
        .collect();
    assert!(
        !west.is_empty() && west.len() <= 2 && west[0] == row(WEST, Hedge, "503"),
        "the alternate's own attempts are kept (while the primary is out, no more than it has \
         sent, and one more the deadline cut): {west:?}"
    );

    // Both legs still out when the deadline fires: both end there and are recorded.
    let s = Setup::three_regions(100).await;
    let _east = s.emu.faults().add(slow_reads(EAST, 3_000));
    let _west = s.emu.faults().add(slow_reads(WEST, 3_000));
    let e = s
        .driver
        .execute(common::read(&s.c, "a", "p"), &options)
        .await
        .unwrap_err();
    assert!(e.is_end_to_end_timeout(), "{e}");
    let h = e.diagnostics().hedge().unwrap();
    assert!(deadline_state(h.terminal_state()), "{h:?}");
    let got: Vec<_> = e
        .diagnostics()
        .requests()
        .iter()
        .map(|r| (r.region().unwrap().to_string(), r.reason(), r.status()))
        .collect();
    assert_eq!(
        got,
        [
            (EAST.to_string(), FirstAttempt, None),
            (WEST.to_string(), Hedge, None)
        ]
    );
}

fn deadline_state(state: HedgeTerminalState) -> bool {
    matches!(
        state,
        HedgeTerminalState::CancelledAwaitingPartner
            | HedgeTerminalState::BothTransient {
                deadline_elapsed: true
            }
    )
}

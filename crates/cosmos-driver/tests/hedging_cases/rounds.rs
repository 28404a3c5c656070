//! When both legs end transient: what the legs learned carries over, no second race is planned,
//! and the read goes on over the regions the race did not use only when the primary leg ended to
//! move on and such a region is left. The read spends one retry budget and always ends.

use std::time::Duration;

use cosmos_driver::hedging::HedgeTerminalState;
use cosmos_driver::{AttemptReason, OperationOptions};
use cosmos_emulator::faults::{FaultRule, OpKind, Reaction};
use cosmos_emulator::EmulatorBuilder;
use tokio::time::Instant;

use super::support::{hedging, rows, Setup, EAST, NORTH, WEST};
use crate::common;

const HUB_HEADER: &str = "x-ms-cosmos-hub-region-processing-only";

async fn two_regions(preferred: [&str; 2]) -> Setup {
    Setup::start(EmulatorBuilder::new().regions([EAST, WEST]), |o| {
        o.with_preferred_regions(preferred)
            .with_availability_strategy(hedging(100))
    })
    .await
}

fn count(rows: &[super::support::Row], reason: AttemptReason) -> usize {
    rows.iter().filter(|(_, r, _)| *r == reason).count()
}

#[tokio::test]
async fn both_legs_unavailable_retry_once_more_then_end() {
    let s = two_regions([EAST, WEST]).await;
    let _down = s
        .emu
        .faults()
        .add(FaultRule::new(Reaction::respond(503, 0)).for_ops([OpKind::Read]));
    let started = Instant::now();
    let e = s
        .driver
        .execute(common::read(&s.c, "a", "p"), &OperationOptions::new())
        .await
        .unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "took {:?}",
        started.elapsed()
    );
    assert!(e.is_service_unavailable(), "{e}");
    let h = e
        .diagnostics()
        .hedge()
        .expect("hedge diagnostics on the error");
    assert_eq!(
        h.terminal_state(),
        HedgeTerminalState::BothTransient {
            deadline_elapsed: false
        }
    );
    assert!(!h.was_hedge());
    assert_eq!(h.response_region(), None);
    let got = rows(e.diagnostics());
    // The primary's 503 would have moved it to West: it ended there instead (East), and the
    // alternate went at once (West x3). The race used both regions, so nothing follows: the four
    // attempts the same read makes without hedging (East, then West and its two retries in
    // place). The 503s are the partition's answers: neither endpoint is marked for other
    // operations.
    assert_eq!(count(&got, AttemptReason::FirstAttempt), 1, "{got:?}");
    assert_eq!(count(&got, AttemptReason::Hedge), 3, "{got:?}");
    assert_eq!(got.len(), 1 + 3, "{got:?}");
    assert!(got.iter().all(|(_, _, outcome)| outcome == "503"));
    assert!(!s.marked_unavailable(EAST) && !s.marked_unavailable(WEST));
}

#[tokio::test]
async fn both_legs_behind_the_session_carry_the_hub_latch_and_end() {
    // Every region answers 404/1002; East is the hub, West the primary.
    let s = two_regions([WEST, EAST]).await;
    // The first rule that fires decides, so the one counting hub reads with the header goes first.
    let hub_with_header = s.emu.faults().add(
        FaultRule::new(Reaction::respond(404, 1002))
            .in_regions([EAST])
            .for_ops([OpKind::Read])
            .with_header(HUB_HEADER, "True"),
    );
    let _lagging = s
        .emu
        .faults()
        .add(FaultRule::new(Reaction::respond(404, 1002)).for_ops([OpKind::Read]));
    let east_before = s.reads(EAST);
    let e = s
        .driver
        .execute(common::read(&s.c, "a", "p"), &OperationOptions::new())
        .await
        .unwrap_err();
    assert!(e.is_read_session_not_available(), "{e}");
    let h = e.diagnostics().hedge().unwrap();
    assert_eq!(
        h.terminal_state(),
        HedgeTerminalState::BothTransient {
            deadline_elapsed: false
        }
    );
    assert_eq!(h.alternate_region().map(|r| r.as_str()), Some(EAST));
    let got = rows(e.diagnostics());
    assert_eq!(count(&got, AttemptReason::FirstAttempt), 1, "{got:?}");
    // The primary's own path (West, West again, the hub) is what the read makes without hedging;
    // the alternate, pinned to the hub, makes its own three; no round follows.
    assert_eq!(count(&got, AttemptReason::Retry), 0, "{got:?}");
    assert_eq!(count(&got, AttemptReason::Hedge), 3, "{got:?}");
    assert_eq!(got.len(), 3 + 3, "{got:?}");
    // The primary latched on its way to the hub; from then on every hub read of the operation,
    // the alternate's first one included, carried the header.
    let east_reads = s.reads(EAST) - east_before;
    assert!(east_reads >= 2);
    assert_eq!(hub_with_header.hits(), east_reads, "{got:?}");
}

#[tokio::test]
async fn a_plain_retry_that_answers_after_a_lost_race_is_the_primary_path_winning() {
    let s = Setup::start(EmulatorBuilder::new(), |o| {
        o.with_preferred_regions([EAST, WEST, NORTH])
            .with_availability_strategy(hedging(100))
    })
    .await;
    // The primary's attempt and the alternate's three fail; the leg over the third region is
    // answered.
    let _down = s.emu.faults().add(
        FaultRule::new(Reaction::respond(503, 0))
            .for_ops([OpKind::Read])
            .first(4),
    );
    let r = s
        .driver
        .execute(common::read(&s.c, "a", "p"), &OperationOptions::new())
        .await
        .unwrap();
    let got = rows(r.diagnostics());
    assert_eq!(got.len(), 5, "{got:?}");
    assert!(
        got[..4].iter().all(|(_, _, outcome)| outcome == "503"),
        "{got:?}"
    );
    let (served, reason, outcome) = &got[4];
    assert_eq!(served, NORTH);
    assert_eq!(
        (*reason, outcome.as_str()),
        (AttemptReason::Failover, "200")
    );
    let h = r.diagnostics().hedge().expect("hedge diagnostics");
    // Not "both transient" on a success: the operation's own retry answered after the race.
    assert_eq!(h.terminal_state(), HedgeTerminalState::PrimaryWonAfterHedge);
    assert_eq!(
        h.response_region().map(|r| r.as_str()),
        Some(served.as_str())
    );
    assert_eq!(h.alternate_region().map(|r| r.as_str()), Some(WEST));
    assert!(!h.was_hedge());
}

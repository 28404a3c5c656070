//! A retry that would move the primary to another region starts the hedge instead: the alternate
//! goes at once, without waiting for the threshold, and the primary never moves by itself while it
//! races. Retries in place stay in the primary, and a throttle other than 429/3092 never starts a
//! hedge.

use std::time::Duration;

use cosmos_driver::hedging::HedgeTerminalState;
use cosmos_driver::{AttemptReason, OperationOptions};
use cosmos_emulator::faults::{DelaySpec, Reaction};
use tokio::time::Instant;

use super::support::{reads_in, row, rows, slow_reads, Row, Setup, EAST, NORTH, WEST};
use crate::common;
use AttemptReason::{Failover, FirstAttempt, Hedge, Retry, SessionRetry};

/// Reads of the three regions so far.
fn reads(s: &Setup) -> [u64; 3] {
    [s.reads(EAST), s.reads(WEST), s.reads(NORTH)]
}

#[tokio::test]
async fn region_changing_retries_start_the_hedge_at_once() {
    // (trigger on every read in the primary's region, the primary's row)
    let triggers: [(&str, Reaction, &str); 6] = [
        ("503", Reaction::respond(503, 0), "503"),
        ("500", Reaction::respond(500, 0), "500"),
        ("408", Reaction::respond(408, 0), "408"),
        // 410 with a split or migration sub-status retries in place (tests/partition_faults.rs).
        ("410", Reaction::respond(410, 1001), "410/1001"),
        ("connection closed", Reaction::Close, "connection lost"),
        (
            "429/3092",
            Reaction::respond_retry_after(429, 3092, 1),
            "429/3092",
        ),
    ];
    for (name, reaction, outcome) in triggers {
        // The threshold is far off: only the upgrade can launch the alternate in time.
        let s = Setup::three_regions(2_000).await;
        let _trigger = s.emu.faults().add(reads_in(EAST, reaction));
        let [east, west, north] = reads(&s);
        let started = Instant::now();
        let r = s
            .driver
            .execute(common::read(&s.c, "a", "p"), &OperationOptions::new())
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(
            started.elapsed() < Duration::from_millis(1_500),
            "{name}: took {:?}",
            started.elapsed()
        );
        let h = r.diagnostics().hedge().expect("hedged");
        assert_eq!(
            h.terminal_state(),
            HedgeTerminalState::AlternateWon,
            "{name}: {h:?}"
        );
        assert!(h.was_hedge(), "{name}");
        assert_eq!(h.response_region().map(|r| r.as_str()), Some(WEST));
        assert_eq!(
            rows(r.diagnostics()),
            [row(EAST, FirstAttempt, outcome), row(WEST, Hedge, "200")],
            "{name}: the primary stayed where it was"
        );
        assert_eq!(
            reads(&s),
            [east + 1, west + 1, north],
            "{name}: one read in each raced region, none in the third"
        );
    }
}

#[tokio::test]
async fn retries_in_place_stay_in_the_primary() {
    // (trigger on the primary's first attempt, the rows of the read)
    let cases: [(&str, Reaction, [Row; 2]); 3] = [
        (
            "429 with a retry-after",
            Reaction::respond_retry_after(429, 0, 1),
            [row(EAST, FirstAttempt, "429"), row(EAST, Retry, "200")],
        ),
        (
            "429/3200 RU budget",
            Reaction::respond_retry_after(429, 3200, 1),
            [row(EAST, FirstAttempt, "429/3200"), row(EAST, Retry, "200")],
        ),
        (
            "404/1002, first in-place retry",
            Reaction::respond(404, 1002),
            [
                row(EAST, FirstAttempt, "404/1002"),
                row(EAST, SessionRetry, "200"),
            ],
        ),
    ];
    for (name, reaction, want) in cases {
        let s = Setup::three_regions(1_000).await;
        let _once = s.emu.faults().add(reads_in(EAST, reaction).first(1));
        let [east, west, north] = reads(&s);
        let r = s
            .driver
            .execute(common::read(&s.c, "a", "p"), &OperationOptions::new())
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let h = r.diagnostics().hedge().expect("hedged");
        assert_eq!(
            h.terminal_state(),
            HedgeTerminalState::PrimaryWonPreThreshold,
            "{name}: no hedge started"
        );
        assert_eq!(h.alternate_region(), None, "{name}");
        assert_eq!(rows(r.diagnostics()), want, "{name}");
        assert_eq!(reads(&s), [east + 2, west, north], "{name}");
    }
}

#[tokio::test]
async fn a_throttle_that_may_not_hedge_keeps_the_primary_until_the_threshold() {
    // Every East read is throttled (bare 429, retry after 100 ms): the primary keeps retrying in
    // place, and only the threshold launches the alternate.
    let s = Setup::three_regions(300).await;
    let _throttled = s
        .emu
        .faults()
        .add(reads_in(EAST, Reaction::respond_retry_after(429, 0, 100)));
    let started = Instant::now();
    let r = s
        .driver
        .execute(common::read(&s.c, "a", "p"), &OperationOptions::new())
        .await
        .unwrap();
    assert!(
        started.elapsed() >= Duration::from_millis(300),
        "the alternate waited for the threshold: {:?}",
        started.elapsed()
    );
    let h = r.diagnostics().hedge().unwrap();
    assert_eq!(h.terminal_state(), HedgeTerminalState::AlternateWon);
    let got = rows(r.diagnostics());
    assert_eq!(got.first(), Some(&row(EAST, FirstAttempt, "429")));
    let (east, others): (Vec<_>, Vec<_>) = got.iter().partition(|(region, ..)| region == EAST);
    assert_eq!(others, [&row(WEST, Hedge, "200")], "{got:?}");
    // The primary retried in place only; its last retry may have been out when the alternate won.
    assert!(east.len() >= 3, "{got:?}");
    assert!(
        east[1..]
            .iter()
            .all(|(_, reason, outcome)| *reason == Retry
                && (outcome == "429" || outcome == "cancelled")),
        "{got:?}"
    );
    assert_eq!(s.reads(NORTH), 0);
}

#[tokio::test]
async fn the_primary_does_not_follow_the_alternate_after_the_threshold() {
    // The alternate is out (and slow) when the primary's 503 arrives: the primary does not fail
    // over into the alternate's region behind it, it ends and the race waits for the alternate.
    let s = Setup::three_regions(100).await;
    let _late_503 = s.emu.faults().add(reads_in(
        EAST,
        Reaction::Respond {
            status: 503,
            sub_status: 0,
            retry_after_ms: None,
            delay: DelaySpec::Fixed { ms: 300.0 },
        },
    ));
    let _slow = s.emu.faults().add(slow_reads(WEST, 700));
    let [east, west, north] = reads(&s);
    let r = s
        .driver
        .execute(common::read(&s.c, "a", "p"), &OperationOptions::new())
        .await
        .unwrap();
    let h = r.diagnostics().hedge().unwrap();
    assert_eq!(h.terminal_state(), HedgeTerminalState::AlternateWon);
    assert_eq!(
        rows(r.diagnostics()),
        [row(EAST, FirstAttempt, "503"), row(WEST, Hedge, "200")]
    );
    assert_eq!(reads(&s), [east + 1, west + 1, north]);
}

#[tokio::test]
async fn after_both_legs_fail_the_next_round_reaches_the_third_region() {
    let s = Setup::three_regions(1_000).await;
    let _east = s
        .emu
        .faults()
        .add(reads_in(EAST, Reaction::respond(503, 0)));
    let _west = s
        .emu
        .faults()
        .add(reads_in(WEST, Reaction::respond(503, 0)));
    let r = s
        .driver
        .execute(common::read(&s.c, "a", "p"), &OperationOptions::new())
        .await
        .expect("North serves it");
    let h = r.diagnostics().hedge().unwrap();
    // After the race both legs lost, the operation's own leg over the region the race did not use
    // (a plain read, no second race) answered:
    // the primary path won after the hedge, served by North.
    assert_eq!(h.terminal_state(), HedgeTerminalState::PrimaryWonAfterHedge);
    assert_eq!(h.response_region().map(|r| r.as_str()), Some(NORTH));
    assert_eq!(h.alternate_region().map(|r| r.as_str()), Some(WEST));
    assert!(!h.was_hedge());
    assert_eq!(
        rows(r.diagnostics()),
        [
            row(EAST, FirstAttempt, "503"),
            row(WEST, Hedge, "503"),
            row(WEST, Hedge, "503"),
            row(WEST, Hedge, "503"),
            row(NORTH, Failover, "200"),
        ],
        "the race used East and West: the read goes on with a plain leg in North, the region the \
         read without hedging would have moved to next"
    );
}

#[tokio::test]
async fn a_403_1008_ends_the_racing_primary_and_the_alternate_takes_over() {
    // The threshold is far off; East US answers reads 403/1008 (the account no longer serves
    // there). The primary never fails over by itself, into the alternate's region or a third one.
    let s = Setup::three_regions(2_000).await;
    let _gone = s
        .emu
        .faults()
        .add(reads_in(EAST, Reaction::respond(403, 1008)));
    let [_, _, north] = reads(&s);
    let r = s
        .driver
        .execute(common::read(&s.c, "a", "p"), &OperationOptions::new())
        .await
        .unwrap();
    let got: Vec<Row> = rows(r.diagnostics());
    assert_eq!(
        got,
        [row(EAST, FirstAttempt, "403/1008"), row(WEST, Hedge, "200")]
    );
    let h = r.diagnostics().hedge().expect("hedged");
    assert_eq!(h.terminal_state(), HedgeTerminalState::AlternateWon);
    assert_eq!(reads(&s)[2], north, "no third region");
}

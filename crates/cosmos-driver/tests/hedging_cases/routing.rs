//! Where a race's attempts go and what they carry: the alternate stays pinned to its region under
//! every retry trigger, the hub-region header crosses from one leg to the other, session tokens and
//! request charges of both legs are kept right.

use std::sync::Arc;
use std::time::Duration;

use cosmos_driver::hedging::HedgeTerminalState;
use cosmos_driver::{AttemptReason, ConsistencyLevel, OperationOptions, Region};
use cosmos_emulator::faults::{FaultRule, OpKind, Reaction};
use cosmos_emulator::{EmulatorBuilder, ReplicationLag};
use tokio::time::Instant;

use super::support::{hedging, reads_in, row, rows, slow_reads, Setup, EAST, NORTH, WEST};
use crate::common;
use AttemptReason::{FirstAttempt, Hedge, SessionRetry};

const HUB_HEADER: &str = "x-ms-cosmos-hub-region-processing-only";

#[tokio::test]
async fn hedging_exclude_regions_under_503_retry() {
    let s = Setup::three_regions(150).await;
    let _slow = s.emu.faults().add(slow_reads(EAST, 1_200));
    let _down = s
        .emu
        .faults()
        .add(reads_in(WEST, Reaction::respond(503, 0)));
    let r = s
        .driver
        .execute(common::read(&s.c, "a", "p"), &OperationOptions::new())
        .await
        .expect("the primary answers");
    let h = r.diagnostics().hedge().unwrap();
    assert_eq!(h.terminal_state(), HedgeTerminalState::PrimaryWonAfterHedge);
    assert_eq!(
        rows(r.diagnostics()),
        [
            row(EAST, FirstAttempt, "200"),
            row(WEST, Hedge, "503"),
            row(WEST, Hedge, "503"),
            row(WEST, Hedge, "503")
        ],
        "the alternate retried in its own region only"
    );
    assert_eq!(
        s.reads(NORTH),
        0,
        "the healthy third region is excluded for the alternate"
    );
    // The alternate's 503s count against the partition in West (not the endpoint).
    assert!(
        !s.marked_unavailable(WEST),
        "a 503 does not mark the alternate's endpoint"
    );
    let range = r.partition_key_range_id().expect("the range header");
    assert_eq!(
        s.driver
            .partition_breaker()
            .consecutive_failures(s.c.link(), range, &WEST.into()),
        3,
        "the alternate's three 503s count against the partition in West"
    );
    assert!(!s.marked_unavailable(EAST));
}

#[tokio::test]
async fn exclude_regions_honored_by_every_retry_trigger() {
    // (trigger, reaction on the alternate's region, fewest attempts the alternate makes there)
    let triggers: [(&str, Reaction, usize); 11] = [
        ("503", Reaction::respond(503, 0), 3),
        ("500", Reaction::respond(500, 0), 3),
        ("408", Reaction::respond(408, 0), 3),
        ("410", Reaction::respond(410, 1002), 3),
        ("connection closed", Reaction::Close, 3),
        ("429", Reaction::respond_retry_after(429, 0, 1), 2),
        ("429/3092", Reaction::respond_retry_after(429, 3092, 1), 2),
        ("404/1002 session", Reaction::respond(404, 1002), 2),
        // A read refused with 403/3 outside the hub, by a leg that cannot go to the hub, stops:
        // there is nothing to retry in its region.
        ("403/3 write region moved", Reaction::respond(403, 3), 1),
        (
            "403/1008 account not in region",
            Reaction::respond(403, 1008),
            1,
        ),
        (
            "partition marked down mid-hedge",
            Reaction::respond(503, 0),
            3,
        ),
    ];
    for (name, reaction, fewest) in triggers {
        let s = Setup::three_regions(100).await;
        let west = Region::new(WEST);
        let marked_down = name.starts_with("partition");
        let range = if marked_down {
            // Four failures already: the alternate's first 503 trips the breaker for West.
            let r = s
                .driver
                .execute(common::read(&s.c, "a", "p"), &OperationOptions::new())
                .await
                .unwrap();
            let range = r.partition_key_range_id().unwrap().to_string();
            let link: Arc<str> = Arc::from(s.c.link());
            for _ in 0..4 {
                s.driver
                    .partition_breaker()
                    .record_failure(&link, &range, &west, Instant::now());
            }
            // While the breaker tracks something, reads teach it which range the key lives in.
            s.driver
                .execute(common::read(&s.c, "a", "p"), &OperationOptions::new())
                .await
                .unwrap();
            Some(range)
        } else {
            None
        };
        let east_before = s.reads(EAST);
        let _slow = s.emu.faults().add(slow_reads(EAST, 1_000));
        let _trigger = s.emu.faults().add(reads_in(WEST, reaction));
        let result = s
            .driver
            .execute(common::read(&s.c, "a", "p"), &OperationOptions::new())
            .await;
        let d = match &result {
            Ok(r) => r.diagnostics(),
            Err(e) => e.diagnostics(),
        };
        let h = d.hedge().unwrap_or_else(|| panic!("{name}: hedged"));
        assert_eq!(
            h.alternate_region().map(|r| r.as_str()),
            Some(WEST),
            "{name}"
        );
        let hedge_rows: Vec<_> = rows(d)
            .into_iter()
            .filter(|(_, reason, _)| *reason == Hedge)
            .collect();
        assert!(hedge_rows.len() >= fewest, "{name}: {hedge_rows:?}");
        assert!(
            hedge_rows.iter().all(|(region, ..)| region == WEST),
            "{name}: {hedge_rows:?}"
        );
        assert_eq!(
            s.reads(NORTH),
            0,
            "{name}: the alternate never left its region"
        );
        assert_eq!(
            s.reads(EAST),
            east_before + 1,
            "{name}: only the primary's one attempt went to East"
        );
        if let Some(range) = range {
            let unhealthy = s.driver.partition_breaker().is_unhealthy(
                s.c.link(),
                &range,
                &west,
                Instant::now(),
            );
            assert!(
                unhealthy,
                "{name}: the partition was marked down in West during the hedge"
            );
        }
    }
}

#[tokio::test]
async fn hedging_hub_region_header_propagates_across_hedges() {
    // East is the hub; reads prefer West, so West is the primary and the hub is the alternate.
    // West lags (404/1002); the hub answers after 1 s, the threshold is 300 ms: the primary's two
    // West reads are long done (and the latch set) when the alternate goes, and the primary's hub
    // read answers well before the alternate's.
    let s = Setup::start(EmulatorBuilder::new().regions([EAST, WEST]), |o| {
        o.with_preferred_regions([WEST, EAST])
            .with_availability_strategy(hedging(300))
    })
    .await;
    let _lagging = s
        .emu
        .faults()
        .add(reads_in(WEST, Reaction::respond(404, 1002)));
    // Counts the hub reads that carry the header (and serves them, late).
    let at_hub_with_header = s.emu.faults().add(
        FaultRule::new(Reaction::delay_ms(1_000))
            .in_regions([EAST])
            .for_ops([OpKind::Read])
            .with_header(HUB_HEADER, "True"),
    );
    let east_before = s.reads(EAST);

    let r = s
        .driver
        .execute(common::read(&s.c, "a", "p"), &OperationOptions::new())
        .await
        .expect("the hub answers");
    let h = r.diagnostics().hedge().unwrap();
    assert_eq!(h.terminal_state(), HedgeTerminalState::PrimaryWonAfterHedge);
    assert_eq!(
        (
            h.primary_region().as_str(),
            h.alternate_region().map(|r| r.as_str()),
            h.response_region().map(|r| r.as_str())
        ),
        (WEST, Some(EAST), Some(EAST))
    );
    // The second 1002 latched the primary, which took the hub step itself (with the header). The
    // alternate, sent to the hub at the threshold, never saw a 1002 but carried the header the
    // primary latched; it lost to the primary and was cancelled.
    assert_eq!(
        rows(r.diagnostics()),
        [
            row(WEST, FirstAttempt, "404/1002"),
            row(WEST, SessionRetry, "404/1002"),
            row(EAST, SessionRetry, "200"),
            row(EAST, Hedge, "cancelled"),
        ]
    );
    assert_eq!(s.reads(EAST) - east_before, 2, "both legs reached the hub");
    assert_eq!(
        at_hub_with_header.hits(),
        2,
        "every hub read carried the header, the alternate's too"
    );
}

#[tokio::test]
async fn hedging_charges_the_winner_and_reports_both_legs() {
    // West lags far behind: with the session token it answers 404/1002, which is charged.
    let builder =
        EmulatorBuilder::new().region_replication_lag(WEST, ReplicationLag::fixed_ms(60_000));
    let s = Setup::start(builder, |o| {
        o.with_preferred_regions([EAST, WEST, NORTH])
            .with_availability_strategy(hedging(100))
    })
    .await;
    let _slow = s.emu.faults().add(slow_reads(EAST, 800));
    let r = s
        .driver
        .execute(common::read(&s.c, "a", "p"), &OperationOptions::new())
        .await
        .unwrap();
    let d = r.diagnostics();
    assert_eq!(
        d.hedge().unwrap().terminal_state(),
        HedgeTerminalState::PrimaryWonAfterHedge
    );
    assert_eq!(
        rows(d),
        [
            row(EAST, FirstAttempt, "200"),
            row(WEST, Hedge, "404/1002"),
            row(WEST, Hedge, "404/1002")
        ],
        "the alternate stays in West: the hub is excluded for it"
    );
    let winner = d.requests()[0].request_charge();
    assert!(winner > 0.0);
    assert_eq!(
        r.request_charge(),
        winner,
        "the caller is charged the winner's request units"
    );
    assert_eq!(d.request_charge(), winner);
    let losers: f64 = d.requests()[1..].iter().map(|x| x.request_charge()).sum();
    assert!(losers > 0.0, "the alternate's answers were charged");
    assert_eq!(
        d.total_request_charge(),
        winner + losers,
        "the diagnostics carry both legs' total"
    );
    assert_eq!(s.reads(NORTH), 0);
}

#[tokio::test]
async fn hedged_read_never_moves_the_session_token_back() {
    let builder =
        EmulatorBuilder::new().region_replication_lag(WEST, ReplicationLag::fixed_ms(400));
    let s = Setup::start(builder, |o| {
        o.with_preferred_regions([EAST, WEST, NORTH])
            .with_availability_strategy(hedging(100))
    })
    .await;
    tokio::time::sleep(Duration::from_millis(600)).await;
    common::create_item(&s.driver, &s.c, "b", "p", 2).await;
    let link: Arc<str> = Arc::from(s.c.link());
    let before = s
        .driver
        .sessions()
        .token_for(&link)
        .expect("the writes left a token")
        .to_string();

    // An eventual read sends no token, so lagging West answers with an older one.
    let _slow = s.emu.faults().add(slow_reads(EAST, 1_000));
    let eventual = OperationOptions::new().with_consistency_level(ConsistencyLevel::Eventual);
    let r = s
        .driver
        .execute(common::read(&s.c, "a", "p"), &eventual)
        .await
        .expect("West has item a");
    assert!(r.diagnostics().hedge().unwrap().was_hedge());
    let west_token = r
        .headers()
        .session_token()
        .expect("West sends its token")
        .to_string();
    assert_ne!(west_token, before, "West is behind the writes");
    assert_eq!(
        s.driver.sessions().token_for(&link).unwrap().to_string(),
        before,
        "merged by highest LSN: no regression"
    );

    // A later answer from the hub moves it forward again.
    drop(_slow);
    common::create_item(&s.driver, &s.c, "c", "p", 3).await;
    let after = s.driver.sessions().token_for(&link).unwrap().to_string();
    assert_ne!(after, before);
}

/// The request header every attempt of the alternate leg carries (the driver's own; the service
/// defines none for hedged requests).
const HEDGE_MARKER: &str = "x-cosmos-driver-hedge-attempt";

#[tokio::test]
async fn every_attempt_of_the_alternate_carries_the_hedge_marker() {
    let s = Setup::three_regions(100).await;
    // Rules fire in order, the first match decides. West refuses the first two marked requests;
    // the next marked ones are counted and served. Marked requests to East are counted too.
    let refused = s.emu.faults().add(
        FaultRule::new(Reaction::respond(503, 0))
            .in_regions([WEST])
            .with_header(HEDGE_MARKER, "1")
            .first(2),
    );
    let served = s.emu.faults().add(
        FaultRule::new(Reaction::delay_ms(0))
            .in_regions([WEST])
            .with_header(HEDGE_MARKER, "1"),
    );
    let marked_primary = s.emu.faults().add(
        FaultRule::new(Reaction::delay_ms(0))
            .in_regions([EAST])
            .with_header(HEDGE_MARKER, "1"),
    );
    let slow = s.emu.faults().add(slow_reads(EAST, 2_000));
    let (east, west) = (s.reads(EAST), s.reads(WEST));

    let r = s
        .driver
        .execute(common::read(&s.c, "a", "p"), &OperationOptions::new())
        .await
        .expect("the alternate answers on its third attempt");
    let h = r.diagnostics().hedge().unwrap();
    assert_eq!(h.terminal_state(), HedgeTerminalState::AlternateWon);
    assert_eq!(
        rows(r.diagnostics()),
        [
            row(EAST, FirstAttempt, "cancelled"),
            row(WEST, Hedge, "503"),
            row(WEST, Hedge, "503"),
            row(WEST, Hedge, "200"),
        ]
    );
    assert_eq!(s.reads(WEST) - west, 3);
    assert_eq!(
        (refused.hits(), served.hits()),
        (2, 1),
        "all three alternate attempts carried the marker"
    );
    assert_eq!(s.reads(EAST) - east, 1);
    assert_eq!(
        marked_primary.hits(),
        0,
        "the primary's request is sent as without hedging"
    );

    // A read that is not hedged carries no marker either.
    drop(slow);
    let disabled = OperationOptions::new()
        .with_availability_strategy(cosmos_driver::hedging::AvailabilityStrategy::Disabled);
    let r = s
        .driver
        .execute(common::read(&s.c, "a", "p"), &disabled)
        .await;
    assert!(r.unwrap().diagnostics().hedge().is_none());
    assert_eq!(s.reads(EAST) - east, 2);
    assert_eq!((marked_primary.hits(), served.hits()), (0, 1));
}

#[tokio::test]
async fn one_preferred_region_never_hedges_to_the_account_s_others() {
    // Three account regions, one preferred (§5.1: fewer than two applicable preferred regions).
    let s = Setup::start(EmulatorBuilder::new(), |o| {
        o.with_preferred_regions([EAST])
            .with_availability_strategy(hedging(20))
    })
    .await;
    let _slow = s.emu.faults().add(slow_reads(EAST, 200));
    let (west, north) = (s.reads(WEST), s.reads(NORTH));
    let r = s
        .driver
        .execute(common::read(&s.c, "a", "p"), &OperationOptions::new())
        .await
        .unwrap();
    assert!(r.diagnostics().hedge().is_none(), "not a hedged read");
    assert_eq!(common::regions_of(r.diagnostics()), [EAST]);
    assert_eq!((s.reads(WEST) - west, s.reads(NORTH) - north), (0, 0));
}

#[tokio::test]
async fn the_alternate_is_the_second_preferred_region() {
    // Preferred East US, North Europe: West US is the account's second region but not preferred.
    let s = Setup::start(EmulatorBuilder::new(), |o| {
        o.with_preferred_regions([EAST, NORTH])
            .with_availability_strategy(hedging(20))
    })
    .await;
    let _slow = s.emu.faults().add(slow_reads(EAST, 400));
    let west = s.reads(WEST);
    let r = s
        .driver
        .execute(common::read(&s.c, "a", "p"), &OperationOptions::new())
        .await
        .unwrap();
    let h = r.diagnostics().hedge().expect("hedged");
    assert_eq!(h.alternate_region().map(|r| r.as_str()), Some(NORTH));
    assert_eq!(s.reads(WEST) - west, 0);
}

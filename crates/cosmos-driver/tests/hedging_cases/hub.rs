//! The hub step of a hedged read (§9.6): after two 404/1002 answers the read goes to the hub
//! region with the hub-region header whenever the same read without hedging would, also when the
//! hub is not among the preferred regions. Once either leg latched, every later attempt of both
//! legs carries the header (§9.6.2), the alternate's too when it is pinned outside the hub: that
//! region refuses it (403/3), the alternate stops, and the answer comes from the hub.

use cosmos_driver::hedging::{AvailabilityStrategy, HedgeTerminalState};
use cosmos_driver::{AttemptReason, OperationOptions};
use cosmos_emulator::faults::{FaultGuard, FaultRule, OpKind, Reaction};
use cosmos_emulator::{EmulatorBuilder, ReplicationLag};

use super::support::{hedging, rows, slow_reads, Setup, EAST, NORTH, WEST};
use crate::common;

const HUB_HEADER: &str = "x-ms-cosmos-hub-region-processing-only";

/// Three regions, North Europe the hub (outside the preferred East US, West US), both preferred
/// regions far behind it; item `a` written (to the hub) by the driver, so its session token is
/// ahead of both preferred regions.
async fn hub_outside_preferred(strategy: AvailabilityStrategy) -> Setup {
    let lag = || ReplicationLag::fixed_ms(60_000);
    let builder = EmulatorBuilder::new()
        .write_regions([NORTH])
        .region_replication_lag(EAST, lag())
        .region_replication_lag(WEST, lag());
    Setup::start(builder, |o| {
        o.with_preferred_regions([EAST, WEST])
            .with_availability_strategy(strategy)
    })
    .await
}

/// Counts the hub's reads that carry the hub-region header (and serves them as usual).
fn hub_reads_with_header(s: &Setup) -> FaultGuard {
    s.emu.faults().add(
        FaultRule::new(Reaction::delay_ms(0))
            .in_regions([NORTH])
            .for_ops([OpKind::Read])
            .with_header(HUB_HEADER, "True"),
    )
}

#[tokio::test]
async fn without_hedging_the_read_reaches_the_hub() {
    let s = hub_outside_preferred(AvailabilityStrategy::Disabled).await;
    let with_header = hub_reads_with_header(&s);
    let r = s
        .driver
        .execute(common::read(&s.c, "a", "p"), &OperationOptions::new())
        .await
        .unwrap();
    assert_eq!(common::regions_of(r.diagnostics()), [EAST, EAST, NORTH]);
    assert_eq!(with_header.hits(), 1);
}

#[tokio::test]
async fn a_hedged_read_reaches_a_hub_outside_the_preferred_regions() {
    // (threshold, East US reads delayed by): the primary finishes its session retries before the
    // threshold, or the alternate is already out (and ends 404/1002 in West US) when it does.
    for (threshold_ms, east_delay_ms) in [(50, 0), (20, 150)] {
        let s = hub_outside_preferred(hedging(threshold_ms)).await;
        // The first rule that fires decides: the counting rules go first.
        let with_header = hub_reads_with_header(&s);
        let elsewhere_header = s.emu.faults().add(
            FaultRule::new(Reaction::delay_ms(0))
                .in_regions([WEST, EAST])
                .for_ops([OpKind::Read])
                .with_header(HUB_HEADER, "True"),
        );
        let _slow =
            (east_delay_ms > 0).then(|| s.emu.faults().add(slow_reads(EAST, east_delay_ms)));
        let r = s
            .driver
            .execute(common::read(&s.c, "a", "p"), &OperationOptions::new())
            .await
            .unwrap_or_else(|e| panic!("threshold {threshold_ms}ms: {e}"));
        assert_eq!(r.status(), 200);
        let got = rows(r.diagnostics());
        let hub_row = (NORTH.to_string(), AttemptReason::SessionRetry, "200".into());
        assert!(
            got.contains(&hub_row),
            "threshold {threshold_ms}ms: {got:?}"
        );
        assert_eq!(
            with_header.hits(),
            1,
            "the hub read carried the header: {got:?}"
        );
        // Here every attempt outside the hub precedes the latch (the alternate's West reads are
        // answered at once, the primary latches after its second slow East read).
        assert_eq!(
            elsewhere_header.hits(),
            0,
            "no header before the latch: {got:?}"
        );
        let h = r.diagnostics().hedge().expect("hedged");
        assert_eq!(h.response_region().map(|r| r.as_str()), Some(NORTH));
        assert!(!h.was_hedge());
        assert!(matches!(
            h.terminal_state(),
            HedgeTerminalState::PrimaryWonPreThreshold | HedgeTerminalState::PrimaryWonAfterHedge
        ));
    }
}

/// §9.6.2's own layout: the hub (East US) is neither the primary (West US, behind the session)
/// nor the alternate (North Europe). The primary latches on its second 404/1002 and takes the hub
/// step; the alternate, sent after the latch, carries the header from its first attempt although
/// its region is not the hub, which refuses it; the hub's answer is the read's.
#[tokio::test]
async fn the_latch_reaches_an_alternate_outside_the_hub() {
    let s = Setup::start(EmulatorBuilder::new().regions([EAST, WEST, NORTH]), |o| {
        o.with_preferred_regions([WEST, NORTH])
            .with_availability_strategy(hedging(300))
    })
    .await;
    // The first rule that fires decides: North's reads with the header are counted and served
    // (the emulator refuses them outside the hub), the hub answers late, West lags.
    let north_with_header = s.emu.faults().add(
        FaultRule::new(Reaction::delay_ms(0))
            .in_regions([NORTH])
            .for_ops([OpKind::Read])
            .with_header(HUB_HEADER, "True"),
    );
    let _late_hub = s.emu.faults().add(slow_reads(EAST, 800));
    let _lagging = s.emu.faults().add(
        FaultRule::new(Reaction::respond(404, 1002))
            .in_regions([WEST])
            .for_ops([OpKind::Read]),
    );
    let r = s
        .driver
        .execute(common::read(&s.c, "a", "p"), &OperationOptions::new())
        .await
        .expect("the hub answers");
    // In the order the attempts were sent: the hub step goes out before the threshold, the
    // alternate at it.
    let got = rows(r.diagnostics());
    let row =
        |region: &str, reason, outcome: &str| (region.to_string(), reason, outcome.to_string());
    assert_eq!(
        got,
        [
            row(WEST, AttemptReason::FirstAttempt, "404/1002"),
            row(WEST, AttemptReason::SessionRetry, "404/1002"),
            row(EAST, AttemptReason::SessionRetry, "200"),
            row(NORTH, AttemptReason::Hedge, "403/3"),
        ]
    );
    assert_eq!(
        north_with_header.hits(),
        1,
        "the alternate outside the hub carried the latched header: {got:?}"
    );
    let h = r.diagnostics().hedge().expect("hedged");
    assert_eq!(h.terminal_state(), HedgeTerminalState::PrimaryWonAfterHedge);
    assert_eq!(h.alternate_region().map(|r| r.as_str()), Some(NORTH));
    assert_eq!(h.response_region().map(|r| r.as_str()), Some(EAST));
}

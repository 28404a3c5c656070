//! A region that stops answering (the emulator's `stall`) for reads: once consecutive alternate wins
//! have marked the container's partition unhealthy there, reads of partition keys the driver has
//! never seen go straight to the alternate region too, without a hedge, instead of each paying the
//! hedge threshold to learn which partition key range it belongs to.

use crate::common;

use std::num::NonZeroU32;
use std::time::Duration;

use cosmos_driver::hedging::{
    AvailabilityStrategy, HedgeTerminalState, HedgeThreshold, HedgingStrategy,
};
use cosmos_driver::{AttemptReason, OperationOptions};
use cosmos_emulator::faults::{FaultRule, OpKind, Reaction};
use cosmos_emulator::EmulatorBuilder;

const EAST: &str = "East US";
const WEST: &str = "West US";

#[tokio::test]
async fn unseen_partition_keys_skip_a_region_the_breaker_marked() {
    let emu = common::start(EmulatorBuilder::new().regions([EAST, WEST]).partitions(1)).await;
    let threshold = HedgeThreshold::new(Duration::from_millis(50)).expect("non-zero");
    let options = common::options(&emu)
        .with_preferred_regions([EAST, WEST])
        .with_availability_strategy(AvailabilityStrategy::Hedging(HedgingStrategy::new(
            threshold,
        )))
        .with_consecutive_hedge_win_threshold(NonZeroU32::new(2).expect("non-zero"));
    let driver = common::driver(options).await;
    let c = common::container(&driver, "db", "c").await;
    for i in 0..4 {
        let id = format!("k{i}");
        common::create_item(&driver, &c, &id, &id, i).await;
    }
    let _stall = emu.faults().add(
        FaultRule::new(Reaction::Stall)
            .in_regions([EAST])
            .for_ops([OpKind::Read]),
    );
    let opts = OperationOptions::new();
    let read = |id: &str| driver.execute(common::read(&c, id, id), &opts);

    // Two alternate wins in a row mark the partition unhealthy in East US.
    for id in ["k0", "k1"] {
        let r = read(id).await.expect("the alternate answers");
        let h = r.diagnostics().hedge().expect("a race");
        assert_eq!(h.terminal_state(), HedgeTerminalState::AlternateWon, "{id}");
    }

    // A partition key never read before: straight to West US, one request, no race.
    for id in ["k2", "k3"] {
        let r = read(id).await.expect("West US answers");
        let d = r.diagnostics();
        assert!(d.hedge().is_none(), "{id} was hedged: {:?}", d.hedge());
        let rows: Vec<(String, AttemptReason)> = d
            .requests()
            .iter()
            .map(|r| {
                (
                    r.region().map(|g| g.to_string()).unwrap_or_default(),
                    r.reason(),
                )
            })
            .collect();
        assert_eq!(
            rows,
            [(WEST.to_string(), AttemptReason::FirstAttempt)],
            "{id}"
        );
    }
    assert_eq!(
        emu.counters().get(EAST, OpKind::Read),
        2,
        "only the two hedged reads ever reached East US"
    );
}

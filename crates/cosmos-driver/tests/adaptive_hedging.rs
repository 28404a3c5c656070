//! Adaptive thresholds and the hedge budget on real reads against the embedded emulator.

use crate::common;

use std::time::Duration;

use cosmos_driver::hedging::{
    AvailabilityStrategy, HedgeBudgetConfig, HedgeTerminalState, HedgeThreshold, HedgingStrategy,
};
use cosmos_driver::{
    AttemptReason, ContainerReference, CosmosDriver, DriverOptions, OperationOptions,
};
use cosmos_emulator::faults::{FaultRule, OpKind, Reaction};
use cosmos_emulator::{Emulator, EmulatorBuilder};

const EAST: &str = "East US";
const WEST: &str = "West US";

async fn setup(
    threshold: HedgeThreshold,
    options: impl FnOnce(DriverOptions) -> DriverOptions,
) -> (Emulator, CosmosDriver, ContainerReference) {
    let emu = common::start(EmulatorBuilder::new().regions([EAST, WEST])).await;
    let o = common::options(&emu)
        .with_preferred_regions([EAST, WEST])
        .with_availability_strategy(AvailabilityStrategy::Hedging(HedgingStrategy::new(
            threshold,
        )));
    let driver = common::driver(options(o)).await;
    let c = common::container(&driver, "db", "c").await;
    common::create_item(&driver, &c, "a", "p", 1).await;
    (emu, driver, c)
}

fn slow_east_reads(ms: u64) -> FaultRule {
    FaultRule::new(Reaction::delay_ms(ms))
        .in_regions([EAST])
        .for_ops([OpKind::Read])
}

#[tokio::test]
async fn the_threshold_follows_the_primary_regions_recent_latencies() {
    let min = Duration::from_millis(5);
    let adaptive = HedgeThreshold::adaptive(0.95, min, Duration::from_secs(1)).unwrap();
    let (emu, driver, c) = setup(adaptive, |o| o).await;
    let opts = OperationOptions::new();
    let read = || driver.execute(common::read(&c, "a", "p"), &opts);
    let threshold_of = |r: &cosmos_driver::CosmosResponse| {
        r.diagnostics()
            .hedge()
            .expect("a race")
            .strategy_config()
            .threshold
    };

    // Too few latencies yet: the driver default (1000 ms), within the bounds.
    let first = read().await.unwrap();
    assert_eq!(threshold_of(&first), Duration::from_millis(1000));

    // p95 needs 100 latencies; loopback reads take a few milliseconds at most.
    for _ in 0..120 {
        read().await.unwrap();
    }
    let learned = threshold_of(&read().await.unwrap());
    assert!(
        learned >= min && learned <= Duration::from_millis(250),
        "the threshold comes from recent latencies: {learned:?}"
    );

    // East turns slow: the read is hedged at the learned threshold and West answers.
    let _slow = emu.faults().add(slow_east_reads(400));
    let r = read().await.unwrap();
    let h = r.diagnostics().hedge().expect("a race");
    assert_eq!(h.terminal_state(), HedgeTerminalState::AlternateWon);
    assert!(h.strategy_config().threshold <= Duration::from_millis(250));
    assert!(
        r.diagnostics().duration() < Duration::from_millis(400),
        "{:?}",
        r.diagnostics().duration()
    );
}

#[tokio::test]
async fn a_spent_budget_leaves_the_primary_alone_and_says_so() {
    let fixed = HedgeThreshold::new(Duration::from_millis(50)).unwrap();
    // One token, never refilled.
    let budget = HedgeBudgetConfig::new(0.0, 0, 1).unwrap();
    let (emu, driver, c) = setup(fixed, |o| o.with_hedge_budget(budget)).await;
    let _slow = emu.faults().add(slow_east_reads(300));
    let opts = OperationOptions::new();
    let read = || driver.execute(common::read(&c, "a", "p"), &opts);

    let hedged = read().await.unwrap();
    let h = hedged.diagnostics().hedge().expect("a race");
    assert_eq!(h.terminal_state(), HedgeTerminalState::AlternateWon);
    assert!(!h.budget_denied());

    let alone = read().await.unwrap();
    let h = alone.diagnostics().hedge().expect("a race");
    assert_eq!(h.terminal_state(), HedgeTerminalState::BudgetDenied);
    assert!(h.budget_denied());
    assert_eq!(h.alternate_region(), None);
    let reasons: Vec<AttemptReason> = alone
        .diagnostics()
        .requests()
        .iter()
        .map(|r| r.reason())
        .collect();
    assert_eq!(
        reasons,
        [AttemptReason::FirstAttempt],
        "only the primary was sent"
    );
    assert!(alone.diagnostics().duration() >= Duration::from_millis(300));
    let json = serde_json::to_value(h).unwrap();
    assert_eq!(json["terminal_state"], "budget_denied");
    assert_eq!(json["budget_denied"], true);
}

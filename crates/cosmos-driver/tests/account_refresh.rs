//! Account metadata is re-read on an interval, and when every endpoint looks unhealthy.

use crate::common;

use std::time::Duration;

use cosmos_driver::hedging::AvailabilityStrategy;
use cosmos_driver::OperationOptions;
use cosmos_emulator::faults::{FaultRule, OpKind, Reaction};
use cosmos_emulator::EmulatorBuilder;

#[tokio::test]
async fn the_write_region_is_learned_on_the_refresh_interval() {
    let emu = common::start(EmulatorBuilder::new()).await;
    let options = common::options(&emu).with_account_refresh_interval(Duration::from_millis(200));
    let driver = common::driver(options).await;
    assert_eq!(driver.write_region().as_str(), "East US");
    emu.failover("North Europe").unwrap();
    let mut learned = false;
    for _ in 0..50 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        if driver.write_region().as_str() == "North Europe" {
            learned = true;
            break;
        }
    }
    assert!(
        learned,
        "the background refresh picked up the new write region without any request"
    );
}

#[tokio::test]
async fn every_endpoint_unhealthy_triggers_a_refresh() {
    let emu = common::start(EmulatorBuilder::new()).await;
    let options = common::options(&emu)
        .with_preferred_regions(["East US", "West US", "North Europe"])
        .with_availability_strategy(AvailabilityStrategy::Disabled);
    let driver = common::driver(options).await;
    let c = common::container(&driver, "db", "c").await;
    common::create_item(&driver, &c, "a", "p", 1).await;
    // Connection-level failures mark endpoints (a 503 is one partition's answer and marks none).
    let _down = emu
        .faults()
        .add(FaultRule::new(Reaction::Close).for_ops([OpKind::Read]));

    let e = driver
        .execute(common::read(&c, "a", "p"), &OperationOptions::new())
        .await
        .unwrap_err();
    assert_eq!(e.kind(), cosmos_driver::ErrorKind::Transport, "{e}");
    assert_eq!(
        common::regions_of(e.diagnostics()),
        [
            "East US",
            "West US",
            "North Europe",
            "North Europe",
            "North Europe"
        ]
    );

    let metadata = |emu: &cosmos_emulator::Emulator| -> u64 {
        ["East US", "West US", "North Europe"]
            .iter()
            .map(|r| emu.counters().get(r, OpKind::Metadata))
            .sum()
    };
    let before = metadata(&emu);
    let _ = driver
        .execute(common::read(&c, "a", "p"), &OperationOptions::new())
        .await
        .unwrap_err();
    assert!(
        metadata(&emu) > before,
        "the account was read again once every endpoint was marked"
    );
}

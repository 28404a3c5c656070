//! 429: the driver waits `x-ms-retry-after-ms` and retries in place, within a bounded budget.

use crate::common;

use std::time::{Duration, Instant};

use cosmos_driver::{AttemptReason, OperationOptions};
use cosmos_emulator::faults::{FaultRule, OpKind, Reaction};
use cosmos_emulator::EmulatorBuilder;

#[tokio::test]
async fn retry_after_is_respected() {
    let emu = common::start(EmulatorBuilder::new()).await;
    let driver = common::driver(common::options(&emu)).await;
    let c = common::container(&driver, "db", "c").await;
    common::create_item(&driver, &c, "a", "p", 1).await;
    let _fault = emu.faults().add(
        FaultRule::new(Reaction::respond_retry_after(429, 3200, 300))
            .for_ops([OpKind::Read])
            .first(2),
    );
    let t = Instant::now();
    let r = driver
        .execute(common::read(&c, "a", "p"), &OperationOptions::new())
        .await
        .unwrap();
    let elapsed = t.elapsed();
    assert!(
        elapsed >= Duration::from_millis(600),
        "waited {elapsed:?}, the service asked for 2 x 300 ms"
    );
    assert!(elapsed < Duration::from_secs(5), "{elapsed:?}");
    let rows = r.diagnostics().requests();
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[0].status().unwrap().to_string(), "429/3200");
    assert_eq!(rows[2].reason(), AttemptReason::Retry);
    assert!(rows[2].started_after() >= Duration::from_millis(600));
    assert_eq!(
        common::regions_of(r.diagnostics()),
        ["East US"; 3],
        "throttling never changes region"
    );
    assert_eq!(emu.counters().get("East US", OpKind::Read), 3);
}

#[tokio::test]
async fn throttling_retries_are_bounded() {
    let emu = common::start(EmulatorBuilder::new()).await;
    let driver = common::driver(common::options(&emu)).await;
    let c = common::container(&driver, "db", "c").await;
    common::create_item(&driver, &c, "a", "p", 1).await;
    let _fault = emu
        .faults()
        .add(FaultRule::new(Reaction::respond_retry_after(429, 0, 5)).for_ops([OpKind::Read]));
    let e = driver
        .execute(common::read(&c, "a", "p"), &OperationOptions::new())
        .await
        .unwrap_err();
    assert!(e.is_throttled(), "{e}");
    assert_eq!(
        e.diagnostics().requests().len(),
        10,
        "one attempt and nine retries"
    );
    assert_eq!(emu.counters().get("East US", OpKind::Read), 10);
}

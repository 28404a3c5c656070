//! The end-to-end timeout bounds the whole operation, retries included, and the error says so.

use crate::common;

use std::time::{Duration, Instant};

use cosmos_driver::{ErrorKind, OperationOptions};
use cosmos_emulator::faults::{FaultRule, OpKind, Reaction};
use cosmos_emulator::EmulatorBuilder;

#[tokio::test]
async fn a_slow_region_hits_the_end_to_end_timeout() {
    let emu = common::start(EmulatorBuilder::new()).await;
    let driver = common::driver(common::options(&emu)).await;
    let c = common::container(&driver, "db", "c").await;
    common::create_item(&driver, &c, "a", "p", 1).await;
    let _slow = emu
        .faults()
        .add(FaultRule::new(Reaction::delay_ms(3_000)).for_ops([OpKind::Read]));
    let options = OperationOptions::new().with_end_to_end_timeout(Duration::from_millis(300));
    let t = Instant::now();
    let e = driver
        .execute(common::read(&c, "a", "p"), &options)
        .await
        .unwrap_err();
    let elapsed = t.elapsed();
    assert_eq!(e.kind(), ErrorKind::EndToEndTimeout);
    assert!(e.is_timeout() && e.is_end_to_end_timeout());
    assert!(
        e.message().contains("end-to-end timeout of 300ms"),
        "{}",
        e.message()
    );
    assert!(
        elapsed >= Duration::from_millis(300) && elapsed < Duration::from_millis(2_000),
        "{elapsed:?}"
    );
    assert_eq!(e.diagnostics().requests().len(), 1);
}

#[tokio::test]
async fn retries_stop_at_the_deadline() {
    let emu = common::start(EmulatorBuilder::new()).await;
    let driver = common::driver(common::options(&emu)).await;
    let c = common::container(&driver, "db", "c").await;
    common::create_item(&driver, &c, "a", "p", 1).await;
    let _throttle = emu
        .faults()
        .add(FaultRule::new(Reaction::respond_retry_after(429, 0, 200)).for_ops([OpKind::Read]));
    let options = OperationOptions::new().with_end_to_end_timeout(Duration::from_millis(700));
    let t = Instant::now();
    let e = driver
        .execute(common::read(&c, "a", "p"), &options)
        .await
        .unwrap_err();
    assert!(e.is_end_to_end_timeout(), "{e}");
    assert!(
        t.elapsed() < Duration::from_millis(1_500),
        "{:?}",
        t.elapsed()
    );
    let attempts = e.diagnostics().requests().len();
    assert!(
        (2..=4).contains(&attempts),
        "{attempts} attempts of 200 ms spacing fit in 700 ms"
    );
    // Either the next wait would have crossed the deadline, or the deadline came while an
    // attempt was out (a slow machine): both end the retries at the deadline.
    assert!(
        e.message().contains("past the deadline")
            || e.message()
                .contains("did not complete within its end-to-end timeout"),
        "{}",
        e.message()
    );
}

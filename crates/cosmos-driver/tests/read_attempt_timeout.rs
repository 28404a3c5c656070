//! A region that stops answering costs a read one short attempt timeout, then the next region
//! answers and the silent region is marked for later reads; writes keep the request timeout.
//! Responses larger than the configured cap end with an error that says so.

use crate::common;

use std::time::{Duration, Instant};

use cosmos_driver::hedging::AvailabilityStrategy;
use cosmos_driver::{CosmosOperation, ErrorKind, OperationOptions};
use cosmos_emulator::faults::{FaultRule, OpKind, Reaction};
use cosmos_emulator::EmulatorBuilder;
use serde_json::json;

const EAST: &str = "East US";
const WEST: &str = "West US";

#[tokio::test]
async fn a_stalled_region_costs_a_read_one_attempt_timeout() {
    let emu = common::start(EmulatorBuilder::new().regions([EAST, WEST])).await;
    let driver = common::driver(
        common::options(&emu)
            .with_preferred_regions([EAST, WEST])
            .with_availability_strategy(AvailabilityStrategy::Disabled)
            .with_read_attempt_timeout(Duration::from_millis(300)),
    )
    .await;
    let c = common::container(&driver, "db", "c").await;
    common::create_item(&driver, &c, "a", "p", 1).await;
    let _stall = emu.faults().add(
        FaultRule::new(Reaction::Stall)
            .in_regions([EAST])
            .for_ops([OpKind::Read]),
    );
    let started = Instant::now();
    let r = driver
        .execute(common::read(&c, "a", "p"), &OperationOptions::new())
        .await
        .unwrap();
    let took = started.elapsed();
    assert_eq!(common::regions_of(r.diagnostics()), [EAST, WEST]);
    let first = &r.diagnostics().requests()[0];
    assert_eq!(first.failure(), Some("timed out"));
    assert!(first.duration() >= Duration::from_millis(300), "{first:?}");
    assert!(took < Duration::from_secs(10), "took {took:?}");
    // East is marked for reads: the next read goes straight to West.
    let r = driver
        .execute(common::read(&c, "a", "p"), &OperationOptions::new())
        .await
        .unwrap();
    assert_eq!(common::regions_of(r.diagnostics()), [WEST]);
}

#[tokio::test]
async fn a_write_keeps_the_request_timeout() {
    let emu = common::start(EmulatorBuilder::new().regions([EAST, WEST])).await;
    let driver = common::driver(
        common::options(&emu)
            .with_request_timeout(Duration::from_millis(800))
            .with_read_attempt_timeout(Duration::from_millis(100)),
    )
    .await;
    let c = common::container(&driver, "db", "c").await;
    let _stall = emu
        .faults()
        .add(FaultRule::new(Reaction::Stall).for_ops([OpKind::Create]));
    let e = driver
        .execute(
            CosmosOperation::create_item(c.clone())
                .with_partition_key("p")
                .with_json_body(&json!({"id": "a", "pk": "p"}))
                .unwrap(),
            &OperationOptions::new(),
        )
        .await
        .unwrap_err();
    // The create was sent and never answered: whether it landed is unknown (a repeat would
    // answer 409, so it may be resent), and no attempt gave up before the request timeout.
    assert_eq!(e.kind(), ErrorKind::OutcomeUnknown, "{e}");
    assert!(e.is_timeout(), "{e}");
    let rows = e.diagnostics().requests();
    assert!(!rows.is_empty());
    for row in rows {
        assert!(row.duration() >= Duration::from_millis(800), "{row:?}");
    }
}

#[tokio::test]
async fn a_response_past_the_cap_is_a_clear_error() {
    let emu = common::start(EmulatorBuilder::new()).await;
    let driver = common::driver(common::options(&emu)).await;
    let c = common::container(&driver, "db", "c").await;
    let big = "x".repeat(16_384);
    driver
        .execute(
            CosmosOperation::create_item(c.clone())
                .with_partition_key("p")
                .with_json_body(&json!({"id": "a", "pk": "p", "big": big}))
                .unwrap(),
            &OperationOptions::new(),
        )
        .await
        .unwrap();
    let capped = common::driver(common::options(&emu).with_max_response_bytes(8192)).await;
    let e = capped
        .execute(common::read(&c, "a", "p"), &OperationOptions::new())
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Transport, "{e}");
    assert!(e.to_string().contains("larger than the 8192 bytes"), "{e}");
    assert_eq!(e.diagnostics().requests().len(), 1, "not retried");
    // The default cap reads it.
    let r = driver
        .execute(common::read(&c, "a", "p"), &OperationOptions::new())
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
}

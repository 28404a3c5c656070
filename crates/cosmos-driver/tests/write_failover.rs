//! Writes refused with 403/3 while the write region moves: the driver re-reads the account and
//! retries about once a second (here 50 ms) until the region moves, within the retry budget and
//! the deadline; a multi-write account moves the write to the next write region at once.

use crate::common;

use std::time::Duration;

use cosmos_driver::{CosmosOperation, OperationOptions, RetryOptions};
use cosmos_emulator::faults::{FaultRule, OpKind, Reaction};
use cosmos_emulator::EmulatorBuilder;
use serde_json::json;

const EAST: &str = "East US";
const WEST: &str = "West US";

fn create(c: &cosmos_driver::ContainerReference, id: &str) -> CosmosOperation {
    CosmosOperation::create_item(c.clone())
        .with_partition_key("p")
        .with_json_body(&json!({"id": id, "pk": "p"}))
        .unwrap()
}

fn quick_retries() -> RetryOptions {
    RetryOptions {
        write_forbidden_delay: Duration::from_millis(50),
        ..RetryOptions::default()
    }
}

#[tokio::test]
async fn a_write_waits_out_a_write_region_failover() {
    let emu = common::start(EmulatorBuilder::new().regions([EAST, WEST])).await;
    let driver = common::driver(
        common::options(&emu)
            .with_preferred_regions([EAST, WEST])
            .with_retry_options(quick_retries()),
    )
    .await;
    let c = common::container(&driver, "db", "c").await;
    // East no longer takes writes, but the account still names it the write region until the
    // failover below.
    let _forbidden = emu.faults().add(
        FaultRule::new(Reaction::respond(403, 3))
            .in_regions([EAST])
            .for_ops([OpKind::Create]),
    );
    let failover = async {
        while emu.counters().get(EAST, OpKind::Create) < 4 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        emu.failover(WEST).unwrap();
    };
    let opts = OperationOptions::new();
    let (r, ()) = tokio::join!(driver.execute(create(&c, "a"), &opts), failover);
    let r = r.expect("the write lands once the region moved");
    assert_eq!(r.status(), 201);
    let regions = common::regions_of(r.diagnostics());
    let (last, before) = regions.split_last().unwrap();
    assert_eq!(last, WEST, "{regions:?}");
    assert!(before.len() >= 4, "{regions:?}");
    assert!(before.iter().all(|r| r == EAST), "{regions:?}");
    assert_eq!(emu.counters().get(WEST, OpKind::Create), 1);
    assert_eq!(driver.write_region().as_str(), WEST);
    // Retries after the first wait between them.
    let rows = r.diagnostics().requests();
    let gap = rows[2].started_after() - rows[1].started_after();
    assert!(gap >= Duration::from_millis(50), "{gap:?}");
}

#[tokio::test]
async fn a_write_forbidden_that_never_ends_stops_at_the_deadline() {
    let emu = common::start(EmulatorBuilder::new().regions([EAST, WEST])).await;
    let driver = common::driver(common::options(&emu).with_retry_options(quick_retries())).await;
    let c = common::container(&driver, "db", "c").await;
    let _forbidden = emu
        .faults()
        .add(FaultRule::new(Reaction::respond(403, 3)).for_ops([OpKind::Create]));
    let e = driver
        .execute(
            create(&c, "a"),
            &OperationOptions::new().with_end_to_end_timeout(Duration::from_millis(600)),
        )
        .await
        .unwrap_err();
    assert!(e.is_end_to_end_timeout(), "{e}");
    // Far more than the two refreshes the driver once allowed.
    let attempts = e.diagnostics().requests().len();
    assert!(attempts >= 5, "{attempts} attempts");
    assert_eq!(emu.counters().get(WEST, OpKind::Create), 0);
}

#[tokio::test]
async fn a_write_forbidden_ends_when_its_budget_does() {
    let emu = common::start(EmulatorBuilder::new().regions([EAST, WEST])).await;
    let retry = RetryOptions {
        max_write_forbidden_retries: 3,
        ..quick_retries()
    };
    let driver = common::driver(common::options(&emu).with_retry_options(retry)).await;
    let c = common::container(&driver, "db", "c").await;
    let _forbidden = emu
        .faults()
        .add(FaultRule::new(Reaction::respond(403, 3)).for_ops([OpKind::Create]));
    let e = driver
        .execute(create(&c, "a"), &OperationOptions::new())
        .await
        .unwrap_err();
    assert_eq!((e.status(), e.sub_status()), (Some(403), Some(3)));
    assert_eq!(e.diagnostics().requests().len(), 4);
}

#[tokio::test]
async fn a_multi_write_account_moves_the_write_to_the_next_write_region() {
    let emu = common::start(
        EmulatorBuilder::new()
            .regions([EAST, WEST])
            .multi_write(true),
    )
    .await;
    let driver = common::driver(common::options(&emu).with_preferred_regions([EAST, WEST])).await;
    let c = common::container(&driver, "db", "c").await;
    let _forbidden = emu.faults().add(
        FaultRule::new(Reaction::respond(403, 3))
            .in_regions([EAST])
            .for_ops([OpKind::Create]),
    );
    let r = driver
        .execute(create(&c, "a"), &OperationOptions::new())
        .await
        .unwrap();
    assert_eq!(common::regions_of(r.diagnostics()), [EAST, WEST]);
    // East is marked for writes: the next write starts in West.
    let r = driver
        .execute(create(&c, "b"), &OperationOptions::new())
        .await
        .unwrap();
    assert_eq!(common::regions_of(r.diagnostics()), [WEST]);
}

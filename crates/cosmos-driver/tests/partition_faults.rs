//! Faults of one partition stay with that partition: a 503 counts in the partition's circuit
//! breaker (on the plain path too, with the range learnt from earlier responses) and marks no
//! region; 410 sub-statuses of a split, a migration or a stale name cache retry in place.

use crate::common;

use cosmos_driver::hedging::AvailabilityStrategy;
use cosmos_driver::{AttemptReason, CosmosOperation, OperationOptions};
use cosmos_emulator::faults::{FaultRule, OpKind, Reaction};
use cosmos_emulator::EmulatorBuilder;
use serde_json::json;

const EAST: &str = "East US";
const WEST: &str = "West US";
const PK_HEADER: &str = "x-ms-documentdb-partitionkey";

async fn unhedged() -> (cosmos_emulator::Emulator, cosmos_driver::CosmosDriver) {
    let emu = common::start(EmulatorBuilder::new().regions([EAST, WEST]).partitions(4)).await;
    let options = common::options(&emu)
        .with_preferred_regions([EAST, WEST])
        .with_availability_strategy(AvailabilityStrategy::Disabled);
    let driver = common::driver(options).await;
    (emu, driver)
}

#[tokio::test]
async fn a_partition_503_trips_its_breaker_on_the_plain_path_and_marks_no_region() {
    let (emu, driver) = unhedged().await;
    let c = common::container(&driver, "db", "c").await;
    let p_range = common::create_item(&driver, &c, "a", "p", 1)
        .await
        .partition_key_range_id()
        .map(str::to_owned);
    // A partition key in another range than "p".
    let mut other = None;
    for n in 0..32 {
        let pk = format!("q{n}");
        let r = common::create_item(&driver, &c, "b", &pk, n).await;
        if r.partition_key_range_id().map(str::to_owned) != p_range {
            other = Some(pk);
            break;
        }
    }
    let q = other.expect("a partition key in another range");
    // Only reads of partition key "p" fail in East, and the 503 carries no range header.
    let _fault = emu.faults().add(
        FaultRule::new(Reaction::respond(503, 0))
            .in_regions([EAST])
            .for_ops([OpKind::Read])
            .with_header(PK_HEADER, "[\"p\"]"),
    );
    let opts = OperationOptions::new();
    // Below the breaker's threshold (5 consecutive failures) every read tries East first.
    for n in 0..5 {
        let r = driver
            .execute(common::read(&c, "a", "p"), &opts)
            .await
            .unwrap();
        assert_eq!(
            common::regions_of(r.diagnostics()),
            [EAST, WEST],
            "read {n}"
        );
    }
    // The partition is now unhealthy in East: its reads start in West.
    let r = driver
        .execute(common::read(&c, "a", "p"), &opts)
        .await
        .unwrap();
    assert_eq!(common::regions_of(r.diagnostics()), [WEST]);
    // Another partition key is not affected: East still serves it first, and only.
    let r = driver
        .execute(common::read(&c, "b", &q), &opts)
        .await
        .unwrap();
    assert_eq!(common::regions_of(r.diagnostics()), [EAST]);
    assert_eq!(emu.counters().get(EAST, OpKind::Read), 6);
}

#[tokio::test]
async fn a_split_retries_in_place() {
    let (emu, driver) = unhedged().await;
    let c = common::container(&driver, "db", "c").await;
    common::create_item(&driver, &c, "a", "p", 1).await;
    for sub_status in [1002, 1007, 1008] {
        let _fault = emu.faults().add(
            FaultRule::new(Reaction::respond(410, sub_status))
                .in_regions([EAST])
                .for_ops([OpKind::Read])
                .first(2),
        );
        let r = driver
            .execute(common::read(&c, "a", "p"), &OperationOptions::new())
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        let rows = r.diagnostics().requests();
        assert_eq!(
            common::regions_of(r.diagnostics()),
            [EAST, EAST, EAST],
            "410/{sub_status}"
        );
        assert_eq!(rows[1].reason(), AttemptReason::Retry);
    }
    assert_eq!(emu.counters().get(WEST, OpKind::Read), 0);
}

#[tokio::test]
async fn a_stale_name_cache_retries_a_create_in_place() {
    let (emu, driver) = unhedged().await;
    let c = common::container(&driver, "db", "c").await;
    let _fault = emu.faults().add(
        FaultRule::new(Reaction::respond(410, 1000))
            .for_ops([OpKind::Create])
            .first(1),
    );
    let r = driver
        .execute(
            CosmosOperation::create_item(c.clone())
                .with_partition_key("p")
                .with_json_body(&json!({"id": "a", "pk": "p"}))
                .unwrap(),
            &OperationOptions::new(),
        )
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    assert_eq!(common::regions_of(r.diagnostics()), [EAST, EAST]);
}

#[tokio::test]
async fn splits_that_never_end_stop_at_the_retry_budget() {
    let (emu, driver) = unhedged().await;
    let c = common::container(&driver, "db", "c").await;
    common::create_item(&driver, &c, "a", "p", 1).await;
    let _fault = emu.faults().add(
        FaultRule::new(Reaction::respond(410, 1002))
            .in_regions([EAST])
            .for_ops([OpKind::Read]),
    );
    let e = driver
        .execute(common::read(&c, "a", "p"), &OperationOptions::new())
        .await
        .unwrap_err();
    assert_eq!((e.status(), e.sub_status()), (Some(410), Some(1002)));
    // The first attempt and the five retries in place.
    assert_eq!(e.diagnostics().requests().len(), 6);
}

//! Regional failover: reads move to the next region on 503 and lost connections, writes follow the
//! write region when it moves, and writes that could land twice are not retried.

use crate::common;

use cosmos_driver::hedging::AvailabilityStrategy;
use cosmos_driver::{AttemptReason, CosmosOperation, OperationOptions};
use cosmos_emulator::faults::{FaultRule, OpKind, Reaction};
use cosmos_emulator::EmulatorBuilder;
use serde_json::json;

const REGIONS: [&str; 3] = ["East US", "West US", "North Europe"];

#[tokio::test]
async fn a_503_in_the_first_region_fails_over_to_the_second() {
    let emu = common::start(EmulatorBuilder::new()).await;
    // The plain path: a hedged read hands the move to its alternate instead (tests/hedging.rs).
    let options = common::options(&emu)
        .with_preferred_regions(REGIONS)
        .with_availability_strategy(AvailabilityStrategy::Disabled);
    let driver = common::driver(options).await;
    let c = common::container(&driver, "db", "c").await;
    common::create_item(&driver, &c, "a", "p", 1).await;
    let _fault = emu.faults().add(
        FaultRule::new(Reaction::respond(503, 0))
            .in_regions(["East US"])
            .for_ops([OpKind::Read]),
    );

    let r = driver
        .execute(common::read(&c, "a", "p"), &OperationOptions::new())
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let rows = r.diagnostics().requests();
    assert_eq!(common::regions_of(r.diagnostics()), ["East US", "West US"]);
    assert_eq!(rows[0].status().unwrap().status, 503);
    assert_eq!(rows[1].reason(), AttemptReason::Failover);
    assert_eq!(emu.counters().get("East US", OpKind::Read), 1);
    assert_eq!(emu.counters().get("West US", OpKind::Read), 1);

    // A 503 is one partition's answer: the endpoint is not marked, so the next read tries East US
    // first again (the partition's circuit breaker counts the failures; tests/partition_faults.rs).
    let r = driver
        .execute(common::read(&c, "a", "p"), &OperationOptions::new())
        .await
        .unwrap();
    assert_eq!(common::regions_of(r.diagnostics()), ["East US", "West US"]);
    assert_eq!(emu.counters().get("East US", OpKind::Read), 2);
}

#[tokio::test]
async fn a_closed_connection_fails_over_for_reads() {
    let emu = common::start(EmulatorBuilder::new()).await;
    let driver = common::driver(common::options(&emu).with_preferred_regions(REGIONS)).await;
    let c = common::container(&driver, "db", "c").await;
    common::create_item(&driver, &c, "a", "p", 1).await;
    let _fault = emu.faults().add(
        FaultRule::new(Reaction::Close)
            .in_regions(["East US"])
            .for_ops([OpKind::Read]),
    );
    let r = driver
        .execute(common::read(&c, "a", "p"), &OperationOptions::new())
        .await
        .unwrap();
    assert_eq!(common::regions_of(r.diagnostics()), ["East US", "West US"]);
    assert!(r.diagnostics().requests()[0].failure().is_some());
}

#[tokio::test]
async fn writes_follow_the_write_region_when_it_moves() {
    let emu = common::start(EmulatorBuilder::new()).await;
    let driver = common::driver(common::options(&emu).with_preferred_regions(REGIONS)).await;
    let c = common::container(&driver, "db", "c").await;
    assert_eq!(driver.write_region().as_str(), "East US");
    emu.failover("West US").unwrap();

    let created = common::create_item(&driver, &c, "moved", "p", 1).await;
    assert_eq!(created.status(), 201);
    let d = created.diagnostics();
    assert_eq!(common::regions_of(d), ["East US", "West US"]);
    assert_eq!(d.requests()[0].status().unwrap().to_string(), "403/3");
    assert_eq!(
        driver.write_region().as_str(),
        "West US",
        "metadata was refreshed"
    );

    // Later writes go straight to the new write region.
    let again = common::create_item(&driver, &c, "moved2", "p", 1).await;
    assert_eq!(common::regions_of(again.diagnostics()), ["West US"]);
}

#[tokio::test]
async fn a_create_is_retried_in_place_after_a_503_and_then_reported_as_unknown() {
    // A repeated create cannot write twice (it answers 409), so it is retried in place; a 503 may
    // have been answered after the create was carried out, so the end is an unknown outcome.
    let emu = common::start(EmulatorBuilder::new()).await;
    let driver = common::driver(common::options(&emu).with_preferred_regions(REGIONS)).await;
    let c = common::container(&driver, "db", "c").await;
    let _fault = emu
        .faults()
        .add(FaultRule::new(Reaction::respond(503, 0)).for_ops([OpKind::Create]));
    let op = CosmosOperation::create_item(c.clone())
        .with_partition_key("p")
        .with_json_body(&json!({"id": "x", "pk": "p"}))
        .unwrap();
    let e = driver
        .execute(op, &OperationOptions::new())
        .await
        .unwrap_err();
    assert_eq!(e.kind(), cosmos_driver::ErrorKind::OutcomeUnknown, "{e}");
    let last = std::error::Error::source(&e)
        .and_then(|s| s.downcast_ref::<cosmos_driver::CosmosError>())
        .expect("the last attempt's error");
    assert!(last.is_service_unavailable(), "{last}");
    assert_eq!(
        e.diagnostics().requests().len(),
        3,
        "the first and two local retries"
    );
    assert_eq!(emu.counters().get("East US", OpKind::Create), 3);
    assert_eq!(
        emu.counters().get("West US", OpKind::Create),
        0,
        "single-write: in place"
    );
}

#[tokio::test]
async fn a_replace_is_retried_in_place_after_a_503() {
    let emu = common::start(EmulatorBuilder::new()).await;
    let driver = common::driver(common::options(&emu).with_preferred_regions(REGIONS)).await;
    let c = common::container(&driver, "db", "c").await;
    common::create_item(&driver, &c, "a", "p", 1).await;
    let _fault = emu.faults().add(
        FaultRule::new(Reaction::respond(503, 0))
            .for_ops([OpKind::Replace])
            .first(1),
    );
    let op = CosmosOperation::replace_item(c.item("a").unwrap())
        .with_partition_key("p")
        .with_json_body(&json!({"id": "a", "pk": "p", "n": 2}))
        .unwrap();
    let r = driver.execute(op, &OperationOptions::new()).await.unwrap();
    assert_eq!(common::regions_of(r.diagnostics()), ["East US", "East US"]);
    assert_eq!(r.diagnostics().requests()[1].reason(), AttemptReason::Retry);
}

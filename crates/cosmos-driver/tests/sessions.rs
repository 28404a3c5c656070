//! Session consistency across regions with replication lag: the driver's tokens, 404/1002 retries
//! in place and then in the hub region, and the caller's token winning for its operation.

use crate::common;

use cosmos_driver::hedging::AvailabilityStrategy;
use cosmos_driver::{AttemptReason, OperationOptions, SessionToken};
use cosmos_emulator::faults::OpKind;
use cosmos_emulator::{EmulatorBuilder, ReplicationLag};

fn lagging() -> EmulatorBuilder {
    EmulatorBuilder::new().region_replication_lag("West US", ReplicationLag::fixed_ms(60_000))
}

#[tokio::test]
async fn a_lagging_region_never_shows_the_caller_a_1002() {
    let emu = common::start(lagging()).await;
    // The plain path (a hedged read takes the same hub step: tests/hedging_cases/hub.rs).
    let options = common::options(&emu)
        .with_preferred_regions(["West US", "East US"])
        .with_availability_strategy(AvailabilityStrategy::Disabled);
    let driver = common::driver(options).await;
    let c = common::container(&driver, "db", "c").await;
    let created = common::create_item(&driver, &c, "a", "p", 1).await;
    assert_eq!(
        common::regions_of(created.diagnostics()),
        ["East US"],
        "writes go to the hub"
    );

    let r = driver
        .execute(common::read(&c, "a", "p"), &OperationOptions::new())
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let rows = r.diagnostics().requests();
    assert_eq!(
        common::regions_of(r.diagnostics()),
        ["West US", "West US", "East US"]
    );
    assert_eq!(rows[0].status().unwrap().to_string(), "404/1002");
    assert_eq!(rows[1].reason(), AttemptReason::SessionRetry);
    assert_eq!(rows[1].status().unwrap().to_string(), "404/1002");
    assert_eq!(rows[2].reason(), AttemptReason::SessionRetry);
    assert_eq!(emu.counters().get("West US", OpKind::Read), 2);
    assert_eq!(emu.counters().get("East US", OpKind::Read), 1);
}

#[tokio::test]
async fn tokens_merge_and_never_regress() {
    let emu = common::start(EmulatorBuilder::new().partitions(1)).await;
    let driver = common::driver(common::options(&emu)).await;
    let c = common::container(&driver, "db", "c").await;
    let mut last = 0;
    for i in 0..5 {
        let r = common::create_item(&driver, &c, &format!("i{i}"), "p", i).await;
        let token = SessionToken::parse(r.session_token().unwrap()).unwrap();
        let (range, t) = token.partitions().next().unwrap();
        assert!(t.global_lsn() > last);
        last = t.global_lsn();
        let held = driver
            .sessions()
            .token_for(&std::sync::Arc::from(c.link()))
            .unwrap();
        assert_eq!(held.get(range).unwrap().global_lsn(), last);
    }
}

#[tokio::test]
async fn the_callers_token_wins_for_its_operation() {
    let emu = common::start(lagging()).await;
    let writer = common::driver(common::options(&emu)).await;
    let c = common::container(&writer, "db", "c").await;
    let token = common::create_item(&writer, &c, "a", "p", 1)
        .await
        .session_token()
        .unwrap()
        .to_string();

    // A second driver has no token of its own: West US answers 404 (not yet replicated).
    let reader =
        common::driver(common::options(&emu).with_preferred_regions(["West US", "East US"])).await;
    let e = reader
        .execute(common::read(&c, "a", "p"), &OperationOptions::new())
        .await
        .unwrap_err();
    assert!(e.is_not_found() && e.sub_status() == Some(0), "{e}");

    // With the writer's token, the read waits for (or routes to) a region that has the write.
    let with_token =
        OperationOptions::new().with_session_token(SessionToken::parse(&token).unwrap());
    let r = reader
        .execute(common::read(&c, "a", "p"), &with_token)
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(
        common::regions_of(r.diagnostics())
            .last()
            .map(String::as_str),
        Some("East US")
    );
}

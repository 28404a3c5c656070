//! The account's per-partition failover switch (`enablePerPartitionFailoverBehavior` in the account
//! document) turns the driver's default hedging off and on again without a restart: set through the
//! emulator's admin API over real HTTP, learned on the account refresh.

use std::time::Duration;

use cosmos_driver::{AttemptReason, CosmosDriver, CosmosResponse, OperationOptions};
use cosmos_emulator::faults::{FaultRule, OpKind, Reaction};
use cosmos_emulator::{Emulator, EmulatorBuilder};
use serde_json::json;

use crate::common;

const EAST: &str = "East US";
const WEST: &str = "West US";
const NORTH: &str = "North Europe";

/// `POST /_emulator/account` with `body`; answers the status and the answer's JSON.
async fn account_admin(emu: &Emulator, body: serde_json::Value) -> (u16, serde_json::Value) {
    use http_body_util::{BodyExt, Full};
    use hyper_util::client::legacy::Client;
    use hyper_util::rt::TokioExecutor;
    let client: Client<_, Full<bytes::Bytes>> = Client::builder(TokioExecutor::new()).build_http();
    let req = http::Request::post(format!(
        "{}/_emulator/account",
        emu.endpoint().trim_end_matches('/')
    ))
    .header("authorization", format!("Bearer {}", emu.key()))
    .header("content-type", "application/json")
    .body(Full::new(bytes::Bytes::from(body.to_string())))
    .unwrap();
    let resp = client.request(req).await.expect("the admin API answers");
    let status = resp.status().as_u16();
    let bytes = resp.into_body().collect().await.unwrap().to_bytes();
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(serde_json::Value::Null),
    )
}

/// Waits (up to 5 s) until the driver's account metadata shows `switch`.
async fn learned(driver: &CosmosDriver, switch: Option<bool>) -> bool {
    for _ in 0..50 {
        if driver.account().per_partition_failover == switch {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    false
}

fn hedge_attempts(r: &CosmosResponse) -> usize {
    r.diagnostics()
        .requests()
        .iter()
        .filter(|row| row.reason() == AttemptReason::Hedge)
        .count()
}

#[tokio::test]
async fn the_account_switch_stops_and_resumes_default_hedging_without_a_restart() {
    let emu = common::start(EmulatorBuilder::new()).await;
    // No hedging configured anywhere: the driver default (threshold 1 s) is in force.
    let driver = common::driver(
        common::options(&emu)
            .with_preferred_regions([EAST, WEST, NORTH])
            .with_account_refresh_interval(Duration::from_millis(100)),
    )
    .await;
    let c = common::container(&driver, "db", "c").await;
    common::create_item(&driver, &c, "a", "p", 1).await;
    assert_eq!(driver.account().per_partition_failover, None);
    let _slow = emu.faults().add(
        FaultRule::new(Reaction::delay_ms(1_400))
            .in_regions([EAST])
            .for_ops([OpKind::Read]),
    );
    let read = |options: OperationOptions| {
        let (driver, c) = (driver.clone(), c.clone());
        async move {
            driver
                .execute(common::read(&c, "a", "p"), &options)
                .await
                .expect("the read is answered")
        }
    };

    let r = read(OperationOptions::new()).await;
    assert_eq!(hedge_attempts(&r), 1, "hedged before the switch");

    let (status, answer) =
        account_admin(&emu, json!({"enablePerPartitionFailoverBehavior": false})).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["enablePerPartitionFailoverBehavior"], json!(false));
    assert!(
        learned(&driver, Some(false)).await,
        "the background refresh reads the switch"
    );
    let r = read(OperationOptions::new()).await;
    assert_eq!(hedge_attempts(&r), 0, "{:?}", r.diagnostics().requests());
    assert!(r.diagnostics().hedge().is_none(), "hedging was not active");
    assert_eq!(common::regions_of(r.diagnostics()), [EAST]);

    // An operation that asks for hedging itself still hedges: its own choice wins over the account.
    let r = read(OperationOptions::new().with_hedging_enabled(true)).await;
    assert_eq!(hedge_attempts(&r), 1);

    let (status, _) =
        account_admin(&emu, json!({"enablePerPartitionFailoverBehavior": true})).await;
    assert_eq!(status, 200);
    let refreshed = driver.refresh_account().await;
    assert_eq!(refreshed.per_partition_failover, Some(true));
    let r = read(OperationOptions::new()).await;
    assert_eq!(hedge_attempts(&r), 1, "hedging resumed");
}

#[tokio::test]
async fn an_explicit_client_strategy_is_kept_when_the_account_switch_is_off() {
    use cosmos_driver::hedging::{AvailabilityStrategy, HedgeThreshold, HedgingStrategy};
    let emu = common::start(EmulatorBuilder::new()).await;
    let (status, _) =
        account_admin(&emu, json!({"enablePerPartitionFailoverBehavior": false})).await;
    assert_eq!(status, 200);
    let strategy = HedgingStrategy::new(HedgeThreshold::new(Duration::from_millis(150)).unwrap());
    let driver = common::driver(
        common::options(&emu)
            .with_preferred_regions([EAST, WEST])
            .with_availability_strategy(AvailabilityStrategy::Hedging(strategy)),
    )
    .await;
    assert_eq!(driver.account().per_partition_failover, Some(false));
    let c = common::container(&driver, "db", "c").await;
    common::create_item(&driver, &c, "a", "p", 1).await;
    let _slow = emu.faults().add(
        FaultRule::new(Reaction::delay_ms(800))
            .in_regions([EAST])
            .for_ops([OpKind::Read]),
    );
    let r = driver
        .execute(common::read(&c, "a", "p"), &OperationOptions::new())
        .await
        .unwrap();
    assert_eq!(hedge_attempts(&r), 1, "the application's own strategy");
}

#[tokio::test]
async fn the_admin_api_refuses_a_malformed_switch() {
    let emu = common::start(EmulatorBuilder::new()).await;
    for body in [
        json!({"enablePerPartitionFailoverBehavior": "no"}),
        json!({"somethingElse": true}),
        json!([1]),
    ] {
        let (status, answer) = account_admin(&emu, body.clone()).await;
        assert_eq!(status, 400, "{body} -> {answer}");
    }
}

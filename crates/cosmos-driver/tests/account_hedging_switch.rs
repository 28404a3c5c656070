//! The account's hedging kill switch (`disableCrossRegionalHedging` in the account document): set
//! through the emulator's admin API over real HTTP and learned on the account refresh, it turns
//! every cross-region hedge off (the driver default, an operation's own strategy, a client's own
//! strategy) without a restart, and lifting it brings them back. The per-partition failover
//! property (`enablePerPartitionFailoverBehavior`) leaves hedging alone.

use std::time::Duration;

use cosmos_driver::hedging::{AvailabilityStrategy, HedgeThreshold, HedgingStrategy};
use cosmos_driver::{AttemptReason, CosmosDriver, CosmosResponse, OperationOptions};
use cosmos_emulator::faults::{FaultRule, OpKind, Reaction};
use cosmos_emulator::{Emulator, EmulatorBuilder};
use serde_json::json;

use crate::common;

const EAST: &str = "East US";
const WEST: &str = "West US";
const NORTH: &str = "North Europe";
const KILL_SWITCH: &str = "disableCrossRegionalHedging";
const PPAF: &str = "enablePerPartitionFailoverBehavior";

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

/// Waits (up to 5 s) until the driver's account metadata shows the kill switch as `switch`.
async fn learned(driver: &CosmosDriver, switch: Option<bool>) -> bool {
    for _ in 0..50 {
        if driver.account().disable_cross_regional_hedging == switch {
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

fn explicit(ms: u64) -> AvailabilityStrategy {
    AvailabilityStrategy::Hedging(HedgingStrategy::new(
        HedgeThreshold::new(Duration::from_millis(ms)).unwrap(),
    ))
}

/// Point reads of item `a` through `driver` with `options`.
async fn read(driver: &CosmosDriver, options: OperationOptions) -> CosmosResponse {
    let c = cosmos_driver::DatabaseReference::new("db")
        .unwrap()
        .container("c")
        .unwrap();
    driver
        .execute(common::read(&c, "a", "p"), &options)
        .await
        .expect("the read is answered")
}

/// Driver options for `emu` preferring East, West, North. The alternate wins every race here; the
/// breaker would move reads off East after five in a row and end the races, so it is kept out of
/// the way.
fn options(emu: &Emulator) -> cosmos_driver::DriverOptions {
    common::options(emu)
        .with_preferred_regions([EAST, WEST, NORTH])
        .with_consecutive_hedge_win_threshold(std::num::NonZeroU32::new(1_000).unwrap())
}

/// What each kind of configuration does against the slow region: (what, hedge attempts).
async fn hedges_by_configuration(
    default_client: &CosmosDriver,
    explicit_client: &CosmosDriver,
) -> Vec<(&'static str, usize)> {
    let mut out = Vec::new();
    let r = read(default_client, OperationOptions::new()).await;
    out.push(("driver default", hedge_attempts(&r)));
    let r = read(
        default_client,
        OperationOptions::new().with_availability_strategy(explicit(150)),
    )
    .await;
    out.push(("operation strategy", hedge_attempts(&r)));
    let r = read(
        default_client,
        OperationOptions::new().with_hedging_enabled(true),
    )
    .await;
    out.push(("operation switch on", hedge_attempts(&r)));
    let r = read(explicit_client, OperationOptions::new()).await;
    out.push(("client strategy", hedge_attempts(&r)));
    out
}

#[tokio::test]
async fn the_kill_switch_stops_every_hedge_without_a_restart_and_lifting_it_resumes_them() {
    let emu = common::start(EmulatorBuilder::new()).await;
    // Nothing configured: the driver default (threshold 1 s) is in force.
    let default_client =
        common::driver(options(&emu).with_account_refresh_interval(Duration::from_millis(100)))
            .await;
    // The application's own strategy, on the client.
    let explicit_client =
        common::driver(options(&emu).with_availability_strategy(explicit(150))).await;
    assert_eq!(
        default_client.account().disable_cross_regional_hedging,
        Some(false),
        "the account document carries false"
    );
    let c = common::container(&default_client, "db", "c").await;
    common::create_item(&default_client, &c, "a", "p", 1).await;
    let _slow = emu.faults().add(
        FaultRule::new(Reaction::delay_ms(1_400))
            .in_regions([EAST])
            .for_ops([OpKind::Read]),
    );
    let all_hedge = vec![
        ("driver default", 1),
        ("operation strategy", 1),
        ("operation switch on", 1),
        ("client strategy", 1),
    ];
    assert_eq!(
        hedges_by_configuration(&default_client, &explicit_client).await,
        all_hedge,
        "before the switch"
    );

    let (status, answer) = account_admin(&emu, json!({ KILL_SWITCH: true })).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer[KILL_SWITCH], json!(true));
    assert!(
        learned(&default_client, Some(true)).await,
        "the background refresh reads the switch"
    );
    let refreshed = explicit_client.refresh_account().await;
    assert_eq!(refreshed.disable_cross_regional_hedging, Some(true));
    assert_eq!(
        hedges_by_configuration(&default_client, &explicit_client).await,
        vec![
            ("driver default", 0),
            ("operation strategy", 0),
            ("operation switch on", 0),
            ("client strategy", 0),
        ],
        "the account's kill switch is above every other choice"
    );
    let r = read(
        &explicit_client,
        OperationOptions::new().with_availability_strategy(explicit(100)),
    )
    .await;
    assert_eq!(hedge_attempts(&r), 0);
    assert!(r.diagnostics().hedge().is_none(), "no race was entered");
    assert_eq!(
        common::regions_of(r.diagnostics()),
        [EAST],
        "the read waits for the slow region"
    );

    let (status, answer) = account_admin(&emu, json!({ KILL_SWITCH: false })).await;
    assert_eq!(status, 200, "{answer}");
    assert!(learned(&default_client, Some(false)).await);
    let refreshed = explicit_client.refresh_account().await;
    assert_eq!(refreshed.disable_cross_regional_hedging, Some(false));
    assert_eq!(
        hedges_by_configuration(&default_client, &explicit_client).await,
        all_hedge,
        "hedging resumed"
    );
}

#[tokio::test]
async fn per_partition_failover_off_does_not_stop_the_default_hedging() {
    let emu = common::start(EmulatorBuilder::new()).await;
    let (status, answer) = account_admin(&emu, json!({ PPAF: false })).await;
    assert_eq!(status, 200, "{answer}");
    let driver = common::driver(options(&emu)).await;
    let c = common::container(&driver, "db", "c").await;
    common::create_item(&driver, &c, "a", "p", 1).await;
    let _slow = emu.faults().add(
        FaultRule::new(Reaction::delay_ms(1_400))
            .in_regions([EAST])
            .for_ops([OpKind::Read]),
    );
    let r = read(&driver, OperationOptions::new()).await;
    assert_eq!(
        hedge_attempts(&r),
        1,
        "{PPAF}: false is not a hedging switch: {:?}",
        r.diagnostics().requests()
    );
}

#[tokio::test]
async fn the_admin_api_refuses_a_malformed_switch() {
    let emu = common::start(EmulatorBuilder::new()).await;
    for body in [
        json!({ KILL_SWITCH: "yes" }),
        json!({ KILL_SWITCH: 1 }),
        json!({"somethingElse": true}),
        json!([1]),
    ] {
        let (status, answer) = account_admin(&emu, body.clone()).await;
        assert_eq!(status, 400, "{body} -> {answer}");
    }
}

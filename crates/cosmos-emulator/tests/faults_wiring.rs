//! The server carries out fault verdicts over real sockets, and counts requests per region and kind.

use crate::common;

use std::time::{Duration, Instant};

use common::{start_with_container, TestClient};
use cosmos_emulator::faults::{FaultRule, OpKind, Reaction};
use cosmos_emulator::{EmulatorBuilder, WELL_KNOWN_KEY};
use serde_json::json;

#[tokio::test]
async fn respond_close_stall_and_delay_reach_the_client() {
    let (emu, c) = start_with_container(EmulatorBuilder::new()).await;
    c.create_item(emu.endpoint(), "db", "c", &json!({"id": "a", "pk": "p"}))
        .await;
    let west = emu.region_endpoint("West US").unwrap().to_owned();

    let throttle = emu.faults().add(
        FaultRule::new(Reaction::respond_retry_after(429, 3200, 25))
            .in_regions(["West US"])
            .for_ops([OpKind::Read]),
    );
    let r = c.read_a(&west, &[]).await;
    assert_eq!((r.status, r.sub_status()), (429, 3200));
    assert_eq!(r.header("x-ms-retry-after-ms"), Some("25"));
    assert_eq!(r.json()["code"], "TooManyRequests");
    assert_eq!(throttle.hits(), 1);
    drop(throttle);
    assert_eq!(c.read_a(&west, &[]).await.status, 200);

    let delay = emu
        .faults()
        .add(FaultRule::new(Reaction::delay_ms(250)).in_regions(["West US"]));
    let started = Instant::now();
    assert_eq!(c.read_a(&west, &[]).await.status, 200);
    assert!(started.elapsed() >= Duration::from_millis(250));
    drop(delay);

    let _close = emu.faults().add(
        FaultRule::new(Reaction::Close)
            .in_regions(["West US"])
            .first(1),
    );
    let fresh = TestClient::new(WELL_KNOWN_KEY);
    let uri = format!("{}dbs", west);
    let date = common::now_date();
    let auth = common::master_auth(WELL_KNOWN_KEY, "GET", "dbs", "", &date);
    let request = http::Request::get(uri)
        .header("x-ms-date", &date)
        .header("authorization", &auth)
        .body(http_body_util::Full::new(bytes::Bytes::new()))
        .unwrap();
    let client = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .build_http();
    assert!(
        client.request(request).await.is_err(),
        "the connection is closed without an answer"
    );
    assert_eq!(
        fresh.get(&west, "/dbs", &[]).await.status,
        200,
        "first(1) fires once"
    );

    let _stall = emu
        .faults()
        .add(FaultRule::new(Reaction::Stall).in_regions(["West US"]));
    let stalled = tokio::time::timeout(Duration::from_millis(300), c.get(&west, "/dbs", &[])).await;
    assert!(stalled.is_err(), "a stalled request gets no answer");
    assert_eq!(
        c.get(emu.endpoint(), "/dbs", &[]).await.status,
        200,
        "other regions still answer"
    );
}

#[tokio::test]
async fn requests_are_counted_per_region_and_kind() {
    let (emu, c) = start_with_container(EmulatorBuilder::new()).await;
    emu.counters().reset();
    let east = emu.region_endpoint("East US").unwrap().to_owned();
    let west = emu.region_endpoint("West US").unwrap().to_owned();
    c.create_item(&east, "db", "c", &json!({"id": "a", "pk": "p"}))
        .await;
    c.read_a(&west, &[]).await;
    c.get(&west, "/dbs/db/colls/c/docs", &[]).await;
    // The global endpoint counts as the write region.
    c.read_a(emu.endpoint(), &[]).await;
    let counters = emu.counters();
    assert_eq!(counters.get("West US", OpKind::Read), 1);
    assert_eq!(counters.get("West US", OpKind::ReadFeed), 1);
    assert_eq!(counters.get("East US", OpKind::Create), 1);
    assert_eq!(counters.get("East US", OpKind::Read), 1);
    assert_eq!(counters.region_total("North Europe"), 0);
    // Admin requests are not counted.
    let r = c.admin_get(emu.endpoint(), "/_emulator/counters").await;
    assert_eq!(r.json()["West US"]["read"], 1);
    assert_eq!(counters.region_total("East US"), 2);
}

#[tokio::test]
async fn profiles_and_rule_files_given_at_start_are_installed() {
    let rules = r#"{"rules":[{"regions":["West US"],"ops":["metadata"],"reaction":{"respond":{"status":503,"sub_status":0}}}]}"#;
    let emu = EmulatorBuilder::new()
        .profile("local")
        .fault_rules_json(rules)
        .start()
        .await
        .unwrap();
    let c = TestClient::new(WELL_KNOWN_KEY);
    assert_eq!(
        c.get(emu.region_endpoint("West US").unwrap(), "/", &[])
            .await
            .status,
        503
    );
    assert_eq!(c.get(emu.endpoint(), "/", &[]).await.status, 200);
    assert_eq!(emu.faults().rules().len(), 1);
}

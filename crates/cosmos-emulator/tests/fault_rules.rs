//! Fault rules over real sockets: every reaction, first-match order, counts, guards, the admin API
//! and the `--faults` file of the binary.

use crate::common;

use std::io::Write;
use std::time::{Duration, Instant};

use common::process::EmulatorProcess;
use common::{assert_delayed, start_with_container, timed, TestClient};
use cosmos_emulator::faults::{DelaySpec, FaultRule, OpKind, Reaction};
use cosmos_emulator::{Emulator, EmulatorBuilder, WELL_KNOWN_KEY};
use http::Method;
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// An emulator (East US, West US) with database `db`, container `c` and item `a` in partition `p`.
async fn emulator_with_item() -> (Emulator, TestClient) {
    let (emu, client) =
        start_with_container(EmulatorBuilder::new().regions(["East US", "West US"])).await;
    let created = client
        .create_item(emu.endpoint(), "db", "c", &json!({"id": "a", "pk": "p"}))
        .await;
    assert_eq!(created.status, 201, "{created:?}");
    (emu, client)
}

fn west(emu: &Emulator) -> String {
    emu.region_endpoint("West US").unwrap().to_owned()
}

fn east(emu: &Emulator) -> String {
    emu.region_endpoint("East US").unwrap().to_owned()
}

/// Sends one unsigned GET over a fresh TCP connection and returns every byte the server sent
/// before closing (or before `wait` passed).
async fn raw_get(base: &str, path: &str, wait: Duration) -> Vec<u8> {
    let authority = base.trim_start_matches("http://").trim_end_matches('/');
    let mut stream = tokio::net::TcpStream::connect(authority).await.unwrap();
    let date = common::now_date();
    let (kind, link) = common::signing_parts(path);
    let auth = common::master_auth(WELL_KNOWN_KEY, "GET", &kind, &link, &date);
    let request = format!(
        "GET {path} HTTP/1.1\r\nhost: {authority}\r\nx-ms-date: {date}\r\nauthorization: {auth}\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut received = Vec::new();
    let _ = tokio::time::timeout(wait, stream.read_to_end(&mut received)).await;
    received
}

#[tokio::test]
async fn delay_reaction_delays_then_serves() {
    let (emu, client) = emulator_with_item().await;
    let west = west(&emu);
    let fixed = emu
        .faults()
        .add(FaultRule::new(Reaction::delay_ms(300)).in_regions(["West US"]));
    let (read, elapsed) = timed(client.read_a(&west, &[])).await;
    assert_eq!(read.status, 200);
    assert_eq!(read.json()["id"], "a");
    assert_delayed(elapsed, 300);
    assert_eq!(fixed.hits(), 1);

    // Only the region named is slowed.
    let started = Instant::now();
    assert_eq!(client.read_a(&east(&emu), &[]).await.status, 200);
    assert!(
        started.elapsed() < Duration::from_millis(300),
        "{:?}",
        started.elapsed()
    );
    drop(fixed);

    let uniform = DelaySpec::uniform(200.0, 400.0).unwrap();
    let _uniform = emu
        .faults()
        .add(FaultRule::new(Reaction::Delay(uniform)).for_ops([OpKind::Read]));
    let (read, elapsed) = timed(client.read_a(&west, &[])).await;
    assert_eq!(read.status, 200);
    assert_delayed(elapsed, 200);
}

#[tokio::test]
async fn respond_answers_the_status_without_touching_data() {
    let (emu, client) = emulator_with_item().await;
    let base = emu.endpoint().to_owned();
    let unavailable = emu
        .faults()
        .add(FaultRule::new(Reaction::respond(503, 21008)).for_ops([OpKind::Create]));
    let created = client
        .create_item(&base, "db", "c", &json!({"id": "b", "pk": "p"}))
        .await;
    assert_eq!((created.status, created.sub_status()), (503, 21008));
    assert_eq!(created.header("x-ms-retry-after-ms"), None);
    assert_eq!(created.json()["code"], "ServiceUnavailable");
    assert!(
        created.message().to_lowercase().contains("injected"),
        "{}",
        created.message()
    );
    assert_eq!(unavailable.hits(), 1);
    drop(unavailable);
    let missing = client
        .read_item(&base, "db", "c", "b", &json!("p"), &[])
        .await;
    assert_eq!(
        missing.status, 404,
        "the refused create must not have written the item"
    );
}

#[tokio::test]
async fn respond_429_carries_retry_after_and_can_wait_first() {
    let (emu, client) = emulator_with_item().await;
    let west = west(&emu);
    let throttled = Reaction::Respond {
        status: 429,
        sub_status: 3200,
        retry_after_ms: Some(40),
        delay: DelaySpec::fixed(200.0).unwrap(),
    };
    let _guard = emu
        .faults()
        .add(FaultRule::new(throttled).in_regions(["West US"]));
    let (read, elapsed) = timed(client.read_a(&west, &[])).await;
    assert_eq!((read.status, read.sub_status()), (429, 3200));
    assert_eq!(read.header("x-ms-retry-after-ms"), Some("40"));
    assert_delayed(elapsed, 200);
}

#[tokio::test]
async fn close_drops_the_connection_without_an_answer() {
    let (emu, client) = emulator_with_item().await;
    let west = west(&emu);
    let close = emu.faults().add(
        FaultRule::new(Reaction::Close)
            .in_regions(["West US"])
            .first(1),
    );
    let received = raw_get(&west, "/dbs", Duration::from_secs(10)).await;
    assert!(
        received.is_empty(),
        "got {:?}",
        String::from_utf8_lossy(&received)
    );
    assert_eq!(close.hits(), 1);
    // first(1): the next request is served.
    let received = raw_get(&west, "/", Duration::from_millis(500)).await;
    assert!(
        received.starts_with(b"HTTP/1.1 200"),
        "{:?}",
        String::from_utf8_lossy(&received)
    );
    assert_eq!(client.read_a(&west, &[]).await.status, 200);
}

#[tokio::test]
async fn stall_holds_the_request_until_the_client_gives_up() {
    let (emu, client) = emulator_with_item().await;
    let west = west(&emu);
    let stall = emu
        .faults()
        .add(FaultRule::new(Reaction::Stall).in_regions(["West US"]));
    let started = Instant::now();
    let stalled = tokio::time::timeout(Duration::from_millis(500), client.read_a(&west, &[])).await;
    assert!(stalled.is_err(), "a stalled request must not be answered");
    assert!(started.elapsed() >= Duration::from_millis(500));
    // A raw connection sees no byte at all, and other regions answer meanwhile.
    assert!(raw_get(&west, "/dbs", Duration::from_millis(300))
        .await
        .is_empty());
    assert_eq!(client.read_a(&east(&emu), &[]).await.status, 200);
    assert_eq!(stall.hits(), 2);
    drop(stall);
    assert_eq!(
        client.read_a(&west, &[]).await.status,
        200,
        "served again once the rule is gone"
    );
}

#[tokio::test]
async fn the_first_matching_rule_wins_and_counts_its_hits() {
    let (emu, client) = emulator_with_item().await;
    let (east, west) = (east(&emu), west(&emu));
    let west_reads = emu.faults().add(
        FaultRule::new(Reaction::respond(503, 0))
            .in_regions(["West US"])
            .for_ops([OpKind::Read]),
    );
    let never = emu
        .faults()
        .add(FaultRule::new(Reaction::Close).with_probability(0.0));
    let items = emu
        .faults()
        .add(FaultRule::new(Reaction::respond(429, 3200)).on_path("/dbs/*/docs/*"));
    let everything = emu.faults().add(FaultRule::new(Reaction::respond(500, 0)));

    assert_eq!(client.read_a(&west, &[]).await.status, 503);
    assert_eq!(client.read_a(&west, &[]).await.status, 503);
    assert_eq!(client.read_a(&east, &[]).await.status, 429);
    assert_eq!(client.get(&east, "/dbs/db", &[]).await.status, 500);
    assert_eq!(
        (
            west_reads.hits(),
            never.hits(),
            items.hits(),
            everything.hits()
        ),
        (2, 0, 1, 1)
    );
    let listed: Vec<u64> = emu.faults().rules().iter().map(|r| r.hits).collect();
    assert_eq!(listed, [2, 0, 1, 1]);
}

#[tokio::test]
async fn first_n_and_after_n_shape_when_a_rule_fires() {
    let (emu, client) = emulator_with_item().await;
    let west = west(&emu);
    let rule = FaultRule::new(Reaction::respond(503, 0))
        .in_regions(["West US"])
        .after(1)
        .first(2);
    let guard = emu.faults().add(rule);
    let mut statuses = Vec::new();
    for _ in 0..5 {
        statuses.push(client.read_a(&west, &[]).await.status);
    }
    assert_eq!(statuses, [200, 503, 503, 200, 200]);
    assert_eq!(guard.hits(), 2);
}

#[tokio::test]
async fn guards_remove_their_rules_and_can_switch_them_off() {
    let (emu, client) = emulator_with_item().await;
    let west = west(&emu);
    let guard = emu.faults().add(FaultRule::new(Reaction::respond(503, 0)));
    assert_eq!(client.read_a(&west, &[]).await.status, 503);
    guard.set_enabled(false);
    assert_eq!(client.read_a(&west, &[]).await.status, 200);
    guard.set_enabled(true);
    assert_eq!(client.read_a(&west, &[]).await.status, 503);
    drop(guard);
    assert!(emu.faults().rules().is_empty());
    assert_eq!(client.read_a(&west, &[]).await.status, 200);
}

#[tokio::test]
async fn geo_profile_slows_item_reads_by_region() {
    let (emu, client) = start_with_container(
        EmulatorBuilder::new()
            .regions(["East US", "West US"])
            .profile("geo"),
    )
    .await;
    client
        .create_item(emu.endpoint(), "db", "c", &json!({"id": "a", "pk": "p"}))
        .await;
    let west = west(&emu);
    for _ in 0..3 {
        let (read, elapsed) = timed(client.read_a(&west, &[])).await;
        assert_eq!(read.status, 200);
        assert_delayed(elapsed, 18);
    }
    assert_eq!(emu.faults().profile_name(), "geo");
    assert_eq!(emu.faults().profile_rules()[1].hits, 3);
}

async fn admin(
    client: &TestClient,
    emu: &Emulator,
    method: Method,
    path: &str,
    body: Option<&str>,
) -> (u16, Value) {
    let r = client.admin(emu.endpoint(), method, path, body).await;
    (r.status, r.json())
}

#[tokio::test]
async fn admin_api_adds_lists_toggles_and_deletes_rules() {
    let (emu, client) = emulator_with_item().await;
    let west = west(&emu);
    let rules = r#"{"rules":[
        {"name":"west-reads","regions":["West US"],"ops":["read"],"reaction":{"respond":{"status":503,"sub_status":0,"retry_after_ms":null,"delay_ms":0}}},
        {"name":"slow","ops":["read"],"path":"/dbs/*","reaction":{"delay":{"uniform_ms":[1,2]}}}]}"#;
    let (status, body) = admin(
        &client,
        &emu,
        Method::POST,
        "/_emulator/faults",
        Some(rules),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    let ids: Vec<u64> = body["ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    assert_eq!(ids.len(), 2);

    assert_eq!(client.read_a(&west, &[]).await.status, 503);
    assert_eq!(client.read_a(&east(&emu), &[]).await.status, 200);
    let (status, listed) = admin(&client, &emu, Method::GET, "/_emulator/faults", None).await;
    assert_eq!(status, 200);
    assert_eq!(listed["profile"], "local");
    let rules = listed["rules"].as_array().unwrap();
    assert_eq!(rules.len(), 2);
    assert_eq!(
        (rules[0]["name"].clone(), rules[0]["hits"].clone()),
        (json!("west-reads"), json!(1))
    );
    assert_eq!(
        (rules[1]["name"].clone(), rules[1]["hits"].clone()),
        (json!("slow"), json!(1))
    );

    let one = format!("/_emulator/faults/{}", ids[0]);
    let (status, body) = admin(
        &client,
        &emu,
        Method::PATCH,
        &one,
        Some(r#"{"enabled":false}"#),
    )
    .await;
    assert_eq!((status, body["enabled"].clone()), (200, json!(false)));
    assert_eq!(client.read_a(&west, &[]).await.status, 200);

    let (status, _) = admin(&client, &emu, Method::DELETE, &one, None).await;
    assert_eq!(status, 200);
    let (status, body) = admin(&client, &emu, Method::DELETE, &one, None).await;
    assert_eq!((status, body["code"].clone()), (404, json!("NotFound")));
    let (status, body) = admin(&client, &emu, Method::DELETE, "/_emulator/faults", None).await;
    assert_eq!((status, body), (200, json!({"removed": 1})));
    assert!(emu.faults().rules().is_empty());

    let (status, body) = admin(
        &client,
        &emu,
        Method::POST,
        "/_emulator/faults",
        Some(r#"{"rules":[{"reaction":"close","probability":2}]}"#),
    )
    .await;
    assert_eq!(status, 400);
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("rules[0].probability"),
        "{body}"
    );
    let (status, body) = admin(&client, &emu, Method::GET, "/_emulator/nope", None).await;
    assert_eq!((status, body["code"].clone()), (404, json!("NotFound")));
}

#[tokio::test]
async fn admin_api_reads_and_resets_counters_and_switches_profiles() {
    let (emu, client) = emulator_with_item().await;
    let (status, _) = admin(&client, &emu, Method::DELETE, "/_emulator/counters", None).await;
    assert_eq!(status, 200);
    client.read_a(&west(&emu), &[]).await;
    client.read_a(&west(&emu), &[]).await;
    client.read_a(&east(&emu), &[]).await;
    let (status, counters) = admin(&client, &emu, Method::GET, "/_emulator/counters", None).await;
    assert_eq!(status, 200);
    assert_eq!(counters["West US"]["read"], 2);
    assert_eq!(counters["East US"]["read"], 1);
    assert_eq!(counters["East US"]["create"], 0);

    let (status, body) = admin(
        &client,
        &emu,
        Method::PUT,
        "/_emulator/profile",
        Some(r#"{"name":"geo","regions":["East US","West US"]}"#),
    )
    .await;
    assert_eq!((status, body["name"].clone()), (200, json!("geo")));
    let (read, elapsed) = timed(client.read_a(&west(&emu), &[])).await;
    assert_eq!(read.status, 200);
    assert_delayed(elapsed, 18);
    let (status, body) = admin(
        &client,
        &emu,
        Method::PUT,
        "/_emulator/profile",
        Some(r#"{"name":"turbo"}"#),
    )
    .await;
    assert_eq!(status, 400);
    assert!(body["message"]
        .as_str()
        .unwrap()
        .contains("local, geo, slow-primary, slow-both"));
}

/// The binary, started with `--port 0` and some flags; killed on drop.
#[tokio::test]
async fn the_binary_installs_the_rules_of_its_faults_file() {
    let dir = std::env::temp_dir().join(format!("fault-rules-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("rules.json");
    let mut f = std::fs::File::create(&file).unwrap();
    f.write_all(
        br#"{"rules":[{"name":"west-metadata","regions":["West US"],"ops":["metadata"],
            "reaction":{"respond":{"status":503,"sub_status":0,"retry_after_ms":7}}}]}"#,
    )
    .unwrap();
    drop(f);
    let binary = EmulatorProcess::start(&["--faults", file.to_str().unwrap()]).unwrap();
    let client = TestClient::new(WELL_KNOWN_KEY);
    let r = client.get(binary.region("West US"), "/", &[]).await;
    assert_eq!(
        (r.status, r.header("x-ms-retry-after-ms")),
        (503, Some("7"))
    );
    assert_eq!(
        client.get(binary.region("East US"), "/", &[]).await.status,
        200
    );
    let listed = client
        .admin_get(&binary.endpoint, "/_emulator/faults")
        .await
        .json();
    assert_eq!(listed["rules"][0]["name"], "west-metadata");
    assert_eq!(listed["rules"][0]["hits"], 1);

    std::fs::write(
        &file,
        br#"{"rules":[{"reaction":{"respond":{"status":"503"}}}]}"#,
    )
    .unwrap();
    let err = EmulatorProcess::start(&["--faults", file.to_str().unwrap()])
        .err()
        .expect("a bad rules file must stop the start");
    assert!(err.contains("rules[0].reaction.respond.status"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn profiles_switch_over_the_admin_api_without_naming_regions() {
    let (emu, client) = emulator_with_item().await;
    let (status, body) = admin(&client, &emu, Method::GET, "/_emulator/profile", None).await;
    assert_eq!(
        (status, body),
        (
            200,
            json!({"name": "local", "regions": ["East US", "West US"]})
        )
    );
    let (status, body) = admin(
        &client,
        &emu,
        Method::PUT,
        "/_emulator/profile",
        Some(r#"{"name":"geo"}"#),
    )
    .await;
    assert_eq!(
        (status, body["name"].clone()),
        (200, json!("geo")),
        "{body}"
    );
    let (read, elapsed) = timed(client.read_a(&west(&emu), &[])).await;
    assert_eq!(read.status, 200);
    assert_delayed(elapsed, 18);
    // Every region is listed in the counters from the start, in account order.
    let (_, counters) = admin(&client, &emu, Method::GET, "/_emulator/counters", None).await;
    let regions: Vec<&String> = counters.as_object().unwrap().keys().collect();
    assert_eq!(regions, ["East US", "West US"]);
}

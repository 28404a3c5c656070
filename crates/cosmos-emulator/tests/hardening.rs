//! Requests that must not crash, exhaust or change the emulator without the key: the admin API's
//! credential, body type, host and rule cap; auth before any other work; path segments and ids;
//! item size and depth after every write; read-feed page bytes; parser limits.

use crate::common;

use std::time::Duration;

use common::{start_with_container, Resp, TestClient};
use cosmos_emulator::faults::{FaultRule, OpKind, Reaction};
use cosmos_emulator::{EmulatorBuilder, WELL_KNOWN_KEY};
use http::Method;
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const PK: (&str, &str) = ("x-ms-documentdb-partitionkey", "[\"p\"]");

fn authority(endpoint: &str) -> String {
    endpoint
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_owned()
}

/// Sends raw bytes on a new connection and returns what the server answered (up to 8 KB), or an
/// empty string when it closed without answering; gives up after `wait`.
async fn raw_exchange(endpoint: &str, request: &[u8], wait: Duration) -> String {
    let mut stream = TcpStream::connect(authority(endpoint)).await.unwrap();
    stream.write_all(request).await.unwrap();
    let mut buf = vec![0u8; 8192];
    match tokio::time::timeout(wait, stream.read(&mut buf)).await {
        Ok(Ok(n)) => String::from_utf8_lossy(&buf[..n]).into_owned(),
        Ok(Err(_)) => String::new(),
        Err(_) => "<no answer>".to_owned(),
    }
}

fn admin_auth(key: &str) -> String {
    format!("Bearer {key}")
}

#[tokio::test]
async fn the_admin_api_needs_the_account_key() {
    let emu = EmulatorBuilder::new().start().await.unwrap();
    let c = TestClient::new(WELL_KNOWN_KEY);
    let r = c.get_unsigned(emu.endpoint(), "/_emulator/counters").await;
    assert_eq!(r.status, 401, "{r:?}");
    let wrong = admin_auth("bm90IHRoZSBrZXk=");
    let r = c
        .send_raw(
            emu.endpoint(),
            Method::GET,
            "/_emulator/counters",
            &[("authorization", &wrong)],
            None,
        )
        .await;
    assert_eq!(r.status, 401);
    assert!(!String::from_utf8_lossy(&r.body).contains("bm90IHRoZSBrZXk"));
    let good = admin_auth(WELL_KNOWN_KEY);
    let r = c
        .send_raw(
            emu.endpoint(),
            Method::GET,
            "/_emulator/counters",
            &[("authorization", &good)],
            None,
        )
        .await;
    assert_eq!(r.status, 200, "{r:?}");
}

#[tokio::test]
async fn a_separate_admin_token_is_accepted_too() {
    let emu = EmulatorBuilder::new()
        .admin_token("let-me-admin")
        .start()
        .await
        .unwrap();
    let c = TestClient::new(WELL_KNOWN_KEY);
    let token = admin_auth("let-me-admin");
    let r = c
        .send_raw(
            emu.endpoint(),
            Method::GET,
            "/_emulator/faults",
            &[("authorization", &token)],
            None,
        )
        .await;
    assert_eq!(r.status, 200, "{r:?}");
}

#[tokio::test]
async fn the_admin_api_refuses_bodies_that_are_not_json() {
    let emu = EmulatorBuilder::new().start().await.unwrap();
    let c = TestClient::new(WELL_KNOWN_KEY);
    let key = admin_auth(WELL_KNOWN_KEY);
    let rule = br#"{"reaction":"close"}"#;
    for content_type in ["text/plain", "application/x-www-form-urlencoded", ""] {
        let mut headers = vec![("authorization", key.as_str())];
        if !content_type.is_empty() {
            headers.push(("content-type", content_type));
        }
        let r = c
            .send_raw(
                emu.endpoint(),
                Method::POST,
                "/_emulator/faults",
                &headers,
                Some(rule),
            )
            .await;
        assert_eq!(r.status, 415, "{content_type}: {r:?}");
    }
    assert!(emu.faults().rules().is_empty());
    let r = c
        .send_raw(
            emu.endpoint(),
            Method::POST,
            "/_emulator/failover",
            &[("authorization", &key), ("content-type", "text/plain")],
            Some(br#"{"writeRegion":"West US"}"#),
        )
        .await;
    assert_eq!(r.status, 415);
    assert_eq!(emu.write_region(), "East US");
}

#[tokio::test]
async fn the_admin_api_answers_loopback_host_names_only() {
    let emu = EmulatorBuilder::new().start().await.unwrap();
    let key = admin_auth(WELL_KNOWN_KEY);
    for (host, ok) in [
        ("attacker.example", false),
        ("attacker.example:8081", false),
        ("localhost:8081", true),
        ("127.0.0.1", true),
        ("[::1]:8081", true),
    ] {
        let request = format!(
            "GET /_emulator/counters HTTP/1.1\r\nhost: {host}\r\nauthorization: {key}\r\nconnection: close\r\n\r\n"
        );
        let answer =
            raw_exchange(emu.endpoint(), request.as_bytes(), Duration::from_secs(10)).await;
        let want = if ok { "HTTP/1.1 200" } else { "HTTP/1.1 403" };
        assert!(answer.starts_with(want), "{host}: {answer}");
    }
}

#[tokio::test]
async fn the_admin_api_caps_the_rule_count() {
    let emu = EmulatorBuilder::new().start().await.unwrap();
    let c = TestClient::new(WELL_KNOWN_KEY);
    let rules: Vec<Value> = (0..1000)
        .map(|i| json!({"name": format!("r{i}"), "reaction": "close", "enabled": false}))
        .collect();
    let body = json!({ "rules": rules }).to_string();
    let r = c
        .admin(
            emu.endpoint(),
            Method::POST,
            "/_emulator/faults",
            Some(&body),
        )
        .await;
    assert_eq!(r.status, 400, "{r:?}");
    assert!(r.message().contains("256"), "{}", r.message());
    assert!(emu.faults().rules().is_empty());
    let long_path = json!({"path": "*".repeat(5000), "reaction": "close"}).to_string();
    let r = c
        .admin(
            emu.endpoint(),
            Method::POST,
            "/_emulator/faults",
            Some(&long_path),
        )
        .await;
    assert_eq!(r.status, 400, "{r:?}");
    assert!(r.message().contains("1024"), "{}", r.message());
}

#[tokio::test]
async fn unsigned_requests_are_not_counted_and_fire_no_rules() {
    let (emu, c) = start_with_container(EmulatorBuilder::new()).await;
    let _rule = emu
        .faults()
        .add(FaultRule::new(Reaction::respond(503, 0)).for_ops([OpKind::Read]));
    emu.counters().reset();
    let r = c
        .send_raw(
            emu.endpoint(),
            Method::GET,
            "/dbs/db/colls/c/docs/a",
            &[PK],
            None,
        )
        .await;
    assert_eq!(r.status, 401, "{r:?}");
    assert_eq!(emu.counters().get("East US", OpKind::Read), 0);
    assert_eq!(emu.faults().rules()[0].hits, 0);
}

#[tokio::test]
async fn an_unsigned_request_is_refused_before_its_body_is_read() {
    let emu = EmulatorBuilder::new().start().await.unwrap();
    let request = b"POST /dbs HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: 1000\r\n\r\n{\"id\":";
    let answer = raw_exchange(emu.endpoint(), request, Duration::from_secs(5)).await;
    assert!(answer.starts_with("HTTP/1.1 401"), "{answer}");
}

#[tokio::test]
async fn a_stalled_body_is_answered_after_the_body_timeout() {
    let emu = EmulatorBuilder::new()
        .body_read_timeout(Duration::from_millis(200))
        .start()
        .await
        .unwrap();
    let date = common::now_date();
    let auth = common::master_auth(WELL_KNOWN_KEY, "POST", "dbs", "", &date);
    let request = format!(
        "POST /dbs HTTP/1.1\r\nhost: 127.0.0.1\r\nx-ms-date: {date}\r\nauthorization: {auth}\r\ncontent-length: 1000\r\n\r\n{{\"id\":"
    );
    let answer = raw_exchange(emu.endpoint(), request.as_bytes(), Duration::from_secs(10)).await;
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
}

#[tokio::test]
async fn connections_over_the_cap_are_answered_503_and_closed() {
    let emu = EmulatorBuilder::new()
        .max_connections(2)
        .start()
        .await
        .unwrap();
    let request = b"GET / HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n";
    let mut held = Vec::new();
    for _ in 0..2 {
        let mut stream = TcpStream::connect(authority(emu.endpoint())).await.unwrap();
        stream.write_all(request).await.unwrap();
        let mut buf = vec![0u8; 4096];
        let n = stream.read(&mut buf).await.unwrap();
        assert!(String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 401"));
        held.push(stream);
    }
    let answer = raw_exchange(emu.endpoint(), request, Duration::from_secs(10)).await;
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    assert!(answer.contains("connections"), "{answer}");
    drop(held);
}

#[tokio::test]
async fn encoded_separators_and_control_characters_in_a_segment_are_refused_before_auth() {
    let (emu, c) = start_with_container(EmulatorBuilder::new()).await;
    for segment in [
        "a%2Fb", "a%2fb", "a%5Cb", "a%3Fb", "a%23b", "a%0Ab", "a%00b", "a%7Fb",
    ] {
        let path = format!("/dbs/db/colls/c/docs/{segment}");
        let unsigned = c
            .send_raw(emu.endpoint(), Method::GET, &path, &[PK], None)
            .await;
        assert_eq!(unsigned.status, 400, "{path}: {unsigned:?}");
        let signed = c.get(emu.endpoint(), &path, &[PK]).await;
        assert_eq!(signed.status, 400, "{path}: {signed:?}");
        assert!(
            signed.message().contains("path segment"),
            "{}",
            signed.message()
        );
    }
    let r = c
        .get(emu.endpoint(), "/dbs/db/colls/c/docs/a%20b", &[PK])
        .await;
    assert_eq!(r.status, 404, "an encoded space is a fine id: {r:?}");
}

#[tokio::test]
async fn ids_longer_than_1023_bytes_are_refused_in_the_path() {
    let (emu, c) = start_with_container(EmulatorBuilder::new()).await;
    let path = format!("/dbs/db/colls/c/docs/{}", "a".repeat(1024));
    let r = c.get(emu.endpoint(), &path, &[PK]).await;
    assert_eq!(r.status, 400, "{r:?}");
    assert!(r.message().contains("1023"), "{}", r.message());
    let ok = format!("/dbs/db/colls/c/docs/{}", "a".repeat(1023));
    assert_eq!(c.get(emu.endpoint(), &ok, &[PK]).await.status, 404);
}

async fn create(c: &TestClient, base: &str, doc: &Value) -> Resp {
    c.post_json(base, "/dbs/db/colls/c/docs", &[PK], doc).await
}

async fn patch(c: &TestClient, base: &str, id: &str, body: &Value) -> Resp {
    let path = format!("/dbs/db/colls/c/docs/{id}");
    let body = body.to_string();
    c.send(base, Method::PATCH, &path, &[PK], Some(body.as_bytes()))
        .await
}

#[tokio::test]
async fn patch_cannot_grow_an_item_past_2_mb() {
    let (emu, c) = start_with_container(EmulatorBuilder::new()).await;
    let base = emu.endpoint();
    let r = create(
        c_ref(&c),
        base,
        &json!({"id": "g", "pk": "p", "a": "x".repeat(1_500_000)}),
    )
    .await;
    assert_eq!(r.status, 201);
    let add = json!({"operations": [{"op": "add", "path": "/b", "value": "y".repeat(1_000_000)}]});
    let r = patch(&c, base, "g", &add).await;
    assert_eq!(r.status, 413, "{}", r.status);
    assert!(r.message().contains("2097152"), "{}", r.message());
    let read = c.get(base, "/dbs/db/colls/c/docs/g", &[PK]).await;
    assert!(
        read.json().get("b").is_none(),
        "the refused patch changed nothing"
    );
}

fn c_ref(c: &TestClient) -> &TestClient {
    c
}

fn nested(depth: usize) -> Value {
    let mut v = json!(1);
    for _ in 0..depth {
        v = json!({ "a": v });
    }
    v
}

#[tokio::test]
async fn writes_cannot_nest_deeper_than_the_depth_limit() {
    let (emu, c) = start_with_container(EmulatorBuilder::new()).await;
    let base = emu.endpoint();
    let r = create(
        &c,
        base,
        &json!({"id": "deep", "pk": "p", "d": nested(110)}),
    )
    .await;
    assert_eq!(r.status, 400, "{r:?}");
    assert!(r.message().contains("100"), "{}", r.message());
    let r = create(&c, base, &json!({"id": "d", "pk": "p", "d": nested(90)})).await;
    assert_eq!(r.status, 201, "{r:?}");
    let path = format!("/d{}", "/a".repeat(80));
    let set = json!({"operations": [{"op": "set", "path": path, "value": nested(60)}]});
    let r = patch(&c, base, "d", &set).await;
    assert_eq!(r.status, 400, "{r:?}");
    let ok = json!({"operations": [{"op": "set", "path": "/e", "value": 1}]});
    assert_eq!(patch(&c, base, "d", &ok).await.status, 200);
}

#[tokio::test]
async fn a_read_feed_page_ends_at_about_4_mb() {
    let (emu, c) = start_with_container(EmulatorBuilder::new().partitions(1)).await;
    let base = emu.endpoint();
    for i in 0..4 {
        let doc = json!({"id": format!("big{i}"), "pk": "p", "blob": "z".repeat(1_500_000)});
        assert_eq!(create(&c, base, &doc).await.status, 201);
    }
    let r = c
        .get(
            base,
            "/dbs/db/colls/c/docs",
            &[("x-ms-max-item-count", "1000")],
        )
        .await;
    assert_eq!(r.status, 200);
    assert!(
        r.body.len() <= 4 * 1024 * 1024 + 1_600_000,
        "{}",
        r.body.len()
    );
    assert!(r.json()["_count"].as_u64().unwrap() < 4);
    let token = r
        .header("x-ms-continuation")
        .expect("a continuation")
        .to_owned();
    let rest = c
        .get(
            base,
            "/dbs/db/colls/c/docs",
            &[("x-ms-continuation", &token)],
        )
        .await;
    assert_eq!(
        r.json()["_count"].as_u64().unwrap() + rest.json()["_count"].as_u64().unwrap(),
        4
    );
}

#[tokio::test]
async fn oversized_continuation_and_partition_key_headers_name_their_limit() {
    let (emu, c) = start_with_container(EmulatorBuilder::new()).await;
    let base = emu.endpoint();
    let token = "A".repeat(20_000);
    let r = c
        .get(
            base,
            "/dbs/db/colls/c/docs",
            &[("x-ms-continuation", &token)],
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(r.message().contains("4096"), "{}", r.message());
    let pk = json!(["k".repeat(5000)]).to_string();
    let r = c
        .get(
            base,
            "/dbs/db/colls/c/docs/a",
            &[("x-ms-documentdb-partitionkey", &pk)],
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(r.message().contains("4096"), "{}", r.message());
}

async fn batch(c: &TestClient, base: &str, ops: &Value) -> Resp {
    c.post_json(
        base,
        "/dbs/db/colls/c/docs",
        &[
            PK,
            ("x-ms-cosmos-is-batch-request", "True"),
            ("x-ms-cosmos-batch-atomic", "True"),
        ],
        ops,
    )
    .await
}

fn entry_statuses(r: &Resp) -> Vec<u64> {
    r.json()
        .as_array()
        .unwrap_or_else(|| panic!("not an array: {r:?}"))
        .iter()
        .map(|e| e["statusCode"].as_u64().unwrap())
        .collect()
}

#[tokio::test]
async fn batch_operations_meet_the_item_size_and_depth_limits() {
    let (emu, c) = start_with_container(EmulatorBuilder::new()).await;
    let base = emu.endpoint();
    let r = create(
        &c,
        base,
        &json!({"id": "g", "pk": "p", "a": "x".repeat(1_500_000)}),
    )
    .await;
    assert_eq!(r.status, 201);
    let deep = json!([{"operationType": "Create", "resourceBody": {"id": "deep", "pk": "p", "d": nested(110)}}]);
    let r = batch(&c, base, &deep).await;
    assert_eq!(r.status, 207, "{r:?}");
    assert_eq!(entry_statuses(&r), [400]);
    let grow = json!([
        {"operationType": "Upsert", "resourceBody": {"id": "ok", "pk": "p"}},
        {"operationType": "Patch", "id": "g", "resourceBody": {"operations": [{"op": "add", "path": "/b", "value": "y".repeat(600_000)}]}}
    ]);
    let r = batch(&c, base, &grow).await;
    assert_eq!(r.status, 207, "{r:?}");
    assert_eq!(entry_statuses(&r), [424, 413]);
    let ok = c.get(base, "/dbs/db/colls/c/docs/ok", &[PK]).await;
    assert_eq!(ok.status, 404, "the atomic batch committed nothing");
}

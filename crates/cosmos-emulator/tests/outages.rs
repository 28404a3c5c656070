//! Reactions that carry a request out and then lose or replace its answer, and region outages,
//! over real sockets: the effect is checked by reading the data back.

use crate::common;

use std::time::Duration;

use common::{pk_header, start_with_container, TestClient};
use cosmos_emulator::faults::{FaultRule, OpKind, OutageMode, Reaction};
use cosmos_emulator::{Emulator, EmulatorBuilder, WELL_KNOWN_KEY};
use http::Method;
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

async fn emulator() -> (Emulator, TestClient) {
    start_with_container(EmulatorBuilder::new().regions(["East US", "West US"])).await
}

fn endpoint(emu: &Emulator, region: &str) -> String {
    emu.region_endpoint(region).unwrap().to_owned()
}

fn authority(base: &str) -> String {
    base.trim_start_matches("http://")
        .trim_end_matches('/')
        .to_owned()
}

/// A signed request creating item `id` (partition `p`) in `db/c`, as raw HTTP/1.1 text.
fn create_request(base: &str, id: &str, keep_alive: bool) -> String {
    let path = "/dbs/db/colls/c/docs";
    let date = common::now_date();
    let (kind, link) = common::signing_parts(path);
    let auth = common::master_auth(WELL_KNOWN_KEY, "POST", &kind, &link, &date);
    let body = json!({"id": id, "pk": "p"}).to_string();
    let connection = if keep_alive { "keep-alive" } else { "close" };
    format!(
        "POST {path} HTTP/1.1\r\nhost: {}\r\nx-ms-date: {date}\r\nauthorization: {auth}\r\n\
         x-ms-version: 2020-07-15\r\nx-ms-documentdb-partitionkey: {}\r\n\
         content-type: application/json\r\ncontent-length: {}\r\nconnection: {connection}\r\n\r\n{body}",
        authority(base),
        pk_header(&json!("p")),
        body.len()
    )
}

/// Sends `request` on a fresh connection; every byte the server sent before closing. A reset
/// counts as the end. Panics if the server neither answers nor closes within 10 s.
async fn exchange(base: &str, request: &str) -> Vec<u8> {
    let Ok(mut stream) = TcpStream::connect(authority(base)).await else {
        return Vec::new();
    };
    if stream.write_all(request.as_bytes()).await.is_err() {
        return Vec::new();
    }
    read_until_closed(&mut stream).await
}

async fn read_until_closed(stream: &mut TcpStream) -> Vec<u8> {
    let mut received = Vec::new();
    let mut chunk = [0u8; 4096];
    let read = async {
        loop {
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => break,
                Ok(n) => received.extend_from_slice(&chunk[..n]),
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(10), read)
        .await
        .expect("the server closes the connection");
    received
}

async fn item_status(client: &TestClient, emu: &Emulator, id: &str) -> u16 {
    client
        .read_item(emu.endpoint(), "db", "c", id, &json!("p"), &[])
        .await
        .status
}

#[tokio::test]
async fn execute_then_close_stores_the_write_and_sends_nothing() {
    let (emu, client) = emulator().await;
    let rule = emu
        .faults()
        .add(FaultRule::new(Reaction::ExecuteThenClose).for_ops([OpKind::Create]));
    let received = exchange(
        emu.endpoint(),
        &create_request(emu.endpoint(), "landed", false),
    )
    .await;
    assert!(
        received.is_empty(),
        "no answer expected, got {:?}",
        String::from_utf8_lossy(&received)
    );
    assert_eq!(rule.hits(), 1);
    drop(rule);
    assert_eq!(item_status(&client, &emu, "landed").await, 200);

    // The plain close reaction, for contrast, drops the request before it is carried out.
    let _close = emu
        .faults()
        .add(FaultRule::new(Reaction::Close).for_ops([OpKind::Create]));
    let received = exchange(
        emu.endpoint(),
        &create_request(emu.endpoint(), "lost", false),
    )
    .await;
    assert!(received.is_empty());
    assert_eq!(item_status(&client, &emu, "lost").await, 404);
}

#[tokio::test]
async fn execute_then_respond_answers_the_rules_status_after_the_write() {
    let (emu, client) = emulator().await;
    for (status, sub_status, id) in [(503, 0, "after-503"), (408, 0, "after-408")] {
        let rule = emu.faults().add(
            FaultRule::new(Reaction::ExecuteThenRespond { status, sub_status })
                .for_ops([OpKind::Create])
                .first(1),
        );
        let r = client
            .create_item(emu.endpoint(), "db", "c", &json!({"id": id, "pk": "p"}))
            .await;
        assert_eq!((r.status, r.sub_status()), (status, sub_status), "{r:?}");
        assert!(
            r.message().contains("after the request was carried out"),
            "{r:?}"
        );
        assert_eq!(rule.hits(), 1);
        assert_eq!(item_status(&client, &emu, id).await, 200, "{id} was stored");
        // The retry of a write that landed meets the stored item.
        let again = client
            .create_item(emu.endpoint(), "db", "c", &json!({"id": id, "pk": "p"}))
            .await;
        assert_eq!(again.status, 409);
    }
}

#[tokio::test]
async fn the_new_reactions_load_from_rule_json() {
    let (emu, client) = emulator().await;
    let rules = json!({"rules": [
        {"ops": ["create"], "first": 1, "reaction": {"execute_then_respond": {"status": 408}}},
        {"ops": ["create"], "first": 1, "reaction": "execute_then_close"}
    ]});
    let posted = client
        .admin(
            emu.endpoint(),
            Method::POST,
            "/_emulator/faults",
            Some(&rules.to_string()),
        )
        .await;
    assert_eq!(posted.status, 201, "{posted:?}");
    let listed = client
        .admin_get(emu.endpoint(), "/_emulator/faults")
        .await
        .json();
    assert_eq!(
        listed["rules"][0]["reaction"],
        json!({"execute_then_respond": {"status": 408, "sub_status": 0}})
    );
    assert_eq!(listed["rules"][1]["reaction"], json!("execute_then_close"));
    let r = client
        .create_item(emu.endpoint(), "db", "c", &json!({"id": "x", "pk": "p"}))
        .await;
    assert_eq!(r.status, 408);
    let received = exchange(emu.endpoint(), &create_request(emu.endpoint(), "y", false)).await;
    assert!(received.is_empty());
    assert_eq!(item_status(&client, &emu, "x").await, 200);
    assert_eq!(item_status(&client, &emu, "y").await, 200);
}

#[tokio::test]
async fn a_refused_region_resets_new_and_open_connections_until_it_returns() {
    let (emu, client) = emulator().await;
    let west = endpoint(&emu, "West US");

    // A keep-alive connection to West US, answered once.
    let mut open = TcpStream::connect(authority(&west)).await.unwrap();
    let date = common::now_date();
    let (kind, link) = common::signing_parts("/dbs");
    let auth = common::master_auth(WELL_KNOWN_KEY, "GET", &kind, &link, &date);
    let get_dbs = format!(
        "GET /dbs HTTP/1.1\r\nhost: {}\r\nx-ms-date: {date}\r\nauthorization: {auth}\r\nx-ms-version: 2020-07-15\r\n\r\n",
        authority(&west)
    );
    open.write_all(get_dbs.as_bytes()).await.unwrap();
    let mut first = [0u8; 12];
    open.read_exact(&mut first).await.unwrap();
    assert_eq!(&first, b"HTTP/1.1 200");

    let put = client
        .admin(
            emu.endpoint(),
            Method::PUT,
            "/_emulator/outages",
            Some(r#"{"region":"West US","mode":"refuse"}"#),
        )
        .await;
    assert_eq!(put.status, 200, "{put:?}");
    assert_eq!(
        put.json(),
        json!({"outages": [{"region": "West US", "mode": "refuse"}]})
    );
    // The open connection is dropped (its remaining bytes, if any, are the first answer's).
    let rest = read_until_closed(&mut open).await;
    assert!(
        !String::from_utf8_lossy(&rest).contains("HTTP/1.1"),
        "no second answer"
    );
    // New connections are reset; East US keeps serving.
    assert!(exchange(&west, &create_request(&west, "w", false))
        .await
        .is_empty());
    assert_eq!(
        client
            .get(&endpoint(&emu, "East US"), "/dbs", &[])
            .await
            .status,
        200
    );

    let end = client
        .admin(
            emu.endpoint(),
            Method::PUT,
            "/_emulator/outages",
            Some(r#"{"region":"West US","mode":"none"}"#),
        )
        .await;
    assert_eq!(end.json(), json!({"outages": []}));
    assert_eq!(client.get(&west, "/dbs", &[]).await.status, 200);
}

#[tokio::test]
async fn a_closed_write_region_drops_requests_unexecuted_but_keeps_the_admin_api() {
    let (emu, client) = emulator().await;
    let east = endpoint(&emu, "East US");
    emu.outages().start("East US", OutageMode::Close).unwrap();
    for base in [emu.endpoint().to_owned(), east.clone()] {
        let received = exchange(&base, &create_request(&base, "never", true)).await;
        assert!(
            received.is_empty(),
            "{base}: {:?}",
            String::from_utf8_lossy(&received)
        );
    }
    // The admin API on the global port still answers while the hub region is out.
    let listed = client.admin_get(emu.endpoint(), "/_emulator/outages").await;
    assert_eq!(
        listed.json(),
        json!({"outages": [{"region": "East US", "mode": "close"}]})
    );
    // West US serves reads meanwhile.
    assert_eq!(
        client
            .get(&endpoint(&emu, "West US"), "/dbs", &[])
            .await
            .status,
        200
    );
    let ended = client
        .admin(emu.endpoint(), Method::DELETE, "/_emulator/outages", None)
        .await;
    assert_eq!(ended.json(), json!({"ended": 1}));
    assert_eq!(
        item_status(&client, &emu, "never").await,
        404,
        "not executed"
    );
    assert!(emu.outages().list().is_empty());
}

#[tokio::test]
async fn outage_requests_naming_unknown_regions_are_refused() {
    let (emu, client) = emulator().await;
    let r = client
        .admin(
            emu.endpoint(),
            Method::PUT,
            "/_emulator/outages",
            Some(r#"{"region":"Mars"}"#),
        )
        .await;
    assert_eq!(r.status, 400);
    let message: Value = r.json();
    assert!(
        message["message"]
            .as_str()
            .unwrap_or_default()
            .contains("unknown region \"Mars\""),
        "{message}"
    );
    assert!(emu.outages().list().is_empty());
    assert!(emu.outages().start("Mars", OutageMode::Refuse).is_err());
}

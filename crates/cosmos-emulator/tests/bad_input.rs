//! Bad input: malformed JSON, oversized bodies, missing partition keys, unknown routes and verbs.

use crate::common;

use common::{start_with_container, Resp, TestClient};
use cosmos_emulator::{EmulatorBuilder, WELL_KNOWN_KEY};
use http::Method;
use serde_json::json;

/// Posts `body` as-is as a new item of partition `p` in `db/c`.
async fn post_doc(c: &TestClient, base: &str, body: &[u8]) -> Resp {
    let pk = [("x-ms-documentdb-partitionkey", "[\"p\"]")];
    c.send(base, Method::POST, "/dbs/db/colls/c/docs", &pk, Some(body))
        .await
}

#[tokio::test]
async fn each_kind_of_bad_request_gets_a_clear_answer() {
    let (emu, c) = start_with_container(EmulatorBuilder::new()).await;
    let base = emu.endpoint();

    let r = post_doc(&c, base, b"{\"id\": \"a\", ").await;
    assert_eq!(r.status, 400);
    assert_eq!(r.json()["code"], "BadRequest");
    assert!(
        r.message().contains("invalid JSON") && r.message().contains("EOF"),
        "{}",
        r.message()
    );

    let big = format!(
        "{{\"id\":\"big\",\"pk\":\"p\",\"blob\":\"{}\"}}",
        "x".repeat(2 * 1024 * 1024)
    );
    let r = post_doc(&c, base, big.as_bytes()).await;
    assert_eq!(r.status, 413);
    assert_eq!(r.json()["code"], "RequestEntityTooLarge");

    let r = c
        .post_json(
            base,
            "/dbs/db/colls/c/docs",
            &[],
            &json!({"id": "a", "pk": "p"}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(r.message().contains("x-ms-documentdb-partitionkey"));
    assert_eq!(c.get(base, "/dbs/db/colls/c/docs/a", &[]).await.status, 400);
    let r = c
        .get(
            base,
            "/dbs/db/colls/c/docs/a",
            &[("x-ms-documentdb-partitionkey", "p")],
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(r.message().contains("not valid JSON"));

    let r = c.get(base, "/not/a/resource", &[]).await;
    assert_eq!(r.status, 404);
    assert_eq!(r.message(), "Server could not parse the Url.");
    let r = c.send(base, Method::PUT, "/dbs", &[], Some(b"{}")).await;
    assert_eq!(r.status, 405);
    let r = c
        .send(
            base,
            Method::POST,
            "/dbs/db/colls/c/docs",
            &[
                ("x-ms-documentdb-isquery", "true"),
                ("content-type", "application/query+json"),
            ],
            Some(br#"{"query":"SELECT * FROM c WHERE"}"#),
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(r.message().contains("position 21"), "{}", r.message());

    // The server still serves normally afterwards.
    assert_eq!(
        c.create_item(base, "db", "c", &json!({"id": "ok", "pk": "p"}))
            .await
            .status,
        201
    );
}

#[tokio::test]
async fn admin_paths_answer_only_on_the_global_port() {
    let emu = EmulatorBuilder::new().start().await.unwrap();
    let c = TestClient::new(WELL_KNOWN_KEY);
    let r = c.admin_get(emu.endpoint(), "/_emulator/counters").await;
    assert_eq!(r.status, 200);
    let west = emu.region_endpoint("West US").unwrap();
    assert_eq!(c.admin_get(west, "/_emulator/counters").await.status, 404);
    assert_eq!(
        c.admin_get(emu.endpoint(), "/_emulator/nothing")
            .await
            .status,
        404
    );
    let r = c.admin_get(emu.endpoint(), "/_emulator/failover").await;
    assert_eq!(r.status, 405);
}

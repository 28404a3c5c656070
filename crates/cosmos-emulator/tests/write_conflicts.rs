//! Multi-region writes of one item within the replication window conflict, and the container's
//! conflict resolution policy decides, over real HTTP: last writer wins on a custom path keeps
//! the version with the higher value there; Custom mode without a procedure keeps the first
//! version and puts the other in the conflicts feed; writes a region has already seen do not
//! conflict.

use crate::common;

use std::time::Duration;

use common::{east_and_lagging_west, east_west, pk_header, Resp, TestClient};
use cosmos_emulator::{ReplicationLag, WELL_KNOWN_KEY};
use serde_json::{json, Value};

const LAG_MS: u64 = 400;

/// A two-region multi-write emulator (each region sees the other's writes `LAG_MS` later) with
/// database `db` and container `c` under `policy`.
async fn start(policy: Value) -> (cosmos_emulator::Emulator, TestClient) {
    let emu = east_and_lagging_west(LAG_MS)
        .region_replication_lag("East US", ReplicationLag::fixed_ms(LAG_MS))
        .multi_write(true)
        .start()
        .await
        .expect("starts");
    let c = TestClient::new(WELL_KNOWN_KEY);
    let base = emu.endpoint();
    assert_eq!(
        c.post_json(base, "/dbs", &[], &json!({"id": "db"}))
            .await
            .status,
        201
    );
    let body = json!({"id": "c", "partitionKey": {"paths": ["/pk"], "kind": "Hash", "version": 2},
        "conflictResolutionPolicy": policy});
    let r = c.post_json(base, "/dbs/db/colls", &[], &body).await;
    assert_eq!(r.status, 201, "{r:?}");
    (emu, c)
}

async fn create(c: &TestClient, base: &str, doc: &Value) -> Resp {
    c.create_item(base, "db", "c", doc).await
}

async fn upsert(c: &TestClient, base: &str, doc: &Value) -> Resp {
    let pk = pk_header(&doc["pk"]);
    c.post_json(
        base,
        "/dbs/db/colls/c/docs",
        &[
            ("x-ms-documentdb-partitionkey", &pk),
            ("x-ms-documentdb-is-upsert", "true"),
        ],
        doc,
    )
    .await
}

async fn settled(c: &TestClient, base: &str) -> Value {
    tokio::time::sleep(Duration::from_millis(LAG_MS + 200)).await;
    let r = c.read_item(base, "db", "c", "x", &json!("p"), &[]).await;
    assert_eq!(r.status, 200, "{r:?}");
    r.json()
}

async fn conflicts(c: &TestClient, base: &str) -> Vec<Value> {
    let r = c.get(base, "/dbs/db/colls/c/conflicts", &[]).await;
    assert_eq!(r.status, 200, "{r:?}");
    r.json()["Conflicts"].as_array().unwrap().clone()
}

#[tokio::test]
async fn last_writer_wins_on_a_custom_path_keeps_the_higher_value() {
    let (emu, c) = start(json!({"mode": "LastWriterWins", "conflictResolutionPath": "/v"})).await;
    let (east, west) = east_west(&emu);
    // East writes v=10; West, not having seen it, writes v=5 after it.
    assert_eq!(
        upsert(
            &c,
            east,
            &json!({"id": "x", "pk": "p", "v": 10, "by": "east"})
        )
        .await
        .status,
        201
    );
    let r = upsert(
        &c,
        west,
        &json!({"id": "x", "pk": "p", "v": 5, "by": "west"}),
    )
    .await;
    assert!(
        r.status == 200 || r.status == 201,
        "both regions accept: {r:?}"
    );
    let winner = settled(&c, emu.endpoint()).await;
    assert_eq!(winner["by"], "east", "the higher /v wins: {winner}");
    assert!(
        conflicts(&c, emu.endpoint()).await.is_empty(),
        "resolved, not recorded"
    );

    // A write West has seen does not conflict: the later one stands.
    let r = upsert(
        &c,
        west,
        &json!({"id": "x", "pk": "p", "v": 1, "by": "west-later"}),
    )
    .await;
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(settled(&c, emu.endpoint()).await["by"], "west-later");
}

#[tokio::test]
async fn custom_mode_without_a_procedure_puts_the_loser_in_the_conflicts_feed() {
    let (emu, c) = start(json!({"mode": "Custom"})).await;
    let (east, west) = east_west(&emu);
    assert!(conflicts(&c, emu.endpoint()).await.is_empty());
    // Both regions create the item: West has not seen East's, so both creates are accepted.
    let r = create(&c, east, &json!({"id": "x", "pk": "p", "by": "east"})).await;
    assert_eq!(r.status, 201, "{r:?}");
    let r = create(&c, west, &json!({"id": "x", "pk": "p", "by": "west"})).await;
    assert_eq!(r.status, 201, "both regions accept: {r:?}");
    assert_eq!(settled(&c, emu.endpoint()).await["by"], "east");
    // Once West has seen it, a create there is refused as usual.
    let r = create(&c, west, &json!({"id": "x", "pk": "p", "by": "west-again"})).await;
    assert_eq!(r.status, 409, "{r:?}");
    let feed = conflicts(&c, emu.endpoint()).await;
    assert_eq!(feed.len(), 1, "{feed:?}");
    let conflict = &feed[0];
    assert_eq!(conflict["resourceType"], "document");
    assert_eq!(conflict["operationType"], "create");
    let content: Value = serde_json::from_str(conflict["content"].as_str().unwrap()).unwrap();
    assert_eq!(content["by"], "west");
    assert_eq!(conflict["resourceId"], content["_rid"]);
    for field in ["id", "_rid", "_self", "_etag", "_ts"] {
        assert!(!conflict[field].is_null(), "{field}: {conflict}");
    }
}

//! Replication lag and session consistency: lagging replicas, 404/1002, catch-up.

mod common;

use std::time::Duration;

use common::TestClient;
use cosmos_emulator::{EmulatorBuilder, ReplicationLag, WELL_KNOWN_KEY};
use serde_json::json;

const LAG_MS: u64 = 400;

#[tokio::test]
async fn a_session_token_ahead_of_the_replica_gets_404_1002_until_it_catches_up() {
    let emu = EmulatorBuilder::new()
        .regions(["East US", "West US"])
        .region_replication_lag("West US", ReplicationLag::fixed_ms(LAG_MS))
        .start()
        .await
        .unwrap();
    let c = TestClient::new(WELL_KNOWN_KEY);
    c.setup(emu.endpoint(), "db", "c").await;
    let east = emu.region_endpoint("East US").unwrap();
    let west = emu.region_endpoint("West US").unwrap();
    let created = c
        .create_item(east, "db", "c", &json!({"id": "a", "pk": "p", "v": 1}))
        .await;
    assert_eq!(created.status, 201);
    let token = created.header("x-ms-session-token").unwrap().to_owned();
    let range = created
        .header("x-ms-documentdb-partitionkeyrangeid")
        .unwrap()
        .to_owned();
    assert!(token.starts_with(&format!("{range}:")), "{token}");

    let early = c
        .read_item(
            west,
            "db",
            "c",
            "a",
            &json!("p"),
            &[("x-ms-session-token", &token)],
        )
        .await;
    assert_eq!((early.status, early.sub_status()), (404, 1002), "{early:?}");
    // Without a token the lagging replica answers from what it has: nothing yet.
    assert_eq!(
        c.read_item(west, "db", "c", "a", &json!("p"), &[])
            .await
            .status,
        404
    );
    // The write region has it at once.
    assert_eq!(
        c.read_item(
            east,
            "db",
            "c",
            "a",
            &json!("p"),
            &[("x-ms-session-token", &token)]
        )
        .await
        .status,
        200
    );

    tokio::time::sleep(Duration::from_millis(LAG_MS + 150)).await;
    let caught_up = c
        .read_item(
            west,
            "db",
            "c",
            "a",
            &json!("p"),
            &[("x-ms-session-token", &token)],
        )
        .await;
    assert_eq!(caught_up.status, 200, "{caught_up:?}");
    assert_eq!(caught_up.json()["v"], 1);
    assert_eq!(caught_up.header("lsn"), created.header("lsn"));
}

#[tokio::test]
async fn a_lagging_region_serves_the_previous_version_meanwhile() {
    let emu = EmulatorBuilder::new()
        .regions(["East US", "West US"])
        .region_replication_lag("West US", ReplicationLag::fixed_ms(LAG_MS))
        .start()
        .await
        .unwrap();
    let c = TestClient::new(WELL_KNOWN_KEY);
    c.setup(emu.endpoint(), "db", "c").await;
    let east = emu.region_endpoint("East US").unwrap();
    let west = emu.region_endpoint("West US").unwrap();
    c.create_item(east, "db", "c", &json!({"id": "a", "pk": "p", "v": 1}))
        .await;
    tokio::time::sleep(Duration::from_millis(LAG_MS + 150)).await;
    let pk = common::pk_header(&json!("p"));
    let upsert = [
        ("x-ms-documentdb-partitionkey", pk.as_str()),
        ("x-ms-documentdb-is-upsert", "true"),
    ];
    let r = c
        .post_json(
            east,
            "/dbs/db/colls/c/docs",
            &upsert,
            &json!({"id": "a", "pk": "p", "v": 2}),
        )
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(
        c.read_item(west, "db", "c", "a", &json!("p"), &[])
            .await
            .json()["v"],
        1
    );
    assert_eq!(
        c.read_item(east, "db", "c", "a", &json!("p"), &[])
            .await
            .json()["v"],
        2
    );
    tokio::time::sleep(Duration::from_millis(LAG_MS + 150)).await;
    assert_eq!(
        c.read_item(west, "db", "c", "a", &json!("p"), &[])
            .await
            .json()["v"],
        2
    );
}

#[tokio::test]
async fn malformed_session_tokens_are_400s() {
    let emu = EmulatorBuilder::new().start().await.unwrap();
    let c = TestClient::new(WELL_KNOWN_KEY);
    c.setup(emu.endpoint(), "db", "c").await;
    c.create_item(emu.endpoint(), "db", "c", &json!({"id": "a", "pk": "p"}))
        .await;
    let r = c
        .read_item(
            emu.endpoint(),
            "db",
            "c",
            "a",
            &json!("p"),
            &[("x-ms-session-token", "0:garbage")],
        )
        .await;
    assert_eq!(r.status, 400);
}

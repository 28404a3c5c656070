//! Replication lag and session consistency: lagging replicas, 404/1002, catch-up.

mod common;

use std::time::Duration;

use common::{east_and_lagging_west, east_west, start_with_container};
use cosmos_emulator::EmulatorBuilder;
use serde_json::json;

const LAG_MS: u64 = 400;

#[tokio::test]
async fn a_session_token_ahead_of_the_replica_gets_404_1002_until_it_catches_up() {
    let (emu, c) = start_with_container(east_and_lagging_west(LAG_MS)).await;
    let (east, west) = east_west(&emu);
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

    let early = c.read_a(west, &[("x-ms-session-token", &token)]).await;
    assert_eq!((early.status, early.sub_status()), (404, 1002), "{early:?}");
    // Without a token the lagging replica answers from what it has: nothing yet.
    assert_eq!(c.read_a(west, &[]).await.status, 404);
    // The write region has it at once.
    assert_eq!(
        c.read_a(east, &[("x-ms-session-token", &token)])
            .await
            .status,
        200
    );

    tokio::time::sleep(Duration::from_millis(LAG_MS + 150)).await;
    let caught_up = c.read_a(west, &[("x-ms-session-token", &token)]).await;
    assert_eq!(caught_up.status, 200, "{caught_up:?}");
    assert_eq!(caught_up.json()["v"], 1);
    assert_eq!(caught_up.header("lsn"), created.header("lsn"));
}

#[tokio::test]
async fn a_lagging_region_serves_the_previous_version_meanwhile() {
    let (emu, c) = start_with_container(east_and_lagging_west(LAG_MS)).await;
    let (east, west) = east_west(&emu);
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
    assert_eq!(c.read_a(west, &[]).await.json()["v"], 1);
    assert_eq!(c.read_a(east, &[]).await.json()["v"], 2);
    tokio::time::sleep(Duration::from_millis(LAG_MS + 150)).await;
    assert_eq!(c.read_a(west, &[]).await.json()["v"], 2);
}

#[tokio::test]
async fn malformed_session_tokens_are_400s() {
    let (emu, c) = start_with_container(EmulatorBuilder::new()).await;
    c.create_item(emu.endpoint(), "db", "c", &json!({"id": "a", "pk": "p"}))
        .await;
    let r = c
        .read_a(emu.endpoint(), &[("x-ms-session-token", "0:garbage")])
        .await;
    assert_eq!(r.status, 400);
}

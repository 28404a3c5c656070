//! Replication lag and session consistency: lagging replicas, 404/1002, catch-up, and the wait
//! for a lagging replica the gateway makes before it answers 1002.

use crate::common;

use std::time::Duration;

use common::{east_and_lagging_west, east_west, start_with_container};
use cosmos_emulator::{EmulatorBuilder, SessionWait};
use serde_json::json;

const LAG_MS: u64 = 400;

#[tokio::test]
async fn a_session_token_ahead_of_the_replica_gets_404_1002_until_it_catches_up() {
    let builder = east_and_lagging_west(LAG_MS).session_wait(SessionWait::OFF);
    let (emu, c) = start_with_container(builder).await;
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
async fn by_default_a_read_ahead_of_the_replica_waits_for_it_then_answers() {
    let (emu, c) = start_with_container(east_and_lagging_west(LAG_MS)).await;
    let (east, west) = east_west(&emu);
    let created = c
        .create_item(east, "db", "c", &json!({"id": "a", "pk": "p", "v": 1}))
        .await;
    let token = created.header("x-ms-session-token").unwrap().to_owned();
    let (read, took) = common::timed(c.read_a(west, &[("x-ms-session-token", &token)])).await;
    assert_eq!(read.status, 200, "{read:?}");
    assert_eq!(read.json()["v"], 1);
    // It waited for the replica (the write's lag, less the time the create's answer took).
    assert!(
        took >= Duration::from_millis(LAG_MS / 2),
        "answered after {took:?}"
    );
    assert!(took < Duration::from_secs(4), "answered after {took:?}");
    // Without a token nothing is waited for: the replica answers what it has.
    let again = c
        .create_item(east, "db", "c", &json!({"id": "b", "pk": "p"}))
        .await;
    assert_eq!(again.status, 201);
    let (r, took) = common::timed(c.read_item(west, "db", "c", "b", &json!("p"), &[])).await;
    assert_eq!(r.status, 404);
    assert!(
        took < Duration::from_millis(LAG_MS),
        "waited {took:?} without a token"
    );
}

#[tokio::test]
async fn a_replica_that_does_not_catch_up_within_the_wait_answers_404_1002() {
    let window = Duration::from_millis(250);
    let builder = east_and_lagging_west(60_000).session_wait(SessionWait::within(window));
    let (emu, c) = start_with_container(builder).await;
    let (east, west) = east_west(&emu);
    let created = c
        .create_item(east, "db", "c", &json!({"id": "a", "pk": "p"}))
        .await;
    let token = created.header("x-ms-session-token").unwrap().to_owned();
    let (r, took) = common::timed(c.read_a(west, &[("x-ms-session-token", &token)])).await;
    assert_eq!((r.status, r.sub_status()), (404, 1002), "{r:?}");
    assert!(took >= window, "answered after {took:?}");
    assert!(took < Duration::from_secs(5), "answered after {took:?}");
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

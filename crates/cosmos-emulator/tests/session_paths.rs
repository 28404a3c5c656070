//! What lets an SDK keep session consistency: item answers name their container
//! (`x-ms-alt-content-path`, `x-ms-content-path`), and the replication-lag admin API that makes a
//! region lag while a test runs.

use crate::common;

use common::{east_west, start_with_container, TestClient};
use cosmos_emulator::EmulatorBuilder;
use http::Method;
use serde_json::json;

#[tokio::test]
async fn item_answers_name_their_container_by_path_and_rid() {
    let (emu, c) = start_with_container(EmulatorBuilder::new()).await;
    let base = emu.endpoint();
    let coll_rid = c.get(base, "/dbs/db/colls/c", &[]).await.json()["_rid"]
        .as_str()
        .unwrap()
        .to_owned();
    let created = c
        .create_item(base, "db", "c", &json!({"id": "a", "pk": "p"}))
        .await;
    let read = c.read_a(base, &[]).await;
    let missing = c.read_item(base, "db", "c", "nope", &json!("p"), &[]).await;
    assert_eq!(missing.status, 404);
    for r in [&created, &read, &missing] {
        assert_eq!(
            r.header("x-ms-alt-content-path"),
            Some("dbs/db/colls/c"),
            "{r:?}"
        );
        assert_eq!(
            r.header("x-ms-content-path"),
            Some(coll_rid.as_str()),
            "{r:?}"
        );
    }
    // Addressed by resource ids, the path still names the database and container.
    let db_rid = c.get(base, "/dbs/db", &[]).await.json()["_rid"]
        .as_str()
        .unwrap()
        .to_owned();
    let by_rid = c
        .read_item(base, &db_rid, &coll_rid, "a", &json!("p"), &[])
        .await;
    assert_eq!(by_rid.status, 200, "{by_rid:?}");
    assert_eq!(
        by_rid.header("x-ms-alt-content-path"),
        Some("dbs/db/colls/c")
    );
}

async fn set_lag(c: &TestClient, base: &str, body: &str) -> common::Resp {
    c.admin(base, Method::PUT, "/_emulator/replication-lag", Some(body))
        .await
}

#[tokio::test]
async fn the_admin_api_changes_a_regions_lag_for_later_writes() {
    let (emu, c) =
        start_with_container(EmulatorBuilder::new().regions(["East US", "West US"])).await;
    let base = emu.endpoint();
    let (east, west) = east_west(&emu);
    c.create_item(east, "db", "c", &json!({"id": "before", "pk": "p"}))
        .await;
    let r = set_lag(&c, base, r#"{"region": "West US", "lag": "60000"}"#).await;
    assert_eq!(r.status, 200, "{r:?}");
    c.create_item(east, "db", "c", &json!({"id": "a", "pk": "p"}))
        .await;
    assert_eq!(c.read_a(east, &[]).await.status, 200);
    assert_eq!(c.read_a(west, &[]).await.status, 404);
    let before = c
        .read_item(west, "db", "c", "before", &json!("p"), &[])
        .await;
    assert_eq!(before.status, 200, "{before:?}");
    for (body, status) in [
        (r#"{"region": "Mars", "lag": "5"}"#, 400),
        (r#"{"region": "West US", "lag": "soon"}"#, 400),
        (r#"{"region": "West US"}"#, 400),
        ("[", 400),
    ] {
        let r = set_lag(&c, base, body).await;
        assert_eq!(r.status, status, "{body}: {r:?}");
    }
    let wrong_verb = c
        .admin(base, Method::GET, "/_emulator/replication-lag", None)
        .await;
    assert_eq!(wrong_verb.status, 405);
    let unauthenticated = c
        .send_raw(base, Method::GET, "/_emulator/replication-lag", &[], None)
        .await;
    assert_eq!(unauthenticated.status, 401);
    // A region endpoint does not serve the admin API.
    assert_eq!(
        set_lag(&c, west, r#"{"region": "West US", "lag": "0"}"#)
            .await
            .status,
        404
    );
}

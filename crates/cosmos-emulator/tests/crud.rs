//! Databases, containers and items: create, read, list, replace, upsert, delete over real sockets.

use crate::common;

use common::{pk_header, start_with_container, TestClient};
use cosmos_emulator::EmulatorBuilder;
use http::Method;
use serde_json::json;

#[tokio::test]
async fn databases_and_containers_round_trip() {
    let emu = EmulatorBuilder::new().start().await.unwrap();
    let c = TestClient::new(emu.key());
    let base = emu.endpoint();
    let r = c.post_json(base, "/dbs", &[], &json!({"id": "db1"})).await;
    assert_eq!(r.status, 201);
    let db = r.json();
    assert_eq!(db["id"], "db1");
    assert!(db["_rid"].is_string() && db["_self"].is_string() && db["_ts"].is_number());
    assert!(db["_etag"].as_str().unwrap().starts_with('"'));
    assert_eq!(
        c.post_json(base, "/dbs", &[], &json!({"id": "db1"}))
            .await
            .status,
        409
    );
    let list = c.get(base, "/dbs", &[]).await.json();
    assert_eq!(list["_count"], 1);
    assert_eq!(list["Databases"][0]["id"], "db1");
    assert_eq!(c.get(base, "/dbs/db1", &[]).await.json()["id"], "db1");
    assert_eq!(c.get(base, "/dbs/nope", &[]).await.status, 404);

    let coll =
        json!({"id": "c1", "partitionKey": {"paths": ["/pk"], "kind": "Hash", "version": 2}});
    let r = c.post_json(base, "/dbs/db1/colls", &[], &coll).await;
    assert_eq!(r.status, 201, "{r:?}");
    assert_eq!(r.json()["partitionKey"]["paths"][0], "/pk");
    assert_eq!(
        c.post_json(base, "/dbs/db1/colls", &[], &coll).await.status,
        409
    );
    let r = c.post_json(base, "/dbs/missing/colls", &[], &coll).await;
    assert_eq!((r.status, r.sub_status()), (404, 1003));
    let colls = c.get(base, "/dbs/db1/colls", &[]).await.json();
    assert_eq!(colls["DocumentCollections"][0]["id"], "c1");
    assert_eq!(
        c.get(base, "/dbs/db1/colls/c1", &[]).await.json()["id"],
        "c1"
    );
    // Containers can also be addressed by _rid.
    let rid = c.get(base, "/dbs/db1/colls/c1", &[]).await.json()["_rid"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        c.get(base, &format!("/dbs/db1/colls/{rid}"), &[])
            .await
            .json()["id"],
        "c1"
    );

    assert_eq!(
        c.send(base, Method::DELETE, "/dbs/db1/colls/c1", &[], None)
            .await
            .status,
        204
    );
    assert_eq!(c.get(base, "/dbs/db1/colls/c1", &[]).await.status, 404);
    assert_eq!(
        c.send(base, Method::DELETE, "/dbs/db1", &[], None)
            .await
            .status,
        204
    );
    assert_eq!(c.get(base, "/dbs", &[]).await.json()["_count"], 0);
}

#[tokio::test]
async fn items_create_read_replace_upsert_delete() {
    let (emu, c) = start_with_container(EmulatorBuilder::new()).await;
    let base = emu.endpoint();
    let r = c
        .create_item(base, "db", "c", &json!({"id": "a", "pk": "p", "n": 1}))
        .await;
    assert_eq!(r.status, 201, "{r:?}");
    let doc = r.json();
    for prop in ["_rid", "_self", "_etag", "_ts"] {
        assert!(!doc[prop].is_null(), "missing {prop}");
    }
    assert_eq!(r.header("etag"), doc["_etag"].as_str());
    assert!(r.header("x-ms-session-token").unwrap().contains(":-1#"));
    assert_eq!(r.header("x-ms-request-charge"), Some("5"));
    assert!(r.header("x-ms-activity-id").is_some() && r.header("lsn").is_some());
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(
        c.create_item(base, "db", "c", &json!({"id": "a", "pk": "p"}))
            .await
            .status,
        409
    );

    let read = c.read_a(base, &[]).await;
    assert_eq!(read.status, 200);
    assert_eq!(read.json()["n"], 1);
    assert_eq!(read.header("x-ms-request-charge"), Some("1"));
    assert_eq!(
        c.read_item(base, "db", "c", "a", &json!("other"), &[])
            .await
            .status,
        404
    );

    let pk = pk_header(&json!("p"));
    let headers = [("x-ms-documentdb-partitionkey", pk.as_str())];
    let body = json!({"id": "a", "pk": "p", "n": 2});
    let r = c
        .send(
            base,
            Method::PUT,
            "/dbs/db/colls/c/docs/a",
            &headers,
            Some(body.to_string().as_bytes()),
        )
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["_rid"], doc["_rid"], "replace keeps the _rid");
    assert_ne!(r.json()["_etag"], doc["_etag"]);
    let r = c
        .send(
            base,
            Method::PUT,
            "/dbs/db/colls/c/docs/zz",
            &headers,
            Some(json!({"id": "zz", "pk": "p"}).to_string().as_bytes()),
        )
        .await;
    assert_eq!(r.status, 404);

    let upsert = [
        ("x-ms-documentdb-partitionkey", pk.as_str()),
        ("x-ms-documentdb-is-upsert", "True"),
    ];
    let r = c
        .post_json(
            base,
            "/dbs/db/colls/c/docs",
            &upsert,
            &json!({"id": "a", "pk": "p", "n": 3}),
        )
        .await;
    assert_eq!(r.status, 200);
    let r = c
        .post_json(
            base,
            "/dbs/db/colls/c/docs",
            &upsert,
            &json!({"id": "b", "pk": "p"}),
        )
        .await;
    assert_eq!(r.status, 201);
    assert_eq!(c.read_a(base, &[]).await.json()["n"], 3);

    let r = c
        .send(
            base,
            Method::DELETE,
            "/dbs/db/colls/c/docs/a",
            &headers,
            None,
        )
        .await;
    assert_eq!(r.status, 204);
    assert!(r.body.is_empty());
    assert_eq!(c.read_a(base, &[]).await.status, 404);
    assert_eq!(
        c.send(
            base,
            Method::DELETE,
            "/dbs/db/colls/c/docs/a",
            &headers,
            None
        )
        .await
        .status,
        404
    );
}

#[tokio::test]
async fn item_rules_are_checked() {
    let (emu, c) = start_with_container(EmulatorBuilder::new()).await;
    let base = emu.endpoint();
    for id in ["a/b", "a\\b", "a?b", "a#b"] {
        let r = c
            .create_item(base, "db", "c", &json!({"id": id, "pk": "p"}))
            .await;
        assert_eq!(r.status, 400, "{id}: {r:?}");
        assert!(r.message().contains("invalid character"), "{}", r.message());
    }
    let pk = pk_header(&json!("p"));
    let r = c
        .post_json(
            base,
            "/dbs/db/colls/c/docs",
            &[("x-ms-documentdb-partitionkey", &pk)],
            &json!({"id": "x", "pk": "q"}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(r.message().contains("doesn't match"));
    let r = c
        .create_item(base, "db", "nope", &json!({"id": "x", "pk": "p"}))
        .await;
    assert_eq!((r.status, r.sub_status()), (404, 1003));
    // Numbers, booleans and null work as partition key values.
    for pk in [json!(1), json!(true), json!(null), json!(2.5)] {
        let r = c
            .create_item(base, "db", "c", &json!({"id": "typed", "pk": pk}))
            .await;
        assert_eq!(r.status, 201, "{pk}");
        assert_eq!(
            c.read_item(base, "db", "c", "typed", &pk, &[]).await.status,
            200,
            "{pk}"
        );
    }
}

#[tokio::test]
async fn non_ascii_partition_keys_and_ids_work_escaped_or_raw() {
    let (emu, c) = start_with_container(EmulatorBuilder::new()).await;
    let base = emu.endpoint();
    let r = c
        .create_item(base, "db", "c", &json!({"id": "café", "pk": "Zürich"}))
        .await;
    assert_eq!(r.status, 201, "{r:?}");
    // Escaped JSON in the header, percent-encoded id in the path.
    let escaped = c
        .get(
            base,
            "/dbs/db/colls/c/docs/caf%C3%A9",
            &[("x-ms-documentdb-partitionkey", "[\"Z\\u00fcrich\"]")],
        )
        .await;
    assert_eq!(escaped.status, 200, "{escaped:?}");
    // Raw UTF-8 in the header.
    let raw = c
        .get(
            base,
            "/dbs/db/colls/c/docs/caf%C3%A9",
            &[("x-ms-documentdb-partitionkey", "[\"Zürich\"]")],
        )
        .await;
    assert_eq!(raw.status, 200, "{raw:?}");
}

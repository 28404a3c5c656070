//! Item rules the service applies and SDKs' own tests rely on, over real HTTP: a replace that
//! changes `id` renames the item, an item's `ttl` must be -1 or a positive number of seconds,
//! `Prefer: return=minimal` answers a write without its body, a partition key that does not match
//! the header is 400 with sub-status 1001, and an object at the partition key path is undefined.

use crate::common;

use common::{master_auth, now_date, pk_header, start_with_container, Resp, TestClient};
use cosmos_emulator::EmulatorBuilder;
use http::Method;
use serde_json::{json, Value};

const DOCS: &str = "/dbs/db/colls/c/docs";

async fn replace(c: &TestClient, base: &str, id: &str, body: &Value) -> Resp {
    let path = format!("{DOCS}/{id}");
    c.send_with_pk(base, Method::PUT, &path, &body["pk"], &[], Some(body))
        .await
}

#[tokio::test]
async fn a_replace_that_changes_the_id_renames_the_item() {
    let (emu, c) = start_with_container(EmulatorBuilder::new().partitions(2)).await;
    let base = emu.endpoint();
    let created = c
        .create_item(base, "db", "c", &json!({"id": "old", "pk": "p", "n": 1}))
        .await;
    assert_eq!(created.status, 201);
    let renamed = replace(&c, base, "old", &json!({"id": "new", "pk": "p", "n": 2})).await;
    assert_eq!(renamed.status, 200, "{renamed:?}");
    let body = renamed.json();
    assert_eq!(
        (body["id"].clone(), body["n"].clone()),
        (json!("new"), json!(2))
    );
    // The same resource, under its new id only.
    assert_eq!(body["_rid"], created.json()["_rid"]);
    let read = c.read_item(base, "db", "c", "new", &json!("p"), &[]).await;
    assert_eq!(read.status, 200);
    assert_eq!(read.json()["n"], 2);
    let gone = c.read_item(base, "db", "c", "old", &json!("p"), &[]).await;
    assert_eq!(gone.status, 404);
    // Renaming onto an id that is taken is 409 and changes nothing; a missing item is 404.
    c.create_item(base, "db", "c", &json!({"id": "taken", "pk": "p"}))
        .await;
    let clash = replace(&c, base, "new", &json!({"id": "taken", "pk": "p", "n": 3})).await;
    assert_eq!(clash.status, 409, "{clash:?}");
    let still = c.read_item(base, "db", "c", "new", &json!("p"), &[]).await;
    assert_eq!(still.json()["n"], 2);
    let missing = replace(&c, base, "nope", &json!({"id": "other", "pk": "p"})).await;
    assert_eq!(missing.status, 404);
    // The change feed and queries see one item where there was one.
    let r = c
        .query(
            base,
            DOCS,
            &json!({"query": "SELECT VALUE c.id FROM c ORDER BY c.id"}),
            &[("x-ms-documentdb-partitionkey", &pk_header(&json!("p")))],
        )
        .await;
    assert_eq!(r.json()["Documents"], json!(["new", "taken"]));
}

#[tokio::test]
async fn a_rename_keeps_unique_keys_as_a_replace_does() {
    let (emu, c) = start_with_container(EmulatorBuilder::new()).await;
    let base = emu.endpoint();
    let body = json!({"id": "u", "partitionKey": {"paths": ["/pk"], "kind": "Hash"},
        "uniqueKeyPolicy": {"uniqueKeys": [{"paths": ["/email"]}]}});
    assert_eq!(
        c.post_json(base, "/dbs/db/colls", &[], &body).await.status,
        201
    );
    let docs = "/dbs/db/colls/u/docs";
    let pk = json!("p");
    for doc in [
        json!({"id": "a", "pk": "p", "email": "a@x"}),
        json!({"id": "b", "pk": "p", "email": "b@x"}),
    ] {
        let r = c
            .send_with_pk(base, Method::POST, docs, &pk, &[], Some(&doc))
            .await;
        assert_eq!(r.status, 201);
    }
    // The item's own value does not clash with itself under its new id...
    let moved = json!({"id": "a2", "pk": "p", "email": "a@x"});
    let r = c
        .send_with_pk(
            base,
            Method::PUT,
            &format!("{docs}/a"),
            &pk,
            &[],
            Some(&moved),
        )
        .await;
    assert_eq!(r.status, 200, "{r:?}");
    // ...another item's does.
    let clash = json!({"id": "b2", "pk": "p", "email": "a@x"});
    let r = c
        .send_with_pk(
            base,
            Method::PUT,
            &format!("{docs}/b"),
            &pk,
            &[],
            Some(&clash),
        )
        .await;
    assert_eq!(r.status, 409, "{r:?}");
}

#[tokio::test]
async fn an_items_ttl_must_be_minus_one_or_a_positive_number_of_seconds() {
    let (emu, c) = start_with_container(EmulatorBuilder::new()).await;
    let base = emu.endpoint();
    for (i, ttl) in [json!(0), json!(null), json!(-2), json!(1.5), json!("10")]
        .into_iter()
        .enumerate()
    {
        let doc = json!({"id": format!("t{i}"), "pk": "p", "ttl": ttl});
        let r = c.create_item(base, "db", "c", &doc).await;
        assert_eq!(r.status, 400, "ttl {ttl}: {r:?}");
        assert!(r.message().contains("ttl"), "{}", r.message());
        let missing = c
            .read_item(base, "db", "c", &format!("t{i}"), &json!("p"), &[])
            .await;
        assert_eq!(missing.status, 404);
    }
    for (id, ttl) in [("never", json!(-1)), ("soon", json!(3600))] {
        let r = c
            .create_item(base, "db", "c", &json!({"id": id, "pk": "p", "ttl": ttl}))
            .await;
        assert_eq!(r.status, 201, "ttl {ttl}: {r:?}");
    }
    // A replace and a batch are held to the same rule.
    let r = replace(
        &c,
        base,
        "soon",
        &json!({"id": "soon", "pk": "p", "ttl": 0}),
    )
    .await;
    assert_eq!(r.status, 400, "{r:?}");
    let pk = pk_header(&json!("p"));
    let ops =
        json!([{"operationType": "Create", "resourceBody": {"id": "b", "pk": "p", "ttl": -5}}]);
    let r = c
        .post_json(
            base,
            DOCS,
            &[
                ("x-ms-cosmos-is-batch-request", "True"),
                ("x-ms-cosmos-batch-atomic", "True"),
                ("x-ms-documentdb-partitionkey", &pk),
            ],
            &ops,
        )
        .await;
    assert_ne!(r.status, 200, "{r:?}");
    assert_eq!(
        c.read_item(base, "db", "c", "b", &json!("p"), &[])
            .await
            .status,
        404
    );
}

#[tokio::test]
async fn prefer_return_minimal_answers_writes_without_the_item() {
    let (emu, c) = start_with_container(EmulatorBuilder::new()).await;
    let base = emu.endpoint();
    let minimal = [("prefer", "return=minimal")];
    let pk = json!("p");
    let doc = json!({"id": "m", "pk": "p", "n": 1});
    let created = c
        .send_with_pk(base, Method::POST, DOCS, &pk, &minimal, Some(&doc))
        .await;
    assert_eq!(created.status, 201, "{created:?}");
    assert!(created.body.is_empty(), "{created:?}");
    assert!(created.header("etag").is_some());
    assert!(created.header("x-ms-session-token").is_some());
    let path = format!("{DOCS}/m");
    let replaced = c
        .send_with_pk(
            base,
            Method::PUT,
            &path,
            &pk,
            &minimal,
            Some(&json!({"id": "m", "pk": "p", "n": 2})),
        )
        .await;
    assert_eq!(replaced.status, 200);
    assert!(replaced.body.is_empty());
    let upserted = c
        .send_with_pk(
            base,
            Method::POST,
            DOCS,
            &pk,
            &[
                ("prefer", "return=minimal"),
                ("x-ms-documentdb-is-upsert", "True"),
            ],
            Some(&json!({"id": "m", "pk": "p", "n": 3})),
        )
        .await;
    assert_eq!(upserted.status, 200);
    assert!(upserted.body.is_empty());
    let patch = json!({"operations": [{"op": "incr", "path": "/n", "value": 1}]});
    let patched = c
        .send_with_pk(base, Method::PATCH, &path, &pk, &minimal, Some(&patch))
        .await;
    assert_eq!(patched.status, 200, "{patched:?}");
    assert!(patched.body.is_empty());
    // The writes happened; a read (even asking for minimal) has its body.
    let read = c.read_item(base, "db", "c", "m", &pk, &minimal).await;
    assert_eq!(read.json()["n"], 4);
    // Without the header a write answers the item.
    let full = c
        .send_with_pk(
            base,
            Method::PUT,
            &path,
            &pk,
            &[],
            Some(&json!({"id": "m", "pk": "p", "n": 5})),
        )
        .await;
    assert_eq!(full.json()["n"], 5);
}

#[tokio::test]
async fn a_partition_key_that_does_not_match_the_header_is_400_with_sub_status_1001() {
    let (emu, c) = start_with_container(EmulatorBuilder::new()).await;
    let base = emu.endpoint();
    let doc = json!({"id": "x", "pk": "inside"});
    let r = c
        .send_with_pk(base, Method::POST, DOCS, &json!("header"), &[], Some(&doc))
        .await;
    assert_eq!((r.status, r.sub_status()), (400, 1001), "{r:?}");
    c.create_item(base, "db", "c", &doc).await;
    let r = c
        .send_with_pk(
            base,
            Method::PUT,
            &format!("{DOCS}/x"),
            &json!("inside"),
            &[],
            Some(&json!({"id": "x", "pk": "moved"})),
        )
        .await;
    assert_eq!((r.status, r.sub_status()), (400, 1001), "{r:?}");
}

#[tokio::test]
async fn an_object_at_the_partition_key_path_is_undefined() {
    let (emu, c) = start_with_container(EmulatorBuilder::new().partitions(3)).await;
    let base = emu.endpoint();
    let undefined = json!({});
    let doc = json!({"id": "o", "pk": {"nested": 1}});
    let r = c
        .send_with_pk(base, Method::POST, DOCS, &undefined, &[], Some(&doc))
        .await;
    assert_eq!(r.status, 201, "{r:?}");
    let read = c.read_item(base, "db", "c", "o", &undefined, &[]).await;
    assert_eq!(read.status, 200, "{read:?}");
    assert_eq!(read.json()["pk"], json!({"nested": 1}));
    // It is the same key as an item without the property.
    let r = c
        .send_with_pk(
            base,
            Method::POST,
            DOCS,
            &undefined,
            &[],
            Some(&json!({"id": "none"})),
        )
        .await;
    assert_eq!(r.status, 201, "{r:?}");
    let r = c
        .query(
            base,
            DOCS,
            &json!({"query": "SELECT VALUE c.id FROM c ORDER BY c.id"}),
            &[("x-ms-documentdb-partitionkey", "[{}]")],
        )
        .await;
    assert_eq!(r.json()["Documents"], json!(["none", "o"]));
    // An array there is still refused.
    let r = c
        .send_with_pk(
            base,
            Method::POST,
            DOCS,
            &undefined,
            &[],
            Some(&json!({"id": "a", "pk": [1]})),
        )
        .await;
    assert_eq!(r.status, 400, "{r:?}");
}

/// The Python SDK's `delete_all_items_by_partition_key`: signed as the container (resource type
/// `colls` on its link).
async fn delete_partition_key(c: &TestClient, base: &str, pk: Option<&str>) -> Resp {
    let date = now_date();
    let auth = master_auth(&c.key, "POST", "colls", "dbs/db/colls/c", &date);
    let header = pk.map(|p| pk_header(&json!(p)));
    let mut headers = vec![
        ("x-ms-date", date.as_str()),
        ("authorization", auth.as_str()),
        ("x-ms-version", "2020-07-15"),
    ];
    if let Some(h) = &header {
        headers.push(("x-ms-documentdb-partitionkey", h.as_str()));
    }
    let path = "/dbs/db/colls/c/operations/partitionkeydelete";
    c.send_raw(base, Method::POST, path, &headers, None).await
}

#[tokio::test]
async fn a_partition_key_delete_removes_every_item_of_that_key_only() {
    let (emu, c) = start_with_container(EmulatorBuilder::new().partitions(2)).await;
    let base = emu.endpoint();
    for i in 0..6 {
        let pk = if i % 2 == 0 { "gone" } else { "kept" };
        let doc = json!({"id": format!("d{i}"), "pk": pk});
        assert_eq!(c.create_item(base, "db", "c", &doc).await.status, 201);
    }
    let r = delete_partition_key(&c, base, Some("gone")).await;
    assert_eq!(r.status, 200, "{r:?}");
    assert!(r.header("x-ms-session-token").is_some());
    let count = |pk: &'static str| {
        let c = c.clone();
        async move {
            let r = c
                .query(
                    base,
                    DOCS,
                    &json!({"query": "SELECT VALUE COUNT(1) FROM c"}),
                    &[("x-ms-documentdb-partitionkey", &pk_header(&json!(pk)))],
                )
                .await;
            r.json()["Documents"][0].as_i64().unwrap()
        }
    };
    assert_eq!(count("gone").await, 0);
    assert_eq!(count("kept").await, 3);
    let read = c
        .read_item(base, "db", "c", "d0", &json!("gone"), &[])
        .await;
    assert_eq!(read.status, 404);
    // Again, on a key with nothing left, and without a partition key.
    let r = delete_partition_key(&c, base, Some("gone")).await;
    assert_eq!(r.status, 200, "{r:?}");
    let r = delete_partition_key(&c, base, None).await;
    assert_eq!(r.status, 400, "{r:?}");
}

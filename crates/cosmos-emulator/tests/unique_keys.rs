//! Unique key constraints over real HTTP: a create, upsert, replace, PATCH or batch operation that
//! would give two items of one logical partition the same values at a unique key's paths is refused
//! with 409 and changes nothing; other logical partitions, the item itself and a deleted item's
//! values do not count; bad policies are refused at container creation.

use crate::common;

use common::{pk_header, start_with_container, Resp, TestClient};
use cosmos_emulator::EmulatorBuilder;
use http::Method;
use serde_json::{json, Value};

const DOCS: &str = "/dbs/db/colls/u/docs";

async fn with_policy(policy: Value) -> (cosmos_emulator::Emulator, TestClient, Resp) {
    let (emu, c) = start_with_container(EmulatorBuilder::new()).await;
    let created = c
        .post_json(
            emu.endpoint(),
            "/dbs/db/colls",
            &[],
            &json!({"id": "u", "partitionKey": {"paths": ["/pk"], "kind": "Hash"}, "uniqueKeyPolicy": policy}),
        )
        .await;
    (emu, c, created)
}

async fn write(
    c: &TestClient,
    base: &str,
    method: Method,
    path: &str,
    doc: &Value,
    extra: &[(&str, &str)],
) -> Resp {
    c.send_with_pk(base, method, path, &doc["pk"], extra, Some(doc))
        .await
}

#[tokio::test]
async fn writes_that_break_a_unique_key_are_refused_and_change_nothing() {
    let (emu, c, created) = with_policy(json!({"uniqueKeys": [
        {"paths": ["/email"]},
        {"paths": ["/name/first", "/name/last"]}
    ]}))
    .await;
    assert_eq!(created.status, 201, "{created:?}");
    let base = emu.endpoint();
    let post = |doc: Value| {
        let c = &c;
        async move { write(c, base, Method::POST, DOCS, &doc, &[]).await }
    };
    assert_eq!(
        post(
            json!({"id": "a", "pk": "p", "email": "x@y", "name": {"first": "Ann", "last": "Lee"}})
        )
        .await
        .status,
        201
    );
    // Same email, same logical partition: refused, with the paths named.
    let r = post(json!({"id": "b", "pk": "p", "email": "x@y"})).await;
    assert_eq!(r.status, 409, "{r:?}");
    assert!(
        r.message().contains("Unique index constraint violation"),
        "{r:?}"
    );
    assert!(r.message().contains("/email"), "{r:?}");
    // Another logical partition may hold the same values.
    assert_eq!(
        post(json!({"id": "b", "pk": "q", "email": "x@y"}))
            .await
            .status,
        201
    );
    // The two-path key conflicts only when both paths match.
    assert_eq!(
        post(json!({"id": "c", "pk": "p", "email": "c@y", "name": {"first": "Ann", "last": "Li"}}))
            .await
            .status,
        201
    );
    assert_eq!(
        post(
            json!({"id": "d", "pk": "p", "email": "d@y", "name": {"first": "Ann", "last": "Lee"}})
        )
        .await
        .status,
        409
    );
    // An upsert of the item itself keeps its own values.
    let upsert = [("x-ms-documentdb-is-upsert", "True")];
    let r = write(
        &c,
        base,
        Method::POST,
        DOCS,
        &json!({"id": "a", "pk": "p", "email": "x@y", "v": 2}),
        &upsert,
    )
    .await;
    assert_eq!(r.status, 200, "{r:?}");
    // A replace into another item's values is refused, and the item keeps its body.
    let r = write(
        &c,
        base,
        Method::PUT,
        &format!("{DOCS}/c"),
        &json!({"id": "c", "pk": "p", "email": "x@y"}),
        &[],
    )
    .await;
    assert_eq!(r.status, 409, "{r:?}");
    let read = c.read_item(base, "db", "u", "c", &json!("p"), &[]).await;
    assert_eq!(read.json()["email"], "c@y");
    // PATCH too.
    let patch = json!({"operations": [{"op": "set", "path": "/email", "value": "x@y"}]});
    let r = c
        .send_with_pk(
            base,
            Method::PATCH,
            &format!("{DOCS}/c"),
            &json!("p"),
            &[],
            Some(&patch),
        )
        .await;
    assert_eq!(r.status, 409, "{r:?}");
    // Once the holder is deleted its values are free.
    let pk = pk_header(&json!("p"));
    let r = c
        .send(
            base,
            Method::DELETE,
            &format!("{DOCS}/a"),
            &[("x-ms-documentdb-partitionkey", &pk)],
            None,
        )
        .await;
    assert_eq!(r.status, 204, "{r:?}");
    assert_eq!(
        post(json!({"id": "e", "pk": "p", "email": "x@y"}))
            .await
            .status,
        201
    );
}

#[tokio::test]
async fn a_missing_property_counts_as_null_once() {
    let (emu, c, created) = with_policy(json!({"uniqueKeys": [{"paths": ["/email"]}]})).await;
    assert_eq!(created.status, 201);
    let base = emu.endpoint();
    let r = write(
        &c,
        base,
        Method::POST,
        DOCS,
        &json!({"id": "a", "pk": "p"}),
        &[],
    )
    .await;
    assert_eq!(r.status, 201);
    let r = write(
        &c,
        base,
        Method::POST,
        DOCS,
        &json!({"id": "b", "pk": "p"}),
        &[],
    )
    .await;
    assert_eq!(r.status, 409, "a second item without the property: {r:?}");
    let r = write(
        &c,
        base,
        Method::POST,
        DOCS,
        &json!({"id": "b", "pk": "p", "email": null}),
        &[],
    )
    .await;
    assert_eq!(r.status, 409, "null is the missing value: {r:?}");
}

#[tokio::test]
async fn a_batch_sees_its_own_earlier_operations() {
    let (emu, c, created) = with_policy(json!({"uniqueKeys": [{"paths": ["/email"]}]})).await;
    assert_eq!(created.status, 201);
    let base = emu.endpoint();
    let pk = pk_header(&json!("p"));
    let batch = |ops: Value| {
        let (c, pk) = (&c, pk.clone());
        async move {
            c.post_json(
                base,
                DOCS,
                &[
                    ("x-ms-documentdb-partitionkey", &pk),
                    ("x-ms-cosmos-is-batch-request", "True"),
                    ("x-ms-cosmos-batch-atomic", "True"),
                ],
                &ops,
            )
            .await
        }
    };
    let r = batch(json!([
        {"operationType": "Create", "partitionKey": "[\"p\"]", "resourceBody": {"id": "a", "pk": "p", "email": "x"}},
        {"operationType": "Create", "partitionKey": "[\"p\"]", "resourceBody": {"id": "b", "pk": "p", "email": "x"}}
    ]))
    .await;
    assert_eq!(r.status, 207, "{r:?}");
    let codes: Vec<u64> = r
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["statusCode"].as_u64().unwrap())
        .collect();
    assert_eq!(codes, vec![424, 409]);
    assert_eq!(
        c.read_item(base, "db", "u", "a", &json!("p"), &[])
            .await
            .status,
        404,
        "all or nothing"
    );
    // Freeing a value and taking it in one batch works.
    let r = batch(json!([
        {"operationType": "Create", "partitionKey": "[\"p\"]", "resourceBody": {"id": "a", "pk": "p", "email": "x"}},
        {"operationType": "Delete", "partitionKey": "[\"p\"]", "id": "a"},
        {"operationType": "Create", "partitionKey": "[\"p\"]", "resourceBody": {"id": "b", "pk": "p", "email": "x"}}
    ]))
    .await;
    assert_eq!(r.status, 200, "{r:?}");
}

#[tokio::test]
async fn bad_policies_are_refused_at_creation() {
    for (policy, why) in [
        (
            json!({"uniqueKeys": [{"paths": ["email"]}]}),
            "must look like",
        ),
        (json!({"uniqueKeys": [{"paths": []}]}), "give 1 to 16"),
        (json!({"uniqueKeys": "x"}), "must be an array"),
    ] {
        let (_emu, _c, created) = with_policy(policy.clone()).await;
        assert_eq!(created.status, 400, "{policy}: {created:?}");
        assert!(created.message().contains(why), "{policy}: {created:?}");
    }
}

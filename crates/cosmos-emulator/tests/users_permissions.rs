//! Users and permissions over HTTP, and the resource tokens of permissions as credentials: Read
//! versus All, scoped to a container, an item or a partition key, and revoked with their
//! permission.

use crate::common;

use common::{now_date, pk_header, start_with_container, Resp, TestClient};
use cosmos_emulator::EmulatorBuilder;
use http::Method;
use serde_json::{json, Value};

/// Sends a request with `token` as the whole authorization header.
async fn with_token(
    c: &TestClient,
    base: &str,
    token: &str,
    method: Method,
    path: &str,
    pk: Option<&Value>,
    body: Option<&Value>,
) -> Resp {
    let date = now_date();
    let pk = pk.map(pk_header);
    let mut headers: Vec<(&str, &str)> = vec![
        ("authorization", token),
        ("x-ms-date", &date),
        ("x-ms-version", "2020-07-15"),
    ];
    if let Some(pk) = &pk {
        headers.push(("x-ms-documentdb-partitionkey", pk));
    }
    let body = body.map(Value::to_string);
    c.send_raw(
        base,
        method,
        path,
        &headers,
        body.as_deref().map(str::as_bytes),
    )
    .await
}

#[tokio::test]
async fn users_and_permissions_crud() {
    let (emu, c) = start_with_container(EmulatorBuilder::new().partitions(1)).await;
    let base = emu.endpoint();
    let r = c
        .post_json(base, "/dbs/db/users", &[], &json!({"id": "u1"}))
        .await;
    assert_eq!(r.status, 201, "{r:?}");
    let user = r.json();
    assert_eq!(user["id"], "u1");
    assert_eq!(user["_permissions"], "permissions/");
    assert!(user["_rid"].is_string() && user["_etag"].is_string() && user["_ts"].is_u64());
    let r = c
        .post_json(base, "/dbs/db/users", &[], &json!({"id": "u1"}))
        .await;
    assert_eq!(r.status, 409);
    // Upsert: replaces an existing user, creates a new one.
    let upsert = [("x-ms-documentdb-is-upsert", "true")];
    let r = c
        .post_json(base, "/dbs/db/users", &upsert, &json!({"id": "u1"}))
        .await;
    assert_eq!(r.status, 200, "{r:?}");
    let r = c
        .post_json(base, "/dbs/db/users", &upsert, &json!({"id": "u2"}))
        .await;
    assert_eq!(r.status, 201, "{r:?}");
    let list = c.get(base, "/dbs/db/users", &[]).await;
    assert_eq!(list.status, 200);
    assert_eq!(list.json()["Users"].as_array().unwrap().len(), 2);
    let q = c
        .query(
            base,
            "/dbs/db/users",
            &json!({"query": "SELECT * FROM root r WHERE r.id = @id", "parameters": [{"name": "@id", "value": "u2"}]}),
            &[],
        )
        .await;
    assert_eq!(q.status, 200, "{q:?}");
    assert_eq!(q.json()["Users"][0]["id"], "u2");
    // Replace renames.
    let r = c
        .send(
            base,
            Method::PUT,
            "/dbs/db/users/u2",
            &[],
            Some(br#"{"id": "u3"}"#),
        )
        .await;
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(c.get(base, "/dbs/db/users/u2", &[]).await.status, 404);
    assert_eq!(c.get(base, "/dbs/db/users/u3", &[]).await.status, 200);

    // Permissions.
    let perm = json!({"id": "p1", "permissionMode": "Read", "resource": "dbs/db/colls/c"});
    let r = c
        .post_json(base, "/dbs/db/users/u1/permissions", &[], &perm)
        .await;
    assert_eq!(r.status, 201, "{r:?}");
    let body = r.json();
    assert_eq!(body["permissionMode"], "Read");
    assert!(body["_token"]
        .as_str()
        .unwrap()
        .starts_with("type=resource&ver=1.0&sig="));
    // A second permission of the user on the same resource conflicts.
    let same = json!({"id": "p2", "permissionMode": "All", "resource": "dbs/db/colls/c"});
    let r = c
        .post_json(base, "/dbs/db/users/u1/permissions", &[], &same)
        .await;
    assert_eq!(r.status, 409, "{r:?}");
    // Upsert changes the mode.
    let all = json!({"id": "p1", "permissionMode": "All", "resource": "dbs/db/colls/c"});
    let r = c
        .post_json(base, "/dbs/db/users/u1/permissions", &upsert, &all)
        .await;
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(r.json()["permissionMode"], "All");
    let r = c.get(base, "/dbs/db/users/u1/permissions", &[]).await;
    assert_eq!(r.json()["Permissions"].as_array().unwrap().len(), 1);
    let bad = json!({"id": "p9", "permissionMode": "Write", "resource": "dbs/db/colls/c"});
    let r = c
        .post_json(base, "/dbs/db/users/u1/permissions", &[], &bad)
        .await;
    assert_eq!(r.status, 400, "{r:?}");
    let r = c
        .send(
            base,
            Method::PUT,
            "/dbs/db/users/u1/permissions/p1",
            &[],
            Some(all.to_string().replace("\"p1\"", "\"p1b\"").as_bytes()),
        )
        .await;
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(
        c.get(base, "/dbs/db/users/u1/permissions/p1", &[])
            .await
            .status,
        404
    );
    let r = c.get(base, "/dbs/db/users/u1/permissions/p1b", &[]).await;
    assert_eq!(r.status, 200);
    let r = c
        .send(
            base,
            Method::DELETE,
            "/dbs/db/users/u1/permissions/p1b",
            &[],
            None,
        )
        .await;
    assert_eq!(r.status, 204);
    assert_eq!(
        c.get(base, "/dbs/db/users/u1/permissions/p1b", &[])
            .await
            .status,
        404
    );
    let r = c.get(base, "/dbs/db/users/nobody/permissions", &[]).await;
    assert_eq!(r.status, 404);
    let r = c
        .send(base, Method::DELETE, "/dbs/db/users/u1", &[], None)
        .await;
    assert_eq!(r.status, 204);
    assert_eq!(c.get(base, "/dbs/db/users/u1", &[]).await.status, 404);
}

async fn token_for(c: &TestClient, base: &str, user: &str, permission: Value) -> String {
    let _ = c
        .post_json(base, "/dbs/db/users", &[], &json!({"id": user}))
        .await;
    let r = c
        .post_json(
            base,
            &format!("/dbs/db/users/{user}/permissions"),
            &[],
            &permission,
        )
        .await;
    assert_eq!(r.status, 201, "{r:?}");
    r.json()["_token"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn resource_tokens_are_enforced() {
    let (emu, c) = start_with_container(EmulatorBuilder::new().partitions(2)).await;
    let base = emu.endpoint();
    for (id, pk) in [("a", 1), ("b", 2)] {
        let doc = json!({"id": id, "pk": pk});
        assert_eq!(c.create_item(base, "db", "c", &doc).await.status, 201);
    }
    let read = token_for(
        &c,
        base,
        "reader",
        json!({"id": "r", "permissionMode": "Read", "resource": "dbs/db/colls/c"}),
    )
    .await;
    let one = json!([1]);
    let pk1 = json!(1);
    let pk2 = json!(2);
    // Read: the account, the container, its ranges, its items and feeds; no writes.
    for path in [
        "/",
        "/dbs/db/colls/c",
        "/dbs/db/colls/c/pkranges",
        "/dbs/db/colls/c/docs",
    ] {
        let r = with_token(&c, base, &read, Method::GET, path, None, None).await;
        assert_eq!(r.status, 200, "{path}: {r:?}");
    }
    let r = with_token(
        &c,
        base,
        &read,
        Method::GET,
        "/dbs/db/colls/c/docs/a",
        Some(&pk1),
        None,
    )
    .await;
    assert_eq!(r.status, 200, "{r:?}");
    let doc = json!({"id": "x", "pk": 1});
    let r = with_token(
        &c,
        base,
        &read,
        Method::POST,
        "/dbs/db/colls/c/docs",
        Some(&pk1),
        Some(&doc),
    )
    .await;
    assert_eq!(r.status, 403, "{r:?}");
    assert!(r.message().contains("Insufficient permissions"), "{r:?}");
    let r = with_token(
        &c,
        base,
        &read,
        Method::DELETE,
        "/dbs/db/colls/c",
        None,
        None,
    )
    .await;
    assert_eq!(r.status, 403);
    let r = with_token(&c, base, &read, Method::GET, "/dbs/db/users", None, None).await;
    assert_eq!(r.status, 403);

    // All on one partition key value: writes there, nothing on other keys.
    let r = c
        .post_json(
            base,
            "/dbs/db/colls",
            &[],
            &json!({"id": "c2", "partitionKey": {"paths": ["/pk"], "kind": "Hash", "version": 2}}),
        )
        .await;
    assert_eq!(r.status, 201);
    let scoped = token_for(
        &c,
        base,
        "writer",
        json!({"id": "w", "permissionMode": "All", "resource": "dbs/db/colls/c2", "resourcePartitionKey": one}),
    )
    .await;
    let r = with_token(
        &c,
        base,
        &scoped,
        Method::POST,
        "/dbs/db/colls/c2/docs",
        Some(&pk1),
        Some(&doc),
    )
    .await;
    assert_eq!(r.status, 201, "{r:?}");
    let other = json!({"id": "y", "pk": 2});
    let r = with_token(
        &c,
        base,
        &scoped,
        Method::POST,
        "/dbs/db/colls/c2/docs",
        Some(&pk2),
        Some(&other),
    )
    .await;
    assert_eq!(r.status, 403, "{r:?}");
    let r = with_token(
        &c,
        base,
        &scoped,
        Method::DELETE,
        "/dbs/db/colls/c2/docs/x",
        Some(&pk1),
        None,
    )
    .await;
    assert_eq!(r.status, 204, "{r:?}");
    // Another container is not covered.
    let r = with_token(
        &c,
        base,
        &scoped,
        Method::GET,
        "/dbs/db/colls/c/docs/a",
        Some(&pk1),
        None,
    )
    .await;
    assert_eq!(r.status, 403);

    // All on one item: that item only.
    let item = token_for(
        &c,
        base,
        "itemuser",
        json!({"id": "i", "permissionMode": "All", "resource": "dbs/db/colls/c/docs/a"}),
    )
    .await;
    let r = with_token(
        &c,
        base,
        &item,
        Method::GET,
        "/dbs/db/colls/c/docs/b",
        Some(&pk2),
        None,
    )
    .await;
    assert_eq!(r.status, 403);
    let r = with_token(
        &c,
        base,
        &item,
        Method::DELETE,
        "/dbs/db/colls/c/docs/a",
        Some(&pk1),
        None,
    )
    .await;
    assert_eq!(r.status, 204, "{r:?}");

    // A forged or altered token is refused, and deleting the permission revokes its token.
    let forged = read.replace("sig=", "sig=x");
    let r = with_token(
        &c,
        base,
        &forged,
        Method::GET,
        "/dbs/db/colls/c",
        None,
        None,
    )
    .await;
    assert_eq!(r.status, 401, "{r:?}");
    let r = c
        .send(
            base,
            Method::DELETE,
            "/dbs/db/users/reader/permissions/r",
            &[],
            None,
        )
        .await;
    assert_eq!(r.status, 204);
    let r = with_token(&c, base, &read, Method::GET, "/dbs/db/colls/c", None, None).await;
    assert_eq!(r.status, 401, "{r:?}");
}

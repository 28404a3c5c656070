//! Resource tokens over HTTP, against what a request does rather than the flags it carries: a Read
//! token cannot write by adding a query flag, a key-scoped token cannot reach other keys through
//! bulk, a database-level permission does not administer users, an item permission named by
//! `_self` link covers the item named by id (and the reverse), and tokens expire.

use std::time::Duration;

use crate::common;

use common::{now_date, pk_header, start_with_container, Resp, TestClient};
use cosmos_emulator::EmulatorBuilder;
use http::Method;
use serde_json::{json, Value};

/// Sends `method path` with `token` as the authorization header and `extra` headers.
async fn as_token(
    c: &TestClient,
    base: &str,
    token: &str,
    method: Method,
    path: &str,
    extra: &[(&str, &str)],
    body: Option<&Value>,
) -> Resp {
    let date = now_date();
    let mut headers: Vec<(&str, &str)> = vec![
        ("authorization", token),
        ("x-ms-date", &date),
        ("x-ms-version", "2020-07-15"),
    ];
    headers.extend_from_slice(extra);
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

/// Creates user `user` (if needed) and `permission` for it; returns the answer.
async fn permit(
    c: &TestClient,
    base: &str,
    user: &str,
    permission: &Value,
    extra: &[(&str, &str)],
) -> Resp {
    let _ = c
        .post_json(base, "/dbs/db/users", &[], &json!({"id": user}))
        .await;
    c.post_json(
        base,
        &format!("/dbs/db/users/{user}/permissions"),
        extra,
        permission,
    )
    .await
}

async fn token(c: &TestClient, base: &str, user: &str, permission: Value) -> String {
    let r = permit(c, base, user, &permission, &[]).await;
    assert_eq!(r.status, 201, "{r:?}");
    r.json()["_token"].as_str().unwrap().to_owned()
}

const QUERY_FLAGS: [(&str, &str); 3] = [
    ("x-ms-documentdb-isquery", "True"),
    ("content-type", "application/query+json"),
    ("x-ms-cosmos-is-query-plan-request", "True"),
];

#[tokio::test]
async fn a_read_token_cannot_write_by_adding_a_query_flag() {
    let (emu, c) = start_with_container(EmulatorBuilder::new().partitions(1)).await;
    let base = emu.endpoint();
    let sproc =
        json!({"id": "s", "body": "function () { getContext().getResponse().setBody(1); }"});
    let r = c
        .post_json(base, "/dbs/db/colls/c/sprocs", &[], &sproc)
        .await;
    assert_eq!(r.status, 201, "{r:?}");
    assert_eq!(
        c.create_item(base, "db", "c", &json!({"id": "a", "pk": "k"}))
            .await
            .status,
        201
    );
    let read = token(
        &c,
        base,
        "reader",
        json!({"id": "r", "permissionMode": "Read", "resource": "dbs/db/colls/c"}),
    )
    .await;
    let pk = pk_header(&json!("k"));
    for flag in QUERY_FLAGS {
        let extra = [flag, ("x-ms-documentdb-partitionkey", pk.as_str())];
        let r = as_token(
            &c,
            base,
            &read,
            Method::POST,
            "/dbs/db/colls/c/sprocs/s",
            &extra,
            Some(&json!([])),
        )
        .await;
        assert_eq!(r.status, 403, "execute with {flag:?}: {r:?}");
        let r = as_token(
            &c,
            base,
            &read,
            Method::POST,
            "/dbs/db/colls/c/operations/partitionkeydelete",
            &extra,
            None,
        )
        .await;
        assert_eq!(r.status, 403, "partitionkeydelete with {flag:?}: {r:?}");
        for kind in ["sprocs", "udfs", "triggers"] {
            let mut script = json!({"id": format!("x-{}", flag.0), "body": "function () {}"});
            if kind == "triggers" {
                script["triggerType"] = json!("Pre");
                script["triggerOperation"] = json!("All");
            }
            let r = as_token(
                &c,
                base,
                &read,
                Method::POST,
                &format!("/dbs/db/colls/c/{kind}"),
                &[flag],
                Some(&script),
            )
            .await;
            // With a query flag the request is a query (a read, of a body that is no query);
            // the query-plan flag does not make a create a read.
            if flag.0 == "x-ms-cosmos-is-query-plan-request" {
                assert_eq!(r.status, 403, "create {kind} with {flag:?}: {r:?}");
            } else {
                assert_ne!(r.status, 201, "create {kind} with {flag:?}: {r:?}");
            }
        }
    }
    // Nothing was written: the item is there and no script was added.
    assert_eq!(
        c.read_item(base, "db", "c", "a", &json!("k"), &[])
            .await
            .status,
        200
    );
    let r = c.get(base, "/dbs/db/colls/c/sprocs", &[]).await;
    assert_eq!(r.json()["StoredProcedures"].as_array().unwrap().len(), 1);
    for kind in ["udfs", "triggers"] {
        let r = c.get(base, &format!("/dbs/db/colls/c/{kind}"), &[]).await;
        assert_eq!(r.json()["_count"], 0, "{kind}: {r:?}");
    }
    // The Read token still queries.
    let r = as_token(
        &c,
        base,
        &read,
        Method::POST,
        "/dbs/db/colls/c/docs",
        &[
            ("x-ms-documentdb-isquery", "True"),
            ("content-type", "application/query+json"),
            ("x-ms-documentdb-partitionkey", pk.as_str()),
        ],
        Some(&json!({"query": "SELECT * FROM c"})),
    )
    .await;
    assert_eq!(r.status, 200, "{r:?}");
}

#[tokio::test]
async fn a_key_scoped_token_cannot_reach_other_keys_through_bulk() {
    let (emu, c) = start_with_container(EmulatorBuilder::new().partitions(2)).await;
    let base = emu.endpoint();
    for (id, pk) in [("a1", "alice"), ("b1", "bob"), ("b2", "bob")] {
        let doc = json!({"id": id, "pk": pk, "v": 1});
        assert_eq!(c.create_item(base, "db", "c", &doc).await.status, 201);
    }
    let alice = token(
        &c,
        base,
        "alice",
        json!({"id": "p", "permissionMode": "All", "resource": "dbs/db/colls/c",
            "resourcePartitionKey": ["alice"]}),
    )
    .await;
    let alice_pk = pk_header(&json!("alice"));
    let bulk = [
        ("x-ms-cosmos-is-batch-request", "True"),
        ("x-ms-cosmos-batch-atomic", "False"),
        ("x-ms-documentdb-partitionkey", alice_pk.as_str()),
    ];
    let bob = json!(["bob"]).to_string();
    let alice_key = json!(["alice"]).to_string();
    let attempts = [
        json!([{"operationType": "Read", "id": "b1", "partitionKey": bob}]),
        json!([{"operationType": "Create", "partitionKey": bob,
            "resourceBody": {"id": "b3", "pk": "bob"}}]),
        json!([{"operationType": "Replace", "id": "b2", "partitionKey": bob,
            "resourceBody": {"id": "b2", "pk": "bob", "v": 2}}]),
        json!([{"operationType": "Read", "id": "a1", "partitionKey": alice_key},
            {"operationType": "Read", "id": "b1", "partitionKey": bob}]),
    ];
    for ops in attempts {
        let r = as_token(
            &c,
            base,
            &alice,
            Method::POST,
            "/dbs/db/colls/c/docs",
            &bulk,
            Some(&ops),
        )
        .await;
        assert_eq!(r.status, 403, "{ops}: {r:?}");
    }
    assert_eq!(
        c.read_item(base, "db", "c", "b3", &json!("bob"), &[])
            .await
            .status,
        404
    );
    let b2 = c.read_item(base, "db", "c", "b2", &json!("bob"), &[]).await;
    assert_eq!(b2.json()["v"], 1);
    // Its own key still works through bulk.
    let own = json!([{"operationType": "Read", "id": "a1", "partitionKey": alice_key}]);
    let r = as_token(
        &c,
        base,
        &alice,
        Method::POST,
        "/dbs/db/colls/c/docs",
        &bulk,
        Some(&own),
    )
    .await;
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(r.json()[0]["statusCode"], 200, "{r:?}");
}

#[tokio::test]
async fn a_database_permission_does_not_administer_users_or_permissions() {
    let (emu, c) = start_with_container(EmulatorBuilder::new().partitions(1)).await;
    let base = emu.endpoint();
    let _ = token(
        &c,
        base,
        "other",
        json!({"id": "o", "permissionMode": "Read", "resource": "dbs/db/colls/c"}),
    )
    .await;
    let db = token(
        &c,
        base,
        "dbuser",
        json!({"id": "d", "permissionMode": "All", "resource": "dbs/db"}),
    )
    .await;
    let attempts: [(Method, &str, Option<Value>); 7] = [
        (Method::POST, "/dbs/db/users", Some(json!({"id": "mine"}))),
        (Method::GET, "/dbs/db/users", None),
        (Method::GET, "/dbs/db/users/other/permissions", None),
        (Method::GET, "/dbs/db/users/other/permissions/o", None),
        (
            Method::POST,
            "/dbs/db/users/dbuser/permissions",
            Some(json!({"id": "x", "permissionMode": "All", "resource": "dbs"})),
        ),
        (Method::DELETE, "/dbs/db/users/other", None),
        (Method::DELETE, "/dbs/db/colls/c", None),
    ];
    for (method, path, body) in attempts {
        let r = as_token(&c, base, &db, method.clone(), path, &[], body.as_ref()).await;
        assert_eq!(r.status, 403, "{method} {path}: {r:?}");
    }
    assert_eq!(c.get(base, "/dbs/db/users/mine", &[]).await.status, 404);
}

#[tokio::test]
async fn an_item_permission_by_self_link_covers_the_item_by_id_and_the_reverse() {
    let (emu, c) = start_with_container(EmulatorBuilder::new().partitions(2)).await;
    let base = emu.endpoint();
    let mut items = Vec::new();
    for (id, pk) in [("a", "k1"), ("b", "k2"), ("other", "k1")] {
        let r = c
            .create_item(base, "db", "c", &json!({"id": id, "pk": pk}))
            .await;
        assert_eq!(r.status, 201);
        items.push(r.json());
    }
    let self_link = items[0]["_self"].as_str().unwrap().to_owned();
    assert!(self_link.ends_with('/'), "{self_link}");
    let by_rid = token(
        &c,
        base,
        "rid-user",
        json!({"id": "p", "permissionMode": "All", "resource": self_link}),
    )
    .await;
    let k1 = pk_header(&json!("k1"));
    let pk = [("x-ms-documentdb-partitionkey", k1.as_str())];
    let r = as_token(
        &c,
        base,
        &by_rid,
        Method::GET,
        "/dbs/db/colls/c/docs/a",
        &pk,
        None,
    )
    .await;
    assert_eq!(r.status, 200, "{r:?}");
    let r = as_token(
        &c,
        base,
        &by_rid,
        Method::GET,
        "/dbs/db/colls/c/docs/other",
        &pk,
        None,
    )
    .await;
    assert_eq!(r.status, 403, "{r:?}");
    let r = as_token(
        &c,
        base,
        &by_rid,
        Method::DELETE,
        "/dbs/db/colls/c/docs/a",
        &pk,
        None,
    )
    .await;
    assert_eq!(r.status, 204, "{r:?}");

    // By name, the request addressing the item (and its container) by resource ids.
    let by_name = token(
        &c,
        base,
        "name-user",
        json!({"id": "p", "permissionMode": "Read", "resource": "dbs/db/colls/c/docs/b"}),
    )
    .await;
    let b_self = format!("/{}", items[1]["_self"].as_str().unwrap());
    let k2 = pk_header(&json!("k2"));
    let pk2 = [("x-ms-documentdb-partitionkey", k2.as_str())];
    let r = as_token(&c, base, &by_name, Method::GET, &b_self, &pk2, None).await;
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(r.json()["id"], "b");
    let other_self = format!("/{}", items[2]["_self"].as_str().unwrap());
    let r = as_token(&c, base, &by_name, Method::GET, &other_self, &pk, None).await;
    assert_eq!(r.status, 403, "{r:?}");
    let r = as_token(&c, base, &by_name, Method::DELETE, &b_self, &pk2, None).await;
    assert_eq!(r.status, 403, "{r:?}");
}

async fn read_with(c: &TestClient, base: &str, token: &str) -> Resp {
    let pk = pk_header(&json!("k"));
    as_token(
        c,
        base,
        token,
        Method::GET,
        "/dbs/db/colls/c/docs/a",
        &[("x-ms-documentdb-partitionkey", pk.as_str())],
        None,
    )
    .await
}

/// Moves the emulator's clock (tokio's, paused only while it moves) forward; returns a client
/// with fresh connections (the old ones' idle timers ran out meanwhile).
async fn let_pass(seconds: u64) -> TestClient {
    tokio::time::pause();
    tokio::time::advance(Duration::from_secs(seconds)).await;
    tokio::time::resume();
    TestClient::new(cosmos_emulator::WELL_KNOWN_KEY)
}

#[tokio::test]
async fn tokens_expire_after_the_seconds_asked_for_or_an_hour() {
    let (emu, c) = start_with_container(EmulatorBuilder::new().partitions(1)).await;
    let base = emu.endpoint();
    let doc = json!({"id": "a", "pk": "k"});
    assert_eq!(c.create_item(base, "db", "c", &doc).await.status, 201);
    for bad in ["9", "18001", "0", "-5", "ten"] {
        let p = json!({"id": "bad", "permissionMode": "Read", "resource": "dbs/db/colls/c"});
        let r = permit(
            &c,
            base,
            "u",
            &p,
            &[("x-ms-documentdb-expiry-seconds", bad)],
        )
        .await;
        assert_eq!(r.status, 400, "expiry {bad}: {r:?}");
    }
    let p = json!({"id": "short", "permissionMode": "Read", "resource": "dbs/db/colls/c"});
    let r = permit(
        &c,
        base,
        "u",
        &p,
        &[("x-ms-documentdb-expiry-seconds", "10")],
    )
    .await;
    assert_eq!(r.status, 201, "{r:?}");
    let short = r.json()["_token"].as_str().unwrap().to_owned();
    let p = json!({"id": "long", "permissionMode": "Read", "resource": "dbs/db/colls/c/docs/a"});
    let r = permit(&c, base, "u", &p, &[]).await;
    assert_eq!(r.status, 201, "{r:?}");
    let long = r.json()["_token"].as_str().unwrap().to_owned();
    assert_eq!(read_with(&c, base, &short).await.status, 200);
    let c = let_pass(8).await;
    assert_eq!(read_with(&c, base, &short).await.status, 200);
    let c = let_pass(4).await;
    let r = read_with(&c, base, &short).await;
    assert_eq!(r.status, 401, "{r:?}");
    assert!(r.message().contains("expired"), "{r:?}");
    assert_eq!(read_with(&c, base, &long).await.status, 200);
    // Reading the permission issues a new token, for the seconds the read asks for.
    let r = c
        .get(
            base,
            "/dbs/db/users/u/permissions/short",
            &[("x-ms-documentdb-expiry-seconds", "18000")],
        )
        .await;
    assert_eq!(r.status, 200, "{r:?}");
    let renewed = r.json()["_token"].as_str().unwrap().to_owned();
    assert_eq!(read_with(&c, base, &renewed).await.status, 200);
    let r = c
        .get(
            base,
            "/dbs/db/users/u/permissions",
            &[("x-ms-documentdb-expiry-seconds", "5")],
        )
        .await;
    assert_eq!(r.status, 400, "{r:?}");
    let c = let_pass(3600 - 12 + 1).await;
    assert_eq!(read_with(&c, base, &long).await.status, 401);
    assert_eq!(read_with(&c, base, &renewed).await.status, 200);
    let c = let_pass(18000).await;
    assert_eq!(read_with(&c, base, &renewed).await.status, 401);
}

//! Native PATCH: operations, the condition, limits and protected paths.

use crate::common;

use common::{pk_header, start_with_container, Resp, TestClient};
use cosmos_emulator::EmulatorBuilder;
use http::Method;
use serde_json::{json, Value};

async fn patch(c: &TestClient, base: &str, body: &Value) -> Resp {
    let pk = pk_header(&json!("p"));
    c.send(
        base,
        Method::PATCH,
        "/dbs/db/colls/c/docs/a",
        &[("x-ms-documentdb-partitionkey", &pk)],
        Some(body.to_string().as_bytes()),
    )
    .await
}

#[tokio::test]
async fn operations_apply_in_order_and_the_condition_guards_them() {
    let (emu, c) = start_with_container(EmulatorBuilder::new()).await;
    let base = emu.endpoint();
    let created = c
        .create_item(
            base,
            "db",
            "c",
            &json!({"id": "a", "pk": "p", "n": 1, "tags": ["x"], "old": true}),
        )
        .await;
    let body = json!({"operations": [
        {"op": "incr", "path": "/n", "value": 4},
        {"op": "set", "path": "/s", "value": "hello"},
        {"op": "add", "path": "/tags/-", "value": "y"},
        {"op": "replace", "path": "/tags/0", "value": "w"},
        {"op": "move", "from": "/old", "path": "/was"},
        {"op": "remove", "path": "/was"}
    ]});
    let r = patch(&c, base, &body).await;
    assert_eq!(r.status, 200, "{r:?}");
    let doc = r.json();
    assert_eq!(doc["n"], 5);
    assert_eq!(doc["s"], "hello");
    assert_eq!(doc["tags"], json!(["w", "y"]));
    assert!(doc.get("old").is_none() && doc.get("was").is_none());
    assert_eq!(doc["_rid"], created.json()["_rid"]);
    assert_ne!(r.header("etag"), created.header("etag"));
    assert_eq!(c.read_a(base, &[]).await.json()["n"], 5);

    let guarded = json!({"operations": [{"op": "incr", "path": "/n", "value": 1}], "condition": "from c where c.n = 5 AND c.s = 'hello'"});
    let r = patch(&c, base, &guarded).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["n"], 6);
    assert_eq!(r.header("x-ms-request-charge"), Some("6"));
    // Same condition is now false: 412, nothing changes.
    let r = patch(&c, base, &guarded).await;
    assert_eq!(r.status, 412);
    assert_eq!(c.read_a(base, &[]).await.json()["n"], 6);
}

#[tokio::test]
async fn bad_patches_are_400s_and_missing_items_404s() {
    let (emu, c) = start_with_container(EmulatorBuilder::new()).await;
    let base = emu.endpoint();
    let set = json!({"operations": [{"op": "set", "path": "/n", "value": 1}]});
    assert_eq!(patch(&c, base, &set).await.status, 404);
    c.create_item(
        base,
        "db",
        "c",
        &json!({"id": "a", "pk": "p", "s": "text", "list": [1]}),
    )
    .await;
    let eleven: Vec<Value> = (0..11)
        .map(|i| json!({"op": "set", "path": format!("/k{i}"), "value": i}))
        .collect();
    let cases: Vec<(Value, &str)> = vec![
        (
            json!({"operations": eleven}),
            "The number of patch operations cannot exceed 10",
        ),
        (
            json!({"operations": []}),
            "Invalid patch request: check syntax of patch specification",
        ),
        (json!({}), "operations"),
        (
            json!({"operations": [{"op": "incr", "path": "/s", "value": 1}]}),
            "For Operation(0): Node(/s) is not a number.",
        ),
        (
            json!({"operations": [{"op": "remove", "path": "/missing"}]}),
            "For Operation(0): Node(/missing) to be removed is absent.",
        ),
        (
            json!({"operations": [{"op": "incr", "path": "/list/-", "value": 1}]}),
            "For Operation(0): Index(-) to operate on is out of array bounds",
        ),
        (
            json!({"operations": [{"op": "set", "path": "/id", "value": "b"}]}),
            "Invalid patch request: Cannot patch system property /id.",
        ),
        (
            json!({"operations": [{"op": "set", "path": "/pk", "value": "q"}]}),
            "partition key",
        ),
        (
            json!({"operations": [{"op": "set", "path": "/_etag", "value": "q"}]}),
            "Invalid patch request: Cannot patch system property /_etag.",
        ),
        (
            json!({"operations": [{"op": "set", "path": "/n", "value": 1}], "condition": "where c.n = 1"}),
            "condition is invalid",
        ),
        (
            json!({"operations": [{"op": "set", "path": "/n", "value": 1}], "condition": 5}),
            "must be a string",
        ),
    ];
    for (body, reason) in cases {
        let r = patch(&c, base, &body).await;
        assert_eq!(r.status, 400, "{body}: {r:?}");
        // The service gives these refusals no sub-status.
        assert_eq!(r.sub_status(), 0, "{body}: {r:?}");
        assert!(r.message().contains(reason), "{body}: {}", r.message());
    }
}

#[tokio::test]
async fn a_move_onto_its_own_path_leaves_the_item_as_it_was() {
    let (emu, c) = start_with_container(EmulatorBuilder::new()).await;
    let base = emu.endpoint();
    c.create_item(
        base,
        "db",
        "c",
        &json!({"id": "a", "pk": "p", "first": 1, "second": 2}),
    )
    .await;
    let body = json!({"operations": [{"op": "move", "from": "/first", "path": "/first"}]});
    let r = patch(&c, base, &body).await;
    assert_eq!(r.status, 200, "{r:?}");
    let text = std::str::from_utf8(&r.body).unwrap();
    let first = text.find("\"first\"").unwrap();
    let second = text.find("\"second\"").unwrap();
    assert!(first < second, "the field moved: {text}");
    assert_eq!(r.json()["first"], 1);
}

#[tokio::test]
async fn a_bare_array_of_operations_is_a_patch_without_condition() {
    let (emu, c) = start_with_container(EmulatorBuilder::new()).await;
    let base = emu.endpoint();
    c.create_item(base, "db", "c", &json!({"id": "a", "pk": "p", "n": 1}))
        .await;
    let body = json!([
        {"op": "incr", "path": "/n", "value": 2},
        {"op": "add", "path": "/s", "value": "x"}
    ]);
    let r = patch(&c, base, &body).await;
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(
        (r.json()["n"].clone(), r.json()["s"].clone()),
        (json!(3), json!("x"))
    );
    assert_eq!(c.read_a(base, &[]).await.json()["n"], 3);
    for bad in [
        json!([]),
        json!("set"),
        json!(5),
        json!([{"op": "set", "path": "/pk", "value": 1}]),
    ] {
        let r = patch(&c, base, &bad).await;
        assert_eq!(r.status, 400, "{bad}: {r:?}");
    }
    assert_eq!(c.read_a(base, &[]).await.json()["n"], 3);
}

//! Computed properties: defined on the container, evaluated in queries (filter, sort, project),
//! left out of `SELECT *`, checked on create and replace.

use crate::common;

use common::{pk_header, start_with_container, TestClient};
use cosmos_emulator::EmulatorBuilder;
use http::Method;
use serde_json::{json, Value};

async fn query(c: &TestClient, base: &str, coll: &str, text: &str) -> Value {
    let pk = pk_header(&json!("p"));
    let r = c
        .query(
            base,
            &format!("/dbs/db/colls/{coll}/docs"),
            &json!({ "query": text }),
            &[("x-ms-documentdb-partitionkey", pk.as_str())],
        )
        .await;
    assert_eq!(r.status, 200, "{text}: {r:?}");
    r.json()["Documents"].clone()
}

fn definition(id: &str, computed: Value) -> Value {
    json!({"id": id, "partitionKey": {"paths": ["/pk"], "kind": "Hash", "version": 2},
           "computedProperties": computed})
}

#[tokio::test]
async fn computed_properties_are_queryable() {
    let (emu, c) = start_with_container(EmulatorBuilder::new().partitions(1)).await;
    let base = emu.endpoint();
    let computed = json!([
        {"name": "cp_lower", "query": "SELECT VALUE LOWER(c.group) FROM c"},
        {"name": "cp_sq", "query": "SELECT VALUE c.n * c.n FROM c"}
    ]);
    let r = c
        .post_json(
            base,
            "/dbs/db/colls",
            &[],
            &definition("cp", computed.clone()),
        )
        .await;
    assert_eq!(r.status, 201, "{r:?}");
    assert_eq!(r.json()["computedProperties"], computed);
    for (id, group, n) in [("a", "GroupA", 3), ("b", "groupa", 1), ("c", "GroupB", 2)] {
        let doc = json!({"id": id, "pk": "p", "group": group, "n": n});
        assert_eq!(c.create_item(base, "db", "cp", &doc).await.status, 201);
    }
    let ids = |v: Value| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|d| d["id"].as_str().unwrap().to_owned())
            .collect()
    };
    let found = query(
        &c,
        base,
        "cp",
        "SELECT * FROM c WHERE c.cp_lower = 'groupa'",
    )
    .await;
    assert_eq!(ids(found.clone()), ["a", "b"]);
    // SELECT * leaves them out.
    assert!(found[0].get("cp_lower").is_none() && found[0].get("cp_sq").is_none());
    let sorted = query(
        &c,
        base,
        "cp",
        "SELECT c.id, c.cp_sq FROM c ORDER BY c.cp_sq DESC",
    )
    .await;
    assert_eq!(
        sorted,
        json!([{"id": "a", "cp_sq": 9}, {"id": "c", "cp_sq": 4}, {"id": "b", "cp_sq": 1}])
    );
    let summed = query(&c, base, "cp", "SELECT VALUE SUM(c.cp_sq) FROM c").await;
    assert_eq!(summed, json!([14]));
    // A point read returns the item as stored.
    let r = c.read_item(base, "db", "cp", "a", &json!("p"), &[]).await;
    assert!(r.json().get("cp_lower").is_none());

    // Replace: new definitions take effect; an invalid one is refused.
    let replaced = json!([{"name": "cp_upper", "query": "SELECT VALUE UPPER(c.group) FROM c"}]);
    let r = c
        .send(
            base,
            Method::PUT,
            "/dbs/db/colls/cp",
            &[],
            Some(definition("cp", replaced).to_string().as_bytes()),
        )
        .await;
    assert_eq!(r.status, 200, "{r:?}");
    let found = query(
        &c,
        base,
        "cp",
        "SELECT VALUE c.id FROM c WHERE c.cp_upper = 'GROUPB'",
    )
    .await;
    assert_eq!(found, json!(["c"]));
    let gone = query(
        &c,
        base,
        "cp",
        "SELECT VALUE c.id FROM c WHERE c.cp_lower = 'groupa'",
    )
    .await;
    assert_eq!(gone, json!([]));
    let invalid = json!({"name": "cp_lower", "query": "SELECT VALUE LOWER(c.group) FROM c"});
    let r = c
        .send(
            base,
            Method::PUT,
            "/dbs/db/colls/cp",
            &[],
            Some(definition("cp", invalid.clone()).to_string().as_bytes()),
        )
        .await;
    assert_eq!(r.status, 400, "{r:?}");
    assert!(
        r.message()
            .contains("One of the specified inputs is invalid"),
        "{r:?}"
    );
    let r = c
        .post_json(
            base,
            "/dbs/db/colls",
            &[],
            &definition("bad", json!([{"name": "x", "query": "SELECT c.a FROM c"}])),
        )
        .await;
    assert_eq!(r.status, 400, "{r:?}");
}

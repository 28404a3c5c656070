//! Queries over databases, containers and offers (POST `/dbs`, `/dbs/{db}/colls`, `/offers` as a
//! query): what the SDKs send for `query_databases`, `query_containers`, a filtered `list`, and
//! their throughput reads. A query there selects resources; it never creates one.

use crate::common;

use common::{start_with_container, Resp, TestClient};
use cosmos_emulator::EmulatorBuilder;
use serde_json::{json, Value};

async fn metadata_query(c: &TestClient, base: &str, path: &str, body: &Value) -> Resp {
    c.query(base, path, body, &[]).await
}

fn ids(r: &Resp, feed: &str) -> Vec<String> {
    assert_eq!(r.status, 200, "{r:?}");
    let mut out: Vec<String> = r.json()[feed]
        .as_array()
        .unwrap_or_else(|| panic!("no {feed}: {r:?}"))
        .iter()
        .map(|d| d["id"].as_str().unwrap().to_owned())
        .collect();
    out.sort();
    out
}

#[tokio::test]
async fn queries_over_databases_and_containers_select_and_never_create() {
    let (emu, c) = start_with_container(EmulatorBuilder::new()).await;
    let base = emu.endpoint();
    for db in ["other", "third"] {
        let r = c.post_json(base, "/dbs", &[], &json!({"id": db})).await;
        assert_eq!(r.status, 201);
    }
    for coll in ["c2", "c3"] {
        let body = json!({"id": coll, "partitionKey": {"paths": ["/pk"], "kind": "Hash"}});
        let r = c.post_json(base, "/dbs/db/colls", &[], &body).await;
        assert_eq!(r.status, 201);
    }
    // The Python SDK's query_databases / query_containers, with a parameter.
    let by_id = json!({"query": "SELECT * FROM root r WHERE r.id=@id", "parameters": [{"name": "@id", "value": "other"}]});
    let r = metadata_query(&c, base, "/dbs", &by_id).await;
    assert_eq!(ids(&r, "Databases"), ["other"]);
    assert_eq!(r.json()["_count"], 1);
    assert_eq!(r.header("x-ms-item-count"), Some("1"));
    let all = json!({"query": "SELECT * FROM root r"});
    assert_eq!(
        ids(&metadata_query(&c, base, "/dbs", &all).await, "Databases"),
        ["db", "other", "third"]
    );
    let r = metadata_query(
        &c,
        base,
        "/dbs/db/colls",
        &json!({"query": "SELECT * FROM root r WHERE r.id IN ('c', 'c3')"}),
    )
    .await;
    assert_eq!(ids(&r, "DocumentCollections"), ["c", "c3"]);
    assert_eq!(
        r.json()["DocumentCollections"][0]["partitionKey"]["paths"],
        json!(["/pk"])
    );
    // Projections answer as an item query's do.
    let r = metadata_query(
        &c,
        base,
        "/dbs/db/colls",
        &json!({"query": "SELECT VALUE r.id FROM r WHERE STARTSWITH(r.id, 'c') ORDER BY r.id DESC"}),
    )
    .await;
    assert_eq!(r.json()["DocumentCollections"], json!(["c3", "c2", "c"]));
    // A query body holding an "id" still creates nothing.
    let sneaky = json!({"query": "SELECT * FROM r WHERE r.id = 'new'"});
    assert_eq!(
        ids(
            &metadata_query(&c, base, "/dbs", &sneaky).await,
            "Databases"
        ),
        Vec::<String>::new()
    );
    assert_eq!(c.get(base, "/dbs/new", &[]).await.status, 404);
    // The SQL text form, a bad query and a missing database.
    let r = c
        .send(
            base,
            http::Method::POST,
            "/dbs",
            &[
                ("x-ms-documentdb-isquery", "True"),
                ("content-type", "application/sql"),
            ],
            Some(b"SELECT * FROM r WHERE r.id = 'third'"),
        )
        .await;
    assert_eq!(ids(&r, "Databases"), ["third"]);
    let r = metadata_query(&c, base, "/dbs", &json!({"query": "SELECT * FROM r WHERE"})).await;
    assert_eq!(r.status, 400, "{r:?}");
    let r = metadata_query(&c, base, "/dbs/nope/colls", &all).await;
    assert_eq!(r.status, 404, "{r:?}");
}

#[tokio::test]
async fn offer_queries_in_every_sdk_shape_find_the_offer() {
    let (emu, c) = start_with_container(EmulatorBuilder::new()).await;
    let base = emu.endpoint();
    let container = c.get(base, "/dbs/db/colls/c", &[]).await.json();
    let rid = container["_rid"].as_str().unwrap().to_owned();
    let link = container["_self"].as_str().unwrap().to_owned();
    let shapes = [
        // Microsoft's Rust SDK.
        json!({"query": "SELECT * FROM c WHERE c.offerResourceId = @rid", "parameters": [{"name": "@rid", "value": rid}]}),
        // The Python SDK.
        json!({"query": "SELECT * FROM root r WHERE r.resource=@link", "parameters": [{"name": "@link", "value": link}]}),
        // The Node.js SDK, the link inline.
        json!({"query": format!("SELECT * from root where root.resource = \"{link}\"")}),
        // The Java and .NET SDKs.
        json!({"query": "SELECT * FROM root WHERE root.offerResourceId = @offerResourceId", "parameters": [{"name": "@offerResourceId", "value": rid}]}),
    ];
    for body in &shapes {
        let r = metadata_query(&c, base, "/offers", body).await;
        assert_eq!(r.status, 200, "{body}: {r:?}");
        let offers = r.json()["Offers"].as_array().unwrap().clone();
        assert_eq!(offers.len(), 1, "{body}: {offers:?}");
        assert_eq!(offers[0]["offerResourceId"], rid, "{body}");
        assert_eq!(offers[0]["content"]["offerThroughput"], 400, "{body}");
    }
    let none = json!({"query": "SELECT * FROM c WHERE c.offerResourceId = 'nope'"});
    let r = metadata_query(&c, base, "/offers", &none).await;
    assert_eq!(r.json()["Offers"], json!([]));
    let r = metadata_query(
        &c,
        base,
        "/offers",
        &json!({"query": "SELECT VALUE o.content.offerThroughput FROM o"}),
    )
    .await;
    assert_eq!(r.json()["Offers"], json!([400]));
}

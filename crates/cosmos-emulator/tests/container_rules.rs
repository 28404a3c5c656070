//! Container rules the service applies and SDKs' own tests rely on, over real HTTP: the indexing
//! policy a create leaves out is filled in, a bad definition is 400 before its id's 409, the
//! conflicts feed exists (empty), and a query on a feed range that is a whole partition key range
//! (`x-ms-read-key-type: EffectivePartitionKeyRange` without bounds) reads all of it.

use crate::common;

use common::{start_with_container, TestClient};
use cosmos_emulator::EmulatorBuilder;
use http::Method;
use serde_json::{json, Value};

const ETAG: &str = "/\"_etag\"/?";

async fn create(c: &TestClient, base: &str, body: &Value) -> common::Resp {
    c.post_json(base, "/dbs/db/colls", &[], body).await
}

#[tokio::test]
async fn the_indexing_policy_a_create_leaves_out_is_filled_in() {
    let (emu, c) = start_with_container(EmulatorBuilder::new()).await;
    let base = emu.endpoint();
    let default = json!({"indexingMode": "consistent", "automatic": true,
        "includedPaths": [{"path": "/*"}], "excludedPaths": [{"path": ETAG}]});
    let pk = json!({"paths": ["/id"], "kind": "Hash"});
    for (i, (policy, want)) in [
        (None, default.clone()),
        (Some(json!({})), default.clone()),
        (Some(json!({"indexingMode": "consistent", "automatic": true})), default.clone()),
        (Some(json!({"includedPaths": [{"path": "/*", "indexes": [{"kind": "Range", "dataType": "Number"}]}]})), default),
        (
            Some(json!({"includedPaths": [{"path": "/"}], "excludedPaths": [{"path": "/\"systemMetadata\"/*"}]})),
            json!({"indexingMode": "consistent", "automatic": true, "includedPaths": [{"path": "/"}],
                "excludedPaths": [{"path": "/\"systemMetadata\"/*"}, {"path": ETAG}]}),
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let mut body = json!({"id": format!("ix{i}"), "partitionKey": pk});
        if let Some(p) = &policy {
            body["indexingPolicy"] = p.clone();
        }
        let r = create(&c, base, &body).await;
        assert_eq!(r.status, 201, "{policy:?}: {r:?}");
        assert_eq!(r.json()["indexingPolicy"], want, "{policy:?}");
        let read = c.get(base, &format!("/dbs/db/colls/ix{i}"), &[]).await;
        assert_eq!(read.json()["indexingPolicy"], want, "{policy:?}");
    }
    // A replace that gives a partial policy is filled in the same way.
    let r = c
        .send(
            base,
            Method::PUT,
            "/dbs/db/colls/ix0",
            &[],
            Some(json!({"id": "ix0", "partitionKey": pk, "indexingPolicy": {"excludedPaths": [{"path": "/big/*"}]}}).to_string().as_bytes()),
        )
        .await;
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(
        r.json()["indexingPolicy"]["excludedPaths"],
        json!([{"path": "/big/*"}, {"path": ETAG}])
    );
}

#[tokio::test]
async fn a_bad_definition_is_400_even_when_its_id_is_taken() {
    let (emu, c) = start_with_container(EmulatorBuilder::new()).await;
    let base = emu.endpoint();
    // "c" exists; four key paths are too many, and that is what the service answers first.
    let body = json!({"id": "c", "partitionKey": {"paths": ["/a", "/b", "/c", "/d"], "kind": "MultiHash", "version": 2}});
    let r = create(&c, base, &body).await;
    assert_eq!(r.status, 400, "{r:?}");
    let body =
        json!({"id": "c", "partitionKey": {"paths": ["/pk"], "kind": "Hash"}, "defaultTtl": 0});
    assert_eq!(create(&c, base, &body).await.status, 400);
    let body = json!({"id": "c", "partitionKey": {"paths": ["/pk"], "kind": "Hash"}});
    assert_eq!(create(&c, base, &body).await.status, 409);
}

#[tokio::test]
async fn the_conflicts_feed_exists_and_is_empty() {
    let (emu, c) = start_with_container(
        EmulatorBuilder::new()
            .regions(["East US", "West US"])
            .multi_write(true),
    )
    .await;
    let base = emu.endpoint();
    let r = c.get(base, "/dbs/db/colls/c/conflicts", &[]).await;
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(r.json()["Conflicts"], json!([]));
    assert_eq!(r.json()["_count"], 0);
    let container = c.get(base, "/dbs/db/colls/c", &[]).await.json();
    assert_eq!(r.json()["_rid"], container["_rid"]);
    let q = c
        .query(
            base,
            "/dbs/db/colls/c/conflicts",
            &json!({"query": "SELECT * FROM c"}),
            &[("x-ms-documentdb-query-enablecrosspartition", "true")],
        )
        .await;
    assert_eq!(q.json()["Conflicts"], json!([]));
    // Across partitions only when asked for, as an item query.
    let q = c
        .query(
            base,
            "/dbs/db/colls/c/conflicts",
            &json!({"query": "SELECT * FROM c"}),
            &[],
        )
        .await;
    assert_eq!(q.status, 400, "{q:?}");
    assert!(q
        .message()
        .contains("Cross partition query is required but disabled"));
    let one = c.get(base, "/dbs/db/colls/c/conflicts/x", &[]).await;
    assert_eq!(one.status, 404);
    let elsewhere = c.get(base, "/dbs/db/colls/nope/conflicts", &[]).await;
    assert_eq!(elsewhere.status, 404);
}

#[tokio::test]
async fn a_feed_range_without_bounds_reads_its_whole_partition_key_range() {
    let (emu, c) = start_with_container(EmulatorBuilder::new().partitions(2)).await;
    let base = emu.endpoint();
    for i in 0..20 {
        let doc = json!({"id": format!("i{i:02}"), "pk": format!("k{i}")});
        assert_eq!(c.create_item(base, "db", "c", &doc).await.status, 201);
    }
    let mut seen = Vec::new();
    for range in ["0", "1"] {
        let plain = c
            .query(
                base,
                "/dbs/db/colls/c/docs",
                &json!({"query": "SELECT VALUE c.id FROM c"}),
                &[
                    ("x-ms-documentdb-partitionkeyrangeid", range),
                    ("x-ms-max-item-count", "100"),
                ],
            )
            .await;
        let ranged = c
            .query(
                base,
                "/dbs/db/colls/c/docs",
                &json!({"query": "SELECT VALUE c.id FROM c"}),
                &[
                    ("x-ms-documentdb-partitionkeyrangeid", range),
                    ("x-ms-read-key-type", "EffectivePartitionKeyRange"),
                    ("x-ms-max-item-count", "100"),
                ],
            )
            .await;
        assert_eq!(ranged.status, 200, "{ranged:?}");
        assert_eq!(
            ranged.json()["Documents"],
            plain.json()["Documents"],
            "range {range}"
        );
        seen.extend(ranged.json()["Documents"].as_array().unwrap().clone());
    }
    assert_eq!(seen.len(), 20);
    // One bound alone is still refused.
    let r = c
        .query(
            base,
            "/dbs/db/colls/c/docs",
            &json!({"query": "SELECT * FROM c"}),
            &[
                ("x-ms-documentdb-partitionkeyrangeid", "0"),
                ("x-ms-read-key-type", "EffectivePartitionKeyRange"),
                ("x-ms-start-epk", ""),
            ],
        )
        .await;
    assert_eq!(r.status, 400, "{r:?}");
}

#[tokio::test]
async fn quoted_partition_key_paths_name_properties_holding_any_character() {
    let (emu, c) = start_with_container(EmulatorBuilder::new().partitions(2)).await;
    let base = emu.endpoint();
    for (id, path, doc) in [
        (
            "q1",
            "/\"level' 1*()\"/\"le/vel2\"",
            json!({"id": "d1", "level' 1*()": {"le/vel2": "val1"}}),
        ),
        (
            "q2",
            "/'level\" 1*()'/'le/vel2'",
            json!({"id": "d2", "level\" 1*()": {"le/vel2": "val2"}}),
        ),
    ] {
        let body = json!({"id": id, "partitionKey": {"paths": [path], "kind": "Hash"}});
        let r = create(&c, base, &body).await;
        assert_eq!(r.status, 201, "{path}: {r:?}");
        assert_eq!(r.json()["partitionKey"]["paths"], json!([path]));
        let value = doc[doc
            .as_object()
            .unwrap()
            .keys()
            .find(|k| *k != "id")
            .unwrap()]
        .as_object()
        .unwrap()["le/vel2"]
            .clone();
        let docs = format!("/dbs/db/colls/{id}/docs");
        let r = c
            .send_with_pk(base, Method::POST, &docs, &value, &[], Some(&doc))
            .await;
        assert_eq!(r.status, 201, "{path}: {r:?}");
        // Another value in the header is a mismatch: the key was read from the quoted path.
        let r = c
            .send_with_pk(base, Method::POST, &docs, &json!("other"), &[], Some(&doc))
            .await;
        assert_eq!((r.status, r.sub_status()), (400, 1001), "{path}: {r:?}");
    }
    // Refused in the service's words, naming the path and where it failed.
    for (bad, position) in [
        ("/\"open", 6),
        ("/a//b", 3),
        ("pk", 0),
        ("/a b", 3),
        ("/a/*", 4),
    ] {
        let body = json!({"id": "bad", "partitionKey": {"paths": [bad], "kind": "Hash"}});
        let r = create(&c, base, &body).await;
        assert_eq!(r.status, 400, "{bad}");
        let want = format!(
            "The partition key component definition path '{bad}' could not be accepted, failed \
             near position '{position}'. Partition key paths must contain only valid characters \
             and not contain a trailing slash or wildcard character."
        );
        assert!(r.message().contains(&want), "{bad}: {}", r.message());
    }
}

#[tokio::test]
async fn a_request_meant_for_a_deleted_container_of_the_same_name_answers_1024() {
    let (emu, c) = start_with_container(EmulatorBuilder::new()).await;
    let base = emu.endpoint();
    let rid_of = |r: common::Resp| r.json()["_rid"].as_str().unwrap().to_owned();
    let old = rid_of(c.get(base, "/dbs/db/colls/c", &[]).await);
    let gone = c
        .send(base, Method::DELETE, "/dbs/db/colls/c", &[], None)
        .await;
    assert_eq!(gone.status, 204, "{gone:?}");
    c.setup(base, "db", "c").await;
    let new = rid_of(c.get(base, "/dbs/db/colls/c", &[]).await);
    assert_ne!(old, new);
    let doc = json!({"id": "a", "pk": "p"});
    let with_rid = |rid: &str| vec![("x-ms-cosmos-intended-collection-rid", rid.to_owned())];
    let docs = "/dbs/db/colls/c/docs";
    // A write, a read and a query from a client that still holds the old container.
    for (what, method, path, body) in [
        ("create", Method::POST, docs, Some(&doc)),
        ("read", Method::GET, "/dbs/db/colls/c/docs/a", None),
    ] {
        let headers = with_rid(&old);
        let extra: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let r = c
            .send_with_pk(base, method, path, &json!("p"), &extra, body)
            .await;
        assert_eq!(r.status, 400, "{what}: {r:?}");
        assert_eq!(r.header("x-ms-substatus"), Some("1024"), "{what}");
    }
    let q = c
        .query(
            base,
            docs,
            &json!({"query": "SELECT * FROM c"}),
            &[
                ("x-ms-documentdb-partitionkey", "[\"p\"]"),
                ("x-ms-cosmos-intended-collection-rid", old.as_str()),
            ],
        )
        .await;
    assert_eq!(
        (q.status, q.header("x-ms-substatus")),
        (400, Some("1024")),
        "{q:?}"
    );
    // Nothing was written; with the container's own resource id the write is served.
    let r = c.read_item(base, "db", "c", "a", &json!("p"), &[]).await;
    assert_eq!(r.status, 404);
    let r = c
        .send_with_pk(
            base,
            Method::POST,
            docs,
            &json!("p"),
            &[("x-ms-cosmos-intended-collection-rid", new.as_str())],
            Some(&doc),
        )
        .await;
    assert_eq!(r.status, 201, "{r:?}");
}

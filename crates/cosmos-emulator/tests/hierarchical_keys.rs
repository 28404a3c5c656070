//! Hierarchical partition keys (`MultiHash`) over real HTTP: container definitions of one to three
//! paths, point operations that need every component, queries scoped by a full key, by a prefix
//! in the partition key header, and by a prefix the way the SDKs send it (one request per range
//! with `x-ms-start-epk` / `x-ms-end-epk`), before and after a split that cuts the prefix in two.

use crate::common;

use std::collections::BTreeSet;

use common::TestClient;
use cosmos_emulator::epk::{Epk, PartitionKeyValue};
use cosmos_emulator::{EmulatorBuilder, WELL_KNOWN_KEY};
use http::Method;
use serde_json::{json, Value};

const TWO: &str = "/dbs/db/colls/two/docs";
const THREE: &str = "/dbs/db/colls/three/docs";

async fn start(partitions: usize) -> (cosmos_emulator::Emulator, TestClient) {
    let emu = EmulatorBuilder::new()
        .partitions(partitions)
        .start()
        .await
        .expect("the emulator starts");
    let c = TestClient::new(WELL_KNOWN_KEY);
    let base = emu.endpoint();
    assert_eq!(
        c.post_json(base, "/dbs", &[], &json!({"id": "db"}))
            .await
            .status,
        201
    );
    for (id, paths) in [
        ("two", json!(["/tenant", "/user"])),
        ("three", json!(["/tenant", "/user", "/session"])),
    ] {
        let body =
            json!({"id": id, "partitionKey": {"paths": paths, "kind": "MultiHash", "version": 2}});
        let r = c.post_json(base, "/dbs/db/colls", &[], &body).await;
        assert_eq!(r.status, 201, "{r:?}");
        assert_eq!(r.json()["partitionKey"], body["partitionKey"]);
    }
    (emu, c)
}

fn key_of(doc: &Value, paths: &[&str]) -> String {
    Value::Array(paths.iter().map(|p| doc[*p].clone()).collect()).to_string()
}

async fn write(c: &TestClient, base: &str, docs: &str, doc: &Value, paths: &[&str]) {
    let pk = key_of(doc, paths);
    let r = c
        .send(
            base,
            Method::POST,
            docs,
            &[
                ("x-ms-documentdb-partitionkey", &pk),
                ("x-ms-documentdb-is-upsert", "True"),
            ],
            Some(doc.to_string().as_bytes()),
        )
        .await;
    assert!(r.status == 201 || r.status == 200, "{r:?}");
}

async fn query(
    c: &TestClient,
    base: &str,
    docs: &str,
    text: &str,
    extra: &[(&str, &str)],
) -> common::Resp {
    let mut headers = vec![
        ("x-ms-documentdb-isquery", "True"),
        ("content-type", "application/query+json"),
        ("x-ms-max-item-count", "7"),
    ];
    headers.extend_from_slice(extra);
    c.send(
        base,
        Method::POST,
        docs,
        &headers,
        Some(json!({"query": text}).to_string().as_bytes()),
    )
    .await
}

/// Every page's ids of a query with `extra` headers.
async fn query_ids(
    c: &TestClient,
    base: &str,
    docs: &str,
    text: &str,
    extra: &[(&str, &str)],
) -> Vec<String> {
    let mut out = Vec::new();
    let mut continuation: Option<String> = None;
    loop {
        let mut headers: Vec<(&str, &str)> = extra.to_vec();
        if let Some(t) = &continuation {
            headers.push(("x-ms-continuation", t));
        }
        let r = query(c, base, docs, text, &headers).await;
        assert_eq!(r.status, 200, "{r:?}");
        for d in r.json()["Documents"].as_array().unwrap() {
            out.push(d["id"].as_str().unwrap().to_owned());
        }
        continuation = r.header("x-ms-continuation").map(str::to_owned);
        if continuation.is_none() {
            return out;
        }
    }
}

fn prefix_epk(components: Value) -> Epk {
    PartitionKeyValue::from_header(&components.to_string())
        .unwrap()
        .epk_per_component()
}

async fn ranges(c: &TestClient, base: &str, coll: &str) -> Vec<(String, String, String)> {
    let r = c
        .get(base, &format!("/dbs/db/colls/{coll}/pkranges"), &[])
        .await;
    r.json()["PartitionKeyRanges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let s = |k: &str| r[k].as_str().unwrap().to_owned();
            (s("id"), s("minInclusive"), s("maxExclusive"))
        })
        .collect()
}

/// A prefix query as the SDKs send it: to each range overlapping `[prefix, prefix+"FF")`, scoped
/// by the intersection; returns the ids and how many ranges were asked.
async fn prefix_query_by_ranges(
    c: &TestClient,
    base: &str,
    coll: &str,
    text: &str,
    prefix: Epk,
) -> (Vec<String>, usize) {
    let (lo, hi) = (prefix.hex(), format!("{}FF", prefix.hex()));
    let docs = format!("/dbs/db/colls/{coll}/docs");
    let mut ids = Vec::new();
    let mut asked = 0;
    for (id, min, max) in ranges(c, base, coll).await {
        let overlaps = min.as_str() < hi.as_str() && (max == "FF" || lo.as_str() < max.as_str());
        if !overlaps {
            continue;
        }
        asked += 1;
        let start = if min.as_str() > lo.as_str() {
            min.clone()
        } else {
            lo.clone()
        };
        let end = if max != "FF" && max.as_str() < hi.as_str() {
            max.clone()
        } else {
            hi.clone()
        };
        let headers = [
            ("x-ms-documentdb-partitionkeyrangeid", id.as_str()),
            ("x-ms-start-epk", start.as_str()),
            ("x-ms-end-epk", end.as_str()),
            ("x-ms-read-key-type", "EffectivePartitionKeyRange"),
        ];
        ids.extend(query_ids(c, base, &docs, text, &headers).await);
    }
    (ids, asked)
}

fn sorted(v: Vec<String>) -> BTreeSet<String> {
    v.into_iter().collect()
}

#[tokio::test]
async fn point_operations_need_every_component_of_the_key() {
    let (emu, c) = start(4).await;
    let base = emu.endpoint();
    let doc = json!({"id": "x", "tenant": "t1", "user": "u1", "session": "s1", "n": 1});
    write(&c, base, THREE, &doc, &["tenant", "user", "session"]).await;
    write(&c, base, TWO, &doc, &["tenant", "user"]).await;

    let read = |docs: &'static str, pk: &'static str| {
        let c = c.clone();
        async move {
            c.get(
                base,
                &format!("{docs}/x"),
                &[("x-ms-documentdb-partitionkey", pk)],
            )
            .await
        }
    };
    assert_eq!(read(THREE, r#"["t1","u1","s1"]"#).await.json()["n"], 1);
    assert_eq!(read(TWO, r#"["t1","u1"]"#).await.json()["n"], 1);
    assert_eq!(read(TWO, r#"["t1","u2"]"#).await.status, 404);
    for (docs, partial, says) in [
        (THREE, r#"["t1","u1"]"#, "fewer components (2) than"),
        (THREE, r#"["t1"]"#, "fewer components (1) than"),
        (TWO, r#"["t1"]"#, "fewer components (1) than"),
        (TWO, r#"["t1","u1","s1"]"#, "more components (3) than"),
    ] {
        let r = read(docs, partial).await;
        assert_eq!((r.status, r.sub_status()), (400, 1001), "{partial}: {r:?}");
        assert!(r.message().contains(says), "{partial}: {}", r.message());
    }
    // The key is checked before the item is looked up: the Python SDK's examples.py sample reads
    // an id that does not exist with one component of its three-path key, and gets this 400.
    let r = c
        .get(
            base,
            &format!("{THREE}/id1"),
            &[("x-ms-documentdb-partitionkey", r#"["pk1"]"#)],
        )
        .await;
    assert_eq!((r.status, r.sub_status()), (400, 1001), "{r:?}");

    // The key inside the document must match the header, component by component.
    let wrong = json!({"id": "y", "tenant": "t1", "user": "u9"});
    let r = c
        .send(
            base,
            Method::POST,
            TWO,
            &[("x-ms-documentdb-partitionkey", r#"["t1","u1"]"#)],
            Some(wrong.to_string().as_bytes()),
        )
        .await;
    assert_eq!(r.status, 400, "{r:?}");

    // Upsert replaces; delete removes; a delete without every component is refused.
    write(
        &c,
        base,
        TWO,
        &json!({"id": "x", "tenant": "t1", "user": "u1", "n": 2}),
        &["tenant", "user"],
    )
    .await;
    assert_eq!(read(TWO, r#"["t1","u1"]"#).await.json()["n"], 2);
    let del = |pk: &'static str| {
        let c = c.clone();
        async move {
            c.send(
                base,
                Method::DELETE,
                &format!("{TWO}/x"),
                &[("x-ms-documentdb-partitionkey", pk)],
                None,
            )
            .await
        }
    };
    assert_eq!(del(r#"["t1"]"#).await.status, 400);
    assert_eq!(del(r#"["t1","u1"]"#).await.status, 204);
    assert_eq!(read(TWO, r#"["t1","u1"]"#).await.status, 404);

    // More than three paths is refused in the service's words.
    let four = json!({"id": "four", "partitionKey": {"paths": ["/a", "/b", "/c", "/d"], "kind": "MultiHash", "version": 2}});
    let r = c.post_json(base, "/dbs/db/colls", &[], &four).await;
    assert_eq!(r.status, 400);
    assert!(
        r.message()
            .contains("Too many partition key paths (4) specified. A maximum of 3 is allowed."),
        "{}",
        r.message()
    );
}

/// Tenants t0..t2 with 30, 3 and 3 users; in `three`, each user has two sessions.
async fn fill(c: &TestClient, base: &str) -> Vec<Value> {
    let mut docs = Vec::new();
    for (tenant, users) in [("t0", 30), ("t1", 3), ("t2", 3)] {
        for u in 0..users {
            for s in 0..2 {
                let doc = json!({"id": format!("{tenant}-u{u}-s{s}"), "tenant": tenant, "user": format!("u{u}"), "session": format!("s{s}")});
                write(c, base, THREE, &doc, &["tenant", "user", "session"]).await;
                docs.push(doc);
            }
        }
    }
    for doc in &docs {
        if doc["session"] == "s0" {
            write(c, base, TWO, doc, &["tenant", "user"]).await;
        }
    }
    docs
}

fn expected(docs: &[Value], pred: impl Fn(&Value) -> bool) -> BTreeSet<String> {
    docs.iter()
        .filter(|d| pred(d))
        .map(|d| d["id"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn queries_by_full_key_and_by_prefix_read_exactly_their_keys() {
    let (emu, c) = start(4).await;
    let base = emu.endpoint();
    let docs = fill(&c, base).await;
    let text = "SELECT * FROM c";

    // Full key: today's single-range path.
    let full = query_ids(
        &c,
        base,
        THREE,
        text,
        &[("x-ms-documentdb-partitionkey", r#"["t0","u3","s1"]"#)],
    )
    .await;
    assert_eq!(full, vec!["t0-u3-s1".to_owned()]);

    // A prefix in the partition key header: every key under it, each once.
    for (docs_path, pk, pred) in [
        (
            THREE,
            json!(["t0"]),
            Box::new(|d: &Value| d["tenant"] == "t0") as Box<dyn Fn(&Value) -> bool>,
        ),
        (
            THREE,
            json!(["t0", "u3"]),
            Box::new(|d: &Value| d["tenant"] == "t0" && d["user"] == "u3"),
        ),
        (
            TWO,
            json!(["t1"]),
            Box::new(|d: &Value| d["tenant"] == "t1" && d["session"] == "s0"),
        ),
    ] {
        let ids = query_ids(
            &c,
            base,
            docs_path,
            text,
            &[("x-ms-documentdb-partitionkey", &pk.to_string())],
        )
        .await;
        assert_eq!(ids.len(), sorted(ids.clone()).len(), "no duplicates");
        assert_eq!(sorted(ids), expected(&docs, pred), "{pk}");
    }

    // The SDKs' way: per range, the intersection of the range and the prefix's EPK range.
    for (coll, prefix, pred) in [
        (
            "three",
            json!(["t2"]),
            Box::new(|d: &Value| d["tenant"] == "t2") as Box<dyn Fn(&Value) -> bool>,
        ),
        (
            "three",
            json!(["t0", "u7"]),
            Box::new(|d: &Value| d["tenant"] == "t0" && d["user"] == "u7"),
        ),
        (
            "two",
            json!(["t0"]),
            Box::new(|d: &Value| d["tenant"] == "t0" && d["session"] == "s0"),
        ),
    ] {
        let (ids, _) =
            prefix_query_by_ranges(&c, base, coll, text, prefix_epk(prefix.clone())).await;
        assert_eq!(sorted(ids), expected(&docs, pred), "{coll} {prefix}");
    }

    // A WHERE clause pinning a prefix is served like the prefix, and the plan names its range.
    let where_prefix = "SELECT * FROM c WHERE c.tenant = 't1' AND c.user = 'u2'";
    let ids = query_ids(
        &c,
        base,
        THREE,
        where_prefix,
        &[("x-ms-documentdb-query-enablecrosspartition", "True")],
    )
    .await;
    assert_eq!(
        sorted(ids),
        expected(&docs, |d| d["tenant"] == "t1" && d["user"] == "u2")
    );
    let plan = query(
        &c,
        base,
        THREE,
        where_prefix,
        &[
            ("x-ms-cosmos-is-query-plan-request", "True"),
            ("x-ms-documentdb-query-enablecrosspartition", "True"),
        ],
    )
    .await;
    assert_eq!(plan.status, 200, "{plan:?}");
    let start = prefix_epk(json!(["t1", "u2"])).hex();
    assert_eq!(
        plan.json()["queryRanges"],
        json!([{"min": start, "max": format!("{start}FF"), "isMinInclusive": true, "isMaxInclusive": false}])
    );
    let pinned_all = "SELECT * FROM c WHERE c.tenant = 't1' AND c.user = 'u2' AND c.session = 's0'";
    let plan = query(
        &c,
        base,
        THREE,
        pinned_all,
        &[("x-ms-cosmos-is-query-plan-request", "True")],
    )
    .await;
    let point = prefix_epk(json!(["t1", "u2", "s0"])).hex();
    assert_eq!(plan.json()["queryRanges"][0]["min"], point);
    assert_eq!(plan.json()["queryRanges"][0]["max"], point);

    // A cross-partition ORDER BY through the plan's rewritten query on every range sees all.
    let mut all = Vec::new();
    for (id, _, _) in ranges(&c, base, "three").await {
        all.extend(
            query_ids(
                &c,
                base,
                THREE,
                text,
                &[("x-ms-documentdb-partitionkeyrangeid", &id)],
            )
            .await,
        );
    }
    assert_eq!(sorted(all), expected(&docs, |_| true));
}

#[tokio::test]
async fn a_prefix_query_spans_the_ranges_a_split_cut_it_into() {
    let (emu, c) = start(2).await;
    let base = emu.endpoint();
    let docs = fill(&c, base).await;
    let text = "SELECT * FROM c";
    let t0 = prefix_epk(json!(["t0"]));
    let want = expected(&docs, |d| d["tenant"] == "t0");
    let (before, asked) = prefix_query_by_ranges(&c, base, "three", text, t0).await;
    assert_eq!(asked, 1);
    assert_eq!(sorted(before), want);

    // Split the range holding t0: a hierarchical range is cut at its median key, inside t0.
    let holder = ranges(&c, base, "three")
        .await
        .into_iter()
        .find(|(_, min, max)| {
            min.as_str() <= t0.hex().as_str() && (max == "FF" || t0.hex().as_str() < max.as_str())
        })
        .unwrap();
    let body = json!({"db": "db", "container": "three", "range": holder.0}).to_string();
    let r = c
        .admin(base, Method::POST, "/_emulator/split", Some(&body))
        .await;
    assert_eq!(r.status, 200, "{r:?}");
    let (after, asked) = prefix_query_by_ranges(&c, base, "three", text, t0).await;
    assert_eq!(asked, 2, "the prefix now spans two ranges");
    assert_eq!(after.len(), want.len(), "no duplicates");
    assert_eq!(sorted(after), want);

    // The header form reads both ranges too, across pages.
    let ids = query_ids(
        &c,
        base,
        THREE,
        text,
        &[("x-ms-documentdb-partitionkey", r#"["t0"]"#)],
    )
    .await;
    assert_eq!(sorted(ids), want);

    // Asking the retired parent answers 410/1002, so a client refreshes its ranges.
    let r = query(
        &c,
        base,
        THREE,
        text,
        &[("x-ms-documentdb-partitionkeyrangeid", &holder.0)],
    )
    .await;
    assert_eq!((r.status, r.sub_status()), (410, 1002));
}

#[tokio::test]
async fn epk_scoped_queries_that_cannot_be_served_exactly_are_refused() {
    let (emu, c) = start(4).await;
    let base = emu.endpoint();
    fill(&c, base).await;
    let text = "SELECT * FROM c";
    let rs = ranges(&c, base, "three").await;
    let (id, min, max) = rs[1].clone();
    let cases: Vec<(Vec<(&str, &str)>, &str)> = vec![
        // No key type.
        (
            vec![
                ("x-ms-documentdb-partitionkeyrangeid", &id),
                ("x-ms-start-epk", &min),
                ("x-ms-end-epk", &max),
            ],
            "x-ms-read-key-type",
        ),
        // One bound only.
        (
            vec![
                ("x-ms-documentdb-partitionkeyrangeid", &id),
                ("x-ms-start-epk", &min),
                ("x-ms-read-key-type", "EffectivePartitionKeyRange"),
            ],
            "missing",
        ),
        // Outside the named range.
        (
            vec![
                ("x-ms-documentdb-partitionkeyrangeid", &id),
                ("x-ms-start-epk", ""),
                ("x-ms-end-epk", &max),
                ("x-ms-read-key-type", "EffectivePartitionKeyRange"),
            ],
            "not within",
        ),
        // No range named.
        (
            vec![
                ("x-ms-start-epk", &min),
                ("x-ms-end-epk", &max),
                ("x-ms-read-key-type", "EffectivePartitionKeyRange"),
            ],
            "x-ms-documentdb-partitionkeyrangeid",
        ),
        // Both a key and EPK bounds.
        (
            vec![
                ("x-ms-documentdb-partitionkey", r#"["t0"]"#),
                ("x-ms-start-epk", &min),
                ("x-ms-end-epk", &max),
                ("x-ms-read-key-type", "EffectivePartitionKeyRange"),
            ],
            "not both",
        ),
        // Not hexadecimal.
        (
            vec![
                ("x-ms-documentdb-partitionkeyrangeid", &id),
                ("x-ms-start-epk", "zz"),
                ("x-ms-end-epk", &max),
                ("x-ms-read-key-type", "EffectivePartitionKeyRange"),
            ],
            "hexadecimal",
        ),
    ];
    for (headers, says) in cases {
        let r = query(&c, base, THREE, text, &headers).await;
        assert_eq!(r.status, 400, "{headers:?}: {r:?}");
        assert!(r.message().contains(says), "{headers:?}: {}", r.message());
    }
}

/// Every page's ids of a read feed (`GET .../docs`, resumed by `x-ms-continuation`) or, with
/// `A-IM`, a change feed (resumed by `If-None-Match` with the last etag, until 304).
async fn feed_ids(c: &TestClient, base: &str, headers: &[(&str, &str)]) -> BTreeSet<String> {
    let is_change_feed = headers.iter().any(|(n, _)| *n == "a-im");
    let resume_with = if is_change_feed {
        "if-none-match"
    } else {
        "x-ms-continuation"
    };
    let mut out = BTreeSet::new();
    let mut position: Option<String> = None;
    for _ in 0..100 {
        let mut all: Vec<(&str, &str)> = vec![("x-ms-max-item-count", "5")];
        all.extend_from_slice(headers);
        if let Some(t) = &position {
            all.push((resume_with, t));
        }
        let r = c.get(base, THREE, &all).await;
        if r.status == 304 {
            return out;
        }
        assert_eq!(r.status, 200, "{r:?}");
        for d in r.json()["Documents"].as_array().unwrap() {
            out.insert(d["id"].as_str().unwrap().to_owned());
        }
        let next = if is_change_feed {
            "etag"
        } else {
            "x-ms-continuation"
        };
        position = r.header(next).map(str::to_owned);
        if position.is_none() {
            return out;
        }
    }
    panic!("the feed did not end");
}

#[tokio::test]
async fn read_feeds_and_change_feeds_follow_full_keys_and_prefixes() {
    let (emu, c) = start(4).await;
    let base = emu.endpoint();
    let docs = fill(&c, base).await;
    let pk = ("x-ms-documentdb-partitionkey", r#"["t0","u5","s1"]"#);
    let change_feed = ("a-im", "Incremental feed");
    assert_eq!(
        feed_ids(&c, base, &[pk, change_feed]).await,
        expected(&docs, |d| d["id"] == "t0-u5-s1")
    );
    let prefix = ("x-ms-documentdb-partitionkey", r#"["t1"]"#);
    assert_eq!(
        feed_ids(&c, base, &[prefix, change_feed]).await,
        expected(&docs, |d| d["tenant"] == "t1")
    );
    assert_eq!(
        feed_ids(&c, base, &[prefix]).await,
        expected(&docs, |d| d["tenant"] == "t1"),
        "the read feed of a prefix"
    );
    // Every range's change feed together holds every item once.
    let mut all = BTreeSet::new();
    for (id, _, _) in ranges(&c, base, "three").await {
        let range = ("x-ms-documentdb-partitionkeyrangeid", id.as_str());
        all.extend(feed_ids(&c, base, &[range, change_feed]).await);
    }
    assert_eq!(all, expected(&docs, |_| true));
}

/// Feed-range bounds as long as a full three-level key (96 hex digits) are taken by the change
/// feed and by queries, as the service takes them.
#[tokio::test]
async fn full_key_length_epk_bounds_are_taken_by_the_change_feed_and_queries() {
    let (emu, c) = start(1).await;
    let base = emu.endpoint();
    let docs = fill(&c, base).await;
    let low = "0".repeat(96);
    let range = [
        ("x-ms-documentdb-partitionkeyrangeid", "0"),
        ("x-ms-start-epk", low.as_str()),
        ("x-ms-end-epk", "FF"),
        ("x-ms-read-key-type", "EffectivePartitionKeyRange"),
    ];
    let mut headers = vec![("a-im", "Incremental feed")];
    headers.extend_from_slice(&range);
    let r = c.get(base, THREE, &headers).await;
    assert_eq!(r.status, 200, "change feed: {r:?}");
    assert_eq!(
        r.json()["Documents"].as_array().map(Vec::len),
        Some(docs.len())
    );
    let got = query_ids(&c, base, THREE, "SELECT * FROM c", &range).await;
    assert_eq!(got.len(), docs.len());
}

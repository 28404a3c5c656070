//! Hash V1 containers (`"partitionKey": {"kind": "Hash", "version": 1}`) over real HTTP: the
//! version is kept and read back, the pkranges feed writes V1 bounds, items land in the range
//! their V1 effective partition key falls in (checked against the official SDKs' V1 vectors),
//! point operations, queries, feed ranges and the change feed work, and a split cuts a range on a
//! whole hash value and keeps every item readable.

use crate::common;

use std::collections::BTreeSet;

use common::{Resp, TestClient};
use cosmos_emulator::{EmulatorBuilder, WELL_KNOWN_KEY};
use http::Method;
use serde_json::{json, Value};

const DOCS: &str = "/dbs/db/colls/v1/docs";

/// Keys and their V1 effective partition keys (the official SDKs' V1 vectors).
fn keys() -> Vec<(Value, &'static str)> {
    vec![
        (
            json!("partitionKey"),
            "05C1E1B3D9CD2608716273756A756A706F4C667A00",
        ),
        (json!(""), "05C1CF33970FF80800"),
        (json!("a"), "05C1D78593652C086200"),
        (json!("redmond"), "05C1EFE313830C087366656E706F6500"),
        // (the start of its EPK: enough to place it)
        (json!("x".repeat(100)), "05C1DD45A3938C08"),
        (json!(0), "05C1BF6DA11560058000"),
        (json!(1), "05C1ED172B6B2605BFF0"),
        (json!(1.5), "05C1E9694167A805BFF8"),
        (json!(-128), "05C1D73349F54C053FA0"),
        (json!(1e300), "05C1AB5FCFAF8005FE37F30F918103D738"),
        (json!(true), "05C1D7C5A903D803"),
        (json!(false), "05C1DB857D857C02"),
        (Value::Null, "05C1ED45D7475601"),
    ]
}

async fn start(partitions: usize) -> (cosmos_emulator::Emulator, TestClient) {
    start_as(partitions, Some(1)).await
}

/// An emulator with `partitions` ranges per container and container `v1` of partition key
/// `version` (`None`: the definition carries none).
async fn start_as(
    partitions: usize,
    version: Option<u64>,
) -> (cosmos_emulator::Emulator, TestClient) {
    let emu = EmulatorBuilder::new()
        .partitions(partitions)
        .start()
        .await
        .expect("the emulator starts");
    let c = TestClient::new(WELL_KNOWN_KEY);
    let base = emu.endpoint();
    let r = c.post_json(base, "/dbs", &[], &json!({"id": "db"})).await;
    assert_eq!(r.status, 201, "{r:?}");
    let mut body = json!({"id": "v1", "partitionKey": {"paths": ["/pk"], "kind": "Hash"}});
    if let Some(version) = version {
        body["partitionKey"]["version"] = json!(version);
    }
    let r = c.post_json(base, "/dbs/db/colls", &[], &body).await;
    assert_eq!(r.status, 201, "{r:?}");
    assert_eq!(
        r.json()["partitionKey"].get("version"),
        body["partitionKey"].get("version"),
        "{r:?}"
    );
    (emu, c)
}

/// The ranges as (id, min, max).
async fn ranges(c: &TestClient, base: &str) -> Vec<(String, String, String)> {
    let r = c.get(base, "/dbs/db/colls/v1/pkranges", &[]).await;
    r.json()["PartitionKeyRanges"]
        .as_array()
        .unwrap_or_else(|| panic!("{r:?}"))
        .iter()
        .map(|r| {
            let s = |k: &str| r[k].as_str().unwrap().to_owned();
            (s("id"), s("minInclusive"), s("maxExclusive"))
        })
        .collect()
}

fn holds(min: &str, max: &str, epk: &str) -> bool {
    min <= epk && (max == "FF" || epk < max)
}

fn ids(r: &Resp) -> BTreeSet<String> {
    if r.status == 304 {
        return BTreeSet::new();
    }
    r.json()["Documents"]
        .as_array()
        .unwrap_or_else(|| panic!("{r:?}"))
        .iter()
        .map(|d| d["id"].as_str().unwrap().to_owned())
        .collect()
}

/// The ids range `range`'s change feed holds, from the beginning.
async fn range_items(c: &TestClient, base: &str, range: &str) -> BTreeSet<String> {
    let headers = [
        ("a-im", "Incremental feed"),
        ("x-ms-documentdb-partitionkeyrangeid", range),
    ];
    let r = c.get(base, DOCS, &headers).await;
    assert!(r.status == 200 || r.status == 304, "{r:?}");
    ids(&r)
}

/// The ids a cross-partition query finds, over every page.
async fn query_all(c: &TestClient, base: &str, text: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let mut continuation: Option<String> = None;
    for _ in 0..100 {
        let mut headers = vec![("x-ms-documentdb-query-enablecrosspartition", "true")];
        if let Some(token) = continuation.as_deref() {
            headers.push(("x-ms-continuation", token));
        }
        let r = c
            .query(base, DOCS, &json!({ "query": text }), &headers)
            .await;
        assert_eq!(r.status, 200, "{r:?}");
        found.extend(ids(&r));
        continuation = r.header("x-ms-continuation").map(str::to_owned);
        if continuation.is_none() {
            return found;
        }
    }
    panic!("the query did not end within 100 pages");
}

async fn create_all(c: &TestClient, base: &str) {
    for (i, (pk, _)) in keys().into_iter().enumerate() {
        let doc = json!({"id": format!("i{i}"), "pk": pk, "n": i});
        let r = c.create_item(base, "db", "v1", &doc).await;
        assert_eq!(r.status, 201, "{doc}: {r:?}");
    }
}

/// Which item ids the range `[min, max)` must hold, by the keys' V1 EPKs.
fn expected_in(min: &str, max: &str) -> BTreeSet<String> {
    keys()
        .iter()
        .enumerate()
        .filter(|(_, (_, epk))| holds(min, max, epk))
        .map(|(i, _)| format!("i{i}"))
        .collect()
}

#[tokio::test]
async fn v1_items_route_to_the_range_their_v1_key_falls_in() {
    let (emu, c) = start(4).await;
    let base = emu.endpoint();
    let read = c.get(base, "/dbs/db/colls/v1", &[]).await;
    assert_eq!(read.json()["partitionKey"]["version"], 1, "{read:?}");
    assert_eq!(read.json()["partitionKey"]["kind"], "Hash");

    // Four even ranges of the 32-bit hash: bounds at 2^30, 2^31 and 3 * 2^30, V1-encoded.
    let listed = ranges(&c, base).await;
    let bounds: Vec<(&str, &str)> = listed
        .iter()
        .map(|(_, a, b)| (a.as_str(), b.as_str()))
        .collect();
    assert_eq!(
        bounds,
        vec![
            ("", "05C1D0"),
            ("05C1D0", "05C1E0"),
            ("05C1E0", "05C1E8"),
            ("05C1E8", "FF")
        ]
    );

    create_all(&c, base).await;
    let mut everywhere = BTreeSet::new();
    for (id, min, max) in &listed {
        let held = range_items(&c, base, id).await;
        assert_eq!(held, expected_in(min, max), "range {id} [{min}, {max})");
        everywhere.extend(held);
    }
    assert_eq!(everywhere.len(), keys().len());
    // Every range holds something: the keys exercise them all.
    for (id, min, max) in &listed {
        assert!(!expected_in(min, max).is_empty(), "range {id}");
    }

    // Point operations by key.
    for (i, (pk, _)) in keys().into_iter().enumerate() {
        let id = format!("i{i}");
        let r = c.read_item(base, "db", "v1", &id, &pk, &[]).await;
        assert_eq!(r.status, 200, "{id}: {r:?}");
        assert_eq!(r.json()["n"], i);
        let body = json!({"id": id, "pk": pk, "n": i, "replaced": true});
        let r = c
            .send_with_pk(
                base,
                Method::PUT,
                &format!("{DOCS}/{id}"),
                &pk,
                &[],
                Some(&body),
            )
            .await;
        assert_eq!(r.status, 200, "{id}: {r:?}");
        // Another key does not find it.
        let other = json!("no-such-key");
        let r = c.read_item(base, "db", "v1", &id, &other, &[]).await;
        assert_eq!(r.status, 404, "{id}: {r:?}");
    }
    let r = c
        .send_with_pk(
            base,
            Method::DELETE,
            &format!("{DOCS}/i0"),
            &json!("partitionKey"),
            &[],
            None,
        )
        .await;
    assert_eq!(r.status, 204, "{r:?}");

    // A cross-partition query sees every item; one scoped by key sees its own.
    let all = query_all(&c, base, "SELECT * FROM c WHERE c.replaced = true").await;
    assert_eq!(all.len(), keys().len() - 1, "{all:?}");
    let pk = common::pk_header(&json!("redmond"));
    let one = c
        .query(
            base,
            DOCS,
            &json!({"query": "SELECT * FROM c"}),
            &[("x-ms-documentdb-partitionkey", pk.as_str())],
        )
        .await;
    assert_eq!(ids(&one), BTreeSet::from(["i3".to_owned()]), "{one:?}");

    // The query plan names the key's V1 EPK, as the service writes it.
    let plan = c
        .query(
            base,
            DOCS,
            &json!({"query": "SELECT * FROM c WHERE c.pk = 'partitionKey'"}),
            &[
                ("x-ms-cosmos-is-query-plan-request", "True"),
                ("x-ms-cosmos-supported-query-features", "NonValueAggregate"),
            ],
        )
        .await;
    assert_eq!(plan.status, 200, "{plan:?}");
    assert_eq!(
        plan.json()["queryRanges"][0]["min"],
        "05C1E1B3D9CD2608716273756A756A706F4C667A00",
        "{plan:?}"
    );
}

#[tokio::test]
async fn v1_feed_ranges_and_splits_cut_on_whole_hash_values() {
    let (emu, c) = start(2).await;
    let base = emu.endpoint();
    create_all(&c, base).await;
    assert_eq!(
        ranges(&c, base).await,
        vec![
            ("0".to_owned(), String::new(), "05C1E0".to_owned()),
            ("1".to_owned(), "05C1E0".to_owned(), "FF".to_owned())
        ]
    );

    // A feed range within range 1, by V1 bounds: a query and the change feed read only its keys.
    let (lo, hi) = ("05C1E0", "05C1E4");
    let headers = [
        ("x-ms-documentdb-partitionkeyrangeid", "1"),
        ("x-ms-read-key-type", "EffectivePartitionKeyRange"),
        ("x-ms-start-epk", lo),
        ("x-ms-end-epk", hi),
    ];
    let mut with_cross = headers.to_vec();
    with_cross.push(("x-ms-documentdb-query-enablecrosspartition", "true"));
    let q = c
        .query(
            base,
            DOCS,
            &json!({"query": "SELECT * FROM c"}),
            &with_cross,
        )
        .await;
    assert_eq!(q.status, 200, "{q:?}");
    let want = expected_in(lo, hi);
    assert!(!want.is_empty());
    assert_eq!(ids(&q), want);
    let mut feed = headers.to_vec();
    feed.push(("a-im", "Incremental feed"));
    let f = c.get(base, DOCS, &feed).await;
    assert_eq!(ids(&f), want, "{f:?}");
    // A bound that is no V1 key of this container is refused by name.
    let mut bad = headers.to_vec();
    bad[2] = ("x-ms-start-epk", "10000000000000000000000000000000");
    let r = c
        .query(base, DOCS, &json!({"query": "SELECT * FROM c"}), &bad)
        .await;
    assert_eq!(r.status, 400, "{r:?}");
    assert!(r.message().contains("hash V1"), "{r:?}");

    // Splitting range 1 (the hashes 2^31 to 2^32) cuts it at the hash 3 * 2^30, V1-encoded 05C1E8.
    let r = c
        .admin(
            base,
            Method::POST,
            "/_emulator/split",
            Some(r#"{"db": "db", "container": "v1", "range": "1"}"#),
        )
        .await;
    assert_eq!(r.status, 200, "{r:?}");
    let after = ranges(&c, base).await;
    assert_eq!(
        after,
        vec![
            ("0".to_owned(), String::new(), "05C1E0".to_owned()),
            ("2".to_owned(), "05C1E0".to_owned(), "05C1E8".to_owned()),
            ("3".to_owned(), "05C1E8".to_owned(), "FF".to_owned())
        ]
    );
    for (id, min, max) in &after {
        assert_eq!(
            range_items(&c, base, id).await,
            expected_in(min, max),
            "range {id}"
        );
    }
    for (i, (pk, _)) in keys().into_iter().enumerate() {
        let r = c
            .read_item(base, "db", "v1", &format!("i{i}"), &pk, &[])
            .await;
        assert_eq!(r.status, 200, "i{i}: {r:?}");
    }
    let all = query_all(&c, base, "SELECT * FROM c").await;
    assert_eq!(all.len(), keys().len(), "{all:?}");
}

#[tokio::test]
async fn hash_versions_other_than_1_and_2_are_refused() {
    let (emu, c) = start(1).await;
    let base = emu.endpoint();
    for body in [
        json!({"id": "v3", "partitionKey": {"paths": ["/pk"], "kind": "Hash", "version": 3}}),
        json!({"id": "mh1", "partitionKey": {"paths": ["/a", "/b"], "kind": "MultiHash", "version": 1}}),
    ] {
        let r = c.post_json(base, "/dbs/db/colls", &[], &body).await;
        assert_eq!(r.status, 400, "{body}: {r:?}");
    }
}

/// A `Hash` container created without a partition key version is the service's legacy V1
/// container: it reads back without a version, its ranges are cut on V1 bounds, and items land
/// by their V1 effective partition keys (what an SDK that finds no version computes).
#[tokio::test]
async fn a_container_without_a_version_is_a_legacy_v1_container() {
    let (emu, c) = start_as(4, None).await;
    let base = emu.endpoint();
    let read = c.get(base, "/dbs/db/colls/v1", &[]).await;
    assert_eq!(read.status, 200, "{read:?}");
    assert_eq!(read.json()["partitionKey"].get("version"), None, "{read:?}");
    let listed = ranges(&c, base).await;
    let bounds: Vec<(&str, &str)> = listed
        .iter()
        .map(|(_, a, b)| (a.as_str(), b.as_str()))
        .collect();
    assert_eq!(
        bounds,
        vec![
            ("", "05C1D0"),
            ("05C1D0", "05C1E0"),
            ("05C1E0", "05C1E8"),
            ("05C1E8", "FF")
        ]
    );
    create_all(&c, base).await;
    for (id, min, max) in &listed {
        let held = range_items(&c, base, id).await;
        assert_eq!(held, expected_in(min, max), "range {id} [{min}, {max})");
    }
    // An explicit version 2 is kept and read back.
    let body =
        json!({"id": "v2", "partitionKey": {"paths": ["/pk"], "kind": "Hash", "version": 2}});
    let r = c.post_json(base, "/dbs/db/colls", &[], &body).await;
    assert_eq!(r.status, 201, "{r:?}");
    assert_eq!(r.json()["partitionKey"]["version"], 2);
}

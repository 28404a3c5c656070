//! Cross-partition queries over real HTTP against the embedded emulator: the driver asks for the
//! plan, runs the rewritten query on each of 4 partition key ranges and combines the results.
//! Each query's result is compared with the same query evaluated whole by an emulator with one
//! partition (sent as one request, so the server alone orders, aggregates and groups), and every
//! page boundary of the streaming families is resumed from its token.

use crate::common;

use cosmos_driver::query::{Query, QueryOptions, QueryScope};
use cosmos_driver::{ContainerClient, CosmosDriver, CosmosOperation, OperationOptions};
use cosmos_emulator::{Emulator, EmulatorBuilder};
use futures::TryStreamExt;
use http::HeaderValue;
use serde_json::{json, Value};

const KINDS: [&str; 4] = ["apple", "pear", "fig", "kiwi"];

/// 60 documents over 20 partition keys with mixed-type `v` (numbers, strings, booleans, null,
/// missing), a grouping key `k`, unique `n` and nested arrays.
fn documents() -> Vec<Value> {
    (0..60)
        .map(|i: i64| {
            let mut d = json!({
                "id": format!("d{i:02}"),
                "pk": format!("p{}", i % 20),
                "n": (i * 37) % 61,
                "k": KINDS[(i % 4) as usize],
                "tags": [i % 3, [i % 2]],
            });
            match i % 6 {
                0 => d["v"] = json!(i),
                1 => d["v"] = json!(format!("s{}", i % 7)),
                2 => d["v"] = json!(i % 4 == 2),
                3 => d["v"] = Value::Null,
                4 => d["v"] = json!(i as f64 / 4.0),
                _ => {}
            }
            d
        })
        .collect()
}

struct Pair {
    _four: Emulator,
    _one: Emulator,
    cross: ContainerClient,
    whole_driver: CosmosDriver,
}

async fn seeded_pair() -> Pair {
    let four = common::start(EmulatorBuilder::new().partitions(4)).await;
    let one = common::start(EmulatorBuilder::new().partitions(1)).await;
    let d4 = common::driver(common::options(&four)).await;
    let d1 = common::driver(common::options(&one)).await;
    for d in [&d4, &d1] {
        common::container(d, "q", "items").await;
        let c = d.container("q", "items");
        for doc in documents() {
            let pk = doc["pk"].as_str().unwrap().to_owned();
            c.create_item(pk.as_str(), &doc, None).await.unwrap();
        }
    }
    Pair {
        cross: d4.container("q", "items"),
        whole_driver: d1,
        _four: four,
        _one: one,
    }
}

/// The query evaluated whole by the one-partition emulator on its one range (one request per
/// page, no plan).
async fn whole(driver: &CosmosDriver, q: &Query) -> Vec<Value> {
    let c = cosmos_driver::DatabaseReference::new("q")
        .unwrap()
        .container("items")
        .unwrap();
    let mut out = Vec::new();
    let mut token: Option<String> = None;
    loop {
        let mut op = CosmosOperation::query_items(c.clone(), q)
            .unwrap()
            // The container's one range, named: the emulator evaluates the query whole there
            // (across partitions, a query that needs a plan is refused without one).
            .with_header(
                http::HeaderName::from_static("x-ms-documentdb-partitionkeyrangeid"),
                HeaderValue::from_static("0"),
            )
            .with_max_item_count(1000);
        if let Some(t) = &token {
            op = op.with_continuation(t).unwrap();
        }
        let r = driver.execute(op, &OperationOptions::new()).await.unwrap();
        let body: Value = r.json().unwrap();
        out.extend(body["Documents"].as_array().unwrap().iter().cloned());
        token = r.continuation().map(str::to_owned);
        if token.is_none() {
            return out;
        }
    }
}

async fn cross(c: &ContainerClient, q: &Query, page: Option<u32>) -> Vec<Value> {
    let mut o = QueryOptions::new();
    if let Some(n) = page {
        o = o.with_max_item_count(n);
    }
    c.query_items_with::<Value>(q.clone(), QueryScope::CrossPartition, o)
        .try_collect()
        .await
        .unwrap_or_else(|e| panic!("{}: {e}", q.text()))
}

fn sorted(mut v: Vec<Value>) -> Vec<String> {
    let mut s: Vec<String> = v.drain(..).map(|x| x.to_string()).collect();
    s.sort();
    s
}

/// Streaming families: the same values in the same order as the whole evaluation.
const ORDERED: &[&str] = &[
    "SELECT c.id, c.n FROM c ORDER BY c.n DESC",
    "SELECT VALUE c.id FROM c ORDER BY c.k, c.n DESC",
    "SELECT c.id, c.v FROM c ORDER BY c.v",
    "SELECT TOP 7 c.id FROM c ORDER BY c.n",
    "SELECT c.id FROM c ORDER BY c.n OFFSET 5 LIMIT 9",
    "SELECT DISTINCT VALUE c.k FROM c ORDER BY c.k DESC",
    "SELECT VALUE c.n FROM c WHERE c.n > 20 ORDER BY c.n",
];

/// Families whose order the service does not fix: the same multiset.
const UNORDERED: &[&str] = &[
    "SELECT DISTINCT VALUE c.k FROM c",
    "SELECT DISTINCT c.tags FROM c",
    "SELECT c.id FROM c WHERE c.n < 30",
    "SELECT VALUE COUNT(1) FROM c",
    "SELECT VALUE SUM(c.n) FROM c",
    "SELECT VALUE MIN(c.n) FROM c",
    "SELECT VALUE MAX(c.v) FROM c",
    "SELECT VALUE AVG(c.n) FROM c",
    "SELECT VALUE COUNT(1) FROM c WHERE c.n > 1000",
    "SELECT c.k, COUNT(1) AS n, SUM(c.n) AS total, MAX(c.n) AS hi FROM c GROUP BY c.k",
    "SELECT COUNT(1) AS n, AVG(c.n) AS mean FROM c",
    "SELECT VALUE COUNT(1) FROM c ORDER BY c.n",
    "SELECT VALUE SUM(c.n) FROM c WHERE c.n > 3 ORDER BY c.k DESC",
    "SELECT VALUE AVG(c.n) FROM c ORDER BY c.n",
    "SELECT VALUE MIN(c.v) FROM c ORDER BY c.v",
    "SELECT VALUE MAX(c.v) FROM c ORDER BY c.v",
];

#[tokio::test]
async fn cross_partition_results_match_the_whole_evaluation() {
    let p = seeded_pair().await;
    for text in ORDERED {
        let q = Query::new(*text);
        let want = whole(&p.whole_driver, &q).await;
        assert!(!want.is_empty(), "{text}");
        for page in [None, Some(3)] {
            assert_eq!(
                cross(&p.cross, &q, page).await,
                want,
                "{text} (pages of {page:?})"
            );
        }
    }
    for text in UNORDERED {
        let q = Query::new(*text);
        let want = whole(&p.whole_driver, &q).await;
        let got = cross(&p.cross, &q, Some(4)).await;
        assert_eq!(sorted(got), sorted(want), "{text}");
    }
}

#[tokio::test]
async fn every_page_token_of_a_cross_partition_query_resumes_exactly() {
    let p = seeded_pair().await;
    for text in [
        "SELECT c.id, c.n FROM c ORDER BY c.n DESC",
        "SELECT c.id FROM c ORDER BY c.n OFFSET 5 LIMIT 20",
        "SELECT DISTINCT VALUE c.k FROM c ORDER BY c.k",
        "SELECT c.id FROM c WHERE c.n < 40",
    ] {
        let q = Query::new(text).with_parameter("@unused", 0).unwrap();
        let all = cross(&p.cross, &q, Some(4)).await;
        let mut got = Vec::new();
        let mut token: Option<String> = None;
        for round in 0.. {
            assert!(round < 200, "{text}: too many pages");
            let mut o = QueryOptions::new().with_max_item_count(4);
            if let Some(t) = &token {
                o = o.with_continuation(t.clone());
            }
            let mut pages = p
                .cross
                .query_items_with::<Value>(q.clone(), QueryScope::CrossPartition, o)
                .into_pages();
            let Some(page) = pages.try_next().await.unwrap() else {
                break;
            };
            token = page.continuation().unwrap().map(str::to_owned);
            got.extend(page.into_items());
            if token.is_none() {
                break;
            }
        }
        assert_eq!(got, all, "{text}");
    }
}

#[tokio::test]
async fn a_malformed_cross_partition_query_gets_the_services_error() {
    let p = seeded_pair().await;
    let e = p
        .cross
        .query_items::<Value>(
            Query::new("SELECT * FROM c WHERE"),
            QueryScope::CrossPartition,
        )
        .try_collect::<Vec<_>>()
        .await
        .unwrap_err();
    assert_eq!(e.status(), Some(400), "{e}");
}

#[tokio::test]
async fn a_split_mid_query_and_a_token_from_before_it_lose_and_repeat_nothing() {
    let p = seeded_pair().await;
    let q = Query::new("SELECT c.id, c.n FROM c ORDER BY c.n DESC");
    let all = cross(&p.cross, &q, Some(4)).await;
    assert_eq!(all.len(), 60);
    let options = || QueryOptions::new().with_max_item_count(4);
    let mut pages = p
        .cross
        .query_items_with::<Value>(q.clone(), QueryScope::CrossPartition, options())
        .into_pages();
    let mut got = Vec::new();
    let mut token = None;
    for _ in 0..2 {
        let page = pages.try_next().await.unwrap().unwrap();
        token = page.continuation().unwrap().map(str::to_owned);
        got.extend(page.into_items());
    }
    common::split_range(&p._four, "q", "items", "1").await;
    let mut splits = 0;
    while let Some(page) = pages.try_next().await.unwrap() {
        splits = page.summary().splits;
        got.extend(page.into_items());
    }
    assert_eq!(got, all, "the running query continued on the children");
    assert_eq!(splits, 1, "the running query met the split once");

    let mut resumed = got[..8].to_vec();
    let rest: Vec<Value> = p
        .cross
        .query_items_with(
            q,
            QueryScope::CrossPartition,
            options().with_continuation(token.unwrap()),
        )
        .try_collect()
        .await
        .unwrap();
    resumed.extend(rest);
    assert_eq!(
        resumed, all,
        "a token from before the split resumes on the children"
    );
}

#[tokio::test]
async fn the_range_map_is_read_once_and_again_only_after_a_range_is_found_gone() {
    let p = seeded_pair().await;
    let q = Query::new("SELECT c.id, c.n FROM c ORDER BY c.n DESC");
    let reads = p._four.faults().add(
        cosmos_emulator::faults::FaultRule::new(cosmos_emulator::faults::Reaction::SERVE)
            .on_path("/dbs/q/colls/items/pkranges"),
    );
    let all = cross(&p.cross, &q, Some(7)).await;
    assert_eq!(all.len(), 60);
    let first = reads.hits();
    assert!(first >= 1, "the first query read the range map");
    assert_eq!(cross(&p.cross, &q, Some(7)).await, all);
    assert_eq!(reads.hits(), first, "the next query used the kept map");
    // A split makes the kept map stale: the next query meets 410/1002 on the parent, reads the
    // map again, and loses and repeats nothing.
    common::split_range(&p._four, "q", "items", "2").await;
    assert_eq!(cross(&p.cross, &q, Some(7)).await, all);
    assert!(
        reads.hits() > first,
        "the map was read again after the split"
    );
}

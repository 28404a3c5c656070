//! Partition splits over real HTTP: `POST /_emulator/split` replaces a range by two children
//! (listed with `parents`), requests naming the parent answer 410/1002, items stay readable, and
//! change-feed and read-feed continuations issued before the split keep working.

use crate::common;

use std::collections::BTreeSet;

use common::{start_with_container, Resp, TestClient};
use cosmos_emulator::EmulatorBuilder;
use http::Method;
use serde_json::{json, Value};

const DOCS: &str = "/dbs/db/colls/c/docs";

async fn split(c: &TestClient, base: &str, body: &str) -> Resp {
    c.admin(base, Method::POST, "/_emulator/split", Some(body))
        .await
}

async fn ranges(c: &TestClient, base: &str) -> Vec<Value> {
    c.get(base, "/dbs/db/colls/c/pkranges", &[]).await.json()["PartitionKeyRanges"]
        .as_array()
        .unwrap()
        .clone()
}

async fn range_feed(c: &TestClient, base: &str, range: &str, etag: Option<&str>) -> Resp {
    let mut headers = vec![
        ("a-im", "Incremental feed"),
        ("x-ms-documentdb-partitionkeyrangeid", range),
    ];
    if let Some(tag) = etag {
        headers.push(("if-none-match", tag));
    }
    c.get(base, DOCS, &headers).await
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

/// Items i0..i{n} on partition keys k0..k{n}.
async fn fill(c: &TestClient, base: &str, from: usize, to: usize) {
    for i in from..to {
        let r = c
            .create_item(
                base,
                "db",
                "c",
                &json!({"id": format!("i{i}"), "pk": format!("k{i}")}),
            )
            .await;
        assert_eq!(r.status, 201, "{r:?}");
    }
}

#[tokio::test]
async fn a_split_range_gives_way_to_two_children_that_carry_its_items_and_feeds() {
    let (emu, c) = start_with_container(EmulatorBuilder::new().partitions(2)).await;
    let base = emu.endpoint();
    fill(&c, base, 0, 40).await;
    let before = range_feed(&c, base, "1", None).await;
    let parent_items = ids(&before);
    assert!(!parent_items.is_empty());
    let etag = before.header("etag").unwrap().to_owned();

    let r = split(&c, base, r#"{"db": "db", "container": "c", "range": "1"}"#).await;
    assert_eq!(r.status, 200, "{r:?}");
    let after = ranges(&c, base).await;
    let listed: Vec<(&str, &str, &str, Value)> = after
        .iter()
        .map(|r| {
            (
                r["id"].as_str().unwrap(),
                r["minInclusive"].as_str().unwrap(),
                r["maxExclusive"].as_str().unwrap(),
                r["parents"].clone(),
            )
        })
        .collect();
    assert_eq!(listed.len(), 3, "{listed:?}");
    assert_eq!((listed[0].0, listed[1].0, listed[2].0), ("0", "2", "3"));
    assert_eq!(
        (listed[1].3.clone(), listed[2].3.clone()),
        (json!(["1"]), json!(["1"]))
    );
    assert_eq!(listed[0].3, json!([]));
    // The ranges still tile the key space.
    assert_eq!((listed[0].1, listed[2].2), ("", "FF"));
    assert_eq!(listed[0].2, listed[1].1);
    assert_eq!(listed[1].2, listed[2].1);

    // The parent is gone; its items are in the children, each once.
    let gone = range_feed(&c, base, "1", None).await;
    assert_eq!((gone.status, gone.sub_status()), (410, 1002), "{gone:?}");
    let low = ids(&range_feed(&c, base, "2", None).await);
    let high = ids(&range_feed(&c, base, "3", None).await);
    assert!(low.is_disjoint(&high));
    assert_eq!(
        low.union(&high).cloned().collect::<BTreeSet<_>>(),
        parent_items
    );
    for i in 0..40 {
        let read = c
            .read_item(
                base,
                "db",
                "c",
                &format!("i{i}"),
                &json!(format!("k{i}")),
                &[],
            )
            .await;
        assert_eq!(read.status, 200, "i{i}: {read:?}");
    }

    // The parent's change-feed etag continues on each child: only what changed after it.
    fill(&c, base, 40, 80).await;
    let mut later = BTreeSet::new();
    for child in ["2", "3"] {
        let r = range_feed(&c, base, child, Some(&etag)).await;
        assert!(r.status == 200 || r.status == 304, "{r:?}");
        later.extend(ids(&r));
    }
    let zero_later = ids(&range_feed(&c, base, "0", None).await);
    let new_items: BTreeSet<String> = (40..80).map(|i| format!("i{i}")).collect();
    assert!(later.is_subset(&new_items), "{later:?}");
    let all_new: BTreeSet<String> = later
        .union(&zero_later)
        .filter(|id| new_items.contains(*id))
        .cloned()
        .collect();
    assert_eq!(all_new, new_items);
}

#[tokio::test]
async fn a_read_feed_continuation_from_before_a_split_loses_and_repeats_nothing() {
    let (emu, c) = start_with_container(EmulatorBuilder::new().partitions(2)).await;
    let base = emu.endpoint();
    fill(&c, base, 0, 60).await;
    let mut seen = Vec::new();
    let mut continuation: Option<String> = None;
    for page in 0..100 {
        if page == 2 {
            let r = split(&c, base, r#"{"db": "db", "container": "c", "range": "0"}"#).await;
            assert_eq!(r.status, 200, "{r:?}");
        }
        let mut headers = vec![("x-ms-max-item-count", "7")];
        if let Some(t) = &continuation {
            headers.push(("x-ms-continuation", t));
        }
        let r = c.get(base, DOCS, &headers).await;
        assert_eq!(r.status, 200, "{r:?}");
        seen.extend(ids(&r));
        continuation = r.header("x-ms-continuation").map(str::to_owned);
        if continuation.is_none() {
            break;
        }
    }
    let unique: BTreeSet<String> = seen.iter().cloned().collect();
    assert_eq!(unique.len(), seen.len(), "duplicates across the split");
    assert_eq!(unique.len(), 60);
}

#[tokio::test]
async fn bad_split_requests_are_refused() {
    let (emu, c) = start_with_container(EmulatorBuilder::new().partitions(1)).await;
    let base = emu.endpoint();
    for (body, status) in [
        (r#"{"db": "db", "container": "c", "range": "9"}"#, 404),
        (r#"{"db": "db", "container": "nope", "range": "0"}"#, 404),
        (r#"{"db": "nope", "container": "c", "range": "0"}"#, 404),
        (r#"{"db": "db", "container": "c"}"#, 400),
        ("{", 400),
    ] {
        let r = split(&c, base, body).await;
        assert_eq!(r.status, status, "{body}: {r:?}");
    }
    assert_eq!(ranges(&c, base).await.len(), 1);
    let wrong_verb = c.admin(base, Method::GET, "/_emulator/split", None).await;
    assert_eq!(wrong_verb.status, 405);
    let unauthenticated = c
        .send_raw(base, Method::GET, "/_emulator/split", &[], None)
        .await;
    assert_eq!(unauthenticated.status, 401);
}

async fn range_query(c: &TestClient, base: &str, range: &str, continuation: Option<&str>) -> Resp {
    let mut headers = vec![
        ("x-ms-documentdb-isquery", "True"),
        ("content-type", "application/query+json"),
        ("x-ms-documentdb-partitionkeyrangeid", range),
        ("x-ms-max-item-count", "5"),
    ];
    if let Some(t) = continuation {
        headers.push(("x-ms-continuation", t));
    }
    let body = json!({"query": "SELECT * FROM c WHERE c.id != 'none'"}).to_string();
    c.send(base, Method::POST, DOCS, &headers, Some(body.as_bytes()))
        .await
}

/// Every remaining item of a range query, page by page.
async fn drain(c: &TestClient, base: &str, range: &str, mut token: Option<String>) -> Vec<String> {
    let mut out = Vec::new();
    for _ in 0..100 {
        let r = range_query(c, base, range, token.as_deref()).await;
        assert_eq!(r.status, 200, "{r:?}");
        out.extend(ids(&r));
        token = r.header("x-ms-continuation").map(str::to_owned);
        if token.is_none() {
            return out;
        }
    }
    panic!("paging range {range} does not end");
}

#[tokio::test]
async fn a_query_page_naming_a_split_range_is_gone_and_its_continuation_resumes_on_the_children() {
    let (emu, c) = start_with_container(EmulatorBuilder::new().partitions(2)).await;
    let base = emu.endpoint();
    fill(&c, base, 0, 40).await;
    let parent: BTreeSet<String> = drain(&c, base, "1", None).await.into_iter().collect();
    assert!(parent.len() > 5, "{parent:?}");
    let first = range_query(&c, base, "1", None).await;
    assert_eq!(first.status, 200, "{first:?}");
    let first_page = ids(&first);
    let token = first.header("x-ms-continuation").unwrap().to_owned();

    let r = split(&c, base, r#"{"db": "db", "container": "c", "range": "1"}"#).await;
    assert_eq!(r.status, 200, "{r:?}");
    for continuation in [None, Some(token.as_str())] {
        let gone = range_query(&c, base, "1", continuation).await;
        assert_eq!(
            (gone.status, gone.sub_status()),
            (410, 1002),
            "{continuation:?}: {gone:?}"
        );
    }
    // The parent's continuation, sent to each child, gives the rest of the parent's items once.
    let mut rest = drain(&c, base, "2", Some(token.clone())).await;
    rest.extend(drain(&c, base, "3", Some(token)).await);
    let unique: BTreeSet<String> = rest.iter().cloned().collect();
    assert_eq!(unique.len(), rest.len(), "duplicates across the split");
    let mut all = unique;
    for id in &first_page {
        assert!(all.insert(id.clone()), "{id} returned twice");
    }
    assert_eq!(all, parent);
}

#[tokio::test]
async fn the_embedded_handle_splits_like_the_admin_api() {
    let (emu, c) = start_with_container(EmulatorBuilder::new()).await;
    let base = emu.endpoint();
    fill(&c, base, 0, 20).await;
    let before = ranges(&c, base).await.len();
    emu.split("db", "c", "0").expect("range 0 splits");
    let after = ranges(&c, base).await;
    assert_eq!(after.len(), before + 1);
    assert!(after.iter().all(|r| r["id"] != "0"), "{after:?}");
    for i in 0..20 {
        let r = c
            .read_item(
                base,
                "db",
                "c",
                &format!("i{i}"),
                &json!(format!("k{i}")),
                &[],
            )
            .await;
        assert_eq!(r.status, 200, "i{i}: {r:?}");
    }
    let unknown = emu.split("db", "c", "0").unwrap_err();
    assert!(!unknown.is_empty());
    assert!(emu.split("nope", "c", "1").is_err());
}

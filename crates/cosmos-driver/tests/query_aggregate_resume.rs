//! Cross-partition aggregates and GROUP BY over real HTTP against the embedded emulator (4
//! partition key ranges), read one page at a time and resumed from every page's token by a new
//! stream, as an application that stores the token between pages would: in pages of 1 and 2
//! values, with pages that end while the ranges are still read (a read limit of one service page),
//! and across a split between pages. Every result equals the uninterrupted run.

use crate::common;

use cosmos_driver::query::{Query, QueryOptions, QueryScope};
use cosmos_driver::ContainerClient;
use cosmos_emulator::{Emulator, EmulatorBuilder};
use futures::TryStreamExt;
use serde_json::{json, Value};

const KINDS: [&str; 5] = ["apple", "pear", "fig", "kiwi", "plum"];

/// 60 documents over 20 partition keys: `n` unique integers, `v` of mixed types (numbers,
/// strings, booleans, null, missing), `k` one of 5 kinds.
fn documents() -> Vec<Value> {
    (0..60)
        .map(|i: i64| {
            let mut d = json!({
                "id": format!("d{i:02}"),
                "pk": format!("p{}", i % 20),
                "n": (i * 37) % 61,
                "k": KINDS[(i % 5) as usize],
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

async fn seeded() -> (Emulator, ContainerClient) {
    let emu = common::start(EmulatorBuilder::new().partitions(4)).await;
    let driver = common::driver(common::options(&emu)).await;
    common::container(&driver, "q", "items").await;
    let c = driver.container("q", "items");
    for doc in documents() {
        let pk = doc["pk"].as_str().unwrap().to_owned();
        c.create_item(pk.as_str(), &doc, None).await.unwrap();
    }
    (emu, c)
}

const QUERIES: &[&str] = &[
    "SELECT VALUE COUNT(1) FROM c",
    "SELECT VALUE SUM(c.n) FROM c",
    "SELECT VALUE AVG(c.n) FROM c",
    "SELECT VALUE MIN(c.v) FROM c",
    "SELECT VALUE MAX(c.v) FROM c",
    "SELECT VALUE SUM(c.v) FROM c",
    "SELECT VALUE COUNT(1) FROM c WHERE c.n > 1000",
    "SELECT COUNT(1) AS n, AVG(c.n) AS mean, MIN(c.v) AS lo FROM c",
    "SELECT c.k, COUNT(1) AS n, SUM(c.n) AS total, MIN(c.n) AS lo, MAX(c.v) AS hi, AVG(c.n) AS mean FROM c GROUP BY c.k",
    "SELECT c.pk, COUNT(1) AS n, MAX(c.n) AS hi FROM c GROUP BY c.pk",
    "SELECT c.k, COUNT(1) AS n FROM c GROUP BY c.k OFFSET 1 LIMIT 3",
    "SELECT TOP 3 c.k, SUM(c.n) AS total FROM c GROUP BY c.k",
    "SELECT DISTINCT c.k FROM c GROUP BY c.k",
    "SELECT DISTINCT VALUE COUNT(1) FROM c",
];

fn options(page: u32, read_limit: Option<u32>) -> QueryOptions {
    let mut o = QueryOptions::new().with_max_item_count(page);
    if let Some(n) = read_limit {
        // One range at a time, so that each range's pages end a result page of their own.
        o = o.with_page_read_limit(n).with_max_concurrency(1);
    }
    o
}

/// The query read uninterrupted, as one stream.
async fn uninterrupted(c: &ContainerClient, q: &Query) -> Vec<Value> {
    c.query_items_with::<Value>(q.clone(), QueryScope::CrossPartition, QueryOptions::new())
        .try_collect()
        .await
        .unwrap_or_else(|e| panic!("{}: {e}", q.text()))
}

/// One page of the query from `token` (a new stream each time): its values and its token.
async fn one_page(
    c: &ContainerClient,
    q: &Query,
    o: &QueryOptions,
    token: Option<&str>,
) -> (Vec<Value>, Option<String>) {
    let mut o = o.clone();
    if let Some(t) = token {
        o = o.with_continuation(t);
    }
    let mut pages = c
        .query_items_with::<Value>(q.clone(), QueryScope::CrossPartition, o)
        .into_pages();
    let page = pages
        .try_next()
        .await
        .unwrap_or_else(|e| panic!("{}: {e}", q.text()))
        .expect("a page");
    let next = page
        .continuation()
        .unwrap_or_else(|e| panic!("{}: {e}", q.text()))
        .map(str::to_owned);
    (page.into_items(), next)
}

/// Reads the query page by page, each page from a new stream resumed from the previous token;
/// `between(i, token)` runs before page `i` is read. The values and each page's size.
async fn page_by_page<F, Fut>(
    c: &ContainerClient,
    q: &Query,
    o: &QueryOptions,
    mut between: F,
) -> (Vec<Value>, Vec<usize>)
where
    F: FnMut(usize, Option<&str>) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let mut got = Vec::new();
    let mut sizes = Vec::new();
    let mut token: Option<String> = None;
    for i in 0..2000 {
        between(i, token.as_deref()).await;
        let (values, next) = one_page(c, q, o, token.as_deref()).await;
        sizes.push(values.len());
        got.extend(values);
        match next {
            Some(t) => token = Some(t),
            None => return (got, sizes),
        }
    }
    panic!("{}: the query does not end", q.text())
}

#[tokio::test]
async fn aggregates_and_groups_resume_from_every_page_token() {
    let (_emu, c) = seeded().await;
    for text in QUERIES {
        let q = Query::new(*text);
        let want = uninterrupted(&c, &q).await;
        if !text.contains("1000") && !text.contains("SUM(c.v)") {
            assert!(!want.is_empty(), "{text}");
        }
        for page in [1u32, 2] {
            for read_limit in [None, Some(1)] {
                let o = options(page, read_limit);
                let (got, sizes) = page_by_page(&c, &q, &o, |_, _| async {}).await;
                let case = format!("{text} (pages of {page}, read limit {read_limit:?})");
                assert_eq!(got, want, "{case}");
                assert!(
                    sizes.iter().all(|&n| n <= page as usize),
                    "{case}: {sizes:?}"
                );
                let empty = sizes.iter().filter(|&&n| n == 0).count();
                if read_limit.is_some() {
                    // 4 ranges read one service page per result page: pages end mid-drain.
                    assert!(empty >= 3, "{case}: {sizes:?}");
                }
            }
        }
    }
}

fn sorted(v: &[Value]) -> Vec<String> {
    let mut s: Vec<String> = v.iter().map(Value::to_string).collect();
    s.sort();
    s
}

/// Whether no range in the driver's token is part-way read (each range is at its start: the
/// token names no service continuation). Test-only peek into the token's JSON.
fn no_range_part_way(token: &str) -> bool {
    use base64::Engine as _;
    let body = token.strip_prefix("cq2.").expect("a format-2 token");
    let json = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(body)
        .unwrap();
    let v: Value = serde_json::from_slice(&json).unwrap();
    v["r"]
        .as_array()
        .is_some_and(|r| r.iter().all(|p| p.get("t").is_none()))
}

/// Reads `text` page by page (pages of 2, one service page per result page, `concurrency` in
/// flight), splitting range 1 before the first page from `split_before` on where `when(token)`
/// holds; `None` when the query ended before it.
async fn split_between_pages(
    text: &str,
    split_before: usize,
    concurrency: usize,
    when: fn(&str) -> bool,
) -> Option<()> {
    let (emu, c) = seeded().await;
    let q = Query::new(text);
    let want = uninterrupted(&c, &q).await;
    let o = options(2, Some(1)).with_max_concurrency(concurrency);
    let mut split = false;
    let emu_ref = &emu;
    let split_ref = &mut split;
    let (got, sizes) = page_by_page(&c, &q, &o, |i, token| {
        let now = !*split_ref && i >= split_before && token.is_some_and(when);
        if now {
            *split_ref = true;
        }
        async move {
            if now {
                common::split_range(emu_ref, "q", "items", "1").await;
            }
        }
    })
    .await;
    if !split {
        return None;
    }
    let case =
        format!("{text}: split before page {split_before} of {sizes:?}, {concurrency} in flight");
    assert_eq!(sorted(&got), sorted(&want), "{case}");
    assert_eq!(got, want, "{case}");
    Some(())
}

/// Range 1 splits between pages, at a point where no range is part-way read (see the next test):
/// the token carries the partial state, its positions move to the children, and the result is
/// the uninterrupted one.
#[tokio::test]
async fn a_split_between_pages_of_aggregates_and_groups_loses_and_repeats_nothing() {
    let mut splits = 0;
    for text in [
        "SELECT c.pk, COUNT(1) AS n, SUM(c.n) AS total, MIN(c.v) AS lo FROM c GROUP BY c.pk",
        "SELECT VALUE AVG(c.n) FROM c",
        "SELECT c.k, COUNT(1) AS n, MAX(c.v) AS hi FROM c GROUP BY c.k",
    ] {
        for split_before in [1usize, 2, 3] {
            if split_between_pages(text, split_before, 1, no_range_part_way)
                .await
                .is_some()
            {
                splits += 1;
            }
        }
    }
    assert!(splits >= 7, "{splits} cases split between pages");
}

/// Range 1 splits while it is part-way read: its children resume from the parent's service
/// continuation (for the plan's per-range GROUP BY query, a position in the range's documents,
/// which the children share), and the groups come out whole: none lost, none counted twice.
#[tokio::test]
async fn a_split_while_a_group_by_range_is_part_way_read() {
    let text = "SELECT c.pk, COUNT(1) AS n, SUM(c.n) AS total, MIN(c.v) AS lo FROM c GROUP BY c.pk";
    assert!(split_between_pages(text, 3, 4, |_| true).await.is_some());
}

#[tokio::test]
async fn a_running_group_by_stream_continues_across_a_split() {
    let (emu, c) = seeded().await;
    let q = Query::new("SELECT c.pk, COUNT(1) AS n, SUM(c.n) AS total FROM c GROUP BY c.pk");
    let want = uninterrupted(&c, &q).await;
    assert_eq!(want.len(), 20);
    let mut pages = c
        .query_items_with::<Value>(q.clone(), QueryScope::CrossPartition, options(2, Some(1)))
        .into_pages();
    let mut got = Vec::new();
    for _ in 0..2 {
        let page = pages.try_next().await.unwrap().unwrap();
        assert!(page.items().is_empty(), "the ranges are still read");
        got.extend(page.into_items());
    }
    common::split_range(&emu, "q", "items", "1").await;
    let mut splits = 0;
    while let Some(page) = pages.try_next().await.unwrap() {
        splits = page.summary().splits;
        got.extend(page.into_items());
    }
    assert_eq!(splits, 1);
    assert_eq!(got, want);
}

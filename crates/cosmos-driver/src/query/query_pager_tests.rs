//! The pager against an in-memory page source: page cutting, resumption from every page's
//! token, bounded requests in flight, splits, refusals and the query deadline.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use futures::future::BoxFuture;
use futures::TryStreamExt;
use http::HeaderMap;
use serde_json::{json, Value};

use super::*;
use crate::diagnostics::DiagnosticsContext;
use crate::error::{CosmosError, ErrorKind};
use crate::options::OperationOptions;
use crate::protocol::CosmosStatus;
use crate::protocol::ResponseHeaders;
use crate::query::{QueryItems, QueryPage, QueryPlan};

pub(super) struct FakeSource {
    plan: String,
    ranges: Vec<TargetRange>,
    after_split: Vec<TargetRange>,
    pub(super) rows: HashMap<String, Vec<Value>>,
    page: usize,
    split_range: Option<String>,
    split_done: AtomicBool,
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
    delay: Duration,
    bodies: Mutex<Vec<String>>,
    /// The container's partition key path count.
    paths: usize,
    /// Every page request's target, in the order sent.
    pub(super) targets: Mutex<Vec<PageTarget>>,
    /// How many listings after the split still show the ranges from before it.
    lagging_listings: AtomicUsize,
    /// How many listings were read again (`refresh`).
    refreshes: AtomicUsize,
}

pub(super) fn target(id: &str, min: &str, max: &str) -> TargetRange {
    TargetRange {
        id: id.into(),
        min: min.into(),
        max: max.into(),
    }
}

impl FakeSource {
    fn new(
        plan: &str,
        ranges: Vec<TargetRange>,
        rows: HashMap<String, Vec<Value>>,
        page: usize,
    ) -> Self {
        FakeSource {
            plan: plan.into(),
            after_split: ranges.clone(),
            ranges,
            rows,
            page,
            split_range: None,
            split_done: AtomicBool::new(false),
            in_flight: AtomicUsize::new(0),
            max_in_flight: AtomicUsize::new(0),
            delay: Duration::from_millis(5),
            bodies: Mutex::new(Vec::new()),
            paths: 1,
            targets: Mutex::new(Vec::new()),
            lagging_listings: AtomicUsize::new(0),
            refreshes: AtomicUsize::new(0),
        }
    }
}

impl QueryPageSource for FakeSource {
    fn partition_key_path_count(
        &self,
        _s: &PageSettings,
    ) -> BoxFuture<'_, Result<usize, CosmosError>> {
        Box::pin(async move { Ok(self.paths) })
    }

    fn plan(
        &self,
        _body: Bytes,
        _s: &PageSettings,
    ) -> BoxFuture<'_, Result<QueryPlan, CosmosError>> {
        let body = format!(
            r#"{{"partitionedQueryExecutionInfoVersion":2,"queryInfo":{},"queryRanges":[{{"min":"","max":"FF","isMinInclusive":true,"isMaxInclusive":false}}]}}"#,
            self.plan
        );
        Box::pin(async move { Ok(QueryPlan::from_body(body.as_bytes()).unwrap()) })
    }

    fn ranges(
        &self,
        refresh: bool,
        _options: &OperationOptions,
    ) -> BoxFuture<'_, Result<Vec<TargetRange>, CosmosError>> {
        if refresh {
            self.refreshes.fetch_add(1, Ordering::SeqCst);
        }
        let split = self.split_done.load(Ordering::SeqCst)
            && self
                .lagging_listings
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                .is_err();
        Box::pin(async move {
            Ok(if split {
                self.after_split.clone()
            } else {
                self.ranges.clone()
            })
        })
    }

    fn page(
        &self,
        body: Bytes,
        target: PageTarget,
        continuation: Option<String>,
        settings: &PageSettings,
    ) -> BoxFuture<'_, Result<RangePage, CosmosError>> {
        self.targets.lock().unwrap().push(target.clone());
        let id = match target {
            PageTarget::Range(r) | PageTarget::EpkRange(r) => r.id,
            PageTarget::PartitionKey(_) => "pk".into(),
        };
        let page = settings
            .max_item_count
            .map(|n| n as usize)
            .unwrap_or(self.page)
            .min(self.page);
        Box::pin(async move {
            self.bodies
                .lock()
                .unwrap()
                .push(String::from_utf8(body.to_vec()).unwrap());
            let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
            self.max_in_flight.fetch_max(now, Ordering::SeqCst);
            tokio::time::sleep(self.delay).await;
            self.in_flight.fetch_sub(1, Ordering::SeqCst);
            if self.split_range.as_deref() == Some(id.as_str()) && continuation.is_some() {
                self.split_done.store(true, Ordering::SeqCst);
                return Err(CosmosError::service(
                    CosmosStatus::new(410, 1002),
                    ResponseHeaders::new(HeaderMap::new()),
                    Bytes::new(),
                ));
            }
            let rows = &self.rows[&id];
            let at: usize = continuation
                .as_deref()
                .map(|t| t.parse().unwrap())
                .unwrap_or(0)
                .min(rows.len());
            let end = (at + page).min(rows.len());
            let mut headers = HeaderMap::new();
            headers.insert("x-ms-request-charge", "2.5".parse().unwrap());
            headers.insert(
                "x-ms-session-token",
                format!("{id}:-1#{end}").parse().unwrap(),
            );
            Ok(RangePage {
                documents: rows[at..end].to_vec(),
                continuation: (end < rows.len()).then(|| end.to_string()),
                headers: ResponseHeaders::new(headers),
                diagnostics: DiagnosticsContext::default(),
            })
        })
    }
}

const ORDER_BY: &str = r#"{"orderBy":["Descending"],"orderByExpressions":["c.n"],"rewrittenQuery":"SELECT c._rid, [{\"item\": c.n}] AS orderByItems, c AS payload FROM c WHERE ({documentdb-formattableorderbyquery-filter}) ORDER BY c.n DESC"}"#;

/// `ranges` ranges of ORDER BY rows, `per_range` rows each, n = id * 7 mod 101 (descending in
/// each range); the parent of a split holds rows for both children, so the children share them.
pub(super) fn order_by_source(ranges: usize, per_range: usize, page: usize) -> FakeSource {
    let mut rows = HashMap::new();
    let mut targets = Vec::new();
    for r in 0..ranges {
        let mut v: Vec<Value> = (0..per_range)
            .map(|i| {
                let id = r * per_range + i;
                let n = (id * 7) % 101;
                json!({"_rid": format!("{id}"), "orderByItems": [{"item": n}], "payload": {"id": id.to_string(), "n": n}})
            })
            .collect();
        v.sort_by(|a, b| b["payload"]["n"].as_i64().cmp(&a["payload"]["n"].as_i64()));
        rows.insert(r.to_string(), v);
        targets.push(target(
            &r.to_string(),
            &format!("{:02X}", r * 16),
            &format!("{:02X}", (r + 1) * 16),
        ));
    }
    targets[0].min = String::new();
    targets.last_mut().unwrap().max = "FF".into();
    FakeSource::new(ORDER_BY, targets, rows, page)
}

fn pager(source: Arc<FakeSource>, options: QueryOptions) -> QueryPager {
    QueryPager::new(
        source,
        Query::new("SELECT * FROM c ORDER BY c.n DESC"),
        QueryScope::CrossPartition,
        options,
    )
}

pub(super) async fn all_pages(mut p: QueryPager) -> Result<Vec<RawQueryPage>, CosmosError> {
    let mut out = Vec::new();
    while let Some(page) = p.next_page().await {
        out.push(page?);
    }
    Ok(out)
}

pub(super) fn ns(values: &[Value]) -> Vec<i64> {
    values.iter().map(|v| v["n"].as_i64().unwrap()).collect()
}

#[tokio::test(start_paused = true)]
async fn cross_partition_order_by_pages_are_sorted_and_carry_charge_and_session() {
    let source = Arc::new(order_by_source(4, 25, 10));
    let pages = all_pages(pager(
        source.clone(),
        QueryOptions::new().with_max_item_count(10),
    ))
    .await
    .unwrap();
    let values: Vec<Value> = pages.iter().flat_map(|p| p.values.clone()).collect();
    assert_eq!(values.len(), 100);
    let got = ns(&values);
    let mut sorted = got.clone();
    sorted.sort_by(|a, b| b.cmp(a));
    assert_eq!(got, sorted);
    assert!(pages.iter().all(|p| p.values.len() <= 10));
    assert!(pages[0].request_charge > 0.0 && pages[0].session_token.is_some());
    let last = pages.last().unwrap();
    assert_eq!(last.continuation, Ok(None));
    assert_eq!(
        last.summary.pages,
        4 * 3,
        "each range of 25 rows in pages of 10"
    );
    let bodies = source.bodies.lock().unwrap();
    assert!(
        bodies.iter().all(|b| b.contains("WHERE (true)")),
        "ranges run the rewritten query"
    );
}

#[tokio::test(start_paused = true)]
async fn every_page_token_resumes_the_query_exactly() {
    for page_size in [1u32, 3, 7, 40] {
        let source = Arc::new(order_by_source(3, 9, 4));
        let whole: Vec<Value> = all_pages(pager(
            source.clone(),
            QueryOptions::new().with_max_item_count(page_size),
        ))
        .await
        .unwrap()
        .into_iter()
        .flat_map(|p| p.values)
        .collect();
        let mut collected = Vec::new();
        let mut token: Option<String> = None;
        let mut rounds = 0;
        loop {
            rounds += 1;
            let mut options = QueryOptions::new().with_max_item_count(page_size);
            if let Some(t) = &token {
                options = options.with_continuation(t.clone());
            }
            // A fresh pager per page, as an application resuming from a stored token would.
            let mut p = pager(source.clone(), options);
            let Some(page) = p.next_page().await else {
                break;
            };
            let page = page.unwrap();
            collected.extend(page.values);
            match page.continuation.unwrap() {
                Some(t) => token = Some(t),
                None => break,
            }
            assert!(rounds < 1000);
        }
        assert_eq!(collected, whole, "page size {page_size}");
    }
}

#[tokio::test(start_paused = true)]
async fn requests_in_flight_stay_within_the_bound() {
    let mut rows = HashMap::new();
    let mut targets = Vec::new();
    for r in 0..8 {
        rows.insert(
            r.to_string(),
            (0..5).map(|i| json!({"id": format!("{r}-{i}")})).collect(),
        );
        targets.push(target(
            &r.to_string(),
            &format!("{:02X}", r * 16),
            &format!("{:02X}", (r + 1) * 16),
        ));
    }
    for concurrency in [1usize, 3] {
        let source = Arc::new(FakeSource::new("{}", targets.clone(), rows.clone(), 5));
        let pages = all_pages(pager(
            source.clone(),
            QueryOptions::new().with_max_concurrency(concurrency),
        ))
        .await
        .unwrap();
        let ids: Vec<String> = pages
            .iter()
            .flat_map(|p| {
                p.values
                    .iter()
                    .map(|v| v["id"].as_str().unwrap().to_owned())
            })
            .collect();
        let want: Vec<String> = (0..8)
            .flat_map(|r| (0..5).map(move |i| format!("{r}-{i}")))
            .collect();
        assert_eq!(ids, want, "range after range");
        let max = source.max_in_flight.load(Ordering::SeqCst);
        assert!(
            max <= concurrency,
            "{max} in flight with a bound of {concurrency}"
        );
        if concurrency > 1 {
            assert!(max > 1, "ranges are read ahead in parallel");
        }
    }
}

#[tokio::test(start_paused = true)]
async fn a_split_mid_query_loses_and_repeats_nothing() {
    let mut source = order_by_source(2, 12, 3);
    // Range 1 answers 410/1002 to its second page and splits into 2 (which holds all of its
    // rows, served from the parent's continuation) and 3 (empty).
    let parent = source.rows["1"].clone();
    source.rows.insert("2".into(), parent);
    source.rows.insert("3".into(), vec![]);
    let (lo, hi) = (source.ranges[1].min.clone(), source.ranges[1].max.clone());
    source.after_split = vec![
        source.ranges[0].clone(),
        target("2", &lo, "18"),
        target("3", "18", &hi),
    ];
    source.split_range = Some("1".into());
    let source = Arc::new(source);
    let unsplit = Arc::new(order_by_source(2, 12, 3));
    let whole: Vec<Value> = all_pages(pager(unsplit, QueryOptions::new()))
        .await
        .unwrap()
        .into_iter()
        .flat_map(|p| p.values)
        .collect();
    let pages = all_pages(pager(
        source.clone(),
        QueryOptions::new().with_max_item_count(5),
    ))
    .await
    .unwrap();
    let got: Vec<Value> = pages.iter().flat_map(|p| p.values.clone()).collect();
    assert!(source.split_done.load(Ordering::SeqCst));
    assert_eq!(pages.last().unwrap().summary.splits, 1);
    assert_eq!(got, whole);
}

#[tokio::test(start_paused = true)]
async fn unsupported_features_and_foreign_tokens_are_refused_clearly() {
    let source = Arc::new(FakeSource::new(
        r#"{"aggregates":["MakeSet"],"hasSelectValue":true}"#,
        vec![target("0", "", "FF")],
        HashMap::new(),
        1,
    ));
    let e = all_pages(pager(source, QueryOptions::new()))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotSupported);
    assert!(e.message().contains("MakeSet"), "{}", e.message());

    let source = Arc::new(order_by_source(2, 5, 2));
    let mut first = pager(source.clone(), QueryOptions::new().with_max_item_count(2));
    let token = first
        .next_page()
        .await
        .unwrap()
        .unwrap()
        .continuation
        .unwrap()
        .unwrap();
    let other = QueryPager::new(
        source.clone(),
        Query::new("SELECT * FROM c ORDER BY c.n"),
        QueryScope::CrossPartition,
        QueryOptions::new().with_continuation(token.clone()),
    );
    let e = all_pages(other).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidInput);
    assert!(e.message().contains("different query"), "{}", e.message());
    let corrupted = format!("{}x", &token[..token.len() - 3]);
    let e = all_pages(pager(
        source,
        QueryOptions::new().with_continuation(corrupted),
    ))
    .await
    .unwrap_err();
    assert!(e.message().contains("not valid"), "{}", e.message());
}

#[tokio::test(start_paused = true)]
async fn the_query_deadline_bounds_all_pages() {
    let mut source = order_by_source(1, 50, 1);
    source.delay = Duration::from_secs(1);
    let options = QueryOptions::new()
        .with_max_item_count(1)
        .with_query_timeout(Duration::from_millis(3500));
    let mut p = pager(Arc::new(source), options);
    let mut pages = 0;
    let err = loop {
        match p.next_page().await {
            Some(Ok(_)) => pages += 1,
            Some(Err(e)) => break e,
            None => panic!("the deadline must end the query"),
        }
    };
    assert_eq!(err.kind(), ErrorKind::EndToEndTimeout);
    assert!(
        (3..=4).contains(&pages),
        "{pages} pages before the deadline"
    );
    assert!(p.next_page().await.is_none(), "a failed query ends");
}

#[tokio::test(start_paused = true)]
async fn typed_items_and_pages_streams() {
    #[derive(serde::Deserialize, Debug, PartialEq)]
    struct Row {
        id: String,
        n: i64,
    }
    let source = Arc::new(order_by_source(3, 4, 2));
    let items: Vec<Row> = QueryItems::<Row>::new(pager(source.clone(), QueryOptions::new()))
        .try_collect()
        .await
        .unwrap();
    assert_eq!(items.len(), 12);
    assert!(items.windows(2).all(|w| w[0].n >= w[1].n));
    let pages: Vec<QueryPage<Row>> = QueryItems::<Row>::new(pager(
        source.clone(),
        QueryOptions::new().with_max_item_count(5),
    ))
    .into_pages()
    .try_collect()
    .await
    .unwrap();
    assert_eq!(pages.iter().map(|p| p.items().len()).sum::<usize>(), 12);
    assert!(pages[0].continuation().unwrap().is_some());
    assert!(pages.last().unwrap().continuation().unwrap().is_none());
    #[derive(serde::Deserialize, Debug)]
    #[allow(dead_code)]
    struct Wrong {
        missing: String,
    }
    let e = QueryItems::<Wrong>::new(pager(source, QueryOptions::new()))
        .try_collect::<Vec<_>>()
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Deserialization);
}

#[tokio::test(start_paused = true)]
async fn single_partition_queries_send_the_query_as_written() {
    let mut rows = HashMap::new();
    rows.insert("pk".to_string(), (0..7).map(|i| json!({"i": i})).collect());
    let source = Arc::new(FakeSource::new("{}", vec![], rows, 3));
    let scope = QueryScope::PartitionKey(crate::protocol::PartitionKey::from("p1"));
    let q = Query::new("SELECT * FROM c WHERE c.i >= @lo")
        .with_parameter("@lo", 0)
        .unwrap();
    let mut p = QueryPager::new(
        source.clone(),
        q.clone(),
        scope.clone(),
        QueryOptions::new(),
    );
    let first = p.next_page().await.unwrap().unwrap();
    assert_eq!(first.values.len(), 3, "one service page per page");
    let token = first.continuation.unwrap().unwrap();
    let rest: Vec<Value> = all_pages(QueryPager::new(
        source.clone(),
        q.clone(),
        scope,
        QueryOptions::new().with_continuation(token.clone()),
    ))
    .await
    .unwrap()
    .into_iter()
    .flat_map(|p| p.values)
    .collect();
    assert_eq!(rest, (3..7).map(|i| json!({"i": i})).collect::<Vec<_>>());
    let other_pk = QueryScope::PartitionKey(crate::protocol::PartitionKey::from("p2"));
    let e = all_pages(QueryPager::new(
        source.clone(),
        q,
        other_pk,
        QueryOptions::new().with_continuation(token),
    ))
    .await
    .unwrap_err();
    assert!(
        e.message().contains("different partition key"),
        "{}",
        e.message()
    );
    assert!(source.bodies.lock().unwrap()[0].contains("@lo"));
}

#[test]
fn a_key_prefix_covers_its_epk_range_on_each_overlapping_range() {
    use crate::protocol::{effective_partition_key, PartitionKey};
    let two = PartitionKey::hierarchical(["a".into(), "b".into()]).unwrap();
    let one = PartitionKey::from("a");
    // Full keys and single-path containers have no prefix range.
    assert_eq!(prefix_range(&two, 2), None);
    assert_eq!(prefix_range(&one, 1), None);
    assert_eq!(prefix_range(&two, 1), None);
    let p = prefix_range(&one, 3).unwrap();
    let start = effective_partition_key(&one, 3);
    assert_eq!(
        (p.min.as_str(), p.max.clone()),
        (start.as_str(), format!("{start}FF"))
    );
    assert_eq!(prefix_range(&two, 3).unwrap().min.len(), 64);
    // The prefix's keys lie in its range; ranges are narrowed to the part it covers.
    let full = effective_partition_key(
        &PartitionKey::hierarchical(["a".into(), "z".into()]).unwrap(),
        2,
    );
    assert!(p.min < full && full < p.max);
    let cut = format!("{start}2");
    let ranges = vec![
        TargetRange {
            id: "0".into(),
            min: String::new(),
            max: cut.clone(),
        },
        TargetRange {
            id: "1".into(),
            min: cut.clone(),
            max: "FF".into(),
        },
    ];
    let narrowed = narrowed_ranges(&p, &ranges);
    assert_eq!(
        narrowed,
        vec![
            TargetRange {
                id: "0".into(),
                min: start.clone(),
                max: cut.clone()
            },
            TargetRange {
                id: "1".into(),
                min: cut,
                max: format!("{start}FF")
            },
        ]
    );
    let elsewhere = vec![TargetRange {
        id: "9".into(),
        min: "3F".into(),
        max: "FF".into(),
    }];
    assert!(narrowed_ranges(&p, &elsewhere).is_empty() || start.as_str() >= "3F");
}

#[tokio::test(start_paused = true)]
async fn a_prefix_query_asks_each_overlapping_range_for_its_part_and_merges_them() {
    use crate::protocol::{effective_partition_key, PartitionKey};
    let prefix = PartitionKey::from("a");
    let lo = effective_partition_key(&prefix, 2);
    let (one, two, end) = (format!("{lo}1"), format!("{lo}2"), format!("{lo}FF"));
    let mut source = order_by_source(4, 6, 4);
    source.paths = 2;
    source.rows.insert("pk".into(), Vec::new());
    source.ranges = vec![
        target("0", "", &lo),
        target("1", &lo, &one),
        target("2", &one, &two),
        target("3", &two, "FF"),
    ];
    let source = Arc::new(source);
    let scope = QueryScope::PartitionKey(prefix.clone());
    let options = QueryOptions::new().with_max_item_count(4);
    let got: Vec<Value> = all_pages(QueryPager::new(
        source.clone(),
        Query::new("SELECT * FROM c ORDER BY c.n DESC"),
        scope,
        options,
    ))
    .await
    .unwrap()
    .into_iter()
    .flat_map(|p| p.values)
    .collect();
    let mut want: Vec<Value> = ["1", "2", "3"]
        .iter()
        .flat_map(|r| source.rows[*r].iter().map(|row| row["payload"].clone()))
        .collect();
    want.sort_by(|a, b| b["n"].as_i64().cmp(&a["n"].as_i64()));
    assert_eq!(ns(&got), ns(&want));
    let mut asked: Vec<PageTarget> = source.targets.lock().unwrap().clone();
    asked.sort_by(|a, b| format!("{a:?}").cmp(&format!("{b:?}")));
    asked.dedup();
    assert_eq!(
        asked,
        vec![
            PageTarget::EpkRange(target("1", &lo, &one)),
            PageTarget::EpkRange(target("2", &one, &two)),
            PageTarget::EpkRange(target("3", &two, &end)),
        ]
    );
    // A full key of the same container keeps the single-range path.
    source.targets.lock().unwrap().clear();
    let full = PartitionKey::hierarchical(["a".into(), "b".into()]).unwrap();
    let pages = all_pages(QueryPager::new(
        source.clone(),
        Query::new("SELECT * FROM c"),
        QueryScope::PartitionKey(full.clone()),
        QueryOptions::new(),
    ))
    .await
    .unwrap();
    assert!(pages.iter().all(|p| p.values.is_empty()));
    assert_eq!(
        source.targets.lock().unwrap().first(),
        Some(&PageTarget::PartitionKey(full))
    );
}

#[path = "query_pager_blocking_tests.rs"]
mod blocking;

/// The source of `a_split_mid_query_loses_and_repeats_nothing`: range 1 answers 410/1002 to its
/// second page and splits into 2 (all of its rows, from the parent's continuation) and 3 (empty).
fn splitting_source() -> FakeSource {
    let mut source = order_by_source(2, 12, 3);
    let parent = source.rows["1"].clone();
    source.rows.insert("2".into(), parent);
    source.rows.insert("3".into(), vec![]);
    let (lo, hi) = (source.ranges[1].min.clone(), source.ranges[1].max.clone());
    source.after_split = vec![
        source.ranges[0].clone(),
        target("2", &lo, "18"),
        target("3", "18", &hi),
    ];
    source.split_range = Some("1".into());
    source
}

#[test]
fn a_gone_range_is_replaced_by_the_listed_ranges_that_overlap_it() {
    let gone = target("1", "10", "20");
    // (listing, children)
    let table: [(Vec<TargetRange>, Vec<TargetRange>); 5] = [
        // A split: both children, in the listing's order.
        (
            vec![
                target("0", "", "10"),
                target("2", "10", "18"),
                target("3", "18", "20"),
            ],
            vec![target("2", "10", "18"), target("3", "18", "20")],
        ),
        // A merge: the merged range, cut to the part the gone range covered.
        (vec![target("4", "", "FF")], vec![target("4", "10", "20")]),
        // The listing has not caught up: the gone range is asked again.
        (vec![target("0", "", "10"), target("1", "10", "20")], vec![]),
        // Nothing overlaps (a listing that does not cover the range).
        (vec![target("0", "", "10"), target("5", "20", "FF")], vec![]),
        (vec![], vec![]),
    ];
    for (listing, want) in table {
        assert_eq!(children_of(&gone, &listing), want, "{listing:?}");
    }
}

#[tokio::test(start_paused = true)]
async fn a_listing_that_lags_a_split_is_read_again_after_growing_waits() {
    let whole: Vec<Value> = all_pages(pager(
        Arc::new(order_by_source(2, 12, 3)),
        QueryOptions::new(),
    ))
    .await
    .unwrap()
    .into_iter()
    .flat_map(|p| p.values)
    .collect();
    let source = splitting_source();
    // Two listings after the split still show range 1: it is asked twice more, refused each
    // time, before the third listing shows its children.
    source.lagging_listings.store(2, Ordering::SeqCst);
    let source = Arc::new(source);
    let pages = all_pages(pager(source.clone(), QueryOptions::new()))
        .await
        .unwrap();
    let got: Vec<Value> = pages.iter().flat_map(|p| p.values.clone()).collect();
    assert_eq!(got, whole);
    assert_eq!(pages.last().unwrap().summary.splits, 3);
    assert_eq!(source.refreshes.load(Ordering::SeqCst), 3);
    let asked_of_1 = source
        .targets
        .lock()
        .unwrap()
        .iter()
        .filter(|t| matches!(t, PageTarget::Range(r) if r.id == "1"))
        .count();
    // Its first page, then the page refused three times.
    assert_eq!(asked_of_1, 4);
}

#[tokio::test(start_paused = true)]
async fn the_waits_between_re_plans_grow_from_nothing() {
    // Each page request takes 5 ms; a re-plan waits 0, then 20 ms, then 40 ms.
    let run = |lag: usize| async move {
        let source = splitting_source();
        source.lagging_listings.store(lag, Ordering::SeqCst);
        let started = tokio::time::Instant::now();
        let mut p = pager(
            Arc::new(source),
            QueryOptions::new().with_max_concurrency(1),
        );
        while let Some(page) = p.next_page().await {
            page.unwrap();
        }
        started.elapsed()
    };
    let (none, two) = (run(0).await, run(2).await);
    // Two more refused requests of 5 ms each and waits of 20 and 40 ms.
    assert_eq!(two - none, Duration::from_millis(2 * 5 + 20 + 40));
}

#[tokio::test(start_paused = true)]
async fn a_split_that_never_completes_ends_the_query_when_the_budget_is_spent() {
    let source = splitting_source();
    source.lagging_listings.store(usize::MAX, Ordering::SeqCst);
    let source = Arc::new(source);
    let e = all_pages(pager(source.clone(), QueryOptions::new()))
        .await
        .unwrap_err();
    assert_eq!((e.status(), e.sub_status()), (Some(410), Some(1002)));
    assert!(
        e.message()
            .contains("the query followed 64 partition splits and gives up"),
        "{}",
        e.message()
    );
    assert_eq!(
        source.refreshes.load(Ordering::SeqCst),
        crate::operations::MAX_REPLANS as usize
    );
}

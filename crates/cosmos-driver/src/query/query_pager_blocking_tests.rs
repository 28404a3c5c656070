//! The pager over an aggregate or GROUP BY: the result cut into pages of the asked size, pages
//! that end while ranges are still read (read and time limits), and every page's token resuming
//! the query exactly, across a split too.

use super::*;

const GROUPED: &str = r#"{"groupByExpressions":["c.k"],"groupByAliases":["k","n","total","lo"],"groupByAliasToAggregateType":{"k":null,"n":"Count","total":"Sum","lo":"Min"}}"#;

/// `ranges` ranges, each answering `per_range` partial rows over `groups` groups (a group's
/// partials repeat within a range, as pages of a range may); keys padded by `pad` characters.
fn grouped_source_padded(
    ranges: usize,
    per_range: usize,
    groups: usize,
    page: usize,
    pad: usize,
) -> FakeSource {
    let mut source = order_by_source(ranges, 0, page);
    for r in 0..ranges {
        let rows: Vec<Value> = (0..per_range)
            .map(|i| {
                let k = format!("g{:03}{}", (r * 7 + i * 3) % groups, "-".repeat(pad));
                let lo = if i % 4 == 0 { json!("s") } else { json!(i) };
                json!({"groupByItems": [{"item": k}], "payload": {"k": k, "n": {"item": 1 + i % 3}, "total": {"item": i * r}, "lo": {"item": lo}}})
            })
            .collect();
        source.rows.insert(r.to_string(), rows);
    }
    source.plan = GROUPED.into();
    source
}

fn grouped_source(ranges: usize, per_range: usize, groups: usize, page: usize) -> FakeSource {
    grouped_source_padded(ranges, per_range, groups, page, 0)
}

fn grouped_pager(source: Arc<FakeSource>, options: QueryOptions) -> QueryPager {
    QueryPager::new(
        source,
        Query::new(
            "SELECT c.k, COUNT(1) AS n, SUM(c.x) AS total, MIN(c.y) AS lo FROM c GROUP BY c.k",
        ),
        QueryScope::CrossPartition,
        options,
    )
}

/// Reads the query one page per pager, each resumed from the previous page's token, as an
/// application that stores the token between pages would: the values and each page's size.
async fn resumed_page_by_page(
    source: &Arc<FakeSource>,
    options: &QueryOptions,
) -> (Vec<Value>, Vec<usize>) {
    let mut values = Vec::new();
    let mut sizes = Vec::new();
    let mut token: Option<String> = None;
    for _ in 0..1000 {
        let mut o = options.clone();
        o.continuation = token.clone();
        let mut p = grouped_pager(source.clone(), o);
        let page = p.next_page().await.expect("a page").unwrap();
        sizes.push(page.values.len());
        values.extend(page.values);
        match page.continuation.unwrap() {
            Some(t) => token = Some(t),
            None => {
                assert!(p.next_page().await.is_none(), "no page after the last");
                return (values, sizes);
            }
        }
    }
    panic!("the query does not end")
}

async fn whole(source: &Arc<FakeSource>) -> Vec<Value> {
    let pages = all_pages(grouped_pager(source.clone(), QueryOptions::new()))
        .await
        .unwrap();
    assert_eq!(pages.len(), 1, "12 groups fit one page of 100");
    pages.into_iter().flat_map(|p| p.values).collect()
}

#[tokio::test(start_paused = true)]
async fn every_page_of_a_group_by_resumes_exactly() {
    let source = Arc::new(grouped_source(3, 10, 12, 4));
    let want = whole(&source).await;
    assert_eq!(want.len(), 12);
    for max_items in [1u32, 2, 5] {
        for read_limit in [None, Some(1), Some(2)] {
            for concurrency in [1, 4] {
                let mut options = QueryOptions::new()
                    .with_max_item_count(max_items)
                    .with_max_concurrency(concurrency);
                options.page_read_limit = read_limit;
                let (got, sizes) = resumed_page_by_page(&source, &options).await;
                let case = format!(
                    "pages of {max_items}, read limit {read_limit:?}, {concurrency} in flight"
                );
                assert_eq!(got, want, "{case}");
                assert!(
                    sizes.iter().all(|&n| n <= max_items as usize),
                    "{case}: {sizes:?}"
                );
                let empty = sizes.iter().filter(|&&n| n == 0).count();
                match read_limit {
                    // Each range has 3 pages of 4 rows (`max_items` caps the service pages too).
                    Some(_) => assert!(empty >= 3, "{case}: {sizes:?}"),
                    None => assert_eq!(empty, 0, "{case}: {sizes:?}"),
                }
                if concurrency > 1 {
                    // A resumed page fetches again the pages read ahead of its token.
                    continue;
                }
                // The same pages from one pager.
                let pages = all_pages(grouped_pager(source.clone(), options.clone()))
                    .await
                    .unwrap();
                let one_pager: Vec<usize> = pages.iter().map(|p| p.values.len()).collect();
                assert_eq!(one_pager, sizes, "{case}");
            }
        }
    }
}

#[tokio::test(start_paused = true)]
async fn value_aggregates_resume_from_pages_that_end_mid_drain() {
    let mut source = order_by_source(4, 0, 1);
    for r in 0..4 {
        let rows: Vec<Value> = (0..3)
            .map(|i| json!([{"item": i + r}, {"item": {"sum": i * r, "count": 1}}, {"item": if i == 1 { json!("m") } else { json!(i * 10 + r) }}]))
            .collect();
        source.rows.insert(r.to_string(), rows);
    }
    source.plan = r#"{"aggregates":["Sum","Average","Max"],"hasSelectValue":false}"#.into();
    let source = Arc::new(source);
    let want = whole(&source).await;
    assert_eq!(want, vec![json!(30), json!(1.5), json!("m")]);
    for read_limit in [1, 2, 3] {
        let options = QueryOptions::new()
            .with_max_item_count(1)
            .with_page_read_limit(read_limit);
        let (got, sizes) = resumed_page_by_page(&source, &options).await;
        assert_eq!(got, want, "read limit {read_limit}");
        assert_eq!(sizes.iter().filter(|&&n| n == 1).count(), 3, "{sizes:?}");
        assert!(sizes.len() > 4, "{sizes:?}");
    }
}

#[tokio::test(start_paused = true)]
async fn a_page_time_limit_ends_pages_mid_drain() {
    // Every service page takes 5 ms; one in flight at a time.
    let source = Arc::new(grouped_source(3, 10, 12, 4));
    let want = whole(&source).await;
    let options = QueryOptions::new()
        .with_max_item_count(100)
        .with_max_concurrency(1)
        .with_page_time_limit(Duration::from_millis(12));
    let (got, sizes) = resumed_page_by_page(&source, &options).await;
    assert_eq!(got, want);
    // 9 service pages, three per result page (the limit is checked between requests).
    assert_eq!(sizes, vec![0, 0, 12]);
}

#[tokio::test(start_paused = true)]
async fn the_page_deadline_ends_pages_mid_drain() {
    let source = Arc::new(grouped_source(3, 10, 12, 4));
    let want = whole(&source).await;
    let options = QueryOptions::new()
        .with_max_item_count(100)
        .with_max_concurrency(1)
        .with_request_options(
            crate::options::OperationOptions::new()
                .with_end_to_end_timeout(Duration::from_millis(12)),
        );
    let (got, sizes) = resumed_page_by_page(&source, &options).await;
    assert_eq!(got, want);
    assert_eq!(sizes, vec![0, 0, 12]);
}

#[tokio::test(start_paused = true)]
async fn a_split_between_pages_of_a_group_by_loses_and_repeats_nothing() {
    let unsplit = Arc::new(grouped_source(2, 12, 12, 3));
    let want = whole(&unsplit).await;
    let mut source = grouped_source(2, 12, 12, 3);
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
    let options = QueryOptions::new()
        .with_max_item_count(2)
        .with_page_read_limit(1)
        .with_max_concurrency(1);
    let (got, _) = resumed_page_by_page(&source, &options).await;
    assert!(source.split_done.load(Ordering::SeqCst));
    assert_eq!(got, want);
}

#[tokio::test(start_paused = true)]
async fn a_group_table_too_large_for_a_token_says_so_and_the_stream_still_reads_it() {
    let source = Arc::new(grouped_source_padded(2, 3000, 999, 1000, 300));
    let mut p = grouped_pager(source.clone(), QueryOptions::new().with_max_item_count(10));
    let first = p.next_page().await.unwrap().unwrap();
    assert_eq!(first.values.len(), 10);
    let Err(e) = first.continuation else {
        panic!("no token for 656 rows of 300 bytes")
    };
    assert!(e.contains("read the result in one go"), "{e}");
    assert!(e.contains("656 result rows"), "{e}");
    // Past the table's mid-drain state, too: a read limit ends the first page while reading.
    let mut p = grouped_pager(
        source.clone(),
        QueryOptions::new()
            .with_page_read_limit(1)
            .with_max_concurrency(1),
    );
    let page = p.next_page().await.unwrap().unwrap();
    assert!(page.values.is_empty());
    let Err(e) = page.continuation else {
        panic!("no token for 333 groups of 300 bytes")
    };
    assert!(e.contains("groups seen so far"), "{e}");
    let items: Vec<Value> = QueryItems::<Value>::new(grouped_pager(source, QueryOptions::new()))
        .try_collect()
        .await
        .unwrap();
    assert_eq!(
        items.len(),
        666,
        "the keys g000 to g998 that are 0 or 1 modulo 3"
    );
}

mod random_pages {
    use super::*;
    use proptest::prelude::*;

    fn row() -> impl Strategy<Value = Value> {
        (0u8..6, 1i64..4, -20i64..20, 0u8..4).prop_map(|(k, n, t, lo)| {
            let k = format!("g{k}");
            let lo = match lo {
                0 => json!({}),
                1 => json!({"item": null}),
                2 => json!({"item": format!("s{t}")}),
                _ => json!({"item": t}),
            };
            json!({"groupByItems": [{"item": k}], "payload": {"k": k, "n": {"item": n}, "total": {"item": t}, "lo": lo}})
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        /// Random group rows on 3 ranges, read in pages of random size with random read limits
        /// and parallelism, each page from a new pager resumed from the last token, give the
        /// result of one uninterrupted pager.
        #[test]
        fn random_group_rows_paged_and_resumed_equal_one_go(
            rows in proptest::collection::vec(proptest::collection::vec(row(), 0..9), 3),
            service_page in 1usize..4,
            max_items in 1u32..4,
            read_limit in 0u32..3,
            concurrency in 1usize..4,
        ) {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_time()
                .start_paused(true)
                .build()
                .unwrap();
            let mut source = grouped_source(3, 0, 1, service_page);
            for (i, r) in rows.into_iter().enumerate() {
                source.rows.insert(i.to_string(), r);
            }
            let source = Arc::new(source);
            let mut options = QueryOptions::new()
                .with_max_item_count(max_items)
                .with_max_concurrency(concurrency);
            if read_limit > 0 {
                options = options.with_page_read_limit(read_limit);
            }
            let (want, got) = rt.block_on(async {
                let want: Vec<Value> = all_pages(grouped_pager(source.clone(), QueryOptions::new()))
                    .await
                    .unwrap()
                    .into_iter()
                    .flat_map(|p| p.values)
                    .collect();
                (want, resumed_page_by_page(&source, &options).await.0)
            });
            prop_assert_eq!(got, want);
        }
    }
}

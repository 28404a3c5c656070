//! A query scoped to a feed range: it asks only the ranges the feed range overlaps, each for its
//! part, and resumes from its own continuation; the feed ranges of a container together give
//! every row once.

use std::sync::Arc;

use serde_json::Value;

use super::tests::{all_pages, ns, order_by_source, target};
use super::*;
use crate::change_feed::FeedRange;
use crate::query::page_source::PageTarget;

async fn rows_of(
    source: Arc<super::tests::FakeSource>,
    scope: QueryScope,
    options: QueryOptions,
) -> Vec<Value> {
    all_pages(QueryPager::new(
        source,
        Query::new("SELECT * FROM c ORDER BY c.n DESC"),
        scope,
        options,
    ))
    .await
    .unwrap()
    .into_iter()
    .flat_map(|p| p.values)
    .collect()
}

#[tokio::test(start_paused = true)]
async fn a_feed_range_scope_reads_only_the_ranges_it_covers_each_for_its_part() {
    // Ranges "0" [,10) "1" [10,20) "2" [20,30) "3" [30,FF).
    let source = Arc::new(order_by_source(4, 6, 4));
    let whole = FeedRange::new("10", "20").unwrap();
    let got = rows_of(
        source.clone(),
        QueryScope::from(whole),
        QueryOptions::new().with_max_item_count(4),
    )
    .await;
    let mut want: Vec<Value> = source.rows["1"]
        .iter()
        .map(|r| r["payload"].clone())
        .collect();
    want.sort_by(|a, b| b["n"].as_i64().cmp(&a["n"].as_i64()));
    assert_eq!(ns(&got), ns(&want));
    let mut asked = source.targets.lock().unwrap().clone();
    asked.dedup();
    assert_eq!(asked, vec![PageTarget::EpkRange(target("1", "10", "20"))]);

    // A feed range across a boundary asks both ranges, each narrowed to its part.
    source.targets.lock().unwrap().clear();
    let across = FeedRange::new("18", "24").unwrap();
    let _ = rows_of(
        source.clone(),
        QueryScope::from(across),
        QueryOptions::new(),
    )
    .await;
    let mut asked = source.targets.lock().unwrap().clone();
    asked.sort_by(|a, b| format!("{a:?}").cmp(&format!("{b:?}")));
    asked.dedup();
    assert_eq!(
        asked,
        vec![
            PageTarget::EpkRange(target("1", "18", "20")),
            PageTarget::EpkRange(target("2", "20", "24")),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn each_feed_range_resumes_from_its_own_token_and_together_they_give_every_row_once() {
    let source = Arc::new(order_by_source(4, 7, 3));
    let feed_ranges = [("", "10"), ("10", "20"), ("20", "30"), ("30", "FF")];
    let mut all = Vec::new();
    for (min, max) in feed_ranges {
        let scope = QueryScope::from(FeedRange::new(min, max).unwrap());
        // One page, then a resume from its continuation.
        let mut first = QueryPager::new(
            source.clone(),
            Query::new("SELECT * FROM c"),
            scope.clone(),
            QueryOptions::new().with_max_item_count(3),
        );
        let page = first.next_page().await.unwrap().unwrap();
        all.extend(page.values.clone());
        let token = page.continuation.unwrap().expect("more than one page");
        let rest = rows_of_plain(source.clone(), scope.clone(), token.clone()).await;
        all.extend(rest);
        // The token is bound to its scope: another feed range refuses it.
        let other = QueryScope::from(FeedRange::full());
        let mut wrong = QueryPager::new(
            source.clone(),
            Query::new("SELECT * FROM c"),
            other,
            QueryOptions::new().with_continuation(token),
        );
        assert!(wrong.next_page().await.unwrap().is_err());
    }
    let mut ids: Vec<String> = all
        .iter()
        .map(|v| v["id"].as_str().unwrap().to_owned())
        .collect();
    ids.sort();
    let mut want: Vec<String> = (0..28).map(|i: usize| i.to_string()).collect();
    want.sort();
    assert_eq!(ids, want);
}

async fn rows_of_plain(
    source: Arc<super::tests::FakeSource>,
    scope: QueryScope,
    token: String,
) -> Vec<Value> {
    all_pages(QueryPager::new(
        source,
        Query::new("SELECT * FROM c"),
        scope,
        QueryOptions::new()
            .with_max_item_count(3)
            .with_continuation(token),
    ))
    .await
    .unwrap()
    .into_iter()
    .flat_map(|p| p.values)
    .collect()
}

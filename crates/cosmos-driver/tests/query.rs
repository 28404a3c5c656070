//! Queries over real HTTP against the embedded emulator: single-partition queries through the
//! typed streams, every page boundary resumed from its token, parameters, typed rows, metrics and
//! the errors a bad query or a foreign token gets.

use crate::common;

use cosmos_driver::query::{Query, QueryOptions, QueryScope};
use cosmos_driver::{ContainerClient, ErrorKind};
use cosmos_emulator::EmulatorBuilder;
use futures::TryStreamExt;
use serde::Deserialize;
use serde_json::{json, Value};

#[derive(Deserialize, Debug, PartialEq)]
struct Row {
    id: String,
    n: i64,
}

/// A container `q/items` with 30 items in partition `a` (n = 0..30) and 10 in `b`.
async fn seeded(emu: &cosmos_emulator::Emulator) -> ContainerClient {
    let driver = common::driver(common::options(emu)).await;
    common::container(&driver, "q", "items").await;
    let items = driver.container("q", "items");
    for i in 0..30 {
        let doc = json!({"id": format!("a{i:02}"), "pk": "a", "n": i, "kind": if i % 3 == 0 { "x" } else { "y" }});
        items.create_item("a", &doc, None).await.unwrap();
    }
    for i in 0..10 {
        items
            .create_item(
                "b",
                &json!({"id": format!("b{i}"), "pk": "b", "n": 100 + i}),
                None,
            )
            .await
            .unwrap();
    }
    items
}

fn in_a() -> QueryScope {
    QueryScope::PartitionKey("a".into())
}

#[tokio::test]
async fn a_single_partition_query_streams_typed_rows_with_parameters() {
    let emu = common::start(EmulatorBuilder::new()).await;
    let items = seeded(&emu).await;
    let q =
        Query::new("SELECT c.id, c.n FROM c WHERE c.n >= @lo AND c.kind = @k ORDER BY c.n DESC")
            .with_parameter("@lo", 10)
            .unwrap()
            .with_parameter("@k", "x")
            .unwrap();
    let rows: Vec<Row> = items.query_items(q, in_a()).try_collect().await.unwrap();
    let ns: Vec<i64> = rows.iter().map(|r| r.n).collect();
    assert_eq!(ns, vec![27, 24, 21, 18, 15, 12]);
    assert_eq!(rows[0].id, "a27");
}

#[tokio::test]
async fn every_page_of_a_single_partition_query_resumes_from_its_token() {
    let emu = common::start(EmulatorBuilder::new()).await;
    let items = seeded(&emu).await;
    let q = Query::new("SELECT VALUE c.n FROM c WHERE c.n < 25");
    let whole: Vec<i64> = items
        .query_items::<i64>(q.clone(), in_a())
        .try_collect()
        .await
        .unwrap();
    assert_eq!(whole, (0..25).collect::<Vec<_>>());
    for page_size in [1u32, 4, 10] {
        let mut got: Vec<i64> = Vec::new();
        let mut token: Option<String> = None;
        let mut pages = 0;
        loop {
            let mut options = QueryOptions::new().with_max_item_count(page_size);
            if let Some(t) = &token {
                options = options.with_continuation(t.clone());
            }
            let mut stream = items
                .query_items_with::<i64>(q.clone(), in_a(), options)
                .into_pages();
            let Some(page) = stream.try_next().await.unwrap() else {
                break;
            };
            pages += 1;
            assert!(page.items().len() <= page_size as usize);
            assert!(page.request_charge() > 0.0);
            assert!(page.session_token().is_some());
            assert_eq!(page.diagnostics().len(), 1, "one service page per page");
            token = page.continuation().unwrap().map(str::to_owned);
            got.extend(page.into_items());
            if token.is_none() {
                break;
            }
            assert!(pages < 100);
        }
        assert_eq!(got, whole, "page size {page_size}");
    }
}

#[tokio::test]
async fn bad_queries_and_foreign_tokens_are_refused_with_the_reason() {
    let emu = common::start(EmulatorBuilder::new()).await;
    let items = seeded(&emu).await;
    let e = items
        .query_items::<Value>(Query::new("SELECT * FROM c WHERE"), in_a())
        .try_collect::<Vec<_>>()
        .await
        .unwrap_err();
    assert_eq!(e.status(), Some(400), "{e}");

    let q = Query::new("SELECT * FROM c");
    let mut first = items
        .query_items_with::<Value>(
            q.clone(),
            in_a(),
            QueryOptions::new().with_max_item_count(2),
        )
        .into_pages();
    let token = first
        .try_next()
        .await
        .unwrap()
        .unwrap()
        .continuation()
        .unwrap()
        .unwrap()
        .to_owned();
    for (query, scope, why) in [
        (
            Query::new("SELECT * FROM c WHERE c.n > 1"),
            in_a(),
            "different query",
        ),
        (
            q.clone(),
            QueryScope::PartitionKey("b".into()),
            "different partition key",
        ),
    ] {
        let e = items
            .query_items_with::<Value>(
                query,
                scope,
                QueryOptions::new().with_continuation(token.clone()),
            )
            .try_collect::<Vec<_>>()
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidInput);
        assert!(e.message().contains(why), "{}", e.message());
    }
}

#[tokio::test]
async fn with_a_slow_primary_every_page_is_hedged_and_the_result_is_unchanged() {
    use cosmos_driver::hedging::{AvailabilityStrategy, HedgeThreshold, HedgingStrategy};
    use cosmos_emulator::faults::{FaultRule, OpKind, Reaction};
    let emu = common::start(EmulatorBuilder::new()).await;
    let hedged = common::driver(
        common::options(&emu)
            .with_preferred_regions(["East US", "West US", "North Europe"])
            .with_availability_strategy(AvailabilityStrategy::Hedging(HedgingStrategy::new(
                HedgeThreshold::new(std::time::Duration::from_millis(100)).unwrap(),
            ))),
    )
    .await;
    let items = seeded(&emu).await;
    let q = Query::new("SELECT VALUE c.id FROM c ORDER BY c.n");
    let options = || QueryOptions::new().with_max_item_count(5);
    let unhedged: Vec<String> = items
        .query_items_with(q.clone(), in_a(), options())
        .try_collect()
        .await
        .unwrap();
    assert_eq!(unhedged.len(), 30);

    let slow = emu.faults().add(
        FaultRule::new(Reaction::delay_ms(5_000))
            .in_regions(["East US"])
            .for_ops([OpKind::Query]),
    );
    let started = std::time::Instant::now();
    let pages: Vec<_> = hedged
        .container("q", "items")
        .query_items_with::<String>(q, in_a(), options())
        .into_pages()
        .try_collect()
        .await
        .unwrap();
    let elapsed = started.elapsed();
    let got: Vec<String> = pages
        .iter()
        .flat_map(|p| p.items().iter().cloned())
        .collect();
    assert_eq!(got, unhedged, "hedged pages give the same result");
    let summary = pages.last().unwrap().summary();
    assert_eq!(summary.pages, 6);
    // Five consecutive alternate wins (the default threshold) mark the partition unhealthy in East
    // US, so the sixth page goes to West US directly, unhedged.
    assert_eq!(summary.hedged_pages, 5, "{summary:?}");
    assert_eq!(summary.alternate_wins, 5, "{summary:?}");
    for page in &pages[..5] {
        let hedge = page.diagnostics()[0].hedge().expect("the page raced");
        assert_eq!(
            hedge.alternate_region().map(|r| r.as_str()),
            Some("West US")
        );
        assert!(hedge.was_hedge());
    }
    assert_eq!(
        common::regions_of(&pages[5].diagnostics()[0]),
        vec!["West US"]
    );
    assert_eq!(
        slow.hits(),
        5,
        "the hedged pages asked the slow primary first"
    );
    assert!(
        elapsed < std::time::Duration::from_secs(5),
        "no page waited for the slow region: {elapsed:?}"
    );
}

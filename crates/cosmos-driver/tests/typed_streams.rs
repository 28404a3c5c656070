//! Queries and the change feed as item streams with a running charge, and errors that name the
//! item that does not fit, against the embedded emulator.

use crate::common;

use cosmos_driver::prelude::*;
use cosmos_emulator::EmulatorBuilder;
use serde::Deserialize;
use serde_json::json;

#[derive(Deserialize, Debug, PartialEq)]
struct Doc {
    id: String,
    pk: String,
    n: i64,
}

async fn setup() -> (cosmos_emulator::Emulator, ContainerClient) {
    let emu = common::start(EmulatorBuilder::new()).await;
    let driver = common::driver(common::options(&emu)).await;
    common::container(&driver, "db", "c").await;
    let c = driver.container("db", "c");
    for i in 0..5 {
        c.create_item(
            "p",
            &json!({"id": format!("d{i}"), "pk": "p", "n": i}),
            None,
        )
        .await
        .unwrap();
    }
    (emu, c)
}

#[tokio::test]
async fn a_query_stream_keeps_a_running_charge() {
    let (_emu, c) = setup().await;
    let mut items = c.query_items::<Doc>(
        Query::new("SELECT * FROM c WHERE c.n >= @lo")
            .with_parameter("@lo", 1)
            .unwrap(),
        QueryScope::CrossPartition,
    );
    assert_eq!(items.request_charge_so_far(), 0.0);
    let mut seen = Vec::new();
    while let Some(item) = items.next().await {
        seen.push(item.unwrap().n);
    }
    seen.sort();
    assert_eq!(seen, vec![1, 2, 3, 4]);
    assert!(items.request_charge_so_far() > 0.0);
    assert!(items.pages_read() >= 1);
}

#[tokio::test]
async fn the_change_feed_reads_as_items_with_a_charge_and_a_continuation() {
    let (_emu, c) = setup().await;
    let mut feed = c.change_feed::<Doc>(ChangeFeedStart::Beginning, FeedScope::Container);
    let mut ids = Vec::new();
    while let Some(item) = feed.next().await {
        ids.push(item.unwrap().id);
    }
    ids.sort();
    assert_eq!(ids, ["d0", "d1", "d2", "d3", "d4"]);
    assert!(feed.request_charge_so_far() > 0.0);
    let token = feed.continuation().expect("a continuation").to_owned();

    c.create_item("p", &json!({"id": "d5", "pk": "p", "n": 5}), None)
        .await
        .unwrap();
    let rest: Vec<Doc> = c
        .change_feed::<Doc>(ChangeFeedStart::Continuation(token), FeedScope::Container)
        .try_collect()
        .await
        .unwrap();
    assert_eq!(rest.len(), 1);
    assert_eq!(rest[0].id, "d5");

    let pages: Vec<_> = c
        .change_feed::<Doc>(ChangeFeedStart::Beginning, FeedScope::Container)
        .into_pages()
        .try_collect()
        .await
        .unwrap();
    assert!(pages.last().unwrap().is_caught_up());
    assert!(pages.iter().all(|p| !p.diagnostics().is_empty()));
}

#[tokio::test]
async fn one_item_that_does_not_fit_is_named_by_id_and_index_with_the_attempts() {
    let (_emu, c) = setup().await;
    c.create_item("p", &json!({"id": "odd", "pk": "p"}), None)
        .await
        .unwrap();

    let e = c
        .change_feed::<Doc>(ChangeFeedStart::Beginning, FeedScope::Container)
        .try_collect::<Vec<_>>()
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Deserialization);
    let m = e.message();
    assert!(m.contains("item 5 (id \"odd\")"), "{m}");
    assert!(m.contains("missing field `n`"), "{m}");
    assert!(m.contains("1 attempt"), "{m}");
    assert_eq!(e.diagnostics().requests().len(), 1);

    let e = c
        .query_items::<Doc>(Query::new("SELECT * FROM c"), QueryScope::CrossPartition)
        .try_collect::<Vec<_>>()
        .await
        .unwrap_err();
    assert!(e.message().contains("(id \"odd\")"), "{}", e.message());
    assert!(e.message().contains("item 5"), "{}", e.message());
    assert!(e.message().contains("attempt"), "{}", e.message());
    assert!(!e.diagnostics().requests().is_empty());
}

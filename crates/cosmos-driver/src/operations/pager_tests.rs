//! The feed cursor as a table, and paging through a double of the pipeline entry.

use super::*;
use crate::operations::test_entry::{Answer, TableEntry};
use crate::protocol::{ContainerReference, DatabaseReference};

fn container() -> ContainerReference {
    DatabaseReference::new("d").unwrap().container("c").unwrap()
}

fn feed() -> CosmosOperation {
    CosmosOperation::read_all_items(container())
}

const FEED: &str = "read feed /dbs/d/colls/c/docs";

const P1: &str = r#"{"Documents":[{"id":"1"}]}"#;
const P1_AGAIN: &str = r#"{"Documents":[{"id":"1"}],"_count":1}"#;
const P2: &str = r#"{"Documents":[{"id":"2"}]}"#;
const P3: &str = r#"{"Documents":[{"id":"3"}]}"#;
const P6: &str = r#"{"Documents":[{"id":"6"}]}"#;
const P7: &str = r#"{"Documents":[]}"#;

async fn all_pages(
    entry: &TableEntry,
    operation: CosmosOperation,
) -> Vec<Result<String, Option<u16>>> {
    let mut cursor = FeedCursor::new(operation);
    let options = OperationOptions::default();
    let mut pages = Vec::new();
    while let Some(page) = next_page(&mut cursor, entry, &options).await {
        pages.push(
            page.map(|r| String::from_utf8(r.body().to_vec()).unwrap())
                .map_err(|e| e.status()),
        );
    }
    pages
}

#[tokio::test]
async fn follows_continuations_until_the_service_sends_none() {
    let entry = TableEntry::default()
        .answer(FEED, None, Answer::Page(P1, Some("t1")))
        .answer(FEED, Some("t1"), Answer::Page(P2, Some("t2")))
        .answer(FEED, Some("t2"), Answer::Page(P3, None));
    let pages = all_pages(&entry, feed()).await;
    assert_eq!(pages, [Ok(P1.into()), Ok(P2.into()), Ok(P3.into())]);
    let tokens: Vec<_> = entry.sent().into_iter().map(|(_, t)| t).collect();
    assert_eq!(tokens, [None, Some("t1".into()), Some("t2".into())]);
}

#[tokio::test]
async fn starts_from_the_callers_continuation() {
    let entry = TableEntry::default()
        .answer(FEED, Some("t5"), Answer::Page(P6, Some("t6")))
        .answer(FEED, Some("t6"), Answer::Page(P7, None));
    let pages = all_pages(&entry, feed().with_continuation("t5").unwrap()).await;
    assert_eq!(pages, [Ok(P6.into()), Ok(P7.into())]);
}

#[tokio::test]
async fn an_error_ends_the_feed_after_it_is_returned() {
    let entry = TableEntry::default()
        .answer(FEED, None, Answer::Page(P1, Some("t1")))
        .answer(FEED, Some("t1"), Answer::Fail(503));
    let pages = all_pages(&entry, feed()).await;
    assert_eq!(pages, [Ok(P1.into()), Err(Some(503))]);
}

#[tokio::test]
async fn a_page_that_hands_back_its_own_token_ends_with_an_error() {
    let entry = TableEntry::default()
        .answer(FEED, None, Answer::Page(P1, Some("t1")))
        .answer(FEED, Some("t1"), Answer::Page(P1_AGAIN, Some("t1")));
    let pages = all_pages(&entry, feed()).await;
    assert_eq!(pages.len(), 2);
    assert!(pages[1].is_err());
    assert_eq!(entry.sent().len(), 2, "no third request");
}

#[tokio::test]
async fn an_empty_continuation_ends_the_feed() {
    let entry = TableEntry::default().answer(FEED, None, Answer::Page(P1, Some("")));
    assert_eq!(all_pages(&entry, feed()).await, [Ok(P1.into())]);
}

#[tokio::test]
async fn an_operation_that_is_not_a_feed_is_refused_before_any_request() {
    let entry = TableEntry::default();
    let read = CosmosOperation::read_item(container().item("i").unwrap()).with_partition_key("p");
    let pages = all_pages(&entry, read).await;
    assert_eq!(pages, [Err(None)]);
    assert!(entry.sent().is_empty());
}

#[tokio::test]
async fn tokens_that_cycle_end_with_an_error() {
    let entry = TableEntry::default()
        .answer(FEED, None, Answer::Page(P7, Some("A")))
        .answer(FEED, Some("A"), Answer::Page(P7, Some("B")))
        .answer(FEED, Some("B"), Answer::Page(P7, Some("A")));
    let mut cursor = FeedCursor::new(feed());
    let options = OperationOptions::default();
    let mut pages = Vec::new();
    while let Some(page) = next_page(&mut cursor, &entry, &options).await {
        pages.push(page.map(|_| ()).map_err(|e| e.to_string()));
    }
    assert_eq!(pages.len(), 3, "{pages:?}");
    let e = pages[2].as_ref().unwrap_err();
    assert!(e.contains("cycle") && e.contains(FEED), "{e}");
    assert_eq!(entry.sent().len(), 3, "no fourth request");
}

#[tokio::test]
async fn a_page_that_is_not_a_feed_page_ends_with_an_error() {
    for body in [
        r#"{"Documents":[{"id":"a","pk":"#,
        r#"{"Documents":{"id":"a"}}"#,
        "",
        r#"{"_rid":"x"}"#,
    ] {
        let body: &'static str = Box::leak(body.to_owned().into_boxed_str());
        let entry = TableEntry::default()
            .answer(FEED, None, Answer::Page(P1, Some("t1")))
            .answer(FEED, Some("t1"), Answer::Page(body, Some("t2")));
        let mut cursor = FeedCursor::new(feed());
        let options = OperationOptions::default();
        assert!(next_page(&mut cursor, &entry, &options)
            .await
            .unwrap()
            .is_ok());
        let e = next_page(&mut cursor, &entry, &options)
            .await
            .unwrap()
            .unwrap_err();
        assert_eq!(
            e.kind(),
            crate::error::ErrorKind::Deserialization,
            "{body:?}"
        );
        assert!(e.message().contains("status 200"), "{e}");
        assert!(next_page(&mut cursor, &entry, &options).await.is_none());
        assert_eq!(
            entry.sent().len(),
            2,
            "{body:?}: nothing after the bad page"
        );
    }
}

#[test]
fn the_cursor_as_a_table() {
    // (continuation of each page in turn, whether advancing after it is Ok, the next request's token)
    let mut cursor = FeedCursor::new(feed());
    assert_eq!(cursor.next_request().unwrap().unwrap().continuation(), None);
    cursor.advance(Some("a"), 1).unwrap();
    assert_eq!(
        cursor.next_request().unwrap().unwrap().continuation(),
        Some("a")
    );
    cursor.advance(Some("b"), 1).unwrap();
    assert_eq!(
        cursor.next_request().unwrap().unwrap().continuation(),
        Some("b")
    );
    cursor.advance(None, 0).unwrap();
    assert!(cursor.next_request().is_none());
}

const RANGES: &str = "read feed /dbs/d/colls/c/pkranges";

#[derive(serde::Deserialize, Debug, PartialEq)]
struct Id {
    id: String,
}

#[tokio::test]
async fn a_listing_read_whole_gathers_every_page() {
    let entry = TableEntry::default()
        .answer(
            RANGES,
            None,
            Answer::Page(r#"{"PartitionKeyRanges":[{"id":"0"}]}"#, Some("r1")),
        )
        .answer(
            RANGES,
            Some("r1"),
            Answer::Page(r#"{"PartitionKeyRanges":[]}"#, Some("r2")),
        )
        .answer(
            RANGES,
            Some("r2"),
            Answer::Page(r#"{"PartitionKeyRanges":[{"id":"1"},{"id":"2"}]}"#, None),
        );
    let op = CosmosOperation::read_partition_key_ranges(container());
    let ids: Vec<Id> = read_whole(&entry, op, &OperationOptions::default())
        .await
        .unwrap();
    let ids: Vec<&str> = ids.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids, ["0", "1", "2"]);
    assert_eq!(entry.sent().len(), 3);
}

#[tokio::test]
async fn a_listing_read_whole_refuses_a_cycle_and_a_body_that_is_not_a_page() {
    let entry = TableEntry::default()
        .answer(
            RANGES,
            None,
            Answer::Page(r#"{"PartitionKeyRanges":[{"id":"0"}]}"#, Some("a")),
        )
        .answer(
            RANGES,
            Some("a"),
            Answer::Page(r#"{"PartitionKeyRanges":[{"id":"1"}]}"#, Some("b")),
        )
        .answer(
            RANGES,
            Some("b"),
            Answer::Page(r#"{"PartitionKeyRanges":[{"id":"2"}]}"#, Some("a")),
        );
    let op = CosmosOperation::read_partition_key_ranges(container());
    let e = read_whole::<_, Id>(&entry, op.clone(), &OperationOptions::default())
        .await
        .unwrap_err();
    assert!(e.message().contains("continuation"), "{}", e.message());

    let entry =
        TableEntry::default().answer(RANGES, None, Answer::Page(r#"{"Documents":[]}"#, None));
    let e = read_whole::<_, Id>(&entry, op, &OperationOptions::default())
        .await
        .unwrap_err();
    assert!(
        e.message().contains("PartitionKeyRanges"),
        "{}",
        e.message()
    );

    let e = read_whole::<_, Id>(
        &TableEntry::default(),
        feed_of_nothing(),
        &OperationOptions::default(),
    )
    .await
    .unwrap_err();
    assert!(
        e.message().contains("not a feed operation"),
        "{}",
        e.message()
    );
}

fn feed_of_nothing() -> CosmosOperation {
    CosmosOperation::read_container(container())
}

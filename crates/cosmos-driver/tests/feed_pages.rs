//! Paged feeds over real HTTP against the embedded emulator: every page is its own request through
//! the pipeline, continued by the service's token.

use crate::common;

use cosmos_driver::{
    CosmosOperation, DatabaseReference, ErrorKind, OperationOptions, PartitionKeyDefinition,
};
use cosmos_emulator::EmulatorBuilder;
use serde_json::{json, Value};

#[tokio::test]
async fn a_pager_reads_every_item_one_page_at_a_time() {
    let emu = common::start(EmulatorBuilder::new()).await;
    let driver = common::driver(common::options(&emu)).await;
    let o = OperationOptions::new();
    let db = DatabaseReference::new("pages-db").unwrap();
    driver
        .execute(CosmosOperation::create_database(db.clone()), &o)
        .await
        .unwrap();
    let c = db.container("pages").unwrap();
    driver
        .execute(
            CosmosOperation::create_container(
                c.clone(),
                PartitionKeyDefinition::new("/pk").unwrap(),
            ),
            &o,
        )
        .await
        .unwrap();
    for i in 0..5 {
        let create = CosmosOperation::create_item(c.clone())
            .with_partition_key("p")
            .with_json_body(&json!({"id": format!("i{i}"), "pk": "p"}))
            .unwrap();
        driver.execute(create, &o).await.unwrap();
    }

    let feed = CosmosOperation::read_all_items(c.clone()).with_max_item_count(2);
    let mut pager = driver.pages(feed, o.clone());
    let mut ids = Vec::new();
    let mut sizes = Vec::new();
    let mut activity_ids = Vec::new();
    while let Some(page) = pager.next_page().await {
        let page = page.unwrap();
        activity_ids.push(page.activity_id().map(str::to_owned));
        let docs = page.json::<Value>().unwrap()["Documents"]
            .as_array()
            .unwrap()
            .clone();
        sizes.push(docs.len());
        ids.extend(docs.iter().map(|d| d["id"].as_str().unwrap().to_owned()));
    }
    assert_eq!(sizes, [2, 2, 1]);
    ids.sort();
    assert_eq!(ids, ["i0", "i1", "i2", "i3", "i4"]);
    assert!(pager.next_page().await.is_none(), "the feed stays ended");
    activity_ids.dedup();
    assert_eq!(activity_ids.len(), 3, "one request per page");
}

#[tokio::test]
async fn a_pager_refuses_an_operation_that_is_not_a_feed() {
    let emu = common::start(EmulatorBuilder::new()).await;
    let driver = common::driver(common::options(&emu)).await;
    let item = DatabaseReference::new("d")
        .unwrap()
        .container("c")
        .unwrap()
        .item("i")
        .unwrap();
    let read = CosmosOperation::read_item(item).with_partition_key("p");
    let mut pager = driver.pages(read, OperationOptions::new());
    let err = pager.next_page().await.unwrap().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    assert!(err.to_string().contains("not a feed operation"), "{err}");
    assert!(pager.next_page().await.is_none());
}

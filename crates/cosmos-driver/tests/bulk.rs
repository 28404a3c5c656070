//! Bulk over real HTTP against the embedded emulator: a throttled insert where every item lands
//! exactly once and results come back in the caller's order, every kind of operation with its own
//! outcome, and a split in the middle of a run.

use crate::common;

use std::collections::BTreeSet;

use cosmos_driver::batch::BatchOperationKind;
use cosmos_driver::bulk::{BulkOperation, BulkOptions};
use cosmos_driver::patch::PatchInstructions;
use cosmos_driver::query::{Query, QueryScope};
use cosmos_driver::ContainerClient;
use cosmos_emulator::EmulatorBuilder;
use futures::{StreamExt, TryStreamExt};
use serde::Deserialize;
use serde_json::json;

fn item(i: usize) -> serde_json::Value {
    json!({"id": format!("item-{i}"), "pk": format!("pk-{}", i % 97), "n": i})
}

fn create(i: usize) -> BulkOperation {
    BulkOperation::create(format!("pk-{}", i % 97), &item(i)).unwrap()
}

#[derive(Deserialize)]
struct Id {
    id: String,
}

/// Every id in the container (a cross-partition query), duplicates kept.
async fn all_ids(c: &ContainerClient) -> Vec<String> {
    c.query_items::<Id>(Query::new("SELECT c.id FROM c"), QueryScope::CrossPartition)
        .map_ok(|r| r.id)
        .try_collect()
        .await
        .unwrap()
}

#[tokio::test]
async fn a_throttled_bulk_insert_lands_every_item_exactly_once_in_order() {
    const N: usize = 1000;
    // 4 ranges share 800 RU/s: 200 RU per range per second, less than one batch of 100 creates
    // (500 RU), so every range is throttled after its first batch of each second.
    let emu = common::start(
        EmulatorBuilder::new()
            .partitions(4)
            .enforce_throughput(true),
    )
    .await;
    let driver = common::driver(common::options(&emu)).await;
    common::container_with_throughput(&driver, "load", "items", 800).await;
    let items = driver.container("load", "items");

    let response = items
        .bulk_with(BulkOptions::new().with_content_response(false))
        .run(futures::stream::iter((0..N).map(create)))
        .await
        .expect("the run starts");

    let stats = response.stats().clone();
    assert!(stats.throttled > 0, "no 429 was seen: {stats:?}");
    assert!(stats.batches >= 4, "{stats:?}");
    assert!(stats.request_charge >= 5.0 * N as f64, "{stats:?}");
    let results = response.into_results();
    assert_eq!(results.len(), N);
    for (i, r) in results.iter().enumerate() {
        let r = r.as_ref().unwrap_or_else(|e| panic!("operation {i}: {e}"));
        assert_eq!(r.index, i);
        assert_eq!(r.id.as_deref(), Some(format!("item-{i}").as_str()));
        assert_eq!(r.kind, BatchOperationKind::Create);
        assert_eq!(r.status.status, 201, "operation {i}: {:?}", r.message);
        assert!(r.resource_body.is_none());
    }

    let ids = all_ids(&items).await;
    assert_eq!(ids.len(), N, "each item exactly once");
    let expected: BTreeSet<String> = (0..N).map(|i| format!("item-{i}")).collect();
    assert_eq!(ids.into_iter().collect::<BTreeSet<_>>(), expected);
}

#[tokio::test]
async fn every_kind_of_operation_answers_in_the_callers_order() {
    let emu = common::start(EmulatorBuilder::new().partitions(3)).await;
    let driver = common::driver(common::options(&emu)).await;
    common::container(&driver, "load", "items").await;
    let items = driver.container("load", "items");
    for i in 0..4 {
        items
            .create_item(
                format!("pk-{i}"),
                &json!({"id": "x", "pk": format!("pk-{i}"), "n": 1}),
                None,
            )
            .await
            .unwrap();
    }

    let ops = vec![
        BulkOperation::create("pk-0", &json!({"id": "new", "pk": "pk-0"})).unwrap(),
        BulkOperation::create("pk-1", &json!({"id": "x", "pk": "pk-1"})).unwrap(),
        BulkOperation::upsert("pk-2", &json!({"id": "x", "pk": "pk-2", "n": 5})).unwrap(),
        BulkOperation::replace("pk-3", "x", &json!({"id": "x", "pk": "pk-3", "n": 6})).unwrap(),
        BulkOperation::patch("pk-0", "x", &PatchInstructions::new().increment("/n", 10)).unwrap(),
        BulkOperation::delete("pk-1", "x").unwrap(),
        BulkOperation::delete("pk-1", "missing").unwrap(),
        BulkOperation::replace("pk-9", "nope", &json!({"id": "nope", "pk": "pk-9"})).unwrap(),
    ];
    let response = items.bulk().run_iter(ops).await.unwrap();
    let statuses: Vec<u16> = response
        .results()
        .iter()
        .map(|r| r.as_ref().unwrap().status.status)
        .collect();
    assert_eq!(statuses, vec![201, 409, 200, 200, 200, 204, 404, 404]);
    assert_eq!(response.succeeded(), 5);
    let patched = response.results()[4].as_ref().unwrap();
    assert_eq!(
        patched.item::<serde_json::Value>().unwrap().unwrap()["n"],
        11
    );
    assert!(response.request_charge() > 0.0);

    // The writes are visible.
    assert!(items
        .read_item::<serde_json::Value>("pk-1", "x", None)
        .await
        .unwrap_err()
        .is_not_found());
    let v: serde_json::Value = items
        .read_item("pk-3", "x", None)
        .await
        .unwrap()
        .into_item()
        .unwrap();
    assert_eq!(v["n"], 6);
}

#[tokio::test]
async fn a_split_in_the_middle_of_a_run_reroutes_and_loses_nothing() {
    const N: usize = 1200;
    let emu = common::start(EmulatorBuilder::new().partitions(2)).await;
    let driver = common::driver(common::options(&emu)).await;
    common::container(&driver, "load", "items").await;
    let items = driver.container("load", "items");

    // The run reads the ranges before its first operation; range "0" splits after the 400th
    // operation was handed over, so later batches for it name a range that is gone.
    let emu_ref = &emu;
    let ops = futures::stream::iter(0..N).then(|i| async move {
        if i == 400 {
            common::split_range(emu_ref, "load", "items", "0").await;
        }
        create(i)
    });
    let response = items
        .bulk_with(BulkOptions::new().with_max_pending_operations(200))
        .run(ops)
        .await
        .unwrap();
    let stats = response.stats().clone();
    assert!(stats.range_refreshes >= 1, "{stats:?}");
    assert!(stats.rerouted >= 1, "{stats:?}");
    for (i, r) in response.results().iter().enumerate() {
        let r = r.as_ref().unwrap_or_else(|e| panic!("operation {i}: {e}"));
        assert_eq!((r.index, r.status.status), (i, 201), "{:?}", r.message);
    }
    let ids = all_ids(&items).await;
    assert_eq!(ids.len(), N);
    assert_eq!(ids.into_iter().collect::<BTreeSet<_>>().len(), N);
}

#[tokio::test]
async fn hierarchical_keys_are_batched_by_range_not_by_key() {
    use cosmos_driver::protocol::PartitionKeyValue;
    use cosmos_driver::{
        CosmosOperation, DatabaseReference, OperationOptions, PartitionKey, PartitionKeyDefinition,
    };
    const N: usize = 400;
    let emu = common::start(EmulatorBuilder::new().partitions(4)).await;
    let driver = common::driver(common::options(&emu)).await;
    let db = DatabaseReference::new("h").unwrap();
    let none = OperationOptions::new();
    driver
        .execute(CosmosOperation::create_database(db.clone()), &none)
        .await
        .unwrap();
    let definition =
        PartitionKeyDefinition::hierarchical(["/tenant".to_owned(), "/user".to_owned()]).unwrap();
    driver
        .execute(
            CosmosOperation::create_container(db.container("two").unwrap(), definition),
            &none,
        )
        .await
        .unwrap();
    let items = driver.container("h", "two");
    // 100 distinct keys: routed by key, they would need at least 100 batches.
    let op = |i: usize| {
        let (tenant, user) = (format!("t{}", i % 10), format!("u{}", i % 100));
        let key = PartitionKey::hierarchical([
            PartitionKeyValue::from(tenant.as_str()),
            PartitionKeyValue::from(user.as_str()),
        ])
        .unwrap();
        BulkOperation::create(
            key,
            &json!({"id": format!("i{i}"), "tenant": tenant, "user": user}),
        )
        .unwrap()
    };
    let response = items
        .bulk()
        .run(futures::stream::iter((0..N).map(op)))
        .await
        .expect("the run starts");
    let stats = response.stats().clone();
    assert!(stats.batches <= 12, "full keys go by range: {stats:?}");
    for (i, r) in response.into_results().iter().enumerate() {
        let r = r.as_ref().unwrap_or_else(|e| panic!("operation {i}: {e}"));
        assert_eq!(r.status.status, 201, "operation {i}: {:?}", r.message);
    }
    let ids: BTreeSet<String> = all_ids(&items).await.into_iter().collect();
    assert_eq!(ids.len(), N, "every item once");
}

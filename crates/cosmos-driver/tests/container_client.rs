//! The typed container handle over real HTTP against the embedded emulator.

mod common;

use cosmos_driver::patch::PatchInstructions;
use cosmos_driver::ErrorKind;
use cosmos_emulator::EmulatorBuilder;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Debug, PartialEq, Clone)]
struct Order {
    id: String,
    pk: String,
    n: i64,
}

#[tokio::test]
async fn typed_item_operations_round_trip() {
    let emu = common::start(EmulatorBuilder::new()).await;
    let driver = common::driver(common::options(&emu)).await;
    common::container(&driver, "shop", "orders").await;
    let orders = driver.container("shop", "orders");
    let order = Order {
        id: "o-1".into(),
        pk: "c-7".into(),
        n: 1,
    };

    let created = orders.create_item("c-7", &order).await.unwrap();
    assert_eq!(created.status(), 201);
    assert!(created.request_charge() > 0.0);
    assert!(created.session_token().is_some());

    let read: Order = orders
        .read_item("c-7", "o-1")
        .await
        .unwrap()
        .into_item()
        .unwrap();
    assert_eq!(read, order);

    let patched = orders
        .patch_item("c-7", "o-1", PatchInstructions::new().increment("/n", 41))
        .await
        .unwrap();
    assert_eq!(patched.item::<Order>().unwrap().n, 42);

    let upserted = Order {
        n: 7,
        ..order.clone()
    };
    orders.upsert_item("c-7", &upserted).await.unwrap();
    let read: Order = orders
        .clone()
        .read_item("c-7", "o-1")
        .await
        .unwrap()
        .into_item()
        .unwrap();
    assert_eq!(read.n, 7);

    orders.delete_item("c-7", "o-1").await.unwrap();
    let gone = orders.read_item("c-7", "o-1").await.unwrap_err();
    assert!(gone.is_not_found(), "{gone}");
}

#[tokio::test]
async fn a_handle_with_a_bad_id_fails_each_operation_with_the_reason() {
    let emu = common::start(EmulatorBuilder::new()).await;
    let driver = common::driver(common::options(&emu)).await;
    let bad = driver.container("shop", "a/b");
    let e = bad.read_item("p", "x").await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidInput);
    assert!(e.message().contains('/'), "{}", e.message());
    let e = bad
        .query_items::<serde_json::Value>(
            cosmos_driver::query::Query::new("SELECT * FROM c"),
            cosmos_driver::query::QueryScope::CrossPartition,
        )
        .into_pages();
    use futures::StreamExt;
    let mut e = e;
    let first = e.next().await.unwrap().unwrap_err();
    assert_eq!(first.kind(), ErrorKind::InvalidInput);
}

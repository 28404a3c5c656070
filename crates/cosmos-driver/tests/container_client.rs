//! The typed container handle over real HTTP against the embedded emulator.

use crate::common;

use cosmos_driver::prelude::*;
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

    let created = orders.create_item("c-7", &order, None).await.unwrap();
    assert_eq!(created.status(), 201);
    assert!(created.request_charge() > 0.0);
    assert!(created.etag().is_some());
    assert!(!created.diagnostics().requests().is_empty());
    assert_eq!(created.item().unwrap(), order);
    let token = SessionToken::parse(created.session_token().expect("a session token")).unwrap();

    let read = orders
        .read_item::<Order>(
            "c-7",
            "o-1",
            Some(ItemOptions::new().with_session_token(token)),
        )
        .await
        .unwrap();
    assert_eq!(read.status(), 200);
    assert_eq!(read.etag(), created.etag());
    assert_eq!(read.into_item().unwrap(), order);

    let patched = orders
        .patch_item::<Order>(
            "c-7",
            "o-1",
            &PatchInstructions::new().increment("/n", 41),
            None,
        )
        .await
        .unwrap();
    assert_eq!(patched.item().unwrap().n, 42);

    let upserted = Order {
        n: 7,
        ..order.clone()
    };
    orders.upsert_item("c-7", &upserted, None).await.unwrap();
    let read: Order = orders
        .clone()
        .read_item("c-7", "o-1", None)
        .await
        .unwrap()
        .into_item()
        .unwrap();
    assert_eq!(read.n, 7);

    let deleted = orders.delete_item("c-7", "o-1", None).await.unwrap();
    assert_eq!(deleted.status(), 204);
    assert!(deleted.item().is_err(), "a delete carries no item");
    let gone = orders
        .read_item::<Order>("c-7", "o-1", None)
        .await
        .unwrap_err();
    assert!(gone.is_not_found(), "{gone}");
}

#[tokio::test]
async fn replace_with_an_etag_condition_fails_once_the_item_changed() {
    let emu = common::start(EmulatorBuilder::new()).await;
    let driver = common::driver(common::options(&emu)).await;
    common::container(&driver, "shop", "orders").await;
    let orders = driver.container("shop", "orders");
    let order = Order {
        id: "o-1".into(),
        pk: "c-7".into(),
        n: 1,
    };
    let first = orders.create_item("c-7", &order, None).await.unwrap();
    let first_etag = first.etag().unwrap().to_owned();

    let second = Order {
        n: 2,
        ..order.clone()
    };
    let replaced = orders
        .replace_item(
            "c-7",
            "o-1",
            &second,
            Some(ItemOptions::new().with_if_match(first_etag.clone())),
        )
        .await
        .unwrap();
    assert_eq!(replaced.status(), 200);
    assert_ne!(replaced.etag(), Some(first_etag.as_str()));
    assert_eq!(replaced.into_item().unwrap(), second);

    let stale = orders
        .replace_item(
            "c-7",
            "o-1",
            &Order {
                n: 3,
                ..order.clone()
            },
            Some(ItemOptions::new().with_if_match(first_etag)),
        )
        .await
        .unwrap_err();
    assert!(stale.is_precondition_failed(), "{stale}");
    let now: Order = orders
        .read_item("c-7", "o-1", None)
        .await
        .unwrap()
        .into_item()
        .unwrap();
    assert_eq!(now.n, 2, "the stale replace changed nothing");

    let missing = orders
        .replace_item(
            "c-7",
            "nope",
            &Order {
                id: "nope".into(),
                ..order
            },
            None,
        )
        .await
        .unwrap_err();
    assert!(missing.is_not_found(), "{missing}");
}

#[tokio::test]
async fn a_write_without_content_answers_no_item_but_its_etag() {
    let emu = common::start(EmulatorBuilder::new()).await;
    let driver = common::driver(common::options(&emu)).await;
    common::container(&driver, "shop", "orders").await;
    let orders = driver.container("shop", "orders");
    let order = Order {
        id: "o-1".into(),
        pk: "c-7".into(),
        n: 1,
    };
    let created = orders
        .create_item(
            "c-7",
            &order,
            Some(ItemOptions::new().with_content_response_on_write(false)),
        )
        .await
        .unwrap();
    assert_eq!(created.status(), 201);
    assert!(created.etag().is_some());
    let e = created.item().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Deserialization);
    assert!(e.message().contains("no item"), "{}", e.message());
}

#[tokio::test]
async fn a_patch_reports_one_billed_charge_in_its_response_and_its_diagnostics() {
    let emu = common::start(EmulatorBuilder::new()).await;
    let driver = common::driver(common::options(&emu)).await;
    common::container(&driver, "shop", "orders").await;
    let orders = driver.container("shop", "orders");
    let order = Order {
        id: "o-1".into(),
        pk: "c-7".into(),
        n: 1,
    };
    orders.create_item("c-7", &order, None).await.unwrap();
    let patched = orders
        .patch_item::<Order>(
            "c-7",
            "o-1",
            &PatchInstructions::new().increment("/n", 1),
            Some(ItemOptions::new().with_patch_strategy(PatchStrategy::ReadModifyWrite)),
        )
        .await
        .unwrap();
    let rows: f64 = patched
        .diagnostics()
        .requests()
        .iter()
        .map(|r| r.request_charge())
        .sum();
    assert!(
        patched.diagnostics().requests().len() >= 2,
        "read-modify-write: a read and a replace"
    );
    assert_eq!(
        patched.request_charge(),
        patched.diagnostics().request_charge()
    );
    assert_eq!(patched.request_charge(), rows);
    assert!(
        patched.request_charge() > patched.response().request_charge(),
        "the read is billed too: {} vs the replace's {}",
        patched.request_charge(),
        patched.response().request_charge()
    );
}

#[tokio::test]
async fn a_handle_with_a_bad_id_fails_each_operation_with_the_reason() {
    let emu = common::start(EmulatorBuilder::new()).await;
    let driver = common::driver(common::options(&emu)).await;
    let bad = driver.container("shop", "a/b");
    let e = bad.read_item::<Order>("p", "x", None).await.unwrap_err();
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

#[tokio::test]
async fn per_call_item_options_keep_a_read_out_of_an_excluded_region() {
    let emu = common::start(EmulatorBuilder::new()).await;
    let regions = ["East US", "West US", "North Europe"];
    let driver = common::driver(common::options(&emu).with_preferred_regions(regions)).await;
    common::container(&driver, "shop", "orders").await;
    let orders = driver.container("shop", "orders");
    let order = Order {
        id: "o-1".into(),
        pk: "c-7".into(),
        n: 1,
    };
    orders.create_item("c-7", &order, None).await.unwrap();

    let plain = orders.read_item::<Order>("c-7", "o-1", None).await.unwrap();
    assert_eq!(common::regions_of(plain.diagnostics())[0], "East US");

    let elsewhere = orders
        .read_item::<Order>(
            "c-7",
            "o-1",
            Some(
                ItemOptions::new()
                    .with_excluded_regions(["East US"])
                    .with_availability_strategy(AvailabilityStrategy::Disabled),
            ),
        )
        .await
        .unwrap();
    let went = common::regions_of(elsewhere.diagnostics());
    assert!(!went.is_empty());
    assert!(went.iter().all(|r| r != "East US"), "{went:?}");
    assert_eq!(elsewhere.into_item().unwrap(), order);
}

#[tokio::test]
async fn delete_all_items_of_a_partition_key() {
    use futures::StreamExt;
    let emu = common::start(EmulatorBuilder::new()).await;
    let driver = common::driver(common::options(&emu)).await;
    common::container(&driver, "shop", "orders").await;
    let orders = driver.container("shop", "orders");
    for (i, pk) in ["a", "a", "a", "b", "b"].iter().enumerate() {
        let order = Order {
            id: format!("o-{i}"),
            pk: (*pk).into(),
            n: i as i64,
        };
        orders.create_item(*pk, &order, None).await.unwrap();
    }

    let response = orders
        .delete_all_items_by_partition_key("a", None)
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert!(response.request_charge() > 0.0);

    let left: Vec<Order> = orders
        .read_all_items::<Order>()
        .collect::<Vec<_>>()
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    let mut ids: Vec<_> = left
        .iter()
        .map(|o| (o.pk.as_str(), o.id.as_str()))
        .collect();
    ids.sort_unstable();
    assert_eq!(ids, [("b", "o-3"), ("b", "o-4")]);

    // A key with no items: nothing to delete, still a success.
    let none = orders
        .delete_all_items_by_partition_key("zzz", None)
        .await
        .unwrap();
    assert_eq!(none.status(), 200);
    // A container that does not exist: 404.
    let missing = driver
        .container("shop", "nope")
        .delete_all_items_by_partition_key("a", None)
        .await
        .unwrap_err();
    assert!(missing.is_not_found(), "{missing}");
}

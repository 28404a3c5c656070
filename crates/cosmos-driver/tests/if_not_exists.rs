//! `create_database_if_not_exists` and `create_container_if_not_exists` against the embedded
//! emulator: the first call creates, later ones answer what exists, racing calls create once.

use crate::common;

use cosmos_driver::prelude::*;
use cosmos_emulator::EmulatorBuilder;

#[tokio::test]
async fn a_database_is_created_once_and_then_answered_as_existing() {
    let emu = common::start(EmulatorBuilder::new()).await;
    let driver = common::driver(common::options(&emu)).await;

    let first = driver
        .create_database_if_not_exists("shop", None)
        .await
        .unwrap();
    assert!(first.created());
    assert_eq!(first.value().id, "shop");
    let again = driver
        .create_database_if_not_exists("shop", Some(ThroughputProperties::manual(400)))
        .await
        .unwrap();
    assert!(!again.created());
    assert_eq!(again.value().resource_id, first.value().resource_id);
    // An existing database is answered as it is: the throughput of a second call is not applied.
    let err = driver.database("shop").read_throughput().await.unwrap_err();
    assert!(err.is_not_found(), "{err}");
}

#[tokio::test]
async fn a_container_is_created_once_and_then_answered_as_existing() {
    let emu = common::start(EmulatorBuilder::new()).await;
    let driver = common::driver(common::options(&emu)).await;
    let shop = driver
        .create_database_if_not_exists("shop", None)
        .await
        .unwrap()
        .into_value();
    let shop = driver.database(&shop.id);
    let key = PartitionKeyDefinition::new("/pk").unwrap();
    let properties = ContainerProperties::new("orders", &key);

    let first = shop
        .create_container_if_not_exists(&properties, None)
        .await
        .unwrap();
    assert!(first.created());
    assert_eq!(first.value().properties().id, "orders");
    assert_eq!(first.value().response().status(), 201);

    let again = shop
        .create_container_if_not_exists(&properties, None)
        .await
        .unwrap();
    assert!(!again.created());
    assert_eq!(again.value().response().status(), 200);
    assert_eq!(
        again.value().properties().partition_key.paths,
        vec!["/pk".to_owned()]
    );
}

#[tokio::test]
async fn racing_calls_create_the_container_once_and_all_succeed() {
    let emu = common::start(EmulatorBuilder::new()).await;
    let driver = common::driver(common::options(&emu)).await;
    driver.create_database("shop", None).await.unwrap();
    let key = PartitionKeyDefinition::new("/pk").unwrap();
    let properties = ContainerProperties::new("orders", &key);
    let calls = (0..6).map(|_| {
        let shop = driver.database("shop");
        let properties = properties.clone();
        async move {
            shop.create_container_if_not_exists(&properties, None)
                .await
                .map(|r| r.created())
        }
    });
    let outcomes = futures::future::join_all(calls).await;
    let created = outcomes
        .into_iter()
        .map(|o| o.expect("every racing call succeeds"))
        .filter(|c| *c)
        .count();
    assert_eq!(created, 1);
}

#[tokio::test]
async fn a_bad_id_is_refused_before_sending() {
    let emu = common::start(EmulatorBuilder::new()).await;
    let driver = common::driver(common::options(&emu)).await;
    let err = driver
        .create_database_if_not_exists("bad/id", None)
        .await
        .unwrap_err();
    assert!(err.is_invalid_input(), "{err}");
}

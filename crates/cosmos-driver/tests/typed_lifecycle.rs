//! Database and container lifecycle from the typed handles, against the embedded emulator.

use crate::common;

use cosmos_driver::prelude::*;
use cosmos_emulator::EmulatorBuilder;

#[tokio::test]
async fn a_database_and_its_container_are_created_read_replaced_and_deleted_from_the_handles() {
    let emu = common::start(EmulatorBuilder::new()).await;
    let driver = common::driver(common::options(&emu)).await;

    let shop = driver
        .create_database("shop", Some(ThroughputProperties::manual(400)))
        .await
        .unwrap();
    assert_eq!(shop.read().await.unwrap().id, "shop");
    assert_eq!(
        shop.read_throughput()
            .await
            .unwrap()
            .throughput()
            .manual_throughput(),
        Some(400)
    );
    let again = driver.create_database("shop", None).await.unwrap_err();
    assert!(again.is_conflict(), "{again}");

    let key = PartitionKeyDefinition::new("/pk").unwrap();
    let created = shop
        .create_container(&ContainerProperties::new("orders", &key), None)
        .await
        .unwrap();
    assert_eq!(created.properties().id, "orders");

    let orders = shop.container("orders");
    let mut properties = orders.read_properties().await.unwrap().into_properties();
    assert_eq!(properties.partition_key.paths, vec!["/pk".to_owned()]);
    properties.default_ttl = Some(3600);
    let replaced = orders.replace_properties(&properties).await.unwrap();
    assert_eq!(replaced.properties().default_ttl, Some(3600));
    assert_eq!(
        orders
            .read_properties()
            .await
            .unwrap()
            .properties()
            .default_ttl,
        Some(3600)
    );

    orders.delete().await.unwrap();
    let gone = orders.read_properties().await.unwrap_err();
    assert!(gone.is_not_found(), "{gone}");

    shop.delete().await.unwrap();
    let gone = shop.read().await.unwrap_err();
    assert!(gone.is_not_found(), "{gone}");
}

#[tokio::test]
async fn a_database_handle_creates_itself_and_a_bad_id_fails_with_the_reason() {
    let emu = common::start(EmulatorBuilder::new()).await;
    let driver = common::driver(common::options(&emu)).await;
    let db = driver.database("plain");
    assert_eq!(db.create(None).await.unwrap().id, "plain");
    let e = db.read_throughput().await.unwrap_err();
    assert!(e.is_not_found(), "no shared throughput: {e}");
    let bad = driver.create_database("a/b", None).await.unwrap_err();
    assert_eq!(bad.kind(), ErrorKind::InvalidInput);
}

#[tokio::test]
async fn listings_stream_their_resources_with_a_running_charge_or_page_by_page() {
    let emu = common::start(EmulatorBuilder::new()).await;
    let driver = common::driver(common::options(&emu)).await;
    let shop = driver.create_database("shop", None).await.unwrap();
    let key = PartitionKeyDefinition::new("/pk").unwrap();
    for id in ["a", "b"] {
        shop.create_container(&ContainerProperties::new(id, &key), None)
            .await
            .unwrap();
    }
    let mut databases = driver.databases();
    let mut ids = Vec::new();
    while let Some(d) = databases.next().await {
        ids.push(d.unwrap().id);
    }
    assert_eq!(ids, ["shop"]);
    assert!(databases.request_charge_so_far() >= 0.0);

    let pages: Vec<ResourcePage<ContainerProperties>> =
        shop.containers().into_pages().try_collect().await.unwrap();
    let mut names: Vec<_> = pages
        .iter()
        .flat_map(|p| p.items().iter().map(|c| c.id.clone()))
        .collect();
    names.sort();
    assert_eq!(names, ["a", "b"]);
    assert!(pages.last().unwrap().continuation().is_none());
    assert!(!pages[0].diagnostics().requests().is_empty());
}

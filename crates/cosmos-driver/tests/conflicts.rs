//! The conflict feed of a container, against the embedded emulator (multi-write). The emulator
//! records a conflict only for concurrent writes in two regions under a `Custom` conflict
//! resolution policy (its tests/write_conflicts.rs); this container has the default, last writer
//! wins, and no concurrent writes, so its feed is empty. The shape of a conflict is read in the
//! driver's unit tests.

use crate::common;

use cosmos_driver::prelude::*;
use cosmos_emulator::EmulatorBuilder;

#[tokio::test]
async fn a_multi_write_containers_conflict_feed_reads_and_single_conflicts_are_addressed() {
    let emu = common::start(
        EmulatorBuilder::new()
            .regions(["West US", "East US"])
            .multi_write(true),
    )
    .await;
    let driver = common::driver(common::options(&emu)).await;
    let shop = driver.create_database("shop", None).await.unwrap();
    let key = PartitionKeyDefinition::new("/pk").unwrap();
    shop.create_container(&ContainerProperties::new("orders", &key), None)
        .await
        .unwrap();
    let orders = driver.container("shop", "orders");

    let conflicts: Vec<ConflictProperties> = orders.conflicts().try_collect().await.unwrap();
    assert!(conflicts.is_empty(), "{conflicts:?}");
    let mut pages = orders.conflicts().into_pages();
    let page = pages.next().await.expect("one page").unwrap();
    assert!(page.items().is_empty());
    assert!(page.request_charge() > 0.0);

    let missing = orders.read_conflict("nope").await.unwrap_err();
    assert!(missing.is_not_found(), "{missing}");
    let missing = orders.delete_conflict("nope").await.unwrap_err();
    assert!(missing.is_not_found(), "{missing}");
    let bad = orders.read_conflict("a/b").await.unwrap_err();
    assert!(bad.is_invalid_input(), "{bad}");

    let gone = driver
        .container("shop", "nowhere")
        .conflicts()
        .try_collect::<Vec<_>>()
        .await;
    assert!(gone.unwrap_err().is_not_found());
}

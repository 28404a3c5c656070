//! A container deleted and recreated under the same name by another client: the first response
//! that names the new container's resource id drops the driver's session token (and caches) of the
//! old one, so reads with the old, higher LSNs do not fail with 404/1002.

mod common;

use cosmos_driver::{CosmosOperation, DatabaseReference, OperationOptions, PartitionKeyDefinition};
use cosmos_emulator::EmulatorBuilder;

#[tokio::test]
async fn a_recreated_container_drops_the_old_session_token() {
    let emu = common::start(EmulatorBuilder::new().partitions(1)).await;
    let ours = common::driver(common::options(&emu)).await;
    let other = common::driver(common::options(&emu)).await;
    let c = common::container(&ours, "db", "c").await;
    // Our token reaches a high LSN in the old container.
    for n in 0..10 {
        common::create_item(&ours, &c, &format!("old{n}"), "p", n).await;
    }
    let link = std::sync::Arc::<str>::from(c.link());
    let old = ours.sessions().token_for(&link).expect("a token");

    // Another client deletes the container and creates it again.
    other
        .execute(
            CosmosOperation::delete_container(c.clone()),
            &OperationOptions::new(),
        )
        .await
        .unwrap();
    let again = DatabaseReference::new("db")
        .unwrap()
        .container("c")
        .unwrap();
    other
        .execute(
            CosmosOperation::create_container(again, PartitionKeyDefinition::new("/pk").unwrap()),
            &OperationOptions::new(),
        )
        .await
        .unwrap();

    // Our first write to the new container names its new resource id.
    common::create_item(&ours, &c, "new", "p", 1).await;
    let now = ours.sessions().token_for(&link).expect("a token");
    assert_ne!(now.to_string(), old.to_string());
    // Reads of the new container succeed at once: no stale token, no 404/1002.
    let r = ours
        .execute(common::read(&c, "new", "p"), &OperationOptions::new())
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.diagnostics().requests().len(), 1);
}

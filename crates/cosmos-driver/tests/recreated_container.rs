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

#[tokio::test]
async fn a_read_sent_first_to_a_recreated_container_reads_it_again_and_succeeds() {
    let emu = common::start(EmulatorBuilder::new().partitions(1)).await;
    let ours = common::driver(common::options(&emu)).await;
    let other = common::driver(common::options(&emu)).await;
    let c = common::container(&ours, "db", "c").await;
    for n in 0..10 {
        common::create_item(&ours, &c, &format!("old{n}"), "p", n).await;
    }
    let link = std::sync::Arc::<str>::from(c.link());
    let old = ours.sessions().token_for(&link).expect("a token");

    other
        .execute(
            CosmosOperation::delete_container(c.clone()),
            &OperationOptions::new(),
        )
        .await
        .unwrap();
    other
        .execute(
            CosmosOperation::create_container(
                c.clone(),
                PartitionKeyDefinition::new("/pk").unwrap(),
            ),
            &OperationOptions::new(),
        )
        .await
        .unwrap();
    common::create_item(&other, &c, "new", "p", 1).await;

    // Our first request to the new container is a read, with the old container's token: the new
    // container cannot reach its LSNs (404/1002). The driver reads the container again, finds
    // another resource id, drops the token and reads once more.
    let r = ours
        .execute(common::read(&c, "new", "p"), &OperationOptions::new())
        .await
        .expect("the read succeeds once the stale token is dropped");
    assert_eq!(r.status(), 200);
    let retried = r
        .diagnostics()
        .requests()
        .iter()
        .filter(|a| {
            a.status()
                .is_some_and(|s| s.status == 404 && s.sub_status == 1002)
        })
        .count();
    assert!(retried >= 1, "the stale token met 404/1002 first");
    let now = ours
        .sessions()
        .token_for(&link)
        .expect("a token of the new container");
    assert_ne!(now.to_string(), old.to_string());

    // A read the new container cannot serve for another reason is not retried forever: an item
    // that is not there is a plain 404.
    let missing = ours
        .execute(common::read(&c, "absent", "p"), &OperationOptions::new())
        .await
        .expect_err("no such item");
    assert!(missing.is_not_found());
}

#[tokio::test]
async fn a_caller_session_token_on_a_recreated_container_is_left_as_given() {
    let emu = common::start(EmulatorBuilder::new().partitions(1)).await;
    let ours = common::driver(common::options(&emu)).await;
    let c = common::container(&ours, "db", "c").await;
    for n in 0..10 {
        common::create_item(&ours, &c, &format!("old{n}"), "p", n).await;
    }
    let link = std::sync::Arc::<str>::from(c.link());
    let old = ours.sessions().token_for(&link).expect("a token");
    let other = common::driver(common::options(&emu)).await;
    other
        .execute(
            CosmosOperation::delete_container(c.clone()),
            &OperationOptions::new(),
        )
        .await
        .unwrap();
    other
        .execute(
            CosmosOperation::create_container(
                c.clone(),
                PartitionKeyDefinition::new("/pk").unwrap(),
            ),
            &OperationOptions::new(),
        )
        .await
        .unwrap();
    common::create_item(&other, &c, "new", "p", 1).await;
    let e = ours
        .execute(
            common::read(&c, "new", "p"),
            &OperationOptions::new().with_session_token(old),
        )
        .await
        .expect_err("the caller's token names LSNs the new container never reached");
    assert_eq!((e.status(), e.sub_status()), (Some(404), Some(1002)), "{e}");
}

//! A container deleted and recreated under the same name by another client: the first response
//! that names the new container's resource id drops the driver's session token (and caches) of the
//! old one, so reads with the old, higher LSNs do not fail with 404/1002; a read sent first, with
//! the old token, makes the driver read the container again and run once more.

use crate::common;

use std::sync::Arc;

use cosmos_driver::{
    ContainerReference, CosmosDriver, CosmosOperation, OperationOptions, PartitionKeyDefinition,
    SessionToken,
};
use cosmos_emulator::{Emulator, EmulatorBuilder};

/// Our driver writes ten items to `db/c` (its token reaches LSN 10 there); another client then
/// deletes the container, creates it again and writes item "new". Returns our driver, the
/// container, its link and our token of the old container.
async fn recreated_behind_our_back() -> (
    Emulator,
    CosmosDriver,
    ContainerReference,
    Arc<str>,
    SessionToken,
) {
    let emu = common::start(EmulatorBuilder::new().partitions(1)).await;
    let ours = common::driver(common::options(&emu)).await;
    let other = common::driver(common::options(&emu)).await;
    let c = common::container(&ours, "db", "c").await;
    for n in 0..10 {
        common::create_item(&ours, &c, &format!("old{n}"), "p", n).await;
    }
    let link = Arc::<str>::from(c.link());
    let old = ours.sessions().token_for(&link).expect("a token");
    let none = OperationOptions::new();
    other
        .execute(CosmosOperation::delete_container(c.clone()), &none)
        .await
        .unwrap();
    other
        .execute(
            CosmosOperation::create_container(
                c.clone(),
                PartitionKeyDefinition::new("/pk").unwrap(),
            ),
            &none,
        )
        .await
        .unwrap();
    common::create_item(&other, &c, "new", "p", 1).await;
    (emu, ours, c, link, old)
}

#[tokio::test]
async fn a_recreated_container_drops_the_old_session_token() {
    let (_emu, ours, c, link, old) = recreated_behind_our_back().await;
    // Our first write to the new container names its new resource id.
    common::create_item(&ours, &c, "ours", "p", 1).await;
    let now = ours.sessions().token_for(&link).expect("a token");
    assert_ne!(now.to_string(), old.to_string());
    // Reads of the new container succeed at once: no stale token, no 404/1002.
    let r = ours
        .execute(common::read(&c, "ours", "p"), &OperationOptions::new())
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.diagnostics().requests().len(), 1);
}

#[tokio::test]
async fn a_read_sent_first_to_a_recreated_container_reads_it_again_and_succeeds() {
    let (_emu, ours, c, link, old) = recreated_behind_our_back().await;
    // Our first request to the new container is a read, with the old container's token: the new
    // container cannot reach its LSNs (404/1002). The driver reads the container again, finds
    // another resource id, drops the token and reads once more.
    let r = ours
        .execute(common::read(&c, "new", "p"), &OperationOptions::new())
        .await
        .expect("the read succeeds once the stale token is dropped");
    assert_eq!(r.status(), 200);
    let stale = r
        .diagnostics()
        .requests()
        .iter()
        .filter(|a| {
            a.status()
                .is_some_and(|s| s.status == 404 && s.sub_status == 1002)
        })
        .count();
    assert!(stale >= 1, "the stale token met 404/1002 first");
    let now = ours
        .sessions()
        .token_for(&link)
        .expect("a token of the new container");
    assert_ne!(now.to_string(), old.to_string());

    // An item that is not there is still a plain 404.
    let missing = ours
        .execute(common::read(&c, "absent", "p"), &OperationOptions::new())
        .await
        .expect_err("no such item");
    assert!(missing.is_not_found());
}

#[tokio::test]
async fn a_caller_session_token_on_a_recreated_container_is_left_as_given() {
    let (_emu, ours, c, _link, old) = recreated_behind_our_back().await;
    let e = ours
        .execute(
            common::read(&c, "new", "p"),
            &OperationOptions::new().with_session_token(old),
        )
        .await
        .expect_err("the caller's token names LSNs the new container never reached");
    assert_eq!((e.status(), e.sub_status()), (Some(404), Some(1002)), "{e}");
}

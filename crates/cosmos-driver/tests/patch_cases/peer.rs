//! The loop against a Cosmos DB server written outside this project (`@vercel/cosmosdb-server`,
//! see `tests/conformance/third-party/run.sh`): its native PATCH and the driver's loop must agree.
//! Runs when `COSMOS_PEER_ENDPOINT` names the server; otherwise it says why it is skipped.

use cosmos_driver::patch::{
    apply_patch_ops, JsonPointer, PatchFailure, PatchInstructions, PatchOpKind,
};
use cosmos_driver::{
    CosmosDriver, CosmosOperation, Credential, DatabaseReference, DriverOptions,
    PartitionKeyDefinition,
};
use serde_json::json;

use super::differential::{base_doc, compare_all, random_lists, table};
use super::support::loop_options;

/// The well-known emulator key; the peer does not check signatures, the driver still signs.
const KEY: &str =
    "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw==";

/// Lists on which the peer is known to differ from the service's documented behaviour, left out
/// with the reason (each checked against the peer's source, version 1.0.1).
fn known_peer_differences(spec: &PatchInstructions) -> Option<&'static str> {
    let text = serde_json::to_string(spec).unwrap_or_default();
    if text.contains(r#""op":"increment","path":"/nul""#) {
        return Some("the peer treats an increment of null as creating the field");
    }
    if text.contains(r#""path":"/id""#) {
        return Some("the peer lets /id be patched; the service refuses it");
    }
    // When a write's direct parent is missing the peer writes into the grandparent instead of
    // refusing ("can only create a child object of an existing node").
    let mut doc = base_doc("x");
    if let Err(e) = apply_patch_ops(&mut doc, &spec.operations) {
        let writes = matches!(
            e.kind,
            PatchOpKind::Add | PatchOpKind::Set | PatchOpKind::Increment | PatchOpKind::Move
        );
        let parent = JsonPointer::parse(&e.path).ok().map(|p| {
            let tokens = p.tokens();
            JsonPointer::from_tokens(
                tokens[..tokens.len().saturating_sub(1)]
                    .iter()
                    .map(String::as_str),
            )
        });
        if let (true, PatchFailure::ParentMissing { missing }, Some(parent)) =
            (writes, &e.reason, parent)
        {
            if parent.as_str() == missing {
                return Some(
                    "the peer writes into the grandparent when a write's parent is missing",
                );
            }
        }
    }
    None
}

#[tokio::test]
async fn the_loop_and_the_peers_native_patch_agree() {
    let Ok(endpoint) = std::env::var("COSMOS_PEER_ENDPOINT") else {
        println!("skipped: COSMOS_PEER_ENDPOINT is not set (tests/conformance/third-party/run.sh sets it)");
        return;
    };
    let options = DriverOptions::new(endpoint.clone(), Credential::master_key(KEY).unwrap());
    let driver = CosmosDriver::new(options)
        .await
        .expect("the driver reads the peer's account");
    let db = DatabaseReference::new(format!("patch-{}", std::process::id())).unwrap();
    let o = loop_options();
    driver
        .execute(CosmosOperation::create_database(db.clone()), &o)
        .await
        .expect("create database");
    let c = db.container("items").unwrap();
    driver
        .execute(
            CosmosOperation::create_container(
                c.clone(),
                PartitionKeyDefinition::new("/pk").unwrap(),
            ),
            &o,
        )
        .await
        .expect("create container");

    let mut lists = table();
    lists.extend(random_lists(0x5eed_0002, 150));
    let (kept, left_out): (Vec<_>, Vec<_>) = lists
        .into_iter()
        .partition(|spec| known_peer_differences(spec).is_none());
    for spec in &left_out {
        println!(
            "left out ({}): {}",
            known_peer_differences(spec).unwrap_or_default(),
            json!(spec)
        );
    }
    let tally = compare_all(&driver, &endpoint, &c, &kept).await;
    println!(
        "differential vs the third-party server's native PATCH: {} lists, {} applied alike, {} refused by both, {} disagreements",
        kept.len(),
        tally.applied,
        tally.refused,
        tally.disagreements.len()
    );
    driver
        .execute(CosmosOperation::delete_database(db), &o)
        .await
        .ok();
    assert!(
        tally.disagreements.is_empty(),
        "{}",
        tally.disagreements.join("\n")
    );
    assert!(
        tally.applied >= kept.len() / 4,
        "too few lists applied to mean much: {tally:?}"
    );
}

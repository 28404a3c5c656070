//! Session tokens through the loop, across regions with replication lag: the caller's token seeds
//! the Read, the Replace goes to the hub, and the response's token covers the write.

use cosmos_driver::patch::PatchInstructions;
use cosmos_driver::SessionToken;
use cosmos_emulator::faults::{FaultRule, OpKind, Reaction};
use cosmos_emulator::{EmulatorBuilder, ReplicationLag};
use serde_json::json;

use super::support::{create, loop_options, patch, read_doc, setup, user_part};
use crate::common;

fn lagging_west() -> EmulatorBuilder {
    EmulatorBuilder::new().region_replication_lag("West US", ReplicationLag::fixed_ms(60_000))
}

#[tokio::test]
async fn the_caller_token_seeds_the_read_in_a_lagging_region() {
    let (emu, writer, c) = setup(lagging_west()).await;
    let created = create(&writer, &c, &json!({"id": "a", "pk": "p", "n": 1})).await;
    let token =
        SessionToken::parse(created.session_token().expect("the create's session token")).unwrap();
    // A second driver (no tracked tokens) that reads from West US first, where the item has not
    // arrived and will not for a minute.
    let reader =
        common::driver(common::options(&emu).with_preferred_regions(["West US", "East US"])).await;
    let inc = PatchInstructions::new().increment("/n", 1);

    // Without the caller's token the Read has no way to know West US is behind: a plain 404.
    let e = patch(&reader, &c, "a", "p", &inc, &loop_options())
        .await
        .unwrap_err();
    assert!(
        e.is_not_found() && !e.is_read_session_not_available(),
        "{e}"
    );
    assert_eq!(common::regions_of(e.diagnostics()), ["West US"]);

    // With it, West US answers 404/1002 and the Read moves on until it sees the write.
    emu.counters().reset();
    let o = loop_options().with_session_token(token.clone());
    let r = patch(&reader, &c, "a", "p", &inc, &o).await.unwrap();
    assert_eq!(r.json::<serde_json::Value>().unwrap()["n"], json!(2));
    let rows = r.diagnostics().requests();
    let seen: Vec<(String, String)> = rows
        .iter()
        .map(|row| {
            (
                row.region().map(|r| r.to_string()).unwrap_or_default(),
                row.status().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        seen.first().map(|s| s.1.as_str()),
        Some("404/1002"),
        "{seen:?}"
    );
    assert_eq!(
        seen.last(),
        Some(&("East US".to_owned(), "200".to_owned())),
        "the replace goes to the hub: {seen:?}"
    );
    assert_eq!(emu.counters().get("East US", OpKind::Replace), 1);
    assert_eq!(emu.counters().get("West US", OpKind::Replace), 0);

    // The PATCH's token is at least as advanced as the caller's, and covers the replace.
    let after = SessionToken::parse(r.session_token().expect("the replace's token")).unwrap();
    assert_eq!(after.merge(&token), after, "the token never moves back");
    assert_ne!(after, token, "the replace advanced it");
    let (stored, _) = read_doc(&writer, &c, "a", "p").await;
    assert_eq!(user_part(&stored), json!({"id": "a", "pk": "p", "n": 2}));
}

#[tokio::test]
async fn consecutive_patches_in_one_session_never_lose_an_update() {
    // The lagging region serves reads first; every PATCH must still read the latest version,
    // because each one carries the session the previous one produced.
    let builder =
        EmulatorBuilder::new().region_replication_lag("West US", ReplicationLag::fixed_ms(2_000));
    let emu = common::start(builder).await;
    let writer = common::driver(common::options(&emu)).await;
    let c = common::container(&writer, "db", "c").await;
    let created = create(&writer, &c, &json!({"id": "a", "pk": "p", "n": 0})).await;
    let reader =
        common::driver(common::options(&emu).with_preferred_regions(["West US", "East US"])).await;
    let mut token = SessionToken::parse(created.session_token().unwrap()).unwrap();
    for i in 1..=5 {
        let o = loop_options().with_session_token(token.clone());
        let r = patch(
            &reader,
            &c,
            "a",
            "p",
            &PatchInstructions::new().increment("/n", 1),
            &o,
        )
        .await
        .unwrap();
        assert_eq!(
            r.json::<serde_json::Value>().unwrap()["n"],
            json!(i),
            "PATCH {i} read the latest version"
        );
        token = token.merge(&SessionToken::parse(r.session_token().unwrap()).unwrap());
    }
    let (stored, _) = read_doc(&writer, &c, "a", "p").await;
    assert_eq!(stored["n"], json!(5));
}

/// Counts the requests of `op` that carry exactly `token` (the rule lets them through unchanged).
fn carrying(
    emu: &cosmos_emulator::Emulator,
    op: OpKind,
    token: &str,
) -> cosmos_emulator::faults::FaultGuard {
    emu.faults().add(
        FaultRule::new(Reaction::delay_ms(0))
            .for_ops([op])
            .with_header("x-ms-session-token", token),
    )
}

#[tokio::test]
async fn each_sub_operation_carries_the_token_the_spec_names() {
    let (emu, writer, c) = setup(EmulatorBuilder::new()).await;
    let created = create(&writer, &c, &json!({"id": "a", "pk": "p", "n": 1})).await;
    let caller = created.session_token().unwrap().to_owned();
    // The item moves on after the caller's token was taken.
    patch(
        &writer,
        &c,
        "a",
        "p",
        &PatchInstructions::new().set("/moved", json!(true)),
        &loop_options(),
    )
    .await
    .unwrap();
    let current = writer
        .execute(common::read(&c, "a", "p"), &loop_options())
        .await
        .unwrap();
    let current = current.session_token().unwrap().to_owned();
    assert_ne!(caller, current);

    // A fresh driver (no tracked tokens) patches with the caller's older token. The first replace
    // is refused with 412 only if it carries the read's token, so a second round runs.
    let patcher = common::driver(common::options(&emu)).await;
    let lose_first = emu.faults().add(
        FaultRule::new(Reaction::respond(412, 0))
            .for_ops([OpKind::Replace])
            .with_header("x-ms-session-token", current.as_str())
            .first(1),
    );
    let replace_with_read_token = carrying(&emu, OpKind::Replace, &current);
    let replace_with_caller_token = carrying(&emu, OpKind::Replace, &caller);
    let read_with_caller_token = carrying(&emu, OpKind::Read, &caller);
    let read_with_advanced_token = carrying(&emu, OpKind::Read, &current);

    let o = loop_options().with_session_token(SessionToken::parse(&caller).unwrap());
    let r = patch(
        &patcher,
        &c,
        "a",
        "p",
        &PatchInstructions::new().increment("/n", 1),
        &o,
    )
    .await
    .unwrap();
    assert_eq!(r.json::<serde_json::Value>().unwrap()["n"], json!(2));

    assert_eq!(
        read_with_caller_token.hits(),
        1,
        "the first read carries the caller's token"
    );
    assert_eq!(
        lose_first.hits(),
        1,
        "the first replace carries the first read's token"
    );
    assert_eq!(
        read_with_advanced_token.hits(),
        1,
        "the second read carries the token the first read advanced to"
    );
    assert_eq!(
        replace_with_read_token.hits(),
        1,
        "so does the second replace"
    );
    assert_eq!(
        replace_with_caller_token.hits(),
        0,
        "no replace carries the caller's older token"
    );
}

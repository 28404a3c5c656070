//! PATCH strategies against the emulator: the service's verb in one round trip (with its
//! condition), the loop, and `Auto` learning whether the account serves the verb.

use cosmos_driver::patch::PatchInstructions;
use cosmos_driver::{ErrorKind, OperationOptions, PatchStrategy};
use cosmos_emulator::faults::{FaultRule, OpKind, Reaction};
use serde_json::json;

use super::support::{counter_setup, patch, read_doc, requests_of};

fn strategy(s: PatchStrategy) -> OperationOptions {
    OperationOptions::new().with_patch_strategy(s)
}

fn bump() -> PatchInstructions {
    PatchInstructions::new()
        .increment("/n", 1)
        .add("/log/-", json!("x"))
}

#[tokio::test]
async fn native_is_one_patch_request() {
    let (emu, driver, c) = counter_setup().await;
    let reads_before = requests_of(&emu, OpKind::Read);
    let r = patch(
        &driver,
        &c,
        "a",
        "p",
        &bump(),
        &strategy(PatchStrategy::Native),
    )
    .await
    .unwrap();
    assert_eq!(r.status(), 200);
    let returned: serde_json::Value = r.json().unwrap();
    assert_eq!(
        (returned["n"].clone(), returned["log"].clone()),
        (json!(2), json!(["x"]))
    );
    assert_eq!(requests_of(&emu, OpKind::Patch), 1);
    assert_eq!(requests_of(&emu, OpKind::Replace), 0);
    assert_eq!(requests_of(&emu, OpKind::Read), reads_before, "no read");
    assert_eq!(r.diagnostics().requests().len(), 1);
    let (stored, etag) = read_doc(&driver, &c, "a", "p").await;
    assert_eq!(stored["n"], 2);
    assert_eq!(r.etag(), Some(etag.as_str()));
}

#[tokio::test]
async fn native_carries_the_condition_and_a_false_one_answers_412() {
    let (_emu, driver, c) = counter_setup().await;
    let native = strategy(PatchStrategy::Native);
    let guarded = bump().with_condition("from c where c.n < 2");
    patch(&driver, &c, "a", "p", &guarded, &native)
        .await
        .expect("n is 1: the condition holds");
    let e = patch(&driver, &c, "a", "p", &guarded, &native)
        .await
        .expect_err("n is 2 now");
    assert!(e.is_precondition_failed(), "{e}");
    let (stored, _) = read_doc(&driver, &c, "a", "p").await;
    assert_eq!(stored["n"], 2, "the false condition changed nothing");
}

#[tokio::test]
async fn the_loop_refuses_a_condition_it_cannot_evaluate() {
    let (emu, driver, c) = counter_setup().await;
    let guarded = bump().with_condition("from c where c.n < 2");
    let e = patch(
        &driver,
        &c,
        "a",
        "p",
        &guarded,
        &strategy(PatchStrategy::ReadModifyWrite),
    )
    .await
    .expect_err("a condition needs the service");
    assert!(e.is_invalid_input(), "{e}");
    assert!(e.message().contains("condition"), "{e}");
    assert_eq!(requests_of(&emu, OpKind::Replace), 0);
    assert_eq!(requests_of(&emu, OpKind::Patch), 0);
}

#[tokio::test]
async fn native_whose_answer_was_lost_is_ambiguous_and_never_sent_twice() {
    let (emu, driver, c) = counter_setup().await;
    let _lost = emu.faults().add(
        FaultRule::new(Reaction::ExecuteThenClose)
            .for_ops([OpKind::Patch])
            .first(1),
    );
    let e = patch(
        &driver,
        &c,
        "a",
        "p",
        &bump(),
        &strategy(PatchStrategy::Native),
    )
    .await
    .expect_err("the answer was lost");
    assert_eq!(e.kind(), ErrorKind::OutcomeUnknown, "{e}");
    assert_eq!(requests_of(&emu, OpKind::Patch), 1, "not sent again");
    let (stored, _) = read_doc(&driver, &c, "a", "p").await;
    assert_eq!(stored["n"], 2, "it landed once");
}

#[tokio::test]
async fn auto_uses_the_verb_where_the_account_serves_it() {
    let (emu, driver, c) = counter_setup().await;
    let auto = strategy(PatchStrategy::Auto);
    for expected in [2, 3] {
        let r = patch(&driver, &c, "a", "p", &bump(), &auto).await.unwrap();
        assert_eq!(r.json::<serde_json::Value>().unwrap()["n"], expected);
    }
    assert_eq!(requests_of(&emu, OpKind::Patch), 2);
    assert_eq!(requests_of(&emu, OpKind::Replace), 0);
}

#[tokio::test]
async fn auto_falls_back_to_the_loop_and_remembers_it() {
    let (emu, driver, c) = counter_setup().await;
    // An account whose gateway refuses the verb.
    let refused = emu
        .faults()
        .add(FaultRule::new(Reaction::respond(405, 0)).for_ops([OpKind::Patch]));
    let auto = strategy(PatchStrategy::Auto);
    for expected in [2, 3] {
        let r = patch(&driver, &c, "a", "p", &bump(), &auto)
            .await
            .expect("the loop carries it out");
        assert_eq!(r.json::<serde_json::Value>().unwrap()["n"], expected);
    }
    assert_eq!(refused.hits(), 1, "asked once, then remembered");
    assert_eq!(requests_of(&emu, OpKind::Replace), 2);
    let e = patch(
        &driver,
        &c,
        "a",
        "p",
        &bump().with_condition("from c where c.n > 0"),
        &auto,
    )
    .await
    .expect_err("the loop cannot carry a condition");
    assert!(e.is_invalid_input(), "{e}");
    let (stored, _) = read_doc(&driver, &c, "a", "p").await;
    assert_eq!(stored["n"], 3);
}

/// Eleven increments: one more operation than the service's PATCH takes.
fn eleven_operations() -> PatchInstructions {
    (0..11).fold(PatchInstructions::new(), |p, _| p.increment("/n", 1))
}

#[tokio::test]
async fn by_default_a_patch_is_the_services_verb_where_the_account_serves_it() {
    let (emu, driver, c) = counter_setup().await;
    for expected in [2, 3] {
        let r = patch(&driver, &c, "a", "p", &bump(), &OperationOptions::new())
            .await
            .unwrap();
        assert_eq!(r.json::<serde_json::Value>().unwrap()["n"], expected);
    }
    assert_eq!(requests_of(&emu, OpKind::Patch), 2);
    assert_eq!(requests_of(&emu, OpKind::Replace), 0);
    // The handle's item options carry the strategy too.
    let orders = driver.container("db", "c");
    let by_loop = cosmos_driver::ItemOptions::new()
        .with_patch_strategy(cosmos_driver::prelude::PatchStrategy::ReadModifyWrite);
    orders
        .patch_item::<serde_json::Value>("p", "a", &bump(), Some(by_loop))
        .await
        .unwrap();
    assert_eq!(requests_of(&emu, OpKind::Patch), 2);
    assert_eq!(requests_of(&emu, OpKind::Replace), 1);
}

#[tokio::test]
async fn by_default_instructions_the_verb_cannot_carry_run_as_the_loop() {
    let (emu, driver, c) = counter_setup().await;
    let r = patch(
        &driver,
        &c,
        "a",
        "p",
        &eleven_operations(),
        &OperationOptions::new(),
    )
    .await
    .expect("the loop carries eleven operations");
    assert_eq!(r.json::<serde_json::Value>().unwrap()["n"], 12);
    assert_eq!(requests_of(&emu, OpKind::Patch), 0);
    assert_eq!(requests_of(&emu, OpKind::Replace), 1);
    // Native cannot: refused before anything is sent.
    let e = patch(
        &driver,
        &c,
        "a",
        "p",
        &eleven_operations(),
        &strategy(PatchStrategy::Native),
    )
    .await
    .expect_err("more operations than the verb takes");
    assert!(e.is_invalid_input(), "{e}");
    assert_eq!(requests_of(&emu, OpKind::Patch), 0);
    // With a condition neither can: refused.
    let e = patch(
        &driver,
        &c,
        "a",
        "p",
        &eleven_operations().with_condition("from c where c.n > 0"),
        &OperationOptions::new(),
    )
    .await
    .expect_err("neither the verb nor the loop can carry it");
    assert!(e.is_invalid_input(), "{e}");
    let (stored, _) = read_doc(&driver, &c, "a", "p").await;
    assert_eq!(stored["n"], 12);
}

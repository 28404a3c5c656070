//! Exactly-once PATCH: a replace the emulator carried out and whose answer was lost is settled by
//! reading the item again; the operations are never applied twice, and success is reported only
//! when the item holds the patch.

use std::time::Duration;

use cosmos_driver::patch::PatchInstructions;
use cosmos_driver::{CosmosOperation, ErrorKind};
use cosmos_emulator::faults::{FaultRule, OpKind, Reaction};
use cosmos_emulator::EmulatorBuilder;
use serde_json::json;

use super::support::{
    counter_setup, counter_setup_with, loop_options, patch, read_doc, requests_of,
};

fn increment() -> PatchInstructions {
    PatchInstructions::new()
        .increment("/n", 1)
        .add("/log/-", json!("x"))
}

#[tokio::test]
async fn a_replace_that_landed_and_lost_its_answer_is_reported_once() {
    let lost_answers = [
        Reaction::ExecuteThenClose,
        Reaction::ExecuteThenRespond {
            status: 503,
            sub_status: 0,
        },
        Reaction::ExecuteThenRespond {
            status: 408,
            sub_status: 0,
        },
    ];
    for after in lost_answers {
        let (emu, driver, c) = counter_setup().await;
        let lost = emu.faults().add(
            FaultRule::new(after.clone())
                .for_ops([OpKind::Replace])
                .first(1),
        );
        let r = patch(&driver, &c, "a", "p", &increment(), &loop_options())
            .await
            .unwrap_or_else(|e| panic!("{after:?}: the re-read settles it: {e}"));
        assert_eq!(lost.hits(), 1);
        let returned: serde_json::Value = r.json().unwrap();
        let (stored, etag) = read_doc(&driver, &c, "a", "p").await;
        assert_eq!(stored["n"], 2, "{after:?}: applied once");
        assert_eq!(stored["log"], json!(["x"]), "{after:?}: appended once");
        assert_eq!(returned["n"], 2);
        assert_eq!(r.etag(), Some(etag.as_str()), "the post-image's etag");
        // The lost replace, the retry that met its 412, and nothing after the settling read.
        assert_eq!(requests_of(&emu, OpKind::Replace), 2, "{after:?}");
        assert!(
            r.diagnostics().requests().len() >= 4,
            "read, replace x2, read"
        );
    }
}

#[tokio::test]
async fn a_replace_that_never_ran_is_sent_again_on_the_same_etag() {
    let (emu, driver, c) = counter_setup().await;
    // Every attempt of the first replace loses its connection before the emulator runs it: the
    // pipeline gives up with an unknown outcome, the re-read finds the item unchanged.
    let closed = emu.faults().add(
        FaultRule::new(Reaction::Close)
            .for_ops([OpKind::Replace])
            .first(3),
    );
    let r = patch(&driver, &c, "a", "p", &increment(), &loop_options())
        .await
        .expect("the same conditional replace, sent again, lands");
    assert_eq!(closed.hits(), 3);
    assert_eq!(r.status(), 200);
    let (stored, _) = read_doc(&driver, &c, "a", "p").await;
    assert_eq!(
        (stored["n"].clone(), stored["log"].clone()),
        (json!(2), json!(["x"]))
    );
    assert_eq!(requests_of(&emu, OpKind::Replace), 4);
}

#[tokio::test]
async fn an_item_changed_by_another_writer_makes_the_outcome_unknown() {
    let (emu, driver, c) = counter_setup().await;
    let _lost = emu.faults().add(
        FaultRule::new(Reaction::ExecuteThenClose)
            .for_ops([OpKind::Replace])
            .first(1),
    );
    // The settling read (the PATCH's second) is held for 3 s; another writer replaces the item
    // as soon as the read has arrived (a local replace takes milliseconds).
    let held = emu.faults().add(
        FaultRule::new(Reaction::delay_ms(3_000))
            .for_ops([OpKind::Read])
            .after(1)
            .first(1),
    );
    let other = driver.clone();
    let c2 = c.clone();
    let running =
        tokio::spawn(
            async move { patch(&other, &c2, "a", "p", &increment(), &loop_options()).await },
        );
    for _ in 0..2000 {
        if held.hits() == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(held.hits(), 1, "the settling read is held");
    let overwrite = CosmosOperation::replace_item(c.item("a").unwrap())
        .with_partition_key("p")
        .with_json_body(&json!({"id": "a", "pk": "p", "n": 100, "log": []}))
        .unwrap();
    driver
        .execute(overwrite, &loop_options())
        .await
        .expect("the other writer's replace");
    let e = running
        .await
        .unwrap()
        .expect_err("the item holds neither the old body nor the patch's");
    assert_eq!(e.kind(), ErrorKind::OutcomeUnknown, "{e}");
    assert!(e.message().contains("not applied again"), "{e}");
    let (stored, _) = read_doc(&driver, &c, "a", "p").await;
    assert_eq!(
        stored["n"], 100,
        "the patch was not applied over the other write"
    );
    assert_eq!(
        requests_of(&emu, OpKind::Replace),
        3,
        "patch x2, the other writer x1"
    );
}

#[tokio::test]
async fn a_failed_settling_read_makes_the_outcome_unknown() {
    let (emu, driver, c) = counter_setup().await;
    let _lost = emu.faults().add(
        FaultRule::new(Reaction::ExecuteThenClose)
            .for_ops([OpKind::Replace])
            .first(1),
    );
    let _reads_refused = emu.faults().add(
        FaultRule::new(Reaction::respond(404, 0))
            .for_ops([OpKind::Read])
            .after(1),
    );
    let e = patch(&driver, &c, "a", "p", &increment(), &loop_options())
        .await
        .expect_err("nothing settles it");
    assert_eq!(e.kind(), ErrorKind::OutcomeUnknown, "{e}");
    assert!(!e.is_not_found(), "not reported as a definite 404");
    drop(_reads_refused);
    let (stored, _) = read_doc(&driver, &c, "a", "p").await;
    assert_eq!(stored["n"], 2, "the lost replace landed, once");
}

#[tokio::test]
async fn a_sibling_that_wrote_the_same_body_is_not_taken_for_this_write() {
    // Two PATCH calls of one driver read the same version and compute the same body. A's replace
    // is held without being carried out until its attempt times out; B's lands. A's resend then
    // meets B's 412, and A's settling read finds the body A meant to write under a new ETag: B's
    // write, not A's. A must apply its increment again on top of B's, not report B's as its own.
    let (emu, driver, c) = counter_setup_with(EmulatorBuilder::new(), |o| {
        o.with_request_timeout(Duration::from_secs(2))
    })
    .await;
    let held = emu.faults().add(
        FaultRule::new(Reaction::Stall)
            .for_ops([OpKind::Replace])
            .with_header("x-test-writer", "a")
            .first(1),
    );
    let options = loop_options();
    let (spec, a_op) = (
        increment(),
        super::support::patch_op(&c, "a", "p", &increment()).with_header(
            http::HeaderName::from_static("x-test-writer"),
            http::HeaderValue::from_static("a"),
        ),
    );
    let a = driver.execute(a_op, &options);
    let b = patch(&driver, &c, "a", "p", &spec, &options);
    let (a, b) = tokio::join!(a, b);
    assert_eq!(held.hits(), 1, "A's first replace was held");
    let a = a.expect("A's increment lands after B's");
    b.expect("B's increment lands");
    let (stored, _) = read_doc(&driver, &c, "a", "p").await;
    assert_eq!(stored["n"], 3, "both increments, each once");
    assert_eq!(stored["log"], json!(["x", "x"]));
    assert_eq!(a.json::<serde_json::Value>().unwrap()["n"], 3);
}

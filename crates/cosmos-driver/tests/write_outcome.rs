//! Writes whose answer is lost after the emulator carried them out: a retry that settles the
//! outcome stands, and a retry whose 412, 404 or 409 the first write's success would also cause is
//! reported as an unknown outcome, never as a definite failure.

use crate::common;

use cosmos_driver::{
    ContainerReference, CosmosDriver, CosmosError, CosmosOperation, ErrorKind, OperationOptions,
    Precondition,
};
use cosmos_emulator::faults::{FaultGuard, FaultRule, OpKind, Reaction};
use cosmos_emulator::{Emulator, EmulatorBuilder};
use serde_json::{json, Value};

async fn setup() -> (Emulator, CosmosDriver, ContainerReference) {
    let emu = common::start(EmulatorBuilder::new()).await;
    let driver = common::driver(common::options(&emu)).await;
    let c = common::container(&driver, "db", "c").await;
    (emu, driver, c)
}

/// The first request of kind `op` is carried out, then its answer is replaced by `after`.
fn lose_first_answer(emu: &Emulator, op: OpKind, after: Reaction) -> FaultGuard {
    emu.faults()
        .add(FaultRule::new(after).for_ops([op]).first(1))
}

async fn stored(driver: &CosmosDriver, c: &ContainerReference, id: &str) -> Option<Value> {
    match driver
        .execute(common::read(c, id, "p"), &OperationOptions::new())
        .await
    {
        Ok(r) => Some(r.json().unwrap()),
        Err(e) if e.is_not_found() => None,
        Err(e) => panic!("read back: {e}"),
    }
}

fn cause(e: &CosmosError) -> &CosmosError {
    std::error::Error::source(e)
        .and_then(|s| s.downcast_ref::<CosmosError>())
        .expect("an unknown outcome carries the last attempt's error")
}

const SERVICE_UNAVAILABLE: Reaction = Reaction::ExecuteThenRespond {
    status: 503,
    sub_status: 0,
};

fn replace(c: &ContainerReference, etag: Option<&str>, n: i64) -> CosmosOperation {
    let op = CosmosOperation::replace_item(c.item("a").unwrap())
        .with_partition_key("p")
        .with_json_body(&json!({"id": "a", "pk": "p", "n": n}))
        .unwrap();
    match etag {
        Some(etag) => op.with_precondition(Precondition::IfMatch(etag.to_owned())),
        None => op,
    }
}

#[tokio::test]
async fn if_match_replace_whose_answer_was_lost_is_ambiguous_not_412() {
    for after in [SERVICE_UNAVAILABLE, Reaction::ExecuteThenClose] {
        let (emu, driver, c) = setup().await;
        let created = common::create_item(&driver, &c, "a", "p", 1).await;
        let etag = created.etag().unwrap().to_owned();
        let fault = lose_first_answer(&emu, OpKind::Replace, after.clone());
        let e = driver
            .execute(replace(&c, Some(&etag), 2), &OperationOptions::new())
            .await
            .expect_err("the retry meets the first write's new etag");
        assert_eq!(e.kind(), ErrorKind::OutcomeUnknown, "{after:?}: {e}");
        assert!(e.is_outcome_unknown());
        assert_eq!(e.status(), None, "never mistaken for a definite 412");
        assert!(!e.is_precondition_failed());
        assert!(cause(&e).is_precondition_failed(), "{e}");
        assert!(e.diagnostics().requests().len() >= 2, "sent, then retried");
        drop(fault);
        assert_eq!(stored(&driver, &c, "a").await.unwrap()["n"], 2, "it landed");
    }
}

#[tokio::test]
async fn if_match_replace_whose_failure_was_served_is_a_definite_success_on_retry() {
    let (emu, driver, c) = setup().await;
    let created = common::create_item(&driver, &c, "a", "p", 1).await;
    let etag = created.etag().unwrap().to_owned();
    // Answered 503 without carrying it out: the retry is the only write.
    let _fault = emu.faults().add(
        FaultRule::new(Reaction::respond(503, 0))
            .for_ops([OpKind::Replace])
            .first(1),
    );
    let r = driver
        .execute(replace(&c, Some(&etag), 2), &OperationOptions::new())
        .await
        .expect("a retry on the same etag that succeeds settles the outcome");
    assert_eq!(r.status(), 200);
    assert_eq!(stored(&driver, &c, "a").await.unwrap()["n"], 2);
}

#[tokio::test]
async fn unconditional_replace_whose_answer_was_lost_succeeds_on_retry() {
    let (emu, driver, c) = setup().await;
    common::create_item(&driver, &c, "a", "p", 1).await;
    let _fault = lose_first_answer(&emu, OpKind::Replace, Reaction::ExecuteThenClose);
    let r = driver
        .execute(replace(&c, None, 5), &OperationOptions::new())
        .await
        .expect("an unconditional replace repeats safely");
    assert_eq!(r.status(), 200);
    assert_eq!(stored(&driver, &c, "a").await.unwrap()["n"], 5);
}

#[tokio::test]
async fn delete_whose_answer_was_lost_is_ambiguous_not_404() {
    let (emu, driver, c) = setup().await;
    common::create_item(&driver, &c, "a", "p", 1).await;
    let _fault = lose_first_answer(&emu, OpKind::Delete, Reaction::ExecuteThenClose);
    let op = CosmosOperation::delete_item(c.item("a").unwrap()).with_partition_key("p");
    let e = driver
        .execute(op, &OperationOptions::new())
        .await
        .expect_err("the retry finds nothing to delete");
    assert_eq!(e.kind(), ErrorKind::OutcomeUnknown, "{e}");
    assert!(!e.is_not_found());
    assert!(cause(&e).is_not_found(), "{e}");
    assert_eq!(stored(&driver, &c, "a").await, None, "it landed");
}

#[tokio::test]
async fn create_whose_answer_was_lost_is_ambiguous_not_409() {
    let (emu, driver, c) = setup().await;
    let _fault = lose_first_answer(
        &emu,
        OpKind::Create,
        Reaction::ExecuteThenRespond {
            status: 408,
            sub_status: 0,
        },
    );
    let op = CosmosOperation::create_item(c.clone())
        .with_partition_key("p")
        .with_json_body(&json!({"id": "a", "pk": "p", "n": 1}))
        .unwrap();
    let e = driver
        .execute(op, &OperationOptions::new())
        .await
        .expect_err("the retry meets the first create");
    assert_eq!(e.kind(), ErrorKind::OutcomeUnknown, "{e}");
    assert!(!e.is_conflict());
    assert!(cause(&e).is_conflict(), "{e}");
    assert_eq!(stored(&driver, &c, "a").await.unwrap()["n"], 1);
}

#[tokio::test]
async fn create_refused_before_it_ran_is_created_by_its_retry() {
    let (emu, driver, c) = setup().await;
    let _fault = emu.faults().add(
        FaultRule::new(Reaction::respond(503, 0))
            .for_ops([OpKind::Create])
            .first(1),
    );
    let op = CosmosOperation::create_item(c.clone())
        .with_partition_key("p")
        .with_json_body(&json!({"id": "a", "pk": "p", "n": 1}))
        .unwrap();
    let r = driver
        .execute(op, &OperationOptions::new())
        .await
        .expect("the retry creates the item");
    assert_eq!(r.status(), 201);
    assert_eq!(stored(&driver, &c, "a").await.unwrap()["n"], 1);
}

#[tokio::test]
async fn a_conflict_without_a_lost_answer_stays_a_definite_409() {
    let (_emu, driver, c) = setup().await;
    common::create_item(&driver, &c, "a", "p", 1).await;
    let op = CosmosOperation::create_item(c.clone())
        .with_partition_key("p")
        .with_json_body(&json!({"id": "a", "pk": "p", "n": 2}))
        .unwrap();
    let e = driver
        .execute(op, &OperationOptions::new())
        .await
        .expect_err("the item exists");
    assert!(e.is_conflict(), "{e}");
    assert_eq!(e.kind(), ErrorKind::Service);
}

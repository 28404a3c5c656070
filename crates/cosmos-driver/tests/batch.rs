//! Transactional batches over real HTTP against the embedded emulator: a batch that commits, one
//! the service rolls back (nothing applied, the error names the failing operation), and batches
//! past the service's limits refused before any request is sent.

use crate::common;

use cosmos_driver::batch::{BatchOperationKind, TransactionalBatch};
use cosmos_driver::patch::PatchInstructions;
use cosmos_driver::{ErrorKind, Precondition};
use cosmos_emulator::faults::OpKind;
use cosmos_emulator::EmulatorBuilder;
use serde::{Deserialize, Serialize};
use serde_json::json;

#[derive(Serialize, Deserialize, Debug, PartialEq, Clone)]
struct Order {
    id: String,
    pk: String,
    n: i64,
}

fn order(id: &str, n: i64) -> Order {
    Order {
        id: id.into(),
        pk: "t-1".into(),
        n,
    }
}

#[tokio::test]
async fn a_batch_commits_with_one_result_per_operation() {
    let emu = common::start(EmulatorBuilder::new().partitions(4)).await;
    let driver = common::driver(common::options(&emu)).await;
    common::container(&driver, "shop", "orders").await;
    let orders = driver.container("shop", "orders");
    orders
        .create_item("t-1", &order("old", 1), None)
        .await
        .unwrap();
    orders
        .create_item("t-1", &order("gone", 1), None)
        .await
        .unwrap();

    let response = orders
        .transactional_batch("t-1")
        .create(&order("a", 1))
        .unwrap()
        .replace("old", &order("old", 2))
        .unwrap()
        .patch("old", &PatchInstructions::new().increment("/n", 40))
        .unwrap()
        .delete("gone")
        .unwrap()
        .read("a")
        .unwrap()
        .execute()
        .await
        .expect("the batch commits");

    let results = response.results();
    let statuses: Vec<u16> = results.iter().map(|r| r.status.status).collect();
    assert_eq!(statuses, vec![201, 200, 200, 204, 200]);
    let kinds: Vec<BatchOperationKind> = results.iter().map(|r| r.kind).collect();
    assert_eq!(
        kinds,
        vec![
            BatchOperationKind::Create,
            BatchOperationKind::Replace,
            BatchOperationKind::Patch,
            BatchOperationKind::Delete,
            BatchOperationKind::Read
        ]
    );
    assert_eq!(results[0].item::<Order>().unwrap(), Some(order("a", 1)));
    assert_eq!(results[2].item::<Order>().unwrap(), Some(order("old", 42)));
    assert_eq!(results[4].item::<Order>().unwrap(), Some(order("a", 1)));
    assert!(results[0].etag.is_some());
    assert!(response.request_charge() > 0.0);
    assert_eq!(response.diagnostics().requests().len(), 1);
    assert!(response.session_token().is_some());

    // Every write is visible to later reads.
    let read: Order = orders
        .read_item("t-1", "old", None)
        .await
        .unwrap()
        .into_item()
        .unwrap();
    assert_eq!(read.n, 42);
    assert!(orders
        .read_item::<serde_json::Value>("t-1", "gone", None)
        .await
        .unwrap_err()
        .is_not_found());

    // A precondition on the ETag the batch returned holds.
    let etag = response.get(0).unwrap().etag.clone().unwrap();
    let conditional = orders
        .transactional_batch("t-1")
        .replace("a", &order("a", 5))
        .unwrap()
        .with_precondition(Precondition::IfMatch(etag))
        .unwrap()
        .execute()
        .await
        .unwrap();
    assert_eq!(conditional.results()[0].status.status, 200);
}

#[tokio::test]
async fn a_rolled_back_batch_applies_nothing_and_names_the_failing_operation() {
    let emu = common::start(EmulatorBuilder::new()).await;
    let driver = common::driver(common::options(&emu)).await;
    common::container(&driver, "shop", "orders").await;
    let orders = driver.container("shop", "orders");
    orders
        .create_item("t-1", &order("taken", 1), None)
        .await
        .unwrap();

    let err = orders
        .transactional_batch("t-1")
        .create(&order("x1", 1))
        .unwrap()
        .upsert(&order("taken", 9))
        .unwrap()
        .create(&order("taken", 2))
        .unwrap()
        .create(&order("x2", 1))
        .unwrap()
        .execute()
        .await
        .expect_err("a create of an existing id rolls the batch back");

    assert_eq!(err.kind(), ErrorKind::Service);
    assert_eq!(err.status(), Some(409));
    assert!(
        err.message()
            .contains("operation 2 (Create \"taken\") failed with status 409"),
        "{}",
        err.message()
    );
    assert!(err.message().contains("no operation was applied"));
    assert_eq!(err.diagnostics().requests().len(), 1);

    // Nothing of the batch was applied: the upsert before the failure neither.
    for id in ["x1", "x2"] {
        assert!(orders
            .read_item::<serde_json::Value>("t-1", id, None)
            .await
            .unwrap_err()
            .is_not_found());
    }
    let taken: Order = orders
        .read_item("t-1", "taken", None)
        .await
        .unwrap()
        .into_item()
        .unwrap();
    assert_eq!(taken.n, 1);
}

#[tokio::test]
async fn batches_past_the_limits_are_refused_before_sending() {
    let emu = common::start(EmulatorBuilder::new()).await;
    let driver = common::driver(common::options(&emu)).await;
    common::container(&driver, "shop", "orders").await;
    let orders = driver.container("shop", "orders");
    let region = emu.write_region();
    let posts_before = emu.counters().get(&region, OpKind::Create);

    // The 101st operation is refused as it is added, naming it.
    let mut batch = orders.transactional_batch("t-1");
    for i in 0..100 {
        batch = batch.create(&order(&format!("i{i}"), i)).unwrap();
    }
    let err = batch.clone().create(&order("one-too-many", 0)).unwrap_err();
    assert!(err.is_invalid_input());
    assert!(
        err.message().contains("at most 100 operations"),
        "{}",
        err.message()
    );
    assert!(err.message().contains("one-too-many"), "{}", err.message());

    // An operation that takes the body past 2 MB is refused the same way.
    let big = json!({"id": "big", "pk": "t-1", "pad": "x".repeat(1024 * 1024)});
    let two = orders.transactional_batch("t-1").create(&big).unwrap();
    let err = two
        .upsert(&json!({"id": "big2", "pk": "t-1", "pad": "x".repeat(1024 * 1024)}))
        .unwrap_err();
    assert!(err.is_invalid_input());
    assert!(err.message().contains("2097152 bytes"), "{}", err.message());

    // An empty batch is refused when it is run.
    let err = orders
        .execute_batch(&TransactionalBatch::new("t-1"))
        .await
        .unwrap_err();
    assert!(err.is_invalid_input());

    assert_eq!(emu.counters().get(&region, OpKind::Create), posts_before);

    // The full batch of 100 is within the limits and commits.
    let response = batch.execute().await.unwrap();
    assert_eq!(response.results().len(), 100);
    assert_eq!(
        emu.counters().get(&region, OpKind::Create),
        posts_before + 1
    );
}

//! Throughput buckets through the driver against the embedded emulator over real HTTP: a bucket id
//! set on the client or on one operation reaches the request as `x-ms-cosmos-throughput-bucket`
//! (the operation's winning), and a container's bucket settings are replaced and read back through
//! its throughput, kept when the throughput itself is replaced.

use crate::common;

use cosmos_driver::resources::{ThroughputBucketLimit, ThroughputProperties};
use cosmos_driver::{ItemOptions, OperationOptions, ThroughputBucket};
use cosmos_emulator::faults::{FaultRule, Reaction};
use cosmos_emulator::EmulatorBuilder;
use serde_json::json;

fn bucket(id: u8) -> ThroughputBucket {
    ThroughputBucket::new(id).expect("a bucket id from 1 to 5")
}

#[tokio::test]
async fn bucket_ids_outside_1_to_5_are_refused_before_anything_is_sent() {
    for id in [0, 6, 255] {
        let e = ThroughputBucket::new(id).expect_err("out of range");
        assert!(e.message().contains("1 to 5"), "{e}");
    }
    for id in 1..=5 {
        assert_eq!(bucket(id).id(), id);
    }
    assert!(ThroughputBucketLimit::new(1, 0).is_err());
    assert!(ThroughputBucketLimit::new(1, 101).is_err());
    assert!(ThroughputBucketLimit::new(6, 20).is_err());
    let limit = ThroughputBucketLimit::new(2, 35).unwrap();
    assert_eq!((limit.id(), limit.max_throughput_percentage()), (2, 35));
}

#[tokio::test]
async fn a_bucket_set_on_the_client_or_the_operation_reaches_the_request() {
    let emu = common::start(EmulatorBuilder::new()).await;
    let options = common::options(&emu)
        .with_operation_defaults(OperationOptions::new().with_throughput_bucket(bucket(3)));
    let driver = common::driver(options).await;
    common::container(&driver, "db", "c").await;
    let c = driver.container("db", "c");
    // Requests naming bucket 3 are refused, others served: what each carried shows in the answer.
    let _three = emu.faults().add(
        FaultRule::new(Reaction::respond(400, 4242))
            .with_header("x-ms-cosmos-throughput-bucket", "3"),
    );
    let doc = json!({"id": "a", "pk": "p"});
    let by_client = c.create_item("p", &doc, None).await.map(|_| ());
    let refused = by_client.expect_err("the client's bucket 3 is sent");
    assert_eq!(
        (refused.status(), refused.sub_status()),
        (Some(400), Some(4242))
    );
    let by_operation = c
        .create_item(
            "p",
            &doc,
            Some(ItemOptions::new().with_throughput_bucket(bucket(1))),
        )
        .await;
    assert!(
        by_operation.is_ok(),
        "the operation's bucket 1 wins: {by_operation:?}"
    );
}

#[tokio::test]
async fn container_bucket_settings_are_replaced_and_read_back() {
    let emu = common::start(EmulatorBuilder::new()).await;
    let driver = common::driver(common::options(&emu)).await;
    common::container(&driver, "db", "c").await;
    let c = driver.container("db", "c");
    let before = c.read_throughput().await.expect("read throughput");
    assert!(before.throughput_buckets().is_empty());
    let limits = vec![
        ThroughputBucketLimit::new(1, 20).unwrap(),
        ThroughputBucketLimit::new(4, 50).unwrap(),
    ];
    let set = c
        .replace_throughput_buckets(limits.clone())
        .await
        .expect("replace buckets");
    assert_eq!(set.throughput_buckets(), limits.as_slice());
    let read = c.read_throughput().await.expect("read throughput");
    assert_eq!(read.throughput_buckets(), limits.as_slice());
    assert_eq!(read.throughput(), before.throughput());
    // Replacing the throughput keeps the buckets.
    let raised = c
        .replace_throughput(ThroughputProperties::manual(800))
        .await
        .expect("replace throughput");
    assert_eq!(raised.throughput(), ThroughputProperties::manual(800));
    assert_eq!(raised.throughput_buckets(), limits.as_slice());
    // An empty list removes them.
    let cleared = c
        .replace_throughput_buckets(Vec::new())
        .await
        .expect("clear buckets");
    assert!(cleared.throughput_buckets().is_empty());
}

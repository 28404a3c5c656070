//! Throughput buckets through the driver against the embedded emulator over real HTTP: a bucket id
//! set on the client or on one operation reaches the request as `x-ms-cosmos-throughput-bucket`
//! (the operation's winning), and a container's bucket settings are replaced and read back through
//! its throughput, kept when the throughput itself is replaced.

use crate::common;

use std::time::Duration;

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
    // The settings change twice here: no interval between changes.
    let emu = common::start(EmulatorBuilder::new().bucket_change_interval(Duration::ZERO)).await;
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

#[tokio::test]
async fn a_bucket_change_too_soon_surfaces_429_3213_at_once_with_its_retry_after() {
    // The service's 10 minutes between bucket changes: the driver does not wait them out.
    let emu = common::start(EmulatorBuilder::new()).await;
    let driver = common::driver(common::options(&emu)).await;
    common::container(&driver, "db", "c").await;
    let c = driver.container("db", "c");
    c.replace_throughput_buckets(vec![ThroughputBucketLimit::new(1, 20).unwrap()])
        .await
        .expect("the first settings");
    let started = std::time::Instant::now();
    let err = c
        .replace_throughput_buckets(vec![ThroughputBucketLimit::new(1, 30).unwrap()])
        .await
        .expect_err("a second change within 10 minutes is refused");
    assert!(started.elapsed() < Duration::from_secs(5), "{err:?}");
    assert_eq!(
        (err.status(), err.sub_status()),
        (Some(429), Some(3213)),
        "{err:?}"
    );
    let wait = err
        .headers()
        .and_then(|h| h.retry_after())
        .expect("the error carries the retry-after");
    assert!(wait > Duration::from_secs(590), "{wait:?}");
    let read = c.read_throughput().await.expect("read throughput");
    assert_eq!(
        read.throughput_buckets(),
        [ThroughputBucketLimit::new(1, 20).unwrap()].as_slice()
    );
}

#[tokio::test]
async fn a_default_bucket_is_set_and_read_back() {
    let emu = common::start(EmulatorBuilder::new()).await;
    let driver = common::driver(common::options(&emu)).await;
    common::container(&driver, "db", "c").await;
    let c = driver.container("db", "c");
    let limits = vec![
        ThroughputBucketLimit::new(1, 20).unwrap(),
        ThroughputBucketLimit::new(3, 50).unwrap().as_default(),
    ];
    let set = c
        .replace_throughput_buckets(limits.clone())
        .await
        .expect("replace buckets");
    assert_eq!(set.throughput_buckets(), limits.as_slice());
    let read = c.read_throughput().await.expect("read throughput");
    let defaults: Vec<u8> = read
        .throughput_buckets()
        .iter()
        .filter(|b| b.is_default())
        .map(|b| b.id())
        .collect();
    assert_eq!(defaults, vec![3]);
    // A throughput replace keeps the default flag.
    let raised = c
        .replace_throughput(ThroughputProperties::manual(800))
        .await
        .expect("replace throughput");
    assert_eq!(raised.throughput_buckets(), limits.as_slice());
    // Two defaults are refused by the service.
    let err = c
        .replace_throughput_buckets(vec![
            ThroughputBucketLimit::new(1, 20).unwrap().as_default(),
            ThroughputBucketLimit::new(3, 50).unwrap().as_default(),
        ])
        .await
        .expect_err("two default buckets");
    assert_eq!(err.status(), Some(400), "{err:?}");
}

//! Throughput buckets over real HTTP: a container's offer carries `throughputBuckets` (ids 1 to 5,
//! each with its `maxThroughputPercentage`), kept across a restart with a data directory; with
//! `enforce_throughput`, a request naming a bucket (`x-ms-cosmos-throughput-bucket`) is refused
//! with 429/3212 and a retry-after once its bucket has used its percentage of the range's share in
//! the current second, while requests without a bucket, or naming one that is not configured, go
//! on using the container's throughput.

use crate::common;

use std::time::{Duration, Instant};

use common::process::EmulatorProcess;
use common::{master_auth, now_date, start_with_container, Resp, TestClient};
use cosmos_emulator::{EmulatorBuilder, WELL_KNOWN_KEY};
use http::Method;
use serde_json::{json, Value};

/// The one offer of the test container `c` (the only one: database `db` has none of its own).
async fn the_offer(c: &TestClient, base: &str) -> Value {
    let all = c.get(base, "/offers", &[]).await.json();
    all["Offers"][0].clone()
}

/// Replaces the offer's content with `content`.
async fn put_content(c: &TestClient, base: &str, offer: &Value, content: Value) -> Resp {
    let id = offer["id"].as_str().expect("an offer id");
    let mut body = offer.clone();
    body["content"] = content;
    let date = now_date();
    let auth = master_auth(&c.key, "PUT", "offers", id, &date);
    let headers = [
        ("x-ms-date", date.as_str()),
        ("authorization", auth.as_str()),
        ("x-ms-version", "2020-07-15"),
    ];
    let text = body.to_string();
    c.send_raw(
        base,
        Method::PUT,
        &format!("/offers/{id}/"),
        &headers,
        Some(text.as_bytes()),
    )
    .await
}

/// Creates a 30 KiB item (about 18 RU) in partition "p", naming `bucket` when given.
async fn create_in_bucket(c: &TestClient, base: &str, id: &str, bucket: Option<&str>) -> Resp {
    let doc = json!({"id": id, "pk": "p", "pad": "x".repeat(30 * 1024)});
    let extra: Vec<(&str, &str)> = bucket
        .map(|b| vec![("x-ms-cosmos-throughput-bucket", b)])
        .unwrap_or_default();
    c.send_with_pk(
        base,
        Method::POST,
        "/dbs/db/colls/c/docs",
        &doc["pk"],
        &extra,
        Some(&doc),
    )
    .await
}

#[tokio::test]
async fn the_offer_keeps_bucket_settings_and_refuses_bad_ones() {
    // The settings change twice here: no interval between changes.
    let (emu, c) =
        start_with_container(EmulatorBuilder::new().bucket_change_interval(Duration::ZERO)).await;
    let base = emu.endpoint();
    let offer = the_offer(&c, base).await;
    let buckets =
        json!([{"id": 1, "maxThroughputPercentage": 20}, {"id": 3, "maxThroughputPercentage": 50}]);
    let set = put_content(
        &c,
        base,
        &offer,
        json!({"offerThroughput": 400, "throughputBuckets": buckets}),
    )
    .await;
    assert_eq!(set.status, 200, "{set:?}");
    assert_eq!(set.json()["content"]["throughputBuckets"], buckets);
    let read = the_offer(&c, base).await;
    assert_eq!(read["content"]["throughputBuckets"], buckets);
    assert_eq!(read["content"]["offerThroughput"], 400);
    for bad in [
        json!([{"id": 0, "maxThroughputPercentage": 20}]),
        json!([{"id": 6, "maxThroughputPercentage": 20}]),
        json!([{"id": 1, "maxThroughputPercentage": 0}]),
        json!([{"id": 1, "maxThroughputPercentage": 101}]),
        json!([{"id": 1, "maxThroughputPercentage": 20}, {"id": 1, "maxThroughputPercentage": 30}]),
        json!([{"id": 1}]),
        json!({"id": 1}),
    ] {
        let r = put_content(
            &c,
            base,
            &read,
            json!({"offerThroughput": 400, "throughputBuckets": bad}),
        )
        .await;
        assert_eq!(r.status, 400, "{bad}: {r:?}");
        assert!(r.message().contains("throughputBuckets"), "{bad}: {r:?}");
    }
    // A replace without the field removes the settings (the content is replaced whole).
    let cleared = put_content(&c, base, &read, json!({"offerThroughput": 500})).await;
    assert_eq!(cleared.status, 200, "{cleared:?}");
    assert!(cleared.json()["content"].get("throughputBuckets").is_none());
}

#[tokio::test]
async fn a_bucket_past_its_percentage_answers_429_3212_while_other_requests_go_on() {
    // One range with the whole 400 RU/s; bucket 1 may use 4% of it: 16 RU a second.
    let (emu, c) = start_with_container(
        EmulatorBuilder::new()
            .partitions(1)
            .enforce_throughput(true),
    )
    .await;
    let base = emu.endpoint();
    let offer = the_offer(&c, base).await;
    let set = put_content(
        &c,
        base,
        &offer,
        json!({"offerThroughput": 400, "throughputBuckets": [{"id": 1, "maxThroughputPercentage": 4}]}),
    )
    .await;
    assert_eq!(set.status, 200, "{set:?}");
    // A bucket id outside 1..=5 is refused whatever the settings.
    for bad in ["0", "6", "one"] {
        let r = create_in_bucket(&c, base, "bad", Some(bad)).await;
        assert_eq!(r.status, 400, "{bad}: {r:?}");
        assert!(
            r.message().contains("x-ms-cosmos-throughput-bucket"),
            "{r:?}"
        );
    }
    let started = Instant::now();
    let first = create_in_bucket(&c, base, "b1", Some("1")).await;
    let second = create_in_bucket(&c, base, "b2", Some("1")).await;
    let unbucketed = create_in_bucket(&c, base, "n1", None).await;
    let unconfigured = create_in_bucket(&c, base, "u1", Some("2")).await;
    // Within one second: bucket 1 used about 18 RU of its 16 with its first write, so its second
    // is refused; the container has used about 18 of 400, so the others are served.
    if started.elapsed() < Duration::from_millis(800) {
        assert_eq!(first.status, 201, "{first:?}");
        assert_eq!(
            (second.status, second.sub_status()),
            (429, 3212),
            "{second:?}"
        );
        let wait: u64 = second
            .header("x-ms-retry-after-ms")
            .and_then(|v| v.parse().ok())
            .expect("a 429 carries x-ms-retry-after-ms");
        assert!((1..=1000).contains(&wait), "retry after {wait} ms");
        assert!(second.message().contains("bucket 1"), "{second:?}");
        assert_eq!(unbucketed.status, 201, "{unbucketed:?}");
        assert_eq!(unconfigured.status, 201, "{unconfigured:?}");
    }
}

#[tokio::test]
async fn bucket_settings_survive_a_restart_with_a_data_directory() {
    let dir = std::env::temp_dir().join(format!("emu-buckets-{}", rand::random::<u32>()));
    let _ = std::fs::remove_dir_all(&dir);
    let c = TestClient::new(WELL_KNOWN_KEY);
    let buckets = json!([
        {"id": 2, "maxThroughputPercentage": 35},
        {"id": 4, "maxThroughputPercentage": 10, "isDefaultBucket": true}
    ]);
    {
        let emu = EmulatorBuilder::new()
            .data_dir(&dir)
            .start()
            .await
            .expect("the emulator starts");
        c.setup(emu.endpoint(), "db", "c").await;
        let offer = the_offer(&c, emu.endpoint()).await;
        let set = put_content(
            &c,
            emu.endpoint(),
            &offer,
            json!({"offerThroughput": 400, "throughputBuckets": buckets}),
        )
        .await;
        assert_eq!(set.status, 200, "{set:?}");
        assert!(emu.drain(Duration::from_secs(5)).await);
    }
    let emu = EmulatorBuilder::new()
        .data_dir(&dir)
        .start()
        .await
        .expect("the emulator restarts");
    let offer = the_offer(&c, emu.endpoint()).await;
    assert_eq!(offer["content"]["throughputBuckets"], buckets);
    // The time of the last change is kept too: a change soon after the restart is still too soon.
    let changed = json!([{"id": 2, "maxThroughputPercentage": 50}]);
    let again = put_content(
        &c,
        emu.endpoint(),
        &offer,
        json!({"offerThroughput": 400, "throughputBuckets": changed}),
    )
    .await;
    assert_eq!((again.status, again.sub_status()), (429, 3213), "{again:?}");
    let wait: u64 = again
        .header("x-ms-retry-after-ms")
        .and_then(|v| v.parse().ok())
        .expect("a 429 carries x-ms-retry-after-ms");
    // Ten minutes less the seconds since the change (kept to the second).
    assert!((500_000..=600_000).contains(&wait), "retry after {wait} ms");
    drop(emu);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_request_without_a_bucket_is_capped_by_the_default_bucket() {
    // One range with the whole 400 RU/s; bucket 1, the default, may use 4% of it: 16 RU a second.
    let (emu, c) = start_with_container(
        EmulatorBuilder::new()
            .partitions(1)
            .enforce_throughput(true),
    )
    .await;
    let base = emu.endpoint();
    let offer = the_offer(&c, base).await;
    let two_defaults = put_content(
        &c,
        base,
        &offer,
        json!({"offerThroughput": 400, "throughputBuckets": [
            {"id": 1, "maxThroughputPercentage": 20, "isDefaultBucket": true},
            {"id": 2, "maxThroughputPercentage": 30, "isDefaultBucket": true}]}),
    )
    .await;
    assert_eq!(two_defaults.status, 400, "{two_defaults:?}");
    assert!(
        two_defaults.message().contains("isDefaultBucket"),
        "{two_defaults:?}"
    );
    let buckets = json!([
        {"id": 1, "maxThroughputPercentage": 4, "isDefaultBucket": true},
        {"id": 3, "maxThroughputPercentage": 50}
    ]);
    let set = put_content(
        &c,
        base,
        &offer,
        json!({"offerThroughput": 400, "throughputBuckets": buckets}),
    )
    .await;
    assert_eq!(set.status, 200, "{set:?}");
    assert_eq!(set.json()["content"]["throughputBuckets"], buckets);
    assert_eq!(
        the_offer(&c, base).await["content"]["throughputBuckets"],
        buckets
    );
    let started = Instant::now();
    let first = create_in_bucket(&c, base, "n1", None).await;
    let second = create_in_bucket(&c, base, "n2", None).await;
    let unconfigured = create_in_bucket(&c, base, "u1", Some("2")).await;
    if started.elapsed() < Duration::from_millis(800) {
        assert_eq!(first.status, 201, "{first:?}");
        // The first unbucketed write used about 18 RU of the default bucket's 16.
        assert_eq!(
            (second.status, second.sub_status()),
            (429, 3212),
            "{second:?}"
        );
        assert!(second.message().contains("bucket 1"), "{second:?}");
        // A bucket that is not configured uses the container's throughput, not the default's.
        assert_eq!(unconfigured.status, 201, "{unconfigured:?}");
    }
}

/// The `x-ms-retry-after-ms` of a response, in milliseconds.
fn retry_after_ms(r: &Resp) -> u64 {
    r.header("x-ms-retry-after-ms")
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no x-ms-retry-after-ms: {r:?}"))
}

#[tokio::test]
async fn bucket_settings_change_once_per_interval_else_429_3213() {
    let (emu, c) = start_with_container(EmulatorBuilder::new()).await;
    let base = emu.endpoint();
    let one = json!([{"id": 1, "maxThroughputPercentage": 20}]);
    let two = json!([{"id": 1, "maxThroughputPercentage": 30}]);
    // The first configuration starts the clock.
    let first = put_content(
        &c,
        base,
        &the_offer(&c, base).await,
        json!({"offerThroughput": 400, "throughputBuckets": one}),
    )
    .await;
    assert_eq!(first.status, 200, "{first:?}");
    // The same buckets again, and a new RU/s with the same buckets, are not limited.
    for ru in [400, 500] {
        let same = put_content(
            &c,
            base,
            &the_offer(&c, base).await,
            json!({"offerThroughput": ru, "throughputBuckets": one}),
        )
        .await;
        assert_eq!(same.status, 200, "{ru}: {same:?}");
    }
    // Other buckets, or none, within 10 minutes: 429/3213 with the time left.
    for next in [Some(&two), None] {
        let mut content = json!({"offerThroughput": 500});
        if let Some(b) = next {
            content["throughputBuckets"] = b.clone();
        }
        let r = put_content(&c, base, &the_offer(&c, base).await, content).await;
        assert_eq!((r.status, r.sub_status()), (429, 3213), "{r:?}");
        let wait = retry_after_ms(&r);
        assert!((590_000..=600_000).contains(&wait), "retry after {wait} ms");
        assert!(
            r.message().contains("10 minutes") || r.message().contains("once every"),
            "{r:?}"
        );
    }
    // Nothing changed.
    assert_eq!(
        the_offer(&c, base).await["content"]["throughputBuckets"],
        one
    );
}

#[tokio::test]
async fn a_short_change_interval_lets_bucket_settings_change_again_after_it() {
    let (emu, c) = start_with_container(
        EmulatorBuilder::new().bucket_change_interval(Duration::from_millis(300)),
    )
    .await;
    let base = emu.endpoint();
    let set = |n: u64| json!({"offerThroughput": 400, "throughputBuckets": [{"id": 1, "maxThroughputPercentage": n}]});
    let first = put_content(&c, base, &the_offer(&c, base).await, set(20)).await;
    assert_eq!(first.status, 200, "{first:?}");
    let early = put_content(&c, base, &the_offer(&c, base).await, set(30)).await;
    assert_eq!((early.status, early.sub_status()), (429, 3213), "{early:?}");
    assert!(retry_after_ms(&early) <= 300, "{early:?}");
    tokio::time::sleep(Duration::from_millis(350)).await;
    let later = put_content(&c, base, &the_offer(&c, base).await, set(30)).await;
    assert_eq!(later.status, 200, "{later:?}");
}

#[tokio::test]
async fn the_binary_takes_the_change_interval_as_a_flag() {
    let set = |n: u64| json!({"offerThroughput": 400, "throughputBuckets": [{"id": 1, "maxThroughputPercentage": n}]});
    let c = TestClient::new(WELL_KNOWN_KEY);
    // With no interval the settings change twice in a row; with the default 10 minutes they do not.
    for (flags, want) in [
        (&["--bucket-change-interval", "0"][..], 200),
        (&[][..], 429),
    ] {
        let emu = EmulatorProcess::start(flags).expect("the emulator starts");
        let base = emu.endpoint.as_str();
        c.setup(base, "db", "c").await;
        let first = put_content(&c, base, &the_offer(&c, base).await, set(20)).await;
        assert_eq!(first.status, 200, "{first:?}");
        let second = put_content(&c, base, &the_offer(&c, base).await, set(30)).await;
        assert_eq!(second.status, want, "{flags:?}: {second:?}");
    }
}

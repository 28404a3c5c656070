//! `enforce_throughput`: each partition key range gets its share of the container's RU/s per
//! second; past it, 429 with sub-status 3200 and `x-ms-retry-after-ms`, and other ranges and
//! emulators without enforcement are unaffected.

use crate::common;

use std::time::Instant;

use common::{start_with_container, TestClient};
use cosmos_emulator::EmulatorBuilder;
use serde_json::json;

/// A 323 KiB item: about 150 RU to write (5 × its read units, see `docs/charges.md`), more than
/// a range's 100 RU/s share of 400 RU/s over 4 ranges.
fn big(id: &str, pk: &str) -> serde_json::Value {
    json!({"id": id, "pk": pk, "pad": "x".repeat(323 * 1024)})
}

async fn write_twice(c: &TestClient, base: &str) -> (u16, u16, Option<u64>, std::time::Duration) {
    let first = c.create_item(base, "db", "c", &big("a", "p")).await;
    let served = Instant::now();
    let second = c.create_item(base, "db", "c", &big("b", "p")).await;
    let gap = served.elapsed();
    let retry = second
        .header("x-ms-retry-after-ms")
        .and_then(|v| v.parse().ok());
    assert!(
        second.status != 429 || second.sub_status() == 3200,
        "{second:?}"
    );
    (first.status, second.status, retry, gap)
}

#[tokio::test]
async fn a_range_past_its_share_answers_429_3200_with_a_retry_after() {
    let (emu, c) = start_with_container(
        EmulatorBuilder::new()
            .partitions(4)
            .enforce_throughput(true),
    )
    .await;
    let base = emu.endpoint();
    let (first, second, retry, gap) = write_twice(&c, base).await;
    assert_eq!(first, 201);
    // Within the same second the range's 100 RU are used up (150 charged): refused, with a wait
    // no longer than the rest of the second. A machine slow enough to take a second between the
    // two requests starts a new window instead.
    if gap.as_millis() < 900 {
        assert_eq!(second, 429);
        let wait = retry.expect("a 429 carries x-ms-retry-after-ms");
        assert!((1..=1000).contains(&wait), "retry after {wait} ms");
        // Another partition key range still has its share.
        let other = (0..50)
            .map(|i| format!("q{i}"))
            .find(|pk| {
                let epk =
                    cosmos_emulator::epk::PartitionKeyValue::from_header(&format!("[\"{pk}\"]"))
                        .unwrap()
                        .epk();
                let p = cosmos_emulator::epk::PartitionKeyValue::from_header("[\"p\"]")
                    .unwrap()
                    .epk();
                let bounds = cosmos_emulator::epk::boundaries(4);
                cosmos_emulator::epk::range_of(epk, &bounds)
                    != cosmos_emulator::epk::range_of(p, &bounds)
            })
            .unwrap();
        let r = c
            .create_item(base, "db", "c", &json!({"id": "small", "pk": other}))
            .await;
        assert_eq!(r.status, 201, "{r:?}");
    } else {
        assert_eq!(second, 201);
    }
}

#[tokio::test]
async fn without_enforcement_nothing_is_throttled() {
    let (emu, c) = start_with_container(EmulatorBuilder::new().partitions(4)).await;
    let (first, second, retry, _) = write_twice(&c, emu.endpoint()).await;
    assert_eq!((first, second, retry), (201, 201, None));
}

#[tokio::test]
async fn requests_over_every_range_are_metered_against_each_range() {
    let (emu, c) = start_with_container(
        EmulatorBuilder::new()
            .partitions(4)
            .enforce_throughput(true),
    )
    .await;
    let base = emu.endpoint();
    let first = c.create_item(base, "db", "c", &big("a", "p")).await;
    assert_eq!(first.status, 201, "{first:?}");
    let served = Instant::now();
    // Neither names a partition key or range: both read the range "p" has exhausted.
    let query = c
        .send(
            base,
            http::Method::POST,
            "/dbs/db/colls/c/docs",
            &[
                ("x-ms-documentdb-isquery", "True"),
                ("content-type", "application/query+json"),
                ("x-ms-documentdb-query-enablecrosspartition", "True"),
            ],
            Some(br#"{"query": "SELECT c.id FROM c"}"#),
        )
        .await;
    let feed = c.get(base, "/dbs/db/colls/c/docs", &[]).await;
    let gap = served.elapsed();
    for r in [&query, &feed] {
        assert!(
            r.status == 200 || (r.status, r.sub_status()) == (429, 3200),
            "{r:?}"
        );
    }
    // A machine slow enough to take a second between the requests starts a new window instead.
    if gap.as_millis() < 900 {
        assert_eq!((query.status, feed.status), (429, 429));
        assert!(query.header("x-ms-retry-after-ms").is_some());
    }
}

/// Creates a 323 KiB item (about 150 RU) with priority `level` (no header for `None`).
async fn create_with_priority(
    c: &TestClient,
    base: &str,
    id: &str,
    level: Option<&str>,
) -> common::Resp {
    let doc = big(id, "p");
    let extra: Vec<(&str, &str)> = level
        .map(|l| vec![("x-ms-cosmos-priority-level", l)])
        .unwrap_or_default();
    c.send_with_pk(
        base,
        http::Method::POST,
        "/dbs/db/colls/c/docs",
        &doc["pk"],
        &extra,
        Some(&doc),
    )
    .await
}

#[tokio::test]
async fn low_priority_is_throttled_first_while_high_priority_traffic_is_using_the_share() {
    // One range with the whole 400 RU/s.
    let (emu, c) = start_with_container(
        EmulatorBuilder::new()
            .partitions(1)
            .enforce_throughput(true),
    )
    .await;
    let base = emu.endpoint();
    // High-priority writes (the default) use the second's share until one is refused.
    let mut refused = None;
    for i in 0..10 {
        let r = create_with_priority(&c, base, &format!("h{i}"), None).await;
        if r.status == 429 {
            refused = Some(r);
            break;
        }
        assert_eq!(r.status, 201, "{r:?}");
    }
    let refused = refused.expect("the share runs out within 10 writes of 150 RU");
    let wait: u64 = refused
        .header("x-ms-retry-after-ms")
        .and_then(|v| v.parse().ok())
        .expect("a retry-after");
    // The next second: High used its whole share in the last one, so a Low write is held back for
    // it (429/3200) while a High write is served.
    tokio::time::sleep(std::time::Duration::from_millis(wait + 20)).await;
    let window_began = Instant::now();
    let low = create_with_priority(&c, base, "low-1", Some("Low")).await;
    let high = create_with_priority(&c, base, "high-1", Some("High")).await;
    // A machine that stalled for most of a second between the two windows has no "last second" of
    // High traffic to go by: skip the comparison rather than judge it.
    if window_began.elapsed().as_millis() < 800 {
        assert_eq!((low.status, low.sub_status()), (429, 3200), "{low:?}");
        assert_eq!(high.status, 201, "{high:?}");
    }
    // A value that is not a priority is refused.
    let bad = create_with_priority(&c, base, "bad", Some("Urgent")).await;
    assert_eq!(bad.status, 400, "{bad:?}");
    assert!(
        bad.message().contains("x-ms-cosmos-priority-level"),
        "{bad:?}"
    );
}

#[tokio::test]
async fn without_high_priority_traffic_low_priority_uses_the_whole_share() {
    let (emu, c) = start_with_container(
        EmulatorBuilder::new()
            .partitions(1)
            .enforce_throughput(true),
    )
    .await;
    let started = Instant::now();
    let first = create_with_priority(&c, emu.endpoint(), "l0", Some("Low")).await;
    let second = create_with_priority(&c, emu.endpoint(), "l1", Some("Low")).await;
    assert_eq!(first.status, 201, "{first:?}");
    // 150 + 150 RU within 400: both served when they fall in one second.
    if started.elapsed().as_millis() < 900 {
        assert_eq!(second.status, 201, "{second:?}");
    }
}

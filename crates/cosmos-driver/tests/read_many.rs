//! Read many over real HTTP against the embedded emulator: 1,000 ids over every partition key
//! range with some missing, the driver's effective partition key checked against the emulator's,
//! a split between listing and reading, and a slow primary region whose alternate answers.

use crate::common;

use cosmos_driver::hedging::HedgeTerminalState;
use cosmos_driver::read_many::ReadManyOptions;
use cosmos_driver::{ContainerClient, PartitionKey};
use cosmos_emulator::faults::{FaultRule, OpKind, Reaction};
use cosmos_emulator::{Emulator, EmulatorBuilder, ReplicationLag};
use serde::Deserialize;
use serde_json::json;

#[derive(Debug, Deserialize, Clone, PartialEq)]
struct Doc {
    id: String,
    pk: String,
    n: i64,
}

const EAST: &str = "East US";
const WEST: &str = "West US";
const NORTH: &str = "North Europe";

fn pk_of(i: usize) -> String {
    format!("p{}", i % 97)
}

/// Writes items `d{i}` for the `i` in `0..count` that `keep` accepts.
async fn seed(c: &ContainerClient, count: usize, keep: impl Fn(usize) -> bool) {
    for i in (0..count).filter(|&i| keep(i)) {
        let pk = pk_of(i);
        c.create_item(
            pk.as_str(),
            &json!({"id": format!("d{i}"), "pk": pk, "n": i}),
            None,
        )
        .await
        .expect("seed");
    }
}

fn keys(range: std::ops::Range<usize>) -> Vec<(PartitionKey, String)> {
    range
        .map(|i| (PartitionKey::from(pk_of(i)), format!("d{i}")))
        .collect()
}

#[tokio::test]
async fn a_thousand_ids_over_every_range_with_some_missing() {
    let emu = common::start(EmulatorBuilder::new().partitions(4)).await;
    let driver = common::driver(common::options(&emu)).await;
    common::container(&driver, "db", "c").await;
    let c = driver.container("db", "c");
    let missing = |i: usize| i % 10 == 3;
    seed(&c, 1000, |i| !missing(i)).await;
    let mut asked = keys(0..1000);
    // A key with the right id under another partition key is not the item.
    asked.push((PartitionKey::from("elsewhere"), "d0".to_owned()));
    let answer = c
        .read_many_with::<Doc>(
            &asked,
            ReadManyOptions {
                max_concurrency: 3,
                ..ReadManyOptions::default()
            },
        )
        .await
        .unwrap();
    let want: Vec<String> = (0..1000)
        .filter(|&i| !missing(i))
        .map(|i| format!("d{i}"))
        .collect();
    let got: Vec<String> = answer.items().iter().map(|d| d.id.clone()).collect();
    assert_eq!(
        got, want,
        "the items found, in the order asked, the missing ones absent"
    );
    assert!(answer.items().iter().all(|d| d.pk == pk_of(d.n as usize)));
    assert!(answer.request_charge() > 0.0);
    let charged: f64 = answer
        .diagnostics()
        .iter()
        .map(|d| d.request_charge())
        .sum();
    assert!((charged - answer.request_charge()).abs() < 1e-6);
    // 4 ranges, 1,000 items: queries of at most 100 items, plus the range reads (the container
    // read for its key paths is the driver's, kept for every later operation),
    // far fewer requests than items.
    let requests = answer.diagnostics().len();
    assert!((12..=30).contains(&requests), "{requests} requests");

    // One item in its range: a point read; absent when missing.
    let absent = c.read_many::<Doc>(&keys(3..4)).await.unwrap();
    assert!(absent.items().is_empty(), "d3 was never written");
    assert!(absent.request_charge() > 0.0, "the 404 is charged");
    let present = c.read_many::<Doc>(&keys(4..5)).await.unwrap();
    assert_eq!(present.items()[0].id, "d4");
    assert!(c.read_many::<Doc>(&[]).await.unwrap().items().is_empty());
}

#[tokio::test]
async fn the_drivers_effective_partition_key_is_the_emulators() {
    for key in [
        "",
        "a",
        "p1",
        "a much longer partition key value than usual",
        "ünïcödé",
    ] {
        let ours = cosmos_driver::protocol::effective_partition_key(&PartitionKey::from(key), 1);
        let header = serde_json::to_string(&json!([key])).unwrap();
        let theirs = cosmos_emulator::epk::PartitionKeyValue::from_header(&header).unwrap();
        assert_eq!(ours, cosmos_emulator::epk::epk_hex(theirs.epk()), "{key:?}");
    }
    for n in [0.0, 1.0, -2.5, 1e300] {
        let ours =
            cosmos_driver::protocol::effective_partition_key(&PartitionKey::number(n).unwrap(), 1);
        let theirs =
            cosmos_emulator::epk::PartitionKeyValue::from_header(&format!("[{n:?}]")).unwrap();
        assert_eq!(ours, cosmos_emulator::epk::epk_hex(theirs.epk()), "{n}");
    }
    for (b, text) in [(true, "[true]"), (false, "[false]")] {
        let ours = cosmos_driver::protocol::effective_partition_key(&PartitionKey::from(b), 1);
        let theirs = cosmos_emulator::epk::PartitionKeyValue::from_header(text).unwrap();
        assert_eq!(ours, cosmos_emulator::epk::epk_hex(theirs.epk()));
    }
}

#[tokio::test]
async fn items_are_found_in_the_children_of_a_split_range() {
    let emu = common::start(EmulatorBuilder::new().partitions(2)).await;
    let driver = common::driver(common::options(&emu)).await;
    common::container(&driver, "db", "c").await;
    let c = driver.container("db", "c");
    seed(&c, 300, |_| true).await;
    common::split_range(&emu, "db", "c", "1").await;
    let answer = c.read_many::<Doc>(&keys(0..300)).await.unwrap();
    assert_eq!(answer.items().len(), 300);
}

async fn three_regions(
    builder: EmulatorBuilder,
    preferred: [&str; 3],
) -> (Emulator, ContainerClient) {
    let emu = common::start(builder.partitions(4)).await;
    let driver = common::driver(
        common::options(&emu)
            .with_preferred_regions(preferred)
            .with_availability_strategy(hedging(50)),
    )
    .await;
    common::container(&driver, "db", "c").await;
    (emu, driver.container("db", "c"))
}

fn hedging(ms: u64) -> cosmos_driver::hedging::AvailabilityStrategy {
    use cosmos_driver::hedging::{AvailabilityStrategy, HedgeThreshold, HedgingStrategy};
    AvailabilityStrategy::Hedging(HedgingStrategy::new(
        HedgeThreshold::new(std::time::Duration::from_millis(ms)).unwrap(),
    ))
}

#[tokio::test]
async fn a_slow_primary_region_the_alternate_answers_every_group() {
    let (emu, c) = three_regions(EmulatorBuilder::new(), [EAST, NORTH, WEST]).await;
    seed(&c, 400, |i| i % 4 != 0).await;
    // East serves point reads and queries 20 s late: far past the 50 ms threshold.
    let _slow = emu.faults().add(
        FaultRule::new(Reaction::delay_ms(20_000))
            .in_regions([EAST])
            .for_ops([OpKind::Read, OpKind::Query]),
    );
    let mut asked = keys(0..400);
    asked.push((PartitionKey::from("p1"), "alone".into()));
    let answer = c.read_many::<Doc>(&asked).await.unwrap();
    let got: Vec<usize> = answer.items().iter().map(|d| d.n as usize).collect();
    let want: Vec<usize> = (0..400).filter(|i| i % 4 != 0).collect();
    assert_eq!(got, want);
    let hedged: Vec<_> = answer
        .diagnostics()
        .iter()
        .filter_map(|d| d.hedge())
        .filter(|h| h.was_hedge())
        .collect();
    assert!(
        hedged.len() >= 4,
        "every group was hedged ({})",
        hedged.len()
    );
    for h in hedged {
        assert_eq!(h.terminal_state(), HedgeTerminalState::AlternateWon);
        assert_eq!(h.response_region().map(|g| g.as_str()), Some(NORTH));
    }
    assert_eq!(emu.counters().get(WEST, OpKind::Query), 0);
}

#[tokio::test]
async fn a_lagging_alternate_honours_the_session_token() {
    // West holds nothing written in the last minute; East is slow enough that every request is
    // hedged to West, which (given the session token of the writes) refuses to answer from its
    // stale replica, so East's complete answer is the one returned.
    let builder =
        EmulatorBuilder::new().region_replication_lag(WEST, ReplicationLag::fixed_ms(60_000));
    let (emu, c) = three_regions(builder, [EAST, WEST, NORTH]).await;
    seed(&c, 200, |i| i % 5 != 0).await;
    let _slow = emu.faults().add(
        FaultRule::new(Reaction::delay_ms(300))
            .in_regions([EAST])
            .for_ops([OpKind::Read, OpKind::Query]),
    );
    let answer = c.read_many::<Doc>(&keys(0..200)).await.unwrap();
    let got: Vec<usize> = answer.items().iter().map(|d| d.n as usize).collect();
    let want: Vec<usize> = (0..200).filter(|i| i % 5 != 0).collect();
    assert_eq!(got, want, "nothing lost to the lagging region");
    assert!(
        emu.counters().get(WEST, OpKind::Query) > 0,
        "West was asked"
    );
    for h in answer.diagnostics().iter().filter_map(|d| d.hedge()) {
        assert_ne!(h.terminal_state(), HedgeTerminalState::AlternateWon);
    }
}

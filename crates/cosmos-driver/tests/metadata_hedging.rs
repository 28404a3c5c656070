//! Hedging of metadata reads (spec §16, Phase 2) against the embedded emulator over real HTTP:
//! with every metadata request in the primary region slowed down, reads of the account, a database,
//! a container, its partition key ranges and its throughput are answered by the alternate region,
//! correctly; metadata writes are never hedged.

use crate::hedging::support;

use std::time::Duration;

use cosmos_driver::hedging::HedgeTerminalState;
use cosmos_driver::resources::ThroughputProperties;
use cosmos_driver::{CosmosOperation, CosmosResponse, DatabaseReference, OperationOptions};
use cosmos_emulator::faults::{FaultRule, OpKind, Reaction};
use tokio::time::Instant;

use support::{Setup, EAST, NORTH, WEST};

/// Metadata requests in `region` wait `ms` before they are served.
fn slow_metadata(region: &str, ms: u64) -> FaultRule {
    FaultRule::new(Reaction::delay_ms(ms))
        .in_regions([region])
        .for_ops([OpKind::Metadata])
}

fn assert_alternate_won(r: &CosmosResponse, what: &str) {
    let h = r
        .diagnostics()
        .hedge()
        .unwrap_or_else(|| panic!("{what}: no hedge diagnostics"));
    assert_eq!(
        h.terminal_state(),
        HedgeTerminalState::AlternateWon,
        "{what}"
    );
    assert_eq!(h.primary_region().as_str(), EAST, "{what}");
    assert_eq!(
        h.response_region().map(|r| r.as_str()),
        Some(WEST),
        "{what}"
    );
}

#[tokio::test]
async fn metadata_reads_with_a_slow_primary_are_answered_by_the_alternate() {
    let s = Setup::three_regions(200).await;
    let o = OperationOptions::new();
    // What the reads must return, read before the primary slows down.
    let container_rid = s
        .driver
        .execute(CosmosOperation::read_container(s.c.clone()), &o)
        .await
        .unwrap()
        .json::<serde_json::Value>()
        .unwrap()["_rid"]
        .clone();
    let client = s.driver.container("db", "c");
    let throughput = client.read_throughput().await.unwrap().throughput();
    assert_eq!(throughput, ThroughputProperties::manual(400));

    let _slow = s.emu.faults().add(slow_metadata(EAST, 3_000));
    let started = Instant::now();

    let r = s
        .driver
        .execute(CosmosOperation::read_container(s.c.clone()), &o)
        .await
        .expect("the alternate answers");
    assert_alternate_won(&r, "container read");
    assert_eq!(
        r.json::<serde_json::Value>().unwrap()["_rid"],
        container_rid
    );

    let r = s
        .driver
        .execute(CosmosOperation::read_database(s.c.database().clone()), &o)
        .await
        .unwrap();
    assert_alternate_won(&r, "database read");
    assert_eq!(r.json::<serde_json::Value>().unwrap()["id"], "db");

    let r = s
        .driver
        .execute(CosmosOperation::read_partition_key_ranges(s.c.clone()), &o)
        .await
        .unwrap();
    assert_alternate_won(&r, "partition key ranges");
    let ranges = r.json::<serde_json::Value>().unwrap();
    assert!(!ranges["PartitionKeyRanges"].as_array().unwrap().is_empty());

    let r = s
        .driver
        .execute(CosmosOperation::read_account(), &o)
        .await
        .unwrap();
    assert_alternate_won(&r, "account read");

    // Each request of a throughput read (container read, offer query, offer read) is hedged.
    let t = client.read_throughput().await.unwrap();
    assert_eq!(t.throughput(), throughput);
    assert_alternate_won(t.response(), "offer read");

    // Seven reads, each at most the threshold plus the alternate's time: far below one delay.
    assert!(
        started.elapsed() < Duration::from_millis(3_000),
        "took {:?}",
        started.elapsed()
    );
    assert_eq!(
        s.emu.counters().get(NORTH, OpKind::Metadata),
        0,
        "at most one alternate"
    );
}

#[tokio::test]
async fn metadata_writes_are_never_hedged() {
    let s = Setup::three_regions(200).await;
    let _slow = s.emu.faults().add(slow_metadata(EAST, 400));
    let r = s
        .driver
        .execute(
            CosmosOperation::create_database(DatabaseReference::new("other").unwrap()),
            &OperationOptions::new(),
        )
        .await
        .expect("the hub answers, late");
    assert!(r.diagnostics().hedge().is_none());
    let t = s
        .driver
        .container("db", "c")
        .replace_throughput(ThroughputProperties::manual(600))
        .await
        .unwrap();
    assert!(
        t.response().diagnostics().hedge().is_none(),
        "the offer replace is a write"
    );
    assert_eq!(t.throughput(), ThroughputProperties::manual(600));
    assert!(
        s.emu.counters().get(WEST, OpKind::Metadata) > 0,
        "the reads of the replace flow were hedged to West US"
    );
}

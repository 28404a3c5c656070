//! A request carries only the session token entry of the range that serves it: a container with
//! hundreds of ranges does not grow the header of every request. The emulator notes the longest
//! `x-ms-session-token` any request carried.

use crate::common;

use cosmos_driver::prelude::*;
use cosmos_emulator::{Emulator, EmulatorBuilder};
use serde_json::{json, Value};

/// The bound the header must stay under: one range's entry of a multi-region vector token.
const ONE_ENTRY_BYTES: u64 = 256;

async fn loaded(partitions: usize, items: usize) -> (Emulator, CosmosDriver, ContainerClient) {
    let emu = common::start(EmulatorBuilder::new().partitions(partitions)).await;
    let driver = common::driver(common::options(&emu)).await;
    common::container(&driver, "db", "c").await;
    let c = driver.container("db", "c");
    let ops = (0..items)
        .map(|i| {
            let doc = json!({"id": format!("i{i}"), "pk": format!("p{i}"), "n": i});
            BulkOperation::create(format!("p{i}"), &doc)
        })
        .collect::<Result<Vec<_>, _>>()
        .expect("bulk operations");
    let report = c.bulk().run_iter(ops).await.expect("bulk load");
    let failed: Vec<String> = report
        .results()
        .iter()
        .filter_map(|r| match r {
            Ok(op) if op.is_success() => None,
            Ok(op) => Some(format!("{:?}", op.status)),
            Err(e) => Some(e.to_string()),
        })
        .take(3)
        .collect();
    assert_eq!(
        report.succeeded(),
        items,
        "every item loaded; first failures: {failed:?}"
    );
    (emu, driver, c)
}

async fn query_all(c: &ContainerClient) -> usize {
    let mut rows =
        c.query_items::<Value>(Query::new("SELECT * FROM c"), QueryScope::CrossPartition);
    let mut n = 0;
    while rows.try_next().await.expect("a page").is_some() {
        n += 1;
    }
    n
}

#[tokio::test]
async fn a_cross_partition_query_over_300_ranges_sends_one_entry_per_page() {
    let (emu, _driver, c) = loaded(300, 1_200).await;
    emu.counters().reset();
    assert_eq!(query_all(&c).await, 1_200);
    let longest = emu.counters().longest_session_token_bytes();
    assert!(
        longest > 0 && longest <= ONE_ENTRY_BYTES,
        "the longest session token sent was {longest} bytes"
    );

    // Point reads send the entry of the range that holds their key.
    emu.counters().reset();
    for i in (0..1_200).step_by(97) {
        let read = c
            .read_item::<Value>(format!("p{i}"), &format!("i{i}"), None)
            .await
            .expect("read");
        assert_eq!(read.item().unwrap()["n"], i);
    }
    let longest = emu.counters().longest_session_token_bytes();
    assert!(
        longest <= ONE_ENTRY_BYTES,
        "point reads sent {longest} bytes"
    );
}

#[tokio::test]
async fn after_a_split_the_children_send_their_parents_entry() {
    let (emu, _driver, c) = loaded(8, 200).await;
    assert_eq!(query_all(&c).await, 200);
    common::split_range(&emu, "db", "c", "3").await;
    emu.counters().reset();
    assert_eq!(
        query_all(&c).await,
        200,
        "every item, once, across the split"
    );
    let longest = emu.counters().longest_session_token_bytes();
    assert!(
        longest <= ONE_ENTRY_BYTES,
        "{longest} bytes after the split"
    );
}

/// The size: 3,000 ranges and 12,000 items (a few minutes in a debug build):
/// `cargo test -p cosmos-driver --test integration session_per_range -- --ignored`.
#[tokio::test]
#[ignore]
async fn a_cross_partition_query_over_3000_ranges_sends_one_entry_per_page() {
    let (emu, _driver, c) = loaded(3_000, 12_000).await;
    emu.counters().reset();
    assert_eq!(query_all(&c).await, 12_000);
    let longest = emu.counters().longest_session_token_bytes();
    println!("longest session token header: {longest} bytes");
    assert!(longest > 0 && longest <= ONE_ENTRY_BYTES, "{longest} bytes");
}

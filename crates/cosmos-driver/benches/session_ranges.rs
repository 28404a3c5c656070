//! A point read's cost does not grow with the container's ranges: the driver sends only the
//! session token entry of the range that holds the key. Two embedded emulators (profile `local`),
//! one whose containers have 1 partition key range and one with 3,000; each container is loaded
//! with 3,000 items through bulk, so the driver holds a session token entry for every range; then
//! paired rounds of point reads of one item, 1 range against 3,000, CPU time and allocations per
//! read on the client thread.
//!
//!     cargo bench -p cosmos-driver --bench session_ranges [-- --reads N --rounds R --ranges N]
//!
//! A measurement, not a test: nothing fails when the machine is slow.

#[allow(dead_code)]
mod support;

use cosmos_driver::prelude::*;
use cosmos_driver::{CosmosOperation, OperationOptions};
use support::{arg, compare};

/// Starts an emulator with `ranges` partition key ranges per container, loads 3,000 items and
/// answers a driver and a container reference to read from.
async fn loaded(ranges: usize, items: usize) -> (CosmosDriver, cosmos_driver::ContainerReference) {
    let emu = cosmos_emulator::EmulatorBuilder::new()
        .profile("local")
        .partitions(ranges)
        .start_detached()
        .expect("emulator");
    let options = DriverOptions::new(emu.endpoint(), Credential::master_key(emu.key()).unwrap());
    // The emulator lives as long as the process (the benchmark ends with it).
    std::mem::forget(emu);
    let driver = CosmosDriver::new(options).await.expect("driver");
    let db = driver
        .create_database("bench", None)
        .await
        .expect("database");
    let key = PartitionKeyDefinition::new("/pk").unwrap();
    db.create_container(&ContainerProperties::new("items", &key), None)
        .await
        .expect("container");
    let c = driver.container("bench", "items");
    let ops = (0..items)
        .map(|i| {
            let doc = serde_json::json!({"id": format!("i{i}"), "pk": format!("p{i}"), "payload": "x".repeat(200)});
            BulkOperation::create(format!("p{i}"), &doc)
        })
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    let report = c.bulk().run_iter(ops).await.expect("bulk");
    assert_eq!(report.succeeded(), items);
    let reference = cosmos_driver::DatabaseReference::new("bench")
        .unwrap()
        .container("items")
        .unwrap();
    (driver, reference)
}

fn main() {
    let reads = arg("--reads", 20_000);
    let rounds = arg("--rounds", 7) as usize;
    let ranges = arg("--ranges", 3_000) as usize;
    let items = ranges.max(3_000);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async move {
        let (one, one_c) = loaded(1, items).await;
        let (many, many_c) = loaded(ranges, items).await;
        let held = many.sessions().token_for(&std::sync::Arc::from(many_c.link())).map_or(0, |t| t.len());
        println!("session token entries held: 1 range: {}, {ranges} ranges: {held}",
            one.sessions().token_for(&std::sync::Arc::from(one_c.link())).map_or(0, |t| t.len()));
        let o = OperationOptions::new();
        let read = |driver: &CosmosDriver, c: &cosmos_driver::ContainerReference| {
            let op = CosmosOperation::read_item(c.item("i7").unwrap()).with_partition_key("p7");
            let driver = driver.clone();
            let o = o.clone();
            async move {
                let r = driver.execute(op, &o).await.expect("read");
                std::hint::black_box(r);
            }
        };
        compare(reads.min(2_000), reads, rounds, || read(&one, &one_c), || read(&many, &many_c))
            .await
            .print_named(
                &format!("point read, loopback, emulator profile local: 1 range against {ranges} ranges, {} rounds x {reads} reads (median round)", rounds.max(1)),
                "read",
                ("1 range", &format!("{ranges} ranges")),
                Some("within 1.05x"),
            );
    });
}

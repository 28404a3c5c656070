//! Change-feed read rate on loopback: an embedded emulator (profile `local`, one region, 4
//! partition key ranges) on its own thread and runtime, N items written, then the whole change feed
//! read from the beginning through `ContainerClient::change_feed` and the items per second
//! printed; then read many of 1,000 of those ids, timed the same way. A measurement, not a test.
//!
//!     cargo run --release -p cosmos-driver --example change_feed_rate [-- --items N --page P]

use std::time::Instant;

use cosmos_driver::change_feed::{ChangeFeedStart, FeedScope};
use cosmos_driver::{
    ChangeFeedOptions, CosmosDriver, CosmosOperation, Credential, DatabaseReference, DriverOptions,
    OperationOptions, PartitionKey, PartitionKeyDefinition,
};
use futures::{StreamExt, TryStreamExt};
use serde_json::{json, Value};

fn arg(name: &str, default: u64) -> u64 {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn start_emulator() -> (String, String) {
    let emu = cosmos_emulator::EmulatorBuilder::new()
        .regions(["East US"])
        .partitions(4)
        .profile("local")
        .start_detached()
        .expect("emulator");
    (emu.endpoint().to_owned(), emu.key().to_owned())
}

fn pk(i: u64) -> String {
    format!("p{}", i % 1000)
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let items = arg("--items", 20_000);
    let page = arg("--page", 1_000) as u32;
    let (endpoint, key) = start_emulator();
    let driver =
        CosmosDriver::new(DriverOptions::new(&endpoint, Credential::master_key(&key)?)).await?;
    let o = OperationOptions::new();
    let db = DatabaseReference::new("bench")?;
    driver
        .execute(CosmosOperation::create_database(db.clone()), &o)
        .await?;
    let reference = db.container("items")?;
    driver
        .execute(
            CosmosOperation::create_container(reference, PartitionKeyDefinition::new("/pk")?),
            &o,
        )
        .await?;
    let c = driver.container("bench", "items");

    let started = Instant::now();
    futures::stream::iter(0..items)
        .map(|i| {
            let c = c.clone();
            async move {
                let body =
                    json!({"id": format!("d{i}"), "pk": pk(i), "n": i, "pad": "x".repeat(200)});
                c.create_item(pk(i).as_str(), &body, None).await.map(|_| ())
            }
        })
        .buffer_unordered(32)
        .try_collect::<Vec<()>>()
        .await?;
    println!(
        "wrote {items} items in {:.2} s",
        started.elapsed().as_secs_f64()
    );

    let options = ChangeFeedOptions {
        max_item_count: Some(page),
        ..ChangeFeedOptions::default()
    };
    let started = Instant::now();
    let pages: Vec<_> = c
        .change_feed_with::<Value>(ChangeFeedStart::Beginning, FeedScope::Container, options)
        .into_pages()
        .try_collect()
        .await?;
    let secs = started.elapsed().as_secs_f64();
    let read: usize = pages.iter().map(|p| p.items().len()).sum();
    let ru: f64 = pages.iter().map(|p| p.request_charge()).sum();
    let requests: usize = pages.iter().map(|p| p.diagnostics().len()).sum();
    assert_eq!(read as u64, items, "the feed returned every item once");
    println!(
        "change feed: {read} items in {secs:.3} s = {:.0} items/s ({requests} requests, pages of up to {page}, {ru:.1} RU)",
        read as f64 / secs
    );

    let ids: Vec<(PartitionKey, String)> = (0..items.min(1000))
        .map(|i| {
            (
                PartitionKey::from(pk(i * (items / 1000).max(1))),
                format!("d{}", i * (items / 1000).max(1)),
            )
        })
        .collect();
    let started = Instant::now();
    let many = c.read_many::<Value>(&ids).await?;
    let secs = started.elapsed().as_secs_f64();
    println!(
        "read many: {} items in {secs:.3} s = {:.0} items/s ({} requests, {:.1} RU)",
        many.items().len(),
        many.items().len() as f64 / secs,
        many.diagnostics().len(),
        many.request_charge()
    );
    Ok(())
}

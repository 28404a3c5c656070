//! A first look at the driver: start an embedded three-region emulator whose first region is
//! sometimes slow, then read an item 200 times with hedging at 50 ms and print what the hedged reads did.
//!
//!     cargo run --release -p cosmos-driver --example quickstart

use std::time::Duration;

use cosmos_driver::hedging::{AvailabilityStrategy, HedgeThreshold, HedgingStrategy};
use cosmos_driver::patch::PatchInstructions;
use cosmos_driver::{
    CosmosDriver, CosmosOperation, Credential, DatabaseReference, DriverOptions, OperationOptions,
    PartitionKeyDefinition,
};
use cosmos_emulator::EmulatorBuilder;
use serde_json::{json, Value};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let emulator = EmulatorBuilder::new()
        .regions(["East US", "West US", "North Europe"])
        .profile("slow-primary")
        .start()
        .await?;

    let threshold = HedgeThreshold::new(Duration::from_millis(50)).ok_or("zero threshold")?;
    let options = DriverOptions::new(emulator.endpoint(), Credential::master_key(emulator.key())?)
        .with_preferred_regions(["East US", "West US", "North Europe"])
        .with_availability_strategy(AvailabilityStrategy::Hedging(HedgingStrategy::new(
            threshold,
        )));
    let driver = CosmosDriver::new(options).await?;

    let none = OperationOptions::new();
    let db = DatabaseReference::new("shop")?;
    driver
        .execute(CosmosOperation::create_database(db.clone()), &none)
        .await?;
    let orders = db.container("orders")?;
    let pk = PartitionKeyDefinition::new("/customer")?;
    driver
        .execute(CosmosOperation::create_container(orders.clone(), pk), &none)
        .await?;

    let order = json!({ "id": "o-1", "customer": "c-7", "items": 2 });
    let create = CosmosOperation::create_item(orders.clone())
        .with_partition_key("c-7")
        .with_json_body(&order)?;
    driver.execute(create, &none).await?;

    // PATCH is the service's verb where the account serves it (one request, applied by the
    // service), else Read-Modify-Write with If-Match; no update is lost under concurrency.
    let patch = PatchInstructions::new()
        .increment("/items", 1)
        .set("/status", json!("paid"));
    let patched = driver
        .execute(
            CosmosOperation::patch_item(orders.item("o-1")?)
                .with_partition_key("c-7")
                .with_json_body(&patch)?,
            &none,
        )
        .await?;
    println!("patched: {}", patched.json::<Value>()?);

    let (mut hedged, mut slowest) = (0, Duration::ZERO);
    for _ in 0..200 {
        let read = CosmosOperation::read_item(orders.item("o-1")?).with_partition_key("c-7");
        let response = driver.execute(read, &none).await?;
        let diagnostics = response.diagnostics();
        slowest = slowest.max(diagnostics.duration());
        if let Some(hedge) = diagnostics
            .hedge()
            .filter(|h| h.alternate_region().is_some())
        {
            hedged += 1;
            println!(
                "read took {:>6.1?}: {} (primary {}, alternate {:?}), {} RU to the caller, {} RU in all",
                diagnostics.duration(),
                hedge.terminal_state().as_str(),
                hedge.primary_region(),
                hedge.alternate_region().map(|r| r.as_str()),
                response.request_charge(),
                diagnostics.total_request_charge(),
            );
        }
    }
    println!("200 reads: {hedged} hedged, slowest {slowest:.1?} (without hedging about 3% would take 800-1500 ms)");
    Ok(())
}

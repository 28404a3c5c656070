//! The zero-overhead happy path end to end: a real point read through `CosmosDriver` whose primary
//! answers before the hedging threshold allocates exactly as much as the same read with hedging
//! disabled. The emulator runs on another runtime's threads, so its allocations are not counted.
//! (The race alone, with fake attempts, is measured by the crate's unit tests.)

use std::time::Duration;

use cosmos_driver::hedging::{AvailabilityStrategy, HedgeTerminalState, HedgeThreshold};
use cosmos_driver::{
    CosmosDriver, CosmosOperation, Credential, DatabaseReference, DriverOptions, OperationOptions,
    PartitionKeyDefinition,
};

#[path = "../src/alloc_counter.rs"]
#[allow(dead_code)]
mod alloc_counter;

use alloc_counter::{allocations_of, CountingAllocator};

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// Allocations of one real read, the fewest over `rounds` reads (a pooled connection's buffers or
/// a lazily grown table may allocate on some reads and not others; the steady state is the least).
fn fewest_allocations(
    rt: &tokio::runtime::Runtime,
    rounds: usize,
    read: impl Fn() -> CosmosOperation,
    driver: &CosmosDriver,
    options: &OperationOptions,
) -> u64 {
    (0..rounds)
        .map(|_| {
            let op = read();
            let (n, result) = allocations_of(|| rt.block_on(driver.execute(op, options)));
            result.expect("the read succeeds");
            n
        })
        .min()
        .unwrap_or(u64::MAX)
}

#[test]
fn real_read_that_wins_before_the_threshold_allocates_as_the_unhedged_read() {
    let emulator_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    let emu = emulator_rt
        .block_on(cosmos_emulator::EmulatorBuilder::new().start())
        .expect("the emulator starts");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");

    let threshold = HedgeThreshold::new(Duration::from_secs(5)).expect("non-zero");
    let options = DriverOptions::new(
        emu.endpoint(),
        Credential::master_key(emu.key()).expect("key"),
    )
    .with_preferred_regions(["East US", "West US"])
    .with_availability_strategy(AvailabilityStrategy::Hedging(
        cosmos_driver::hedging::HedgingStrategy::new(threshold),
    ))
    .with_account_refresh_interval(Duration::ZERO);
    let driver = rt
        .block_on(CosmosDriver::new(options))
        .expect("the driver connects");
    let none = OperationOptions::new();
    let c = rt.block_on(async {
        let db = DatabaseReference::new("db").unwrap();
        driver
            .execute(CosmosOperation::create_database(db.clone()), &none)
            .await
            .unwrap();
        let c = db.container("c").unwrap();
        driver
            .execute(
                CosmosOperation::create_container(
                    c.clone(),
                    PartitionKeyDefinition::new("/pk").unwrap(),
                ),
                &none,
            )
            .await
            .unwrap();
        let doc = serde_json::json!({"id": "a", "pk": "p", "n": 1});
        driver
            .execute(
                CosmosOperation::create_item(c.clone())
                    .with_partition_key("p")
                    .with_json_body(&doc)
                    .unwrap(),
                &none,
            )
            .await
            .unwrap();
        c
    });
    let read = || CosmosOperation::read_item(c.item("a").unwrap()).with_partition_key("p");
    let hedged = OperationOptions::new();
    let disabled =
        OperationOptions::new().with_availability_strategy(AvailabilityStrategy::Disabled);

    // The two paths really differ: one races (and wins before the threshold), the other does not.
    let r = rt.block_on(driver.execute(read(), &hedged)).unwrap();
    let h = r.diagnostics().hedge().expect("the read is hedged");
    assert_eq!(
        h.terminal_state(),
        HedgeTerminalState::PrimaryWonPreThreshold
    );
    assert!(rt
        .block_on(driver.execute(read(), &disabled))
        .unwrap()
        .diagnostics()
        .hedge()
        .is_none());

    // Warm up both paths (connections, thread-local state, tracing call sites), then measure them
    // interleaved so that both see the same conditions.
    fewest_allocations(&rt, 20, read, &driver, &hedged);
    fewest_allocations(&rt, 20, read, &driver, &disabled);
    let (mut with, mut without) = (u64::MAX, u64::MAX);
    for _ in 0..5 {
        with = with.min(fewest_allocations(&rt, 4, read, &driver, &hedged));
        without = without.min(fewest_allocations(&rt, 4, read, &driver, &disabled));
    }
    assert!(
        without > 0,
        "a real read allocates (its request and response): the counter works"
    );
    assert_eq!(
        with, without,
        "per read: hedged {with} vs hedging disabled {without} allocations"
    );
    drop(driver);
    drop(rt);
    emulator_rt.block_on(emu.shutdown());
}

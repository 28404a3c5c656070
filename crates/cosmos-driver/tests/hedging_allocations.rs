//! The zero-overhead happy path: a hedged read whose primary answers before the threshold allocates
//! exactly as much as the same read with hedging off.
//!
//! A counting global allocator counts the allocations made on the measuring thread while a
//! single-threaded runtime drives the future to completion. The race is measured on its own with
//! fake attempts, and a real point read through `CosmosDriver` is measured against the embedded
//! emulator (which runs on another runtime's threads, so its allocations are not counted).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::future::Future;
use std::time::Duration;

use cosmos_driver::hedging::AvailabilityStrategy;
use cosmos_driver::hedging::{
    hub_latch_eligible, race_hedged, HedgeLegOutput, HedgeTerminalState, HedgeThreshold,
    HubRegionLatch, RaceSetup,
};
use cosmos_driver::protocol::{CosmosStatus, OperationType, Region, ResourceType};
use cosmos_driver::{
    CosmosDriver, CosmosOperation, Credential, DatabaseReference, DriverOptions, OperationOptions,
    PartitionKeyDefinition,
};

struct CountingAllocator;

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

fn note_allocation() {
    // `try_with`: the allocator may run while thread-locals are being torn down.
    let counting = COUNTING.try_with(Cell::get).unwrap_or(false);
    if counting {
        let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
    }
}

unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note_allocation();
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note_allocation();
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note_allocation();
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// Allocations made on this thread while `rt` drives `fut` to completion.
fn allocations_of<F: Future>(rt: &tokio::runtime::Runtime, fut: F) -> (u64, F::Output) {
    ALLOCATIONS.with(|n| n.set(0));
    COUNTING.with(|c| c.set(true));
    let out = rt.block_on(fut);
    COUNTING.with(|c| c.set(false));
    (ALLOCATIONS.with(Cell::get), out)
}

/// A point read's result: a status and a body.
struct Read {
    status: CosmosStatus,
    body: Vec<u8>,
}

impl HedgeLegOutput for Read {
    fn status(&self) -> Option<CosmosStatus> {
        Some(self.status)
    }
    fn partition_key_range_id(&self) -> Option<&str> {
        None
    }
    fn observed_session_unavailable(&self) -> bool {
        false
    }
    fn request_charge(&self) -> f64 {
        1.0
    }
}

/// A primary attempt that waits `latency` and allocates a body, as a real read does.
async fn primary_read(latency: Duration) -> Read {
    tokio::time::sleep(latency).await;
    tokio::task::yield_now().await;
    Read {
        status: CosmosStatus::new(200, 0),
        body: vec![7u8; 256],
    }
}

fn never_built() -> std::future::Ready<Read> {
    panic!("the alternate must not be built on the happy path")
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("runtime")
}

#[test]
fn zero_overhead_happy_path_no_allocs() {
    let rt = runtime();
    let (east, west) = (Region::new("East US"), Region::new("West US"));
    let threshold = HedgeThreshold::new(Duration::from_secs(1)).expect("non-zero");
    let eligible = hub_latch_eligible(ResourceType::Document, OperationType::Read, false);
    assert!(
        eligible,
        "the measured read is eligible for the shared latch"
    );

    let hedged = |latency| {
        let (east, west) = (&east, &west);
        async move {
            let latch = HubRegionLatch::new();
            let setup = RaceSetup {
                threshold,
                deadline: Some(tokio::time::Instant::now() + Duration::from_secs(5)),
                primary_region: east,
                alternate_region: west,
                applicable_regions: 2,
                hub_latch: eligible.then_some(&latch),
            };
            let race = race_hedged(setup, primary_read(latency), never_built).await;
            assert!(
                latch.shared().is_none(),
                "no shared latch on the happy path"
            );
            race
        }
    };

    for latency in [Duration::ZERO, Duration::from_millis(2)] {
        // Warm up: first use of timers and tracing call sites may allocate once per process.
        allocations_of(&rt, primary_read(latency));
        allocations_of(&rt, hedged(latency));

        let (alone, read) = allocations_of(&rt, primary_read(latency));
        let (raced, race) = allocations_of(&rt, hedged(latency));
        assert_eq!(read.body.len(), 256);
        assert_eq!(
            race.terminal_state,
            HedgeTerminalState::PrimaryWonPreThreshold
        );
        assert!(
            alone >= 1,
            "the read itself allocates its body: the counter works"
        );
        assert_eq!(
            raced, alone,
            "latency {latency:?}: hedged {raced} vs not hedged {alone} allocations"
        );
    }
}

#[test]
fn a_hedge_that_fires_does_allocate_the_shared_latch() {
    // The counter sees the latch: the equality above is not vacuous.
    let rt = runtime();
    let (east, west) = (Region::new("East US"), Region::new("West US"));
    let threshold = HedgeThreshold::new(Duration::from_millis(1)).expect("non-zero");
    let run = |with_latch: bool| {
        let (east, west) = (&east, &west);
        async move {
            let latch = HubRegionLatch::new();
            let setup = RaceSetup {
                threshold,
                deadline: None,
                primary_region: east,
                alternate_region: west,
                applicable_regions: 2,
                hub_latch: with_latch.then_some(&latch),
            };
            let race = race_hedged(setup, primary_read(Duration::from_millis(200)), || {
                primary_read(Duration::ZERO)
            })
            .await;
            assert_eq!(race.terminal_state, HedgeTerminalState::AlternateWon);
            assert_eq!(latch.shared().is_some(), with_latch);
        }
    };
    allocations_of(&rt, run(true));
    allocations_of(&rt, run(false));
    let (without, ()) = allocations_of(&rt, run(false));
    let (with, ()) = allocations_of(&rt, run(true));
    assert_eq!(
        with,
        without + 1,
        "exactly one allocation for the shared latch"
    );
}

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
            let (n, result) = allocations_of(rt, driver.execute(op, options));
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

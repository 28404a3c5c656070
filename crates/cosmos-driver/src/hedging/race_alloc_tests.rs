//! The zero-overhead happy path of the race: a hedged read whose primary answers before the
//! threshold allocates exactly as much as the same read with no race (fake attempts, counted by
//! the crate's test allocator, `alloc_counter`).

use std::future::Future;
use std::time::Duration;

use super::{race_hedged, HedgeLegOutput, HedgeThreshold, HubRegionLatch, RaceSetup};
use crate::alloc_counter::allocations_of;
use crate::diagnostics::HedgeTerminalState;
use crate::hedging::hub_latch_eligible;
use crate::protocol::{CosmosStatus, OperationType, Region, ResourceType};

/// Allocations made on this thread while `rt` drives `fut` to completion.
fn allocations_of_future<F: Future>(rt: &tokio::runtime::Runtime, fut: F) -> (u64, F::Output) {
    allocations_of(|| rt.block_on(fut))
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
        allocations_of_future(&rt, primary_read(latency));
        allocations_of_future(&rt, hedged(latency));

        let (alone, read) = allocations_of_future(&rt, primary_read(latency));
        let (raced, race) = allocations_of_future(&rt, hedged(latency));
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
    allocations_of_future(&rt, run(true));
    allocations_of_future(&rt, run(false));
    let (without, ()) = allocations_of_future(&rt, run(false));
    let (with, ()) = allocations_of_future(&rt, run(true));
    assert_eq!(
        with,
        without + 1,
        "exactly one allocation for the shared latch"
    );
}

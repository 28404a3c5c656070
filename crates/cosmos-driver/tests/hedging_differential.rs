//! Hedging never turns a success into an error: the same seeded workload (upserts, point reads and
//! PATCH, whose read re-enters the pipeline) runs once with hedging off and once with hedging on
//! against fresh embedded emulators of the same layout, and every operation that succeeded without
//! hedging must succeed with it. Layouts: the hub (write) region first, second, third or outside
//! the preferred regions; replication lag on no, some or every read region; a slow primary region.

use crate::common;

use std::time::Duration;

use cosmos_driver::hedging::{AvailabilityStrategy, HedgeThreshold, HedgingStrategy};
use cosmos_driver::patch::PatchInstructions;
use cosmos_driver::{ContainerReference, CosmosDriver, CosmosOperation, OperationOptions};
use cosmos_emulator::faults::{FaultRule, OpKind, Reaction};
use cosmos_emulator::{EmulatorBuilder, ReplicationLag};
use serde_json::json;

const EAST: &str = "East US";
const WEST: &str = "West US";
const NORTH: &str = "North Europe";
const OPS: u64 = 10;
const THRESHOLD_MS: u64 = 20;
const SLOW_MS: u64 = 60;

#[derive(Clone, Copy, Debug)]
enum Lag {
    None,
    /// The first preferred region that is not the hub.
    Some,
    /// Every region but the hub.
    All,
}

#[derive(Clone, Copy, Debug)]
struct Layout {
    hub: &'static str,
    preferred: &'static [&'static str],
    lag: Lag,
    /// Reads in the first preferred region take `SLOW_MS` (the threshold is `THRESHOLD_MS`).
    slow_primary: bool,
}

impl Layout {
    fn lagging(&self) -> Vec<&'static str> {
        let others = [EAST, WEST, NORTH].into_iter().filter(|r| *r != self.hub);
        match self.lag {
            Lag::None => Vec::new(),
            Lag::Some => self
                .preferred
                .iter()
                .copied()
                .filter(|r| *r != self.hub)
                .take(1)
                .collect(),
            Lag::All => others.collect(),
        }
    }
}

/// How one operation ended: its status, or the error kind when no status came back.
#[derive(Clone, Debug, PartialEq)]
enum Outcome {
    Ok(u16),
    Failed(String),
}

/// A small deterministic generator (64-bit LCG), so both runs draw the same workload.
struct Seeded(u64);

impl Seeded {
    fn next(&mut self, below: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % below
    }
}

async fn one_op(driver: &CosmosDriver, c: &ContainerReference, kind: u64, id: &str) -> Outcome {
    let op = match kind {
        0 => CosmosOperation::upsert_item(c.clone())
            .with_partition_key(id)
            .with_json_body(&json!({ "id": id, "pk": id, "n": 0 }))
            .unwrap(),
        1 => common::read(c, id, id),
        _ => CosmosOperation::patch_item(c.item(id).unwrap())
            .with_partition_key(id)
            .with_json_body(&PatchInstructions::new().increment("/n", 1))
            .unwrap(),
    };
    match driver.execute(op, &OperationOptions::new()).await {
        Ok(r) => Outcome::Ok(r.status()),
        Err(e) => Outcome::Failed(match e.cosmos_status() {
            Some(s) => s.to_string(),
            None => format!("{:?}", e.kind()),
        }),
    }
}

/// Runs the seeded workload on a fresh emulator; returns each operation's outcome and how many
/// operations sent an alternate.
async fn run(layout: Layout, hedging: bool, seed: u64) -> (Vec<(String, Outcome)>, usize) {
    let mut builder = EmulatorBuilder::new().write_regions([layout.hub]);
    for region in layout.lagging() {
        builder = builder.region_replication_lag(region, ReplicationLag::fixed_ms(60_000));
    }
    let emu = common::start(builder).await;
    let strategy = if hedging {
        AvailabilityStrategy::Hedging(HedgingStrategy::new(
            HedgeThreshold::new(Duration::from_millis(THRESHOLD_MS)).unwrap(),
        ))
    } else {
        AvailabilityStrategy::Disabled
    };
    let options = common::options(&emu)
        .with_preferred_regions(layout.preferred.iter().copied())
        .with_availability_strategy(strategy);
    let driver = common::driver(options).await;
    let c = common::container(&driver, "db", "c").await;
    let _slow = layout.slow_primary.then(|| {
        emu.faults().add(
            FaultRule::new(Reaction::delay_ms(SLOW_MS))
                .in_regions([layout.preferred[0]])
                .for_ops([OpKind::Read]),
        )
    });
    let mut rng = Seeded(seed);
    let mut outcomes = Vec::new();
    let mut hedged = 0;
    for i in 0..OPS {
        // Writes first often enough that reads and patches find items.
        let kind = if i == 0 { 0 } else { rng.next(3) };
        let id = format!("i{}", rng.next(3));
        let name = ["upsert", "read", "patch"][kind as usize];
        let before = emu.counters().get(layout.preferred[1], OpKind::Read);
        let outcome = one_op(&driver, &c, kind, &id).await;
        if hedging && emu.counters().get(layout.preferred[1], OpKind::Read) > before {
            hedged += 1;
        }
        outcomes.push((format!("#{i} {name} {id}"), outcome));
    }
    (outcomes, hedged)
}

async fn differential(hub: &'static str, preferred: &'static [&'static str]) {
    let mut slow_hedged = 0;
    for (n, lag) in [Lag::None, Lag::Some, Lag::All].into_iter().enumerate() {
        for slow_primary in [false, true] {
            let layout = Layout {
                hub,
                preferred,
                lag,
                slow_primary,
            };
            let seed = 0x5eed + n as u64 * 2 + u64::from(slow_primary);
            let (off, _) = run(layout, false, seed).await;
            let (on, hedged) = run(layout, true, seed).await;
            assert!(
                off.iter().any(|(_, o)| matches!(o, Outcome::Ok(_))),
                "{layout:?}: the workload does something: {off:?}"
            );
            for ((what, without), (_, with)) in off.iter().zip(&on) {
                if let Outcome::Ok(status) = without {
                    assert_eq!(
                        with,
                        &Outcome::Ok(*status),
                        "{layout:?}, {what}: succeeded without hedging, not with it\n\
                         off: {off:?}\non: {on:?}"
                    );
                }
            }
            if slow_primary {
                slow_hedged += hedged;
            }
        }
    }
    assert!(slow_hedged > 0, "a slow primary made some reads hedge");
}

#[tokio::test]
async fn hub_first_in_the_preferred_regions() {
    differential(EAST, &[EAST, WEST]).await;
}

#[tokio::test]
async fn hub_second_in_the_preferred_regions() {
    differential(WEST, &[EAST, WEST]).await;
}

#[tokio::test]
async fn hub_third_in_the_preferred_regions() {
    differential(NORTH, &[EAST, WEST, NORTH]).await;
}

#[tokio::test]
async fn hub_outside_the_preferred_regions() {
    differential(NORTH, &[EAST, WEST]).await;
}

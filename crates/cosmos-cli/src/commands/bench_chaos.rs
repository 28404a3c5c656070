//! `cosmos bench --workload chaos`: one run of the chaos mix on the embedded emulator while the
//! fault schedule plays, then the read-back and the figures.
//!
//! Runs at several hedging settings share one emulator: each run starts where the previous one
//! left it (the write region moved, a range split), so the targets are chosen afresh per run.

use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use cosmos_driver::{ContainerReference, CosmosDriver, CosmosOperation, OperationOptions};
use cosmos_emulator::Emulator;
use serde_json::Value;
use tokio::time::Instant;

use crate::bench::chaos::fault_plan::plan;
use crate::bench::chaos::fault_player::{play, FaultTargets, StormMeter};
use crate::bench::chaos::ledger::Ledger;
use crate::bench::chaos::readback::read_back;
use crate::bench::chaos::storm_load::StormWindow;
use crate::bench::chaos::verdict::judge;
use crate::bench::chaos::ChaosReport;
use crate::bench::workloads::chaos::{prepare, ChaosIds, ChaosWorkload, COUNTERS};
use crate::bench::workloads::setup::SeededItems;
use crate::bench::{EngineConfig, RunMeasurement};

/// The partition key range split when the container's ranges cannot be listed.
const SPLIT_RANGE: &str = "0";

/// The range to split, from a partition key range listing (`{"PartitionKeyRanges":[{"id",
/// "parents"},...]}`): the first range that no other range names as its parent (a listing may
/// keep ranges already split).
pub fn range_to_split(listing: &Value) -> Option<String> {
    let ranges = listing.get("PartitionKeyRanges")?.as_array()?;
    let parents: Vec<&str> = ranges
        .iter()
        .filter_map(|r| r.get("parents")?.as_array())
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    ranges
        .iter()
        .filter_map(|r| r.get("id")?.as_str())
        .find(|id| !parents.contains(id))
        .map(str::to_owned)
}

/// The range this run splits: one the container has now, else [`SPLIT_RANGE`].
async fn current_range(driver: &CosmosDriver, container: &ContainerReference) -> String {
    let op = CosmosOperation::read_partition_key_ranges(container.clone());
    let listing = driver
        .execute(op, &OperationOptions::default())
        .await
        .ok()
        .and_then(|r| r.json::<Value>().ok());
    listing
        .as_ref()
        .and_then(range_to_split)
        .unwrap_or_else(|| SPLIT_RANGE.to_owned())
}

/// The preferred regions of a chaos run on the embedded emulator: the write region second, so the
/// region put out is a read region and the failover moves writes to the third.
pub fn chaos_regions(regions: &[String], write_region: &str) -> Vec<String> {
    let mut order: Vec<String> = regions
        .iter()
        .filter(|r| r.as_str() != write_region)
        .cloned()
        .collect();
    let at = order.len().min(1);
    order.insert(at, write_region.to_owned());
    order
}

/// Where the faults land: the first preferred region goes out; writes move to a region that is
/// neither the write region nor that one (or the first preferred one when there is no other);
/// `split_range` splits.
pub fn fault_targets(
    preferred: &[String],
    write_region: &str,
    container: &ContainerReference,
    split_range: &str,
) -> Result<FaultTargets, String> {
    let read_region = preferred
        .first()
        .cloned()
        .ok_or("the chaos workload needs at least two regions")?;
    let failover_to = preferred
        .iter()
        .find(|r| r.as_str() != write_region && **r != read_region)
        .or_else(|| preferred.iter().find(|r| r.as_str() != write_region))
        .cloned()
        .ok_or("the chaos workload needs at least two regions")?;
    Ok(FaultTargets {
        read_region,
        failover_to,
        database: container.database().id().to_owned(),
        container: container.id().to_owned(),
        split_range: split_range.to_owned(),
    })
}

/// Everything a chaos run needs.
pub struct ChaosRun<'a> {
    /// The embedded emulator the faults are played on.
    pub emulator: &'a Emulator,
    /// The driver under test.
    pub driver: CosmosDriver,
    /// The benchmark container.
    pub container: ContainerReference,
    /// The driver's preferred regions.
    pub preferred: Vec<String>,
    /// Seeded items for the reads.
    pub items: SeededItems,
    /// Pacing and window.
    pub config: EngineConfig,
    /// The measured window the schedule is scaled to.
    pub duration: Duration,
    /// First attempts slower than this count as over the hedge threshold.
    pub slow_after: Duration,
}

/// Runs the chaos mix with `measure` (the engine with its progress bar) while the schedule plays.
pub async fn run<F, Fut>(
    run: ChaosRun<'_>,
    measure: F,
) -> Result<(RunMeasurement, ChaosReport), String>
where
    F: FnOnce(ChaosWorkload, EngineConfig) -> Fut,
    Fut: std::future::Future<Output = RunMeasurement>,
{
    let emu = run.emulator;
    let tag = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    let ids = ChaosIds::new(&tag.to_string());
    prepare(&run.driver, &run.container, &ids).await?;
    let split_range = current_range(&run.driver, &run.container).await;
    let targets = fault_targets(
        &run.preferred,
        &emu.write_region(),
        &run.container,
        &split_range,
    )?;
    let ledger = Arc::new(Ledger::new(COUNTERS));
    let run_start = Instant::now();
    let workload = ChaosWorkload::new(
        run.driver.clone(),
        run.container.clone(),
        run.items,
        ids.clone(),
        ledger.clone(),
        run_start,
        run.slow_after,
    )?;
    let started = workload.started();
    let storm_window = Mutex::new(StormWindow::default());
    let storm = StormMeter {
        operations: &started,
        window: &storm_window,
    };
    let warmup = run.config.window.warmup;
    let schedule = plan(run.duration);
    let timeline = Mutex::new(Vec::new());
    let measuring = measure(workload, run.config);
    tokio::pin!(measuring);
    let m = tokio::select! {
        m = &mut measuring => m,
        () = play(emu, &targets, &schedule, run_start, run_start + warmup, &timeline, storm) => measuring.await,
    };
    let end = run_start.elapsed();
    // Rules went with the player; the outage may outlive a run that ended early, and so may the
    // storm's window (its rules are gone now).
    emu.outages().end_all();
    storm.close(emu);
    let snapshot = ledger.snapshot();
    eprintln!(
        "reading back {} created items, {} replace targets and {} counters",
        snapshot.creates.len(),
        ids.replace_targets.len(),
        ids.counters.len()
    );
    let back = read_back(
        &run.driver,
        &run.container,
        &snapshot,
        &ids.replace_targets,
        &ids.counters,
    )
    .await;
    let judgement = judge(&snapshot, &back);
    let timeline = timeline
        .into_inner()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    Ok((
        m,
        ChaosReport::new(
            &judgement,
            &snapshot,
            warmup,
            end,
            timeline,
            storm_window
                .into_inner()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .load(),
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn the_write_region_comes_second() {
        let all = names(&["East US", "West US", "North Europe"]);
        assert_eq!(
            chaos_regions(&all, "East US"),
            names(&["West US", "East US", "North Europe"])
        );
        assert_eq!(
            chaos_regions(&all, "West US"),
            names(&["East US", "West US", "North Europe"])
        );
        assert_eq!(chaos_regions(&names(&["A"]), "A"), names(&["A"]));
    }

    #[test]
    fn targets_avoid_the_write_region() {
        let container = cosmos_driver::DatabaseReference::new("db")
            .and_then(|d| d.container("c"))
            .unwrap();
        let preferred = names(&["West US", "East US", "North Europe"]);
        let t = fault_targets(&preferred, "East US", &container, "0").unwrap();
        assert_eq!(
            (t.read_region.as_str(), t.failover_to.as_str()),
            ("West US", "North Europe")
        );
        assert_eq!((t.database.as_str(), t.container.as_str()), ("db", "c"));
        assert_eq!(t.split_range, "0");
        let two = names(&["West US", "East US"]);
        let t = fault_targets(&two, "East US", &container, "0").unwrap();
        assert_eq!(t.failover_to, "West US");
        assert!(fault_targets(&[], "East US", &container, "0").is_err());
        // A second run, after the first moved the write region to North Europe.
        let t = fault_targets(&preferred, "North Europe", &container, "1").unwrap();
        assert_eq!(
            (t.read_region.as_str(), t.failover_to.as_str()),
            ("West US", "East US")
        );
        assert_eq!(t.split_range, "1");
    }

    #[test]
    fn the_split_takes_a_range_that_is_still_there() {
        use serde_json::json;
        let cases = [
            (
                json!({"PartitionKeyRanges": [{"id": "0", "parents": []}]}),
                Some("0"),
            ),
            (
                json!({"PartitionKeyRanges": [
                    {"id": "1", "parents": ["0"]}, {"id": "2", "parents": ["0"]}
                ]}),
                Some("1"),
            ),
            (
                json!({"PartitionKeyRanges": [
                    {"id": "0", "parents": []},
                    {"id": "1", "parents": ["0"]}, {"id": "2", "parents": ["0"]}
                ]}),
                Some("1"),
            ),
            (json!({"PartitionKeyRanges": [{"id": "3"}]}), Some("3")),
            (json!({"PartitionKeyRanges": []}), None),
            (json!({"Documents": []}), None),
        ];
        for (listing, want) in cases {
            assert_eq!(range_to_split(&listing).as_deref(), want, "{listing}");
        }
    }
}

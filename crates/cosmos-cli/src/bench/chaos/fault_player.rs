//! Plays the fault schedule on the embedded emulator (rules, a region outage, a failover, a split)
//! and records when each fault was applied and lifted.

use std::sync::Mutex;
use std::time::Duration;

use cosmos_emulator::faults::{FaultGuard, FaultRule, OpKind, OutageMode, Reaction};
use cosmos_emulator::Emulator;
use tokio::time::Instant;

use super::chaos_report::TimelineEntry;
use super::fault_plan::{FaultKind, PlannedFault};

/// Where the faults land.
#[derive(Clone, Debug)]
pub struct FaultTargets {
    /// The region put out (the driver's first preferred region, which is not the write region).
    pub read_region: String,
    /// The region the write region moves to.
    pub failover_to: String,
    /// The database of the benchmark container.
    pub database: String,
    /// The benchmark container.
    pub container: String,
    /// The partition key range split.
    pub split_range: String,
}

/// Writes (of the operation kinds the workload sends) that lose their answer after executing.
const UNANSWERED: [(f64, Reaction, &str); 3] = [
    (0.02, Reaction::ExecuteThenClose, "2% executed then closed"),
    (
        0.01,
        Reaction::ExecuteThenRespond {
            status: 503,
            sub_status: 0,
        },
        "1% executed then 503",
    ),
    (
        0.01,
        Reaction::ExecuteThenRespond {
            status: 408,
            sub_status: 0,
        },
        "1% executed then 408",
    ),
];
const WRITE_OPS: [OpKind; 4] = [
    OpKind::Create,
    OpKind::Replace,
    OpKind::Upsert,
    OpKind::Patch,
];
const DATA_OPS: [OpKind; 8] = [
    OpKind::Read,
    OpKind::Create,
    OpKind::Replace,
    OpKind::Upsert,
    OpKind::Delete,
    OpKind::Patch,
    OpKind::Query,
    OpKind::ReadFeed,
];
/// Share of data-plane requests throttled during the storm, and the retry-after they get.
const STORM_PROBABILITY: f64 = 0.3;
const STORM_RETRY_AFTER_MS: u64 = 100;

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// Plays `plan` (offsets from `zero`) on `emu`, appending to `timeline` (offsets from `run_start`).
/// Returns once every fault has been applied and, if it has a length, lifted. Dropping the future
/// early removes the rules it installed; region outages must be ended by the caller
/// (`emu.outages().end_all()`).
pub async fn play(
    emu: &Emulator,
    targets: &FaultTargets,
    plan: &[PlannedFault],
    run_start: Instant,
    zero: Instant,
    timeline: &Mutex<Vec<TimelineEntry>>,
) {
    // (when, index into plan, true = apply / false = lift)
    let mut events: Vec<(Duration, usize, bool)> = Vec::new();
    for (i, f) in plan.iter().enumerate() {
        events.push((f.at, i, true));
        if !f.length.is_zero() {
            events.push((f.at + f.length, i, false));
        }
    }
    events.sort_by_key(|&(at, _, apply)| (at, apply));
    let mut guards: Vec<Vec<FaultGuard>> = plan.iter().map(|_| Vec::new()).collect();
    let mut entries: Vec<Option<usize>> = vec![None; plan.len()];
    let record = |entry: TimelineEntry| {
        let mut t = timeline
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        t.push(entry);
        t.len() - 1
    };
    for (at, i, apply) in events {
        tokio::time::sleep_until(zero + at).await;
        let now = millis(Instant::now().saturating_duration_since(run_start));
        let kind = plan[i].kind;
        if apply {
            let (detail, error) = apply_fault(emu, targets, kind, &mut guards[i]);
            entries[i] = Some(record(TimelineEntry {
                fault: kind,
                detail,
                start_ms: now,
                end_ms: None,
                error,
            }));
        } else {
            guards[i].clear();
            if kind == FaultKind::ReadRegionOutage {
                let _ = emu.outages().end(&targets.read_region);
            }
            if let Some(entry) = entries[i] {
                let mut t = timeline
                    .lock()
                    .unwrap_or_else(|poisoned| poisoned.into_inner());
                if let Some(e) = t.get_mut(entry) {
                    e.end_ms = Some(now);
                }
            }
        }
    }
}

/// Applies one fault; its description and, if it failed, why.
fn apply_fault(
    emu: &Emulator,
    targets: &FaultTargets,
    kind: FaultKind,
    guards: &mut Vec<FaultGuard>,
) -> (String, Option<String>) {
    match kind {
        FaultKind::UnansweredWrites => {
            let mut parts = Vec::new();
            for (probability, reaction, what) in UNANSWERED {
                guards.push(
                    emu.faults().add(
                        FaultRule::new(reaction)
                            .named(format!("chaos: {what}"))
                            .for_ops(WRITE_OPS)
                            .with_probability(probability),
                    ),
                );
                parts.push(what);
            }
            (
                format!("creates, replaces, upserts, patches: {}", parts.join(", ")),
                None,
            )
        }
        FaultKind::ThrottleStorm => {
            guards.push(
                emu.faults().add(
                    FaultRule::new(Reaction::respond_retry_after(
                        429,
                        3200,
                        STORM_RETRY_AFTER_MS,
                    ))
                    .named("chaos: 429 storm")
                    .for_ops(DATA_OPS)
                    .with_probability(STORM_PROBABILITY),
                ),
            );
            (
                format!(
                    "{:.0}% of data requests answered 429/3200 (retry after {STORM_RETRY_AFTER_MS} ms)",
                    STORM_PROBABILITY * 100.0
                ),
                None,
            )
        }
        FaultKind::ReadRegionOutage => (
            format!("{} refuses every connection", targets.read_region),
            emu.outages()
                .start(&targets.read_region, OutageMode::Refuse)
                .err(),
        ),
        FaultKind::WriteFailover => {
            let from = emu.write_region();
            (
                format!("write region {from} -> {}", targets.failover_to),
                emu.failover(&targets.failover_to).err(),
            )
        }
        FaultKind::PartitionSplit => (
            format!(
                "range {} of {}/{} split in two",
                targets.split_range, targets.database, targets.container
            ),
            emu.split(&targets.database, &targets.container, &targets.split_range)
                .err(),
        ),
    }
}

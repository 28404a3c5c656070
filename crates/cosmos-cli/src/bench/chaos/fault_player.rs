//! Plays the fault schedule on the embedded emulator (rules, a region outage, a failover, a split)
//! and records when each fault was applied and lifted, and the load of the 429 storm.
//!
//! The storm throttles 30% of data-plane requests with a 100 ms retry-after, in two rules with
//! disjoint kinds of request: writes (creates, replaces, upserts, deletes, patches) are answered
//! 429/3200, an RU budget exhausted in every region, which no other region can help with; reads
//! (point reads, queries, read feeds) are answered a bare 429, a throttle that says nothing of
//! the other regions, the answer a hedged read could send again elsewhere. Just before the storm's
//! rules go in and just after they come out, the player reads the emulator's request counters
//! (every region, every kind) and the workload's count of started operations into a
//! [`StormWindow`].

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;
use std::time::Duration;

use cosmos_emulator::faults::{FaultGuard, FaultRule, OpKind, OutageMode, Reaction};
use cosmos_emulator::Emulator;
use tokio::time::Instant;

use super::chaos_report::TimelineEntry;
use super::fault_plan::{FaultKind, PlannedFault};
use super::storm_load::{requests_seen, LoadMark, StormWindow};

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
/// Data-plane writes, throttled 429/3200 during the storm.
const STORM_WRITE_OPS: [OpKind; 5] = [
    OpKind::Create,
    OpKind::Replace,
    OpKind::Upsert,
    OpKind::Delete,
    OpKind::Patch,
];
/// Data-plane reads, throttled with a bare 429 during the storm.
const STORM_READ_OPS: [OpKind; 3] = [OpKind::Read, OpKind::Query, OpKind::ReadFeed];
/// Share of data-plane requests throttled during the storm, and the retry-after they get.
const STORM_PROBABILITY: f64 = 0.3;
const STORM_RETRY_AFTER_MS: u64 = 100;
/// The storm's rules: (kinds of request, sub-status of the 429, what it is called).
const STORM_RULES: [(&[OpKind], u32, &str); 2] = [
    (&STORM_WRITE_OPS, 3200, "writes"),
    (&STORM_READ_OPS, 0, "reads"),
];

/// Where the player records the storm's load.
#[derive(Clone, Copy, Debug)]
pub struct StormMeter<'a> {
    /// Operations the workload has started, incremented by it once per operation.
    pub operations: &'a AtomicU64,
    /// The storm's marks.
    pub window: &'a Mutex<StormWindow>,
}

impl StormMeter<'_> {
    /// Both counters now.
    pub fn mark(&self, emu: &Emulator) -> LoadMark {
        LoadMark {
            requests: requests_seen(&emu.counters().snapshot()),
            operations: self.operations.load(Relaxed),
        }
    }

    fn with_window(&self, f: impl FnOnce(&mut StormWindow)) {
        f(&mut self
            .window
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()));
    }

    /// The storm starts now.
    pub fn open(&self, emu: &Emulator) {
        let mark = self.mark(emu);
        self.with_window(|w| w.open(mark));
    }

    /// The storm ends now (nothing if it never started or already ended).
    pub fn close(&self, emu: &Emulator) {
        let mark = self.mark(emu);
        self.with_window(|w| w.close(mark));
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// Plays `plan` (offsets from `zero`) on `emu`, appending to `timeline` (offsets from `run_start`)
/// and marking the storm's start and end in `storm`. Returns once every fault has been applied
/// and, if it has a length, lifted. Dropping the future early removes the rules it installed; the
/// caller ends region outages (`emu.outages().end_all()`) and closes a storm still open
/// (`storm.close`).
pub async fn play(
    emu: &Emulator,
    targets: &FaultTargets,
    plan: &[PlannedFault],
    run_start: Instant,
    zero: Instant,
    timeline: &Mutex<Vec<TimelineEntry>>,
    storm: StormMeter<'_>,
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
            if kind == FaultKind::ThrottleStorm {
                storm.open(emu);
            }
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
            if kind == FaultKind::ThrottleStorm {
                storm.close(emu);
            }
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
            for (ops, sub_status, what) in STORM_RULES {
                guards.push(
                    emu.faults().add(
                        FaultRule::new(Reaction::respond_retry_after(
                            429,
                            sub_status,
                            STORM_RETRY_AFTER_MS,
                        ))
                        .named(format!("chaos: 429 storm on {what}"))
                        .for_ops(ops.iter().copied())
                        .with_probability(STORM_PROBABILITY),
                    ),
                );
            }
            (
                format!(
                    "{:.0}% of data requests throttled (retry after {STORM_RETRY_AFTER_MS} ms): \
                     writes 429/3200, reads 429",
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

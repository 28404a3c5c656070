//! The `priority` workload: High-priority point reads of the seeded items (the measured
//! operations) beside a background load of 2 KB creates that saturates the container, which the
//! embedded emulator meters (`enforce_throughput`). One run has the load at High priority, one at
//! Low: priority-based execution throttles Low first, so with the load at Low the reads should
//! rarely meet a 429 and keep their latency.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cosmos_driver::{
    ContainerClient, CosmosDriver, CosmosOperation, ItemOptions, OperationOptions, PriorityLevel,
};
use serde_json::json;

use super::op_report::{report_err, report_ok};
use super::setup::SeededItems;
use crate::args::request_class::Priority;
use crate::bench::items::item_for;
use crate::bench::report::PriorityReport;
use crate::bench::workload::{OpReport, Workload};

/// Concurrent writers of the background load.
pub const LOAD_WRITERS: usize = 8;

/// Whether an operation's diagnostics show an attempt answered 429.
fn met_429(d: &cosmos_driver::DiagnosticsContext) -> bool {
    d.requests()
        .iter()
        .any(|r| r.status().is_some_and(|s| s.status == 429))
}

/// High-priority point reads of item `item_for(seq)`, counting those that met a 429.
pub struct PriorityReads {
    driver: CosmosDriver,
    items: SeededItems,
    options: OperationOptions,
    slow_after: Duration,
    met_429: Arc<AtomicU64>,
}

impl PriorityReads {
    /// Reads `items` through `driver` at High priority.
    pub fn new(driver: CosmosDriver, items: SeededItems, slow_after: Duration) -> Self {
        Self {
            driver,
            items,
            options: OperationOptions::new().with_priority_level(PriorityLevel::High),
            slow_after,
            met_429: Arc::new(AtomicU64::new(0)),
        }
    }

    /// The count of reads (warm-up included) that met a 429 on any attempt.
    pub fn met_429(&self) -> Arc<AtomicU64> {
        self.met_429.clone()
    }
}

impl Workload for PriorityReads {
    async fn run_op(&self, seq: u64) -> OpReport {
        let (item, pk) = self.items.get(item_for(seq, self.items.len()));
        let op = CosmosOperation::read_item(item.clone()).with_partition_key(pk.clone());
        let answer = self.driver.execute(op, &self.options).await;
        let d = match &answer {
            Ok(r) => r.diagnostics(),
            Err(e) => e.diagnostics(),
        };
        if met_429(d) {
            self.met_429.fetch_add(1, Ordering::Relaxed);
        }
        match answer {
            Ok(r) => report_ok(&r, self.slow_after, None),
            Err(e) => report_err(&e, self.slow_after, None),
        }
    }
}

/// The background load: writers creating 2 KB documents at `priority` until stopped.
pub struct BackgroundLoad {
    stop: Arc<AtomicBool>,
    written: Arc<AtomicU64>,
    started: Instant,
    writers: Vec<tokio::task::JoinHandle<()>>,
    priority: Priority,
}

impl BackgroundLoad {
    /// Starts [`LOAD_WRITERS`] writers on `container`.
    pub fn start(container: &ContainerClient, priority: Priority) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let written = Arc::new(AtomicU64::new(0));
        // Keeps the ids of one run's load apart from another's on the same container.
        let run = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let writers = (0..LOAD_WRITERS)
            .map(|w| {
                let (container, stop, written) = (container.clone(), stop.clone(), written.clone());
                tokio::spawn(async move {
                    let options = ItemOptions::new().with_priority_level(priority.level());
                    let mut n = 0u64;
                    while !stop.load(Ordering::Relaxed) {
                        let pk = format!("load-{w}");
                        let id = format!("load-{run}-{w}-{n}");
                        let doc = json!({"id": id, "pk": pk, "pad": "x".repeat(2_000)});
                        let created = container
                            .create_item(pk.clone(), &doc, Some(options.clone()))
                            .await;
                        if created.is_ok() {
                            written.fetch_add(1, Ordering::Relaxed);
                        }
                        n += 1;
                    }
                })
            })
            .collect();
        Self {
            stop,
            written,
            started: Instant::now(),
            writers,
            priority,
        }
    }

    /// Stops the writers and reports the run's priority figures with `reads_met_429`.
    pub async fn finish(self, reads_met_429: u64) -> PriorityReport {
        self.stop.store(true, Ordering::Relaxed);
        for w in self.writers {
            let _ = w.await;
        }
        let seconds = self.started.elapsed().as_secs_f64().max(f64::EPSILON);
        PriorityReport {
            load: self.priority.name().into(),
            reads_met_429,
            load_writes_per_second: self.written.load(Ordering::Relaxed) as f64 / seconds,
        }
    }
}

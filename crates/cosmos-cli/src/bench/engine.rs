//! Drives a workload: open loop at a fixed rate (latency from each operation's scheduled start, so a
//! stall cannot hide the operations queued behind it) or closed loop, with bounded concurrency.

use std::num::{NonZeroU64, NonZeroUsize};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::Semaphore;
use tokio::time::Instant;

use super::progress::ProgressCounters;
use super::schedule::{scheduled_offset, Pacing, Phase, StopAt, Window};
use super::tally::RunTally;
use super::workload::{OpReport, Workload};

/// How a run is driven.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EngineConfig {
    /// Open loop at a rate, or closed loop.
    pub pacing: Pacing,
    /// At most this many operations in flight.
    pub concurrency: NonZeroUsize,
    /// Warm-up and end of the measured part.
    pub window: Window,
}

/// What a run measured.
#[derive(Clone, Debug)]
pub struct RunMeasurement {
    /// Totals of the measured operations.
    pub tally: RunTally,
    /// The measured time: the measured window when the run stops after a duration; otherwise from
    /// the start of the measured part to the completion of its last operation.
    pub measured_elapsed: Duration,
    /// Operations completed within `measured_elapsed` (for a timed run, operations still in flight
    /// when the window closed count in the latencies but not in the throughput).
    pub completed_in_time: u64,
    /// Open loop: the longest an operation waited past its scheduled start for a free slot. A large
    /// value means the target could not keep up with the rate (the wait is in the latencies).
    pub max_start_lag: Duration,
}

impl RunMeasurement {
    /// Operations completed per second of measured time.
    pub fn throughput(&self) -> f64 {
        let secs = self.measured_elapsed.as_secs_f64();
        if secs > 0.0 {
            self.completed_in_time as f64 / secs
        } else {
            0.0
        }
    }
}

/// State shared by every in-flight operation.
struct Shared {
    tally: Mutex<RunTally>,
    last_measured_completion: Mutex<Option<Instant>>,
    /// End of the measured window, for timed runs.
    window_end: Option<Instant>,
    completed_in_window: AtomicU64,
    progress: Arc<ProgressCounters>,
}

impl Shared {
    fn record(&self, phase: Phase, started: Instant, report: &OpReport) {
        let now = Instant::now();
        let measured = phase == Phase::Measured;
        self.tally
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .record(measured, now.saturating_duration_since(started), report);
        if measured {
            self.progress.note(report.outcome.is_ok());
            let mut last = self
                .last_measured_completion
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            if last.is_none_or(|l| l < now) {
                *last = Some(now);
            }
            if self.window_end.is_some_and(|end| now <= end) {
                self.completed_in_window.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

/// Runs `workload` as `config` says and returns what was measured. Every started operation has
/// completed when this returns.
pub async fn run<W: Workload>(
    workload: Arc<W>,
    config: EngineConfig,
    progress: Arc<ProgressCounters>,
) -> RunMeasurement {
    let origin = Instant::now();
    let measure_start = origin + config.window.warmup;
    let window_end = match config.window.stop {
        StopAt::Elapsed(d) => Some(measure_start + d),
        StopAt::Ops(_) => None,
    };
    let shared = Arc::new(Shared {
        tally: Mutex::new(RunTally::default()),
        last_measured_completion: Mutex::new(None),
        window_end,
        completed_in_window: AtomicU64::new(0),
        progress,
    });
    let max_start_lag = match config.pacing {
        Pacing::Open { rate_per_s } => {
            open_loop(&workload, &config, rate_per_s, origin, &shared).await
        }
        Pacing::Closed => {
            closed_loop(&workload, &config, origin, &shared).await;
            Duration::ZERO
        }
    };
    let tally = std::mem::take(&mut *shared.tally.lock().unwrap_or_else(PoisonError::into_inner));
    match config.window.stop {
        StopAt::Elapsed(d) => RunMeasurement {
            tally,
            measured_elapsed: d,
            completed_in_time: shared.completed_in_window.load(Ordering::Relaxed),
            max_start_lag,
        },
        StopAt::Ops(_) => {
            let last = *shared
                .last_measured_completion
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            let measured_elapsed = last.map_or(Duration::ZERO, |l| {
                l.saturating_duration_since(measure_start)
            });
            RunMeasurement {
                completed_in_time: tally.ops,
                tally,
                measured_elapsed,
                max_start_lag,
            }
        }
    }
}

/// Open loop: operation `n` is due at `origin + n / rate`. When `concurrency` operations are in
/// flight the next one waits for a slot, and that wait counts in its latency. Returns the longest
/// such wait.
async fn open_loop<W: Workload>(
    workload: &Arc<W>,
    config: &EngineConfig,
    rate: NonZeroU64,
    origin: Instant,
    shared: &Arc<Shared>,
) -> Duration {
    let slots = Arc::new(Semaphore::new(config.concurrency.get()));
    let mut measured_started = 0u64;
    let mut max_lag = Duration::ZERO;
    for seq in 0u64.. {
        let offset = scheduled_offset(seq, rate);
        let phase = config.window.classify(offset, measured_started);
        match phase {
            Phase::Done => break,
            Phase::Measured => measured_started += 1,
            Phase::Warmup => {}
        }
        let due = origin + offset;
        if due > Instant::now() {
            tokio::time::sleep_until(due).await;
        }
        let Ok(slot) = slots.clone().acquire_owned().await else {
            break;
        };
        max_lag = max_lag.max(Instant::now().saturating_duration_since(due));
        let workload = Arc::clone(workload);
        let shared = Arc::clone(shared);
        tokio::spawn(async move {
            let report = workload.run_op(seq).await;
            shared.record(phase, due, &report);
            drop(slot);
        });
    }
    drain(&slots, config.concurrency).await;
    max_lag
}

/// Closed loop: `concurrency` workers, each starting its next operation when the last one ends.
/// Latency is measured from each operation's actual start.
async fn closed_loop<W: Workload>(
    workload: &Arc<W>,
    config: &EngineConfig,
    origin: Instant,
    shared: &Arc<Shared>,
) {
    let next_seq = Arc::new(AtomicU64::new(0));
    let measured_started = Arc::new(AtomicU64::new(0));
    let mut workers = tokio::task::JoinSet::new();
    for _ in 0..config.concurrency.get() {
        let workload = Arc::clone(workload);
        let shared = Arc::clone(shared);
        let next_seq = Arc::clone(&next_seq);
        let measured_started = Arc::clone(&measured_started);
        let window = config.window;
        workers.spawn(async move {
            loop {
                let started = Instant::now();
                let offset = started.saturating_duration_since(origin);
                let phase = if offset < window.warmup {
                    Phase::Warmup
                } else {
                    window.classify(offset, measured_started.fetch_add(1, Ordering::Relaxed))
                };
                if phase == Phase::Done {
                    break;
                }
                let seq = next_seq.fetch_add(1, Ordering::Relaxed);
                let report = workload.run_op(seq).await;
                shared.record(phase, started, &report);
            }
        });
    }
    while workers.join_next().await.is_some() {}
}

/// Waits until every slot is free again, i.e. every started operation has completed.
async fn drain(slots: &Semaphore, concurrency: NonZeroUsize) {
    let all = u32::try_from(concurrency.get()).unwrap_or(u32::MAX);
    let _ = slots.acquire_many(all).await;
}

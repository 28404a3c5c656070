//! The engine under paused tokio time: scheduled starts, coordinated-omission accounting, warm-up,
//! stop conditions and the concurrency bound.

use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;

use super::engine::{run, EngineConfig, RunMeasurement};
use super::progress::ProgressCounters;
use super::schedule::{Pacing, StopAt, Window};
use super::workload::{OpReport, Workload};

/// Sleeps `normal` per operation, `stall` for operation `stall_seq`; notes when each op started.
struct FakeWorkload {
    normal: Duration,
    stall_seq: Option<u64>,
    stall: Duration,
    starts: Mutex<Vec<(u64, Instant)>>,
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
}

impl FakeWorkload {
    fn new(normal: Duration) -> Self {
        Self {
            normal,
            stall_seq: None,
            stall: Duration::ZERO,
            starts: Mutex::new(Vec::new()),
            in_flight: AtomicUsize::new(0),
            max_in_flight: AtomicUsize::new(0),
        }
    }
}

impl Workload for FakeWorkload {
    async fn run_op(&self, seq: u64) -> OpReport {
        self.starts.lock().unwrap().push((seq, Instant::now()));
        let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.max_in_flight.fetch_max(now, Ordering::SeqCst);
        let d = if Some(seq) == self.stall_seq {
            self.stall
        } else {
            self.normal
        };
        tokio::time::sleep(d).await;
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
        OpReport::ok()
    }
}

fn config(rate: u64, concurrency: usize, warmup: Duration, stop: StopAt) -> EngineConfig {
    EngineConfig {
        pacing: Pacing::from_rate(rate),
        concurrency: NonZeroUsize::new(concurrency).unwrap(),
        window: Window { warmup, stop },
    }
}

async fn go(w: &Arc<FakeWorkload>, c: EngineConfig) -> RunMeasurement {
    run(Arc::clone(w), c, Arc::new(ProgressCounters::default())).await
}

const MS: Duration = Duration::from_millis(1);

#[tokio::test(start_paused = true)]
async fn open_loop_starts_each_op_at_its_scheduled_time() {
    let w = Arc::new(FakeWorkload::new(5 * MS));
    let origin = Instant::now();
    let m = go(&w, config(500, 64, Duration::ZERO, StopAt::Ops(100))).await;
    assert_eq!(m.tally.ops, 100);
    let starts = w.starts.lock().unwrap().clone();
    assert_eq!(starts.len(), 100);
    for (seq, at) in starts {
        assert_eq!(at - origin, 2 * MS * seq as u32, "op {seq}");
    }
    // Fast ops that start on time: every latency is the op's own 5 ms.
    assert_eq!(m.max_start_lag, Duration::ZERO);
    assert_eq!(m.tally.latency_us.min(), 5000);
    assert!(m.tally.max_latency_ms() < 5.01);
}

#[tokio::test(start_paused = true)]
async fn a_stall_counts_against_every_op_queued_behind_it() {
    // One slot, 100 ops/s, 1 ms ops; op 5 stalls for 1 s. Ops 6.. are due every 10 ms but cannot start
    // until the stall ends, and then run back to back: op j starts at 1050 + (j - 6) ms and is due at
    // 10j ms, so its latency is 1045 - 9j ms while that is above its own 1 ms (j <= 115).
    let mut fake = FakeWorkload::new(MS);
    fake.stall_seq = Some(5);
    fake.stall = Duration::from_secs(1);
    let w = Arc::new(fake);
    let m = go(&w, config(100, 1, Duration::ZERO, StopAt::Ops(200))).await;
    let h = &m.tally.latency_us;
    assert_eq!(m.tally.ops, 200);
    assert_eq!(h.max(), h.highest_equivalent(1_000_000));
    // Latency of op j (6 <= j <= 105) is at least 100 ms: 100 queued ops plus the stalled one.
    assert_eq!(h.count_between(100_000, 2_000_000), 101);
    // Op 6 waited 990 ms for the slot (the longest wait) and then ran for 1 ms.
    assert_eq!(m.max_start_lag, Duration::from_millis(990));
    assert_eq!(h.count_between(991_000, 991_000), 1);
    // A closed-loop view would report only the stalled op as slow; this one shows a p50 of 1 ms
    // and a p75 far above it.
    assert!(
        m.tally.latency_ms_at(0.75) > 100.0,
        "p75 {}",
        m.tally.latency_ms_at(0.75)
    );
}

#[tokio::test(start_paused = true)]
async fn warmup_ops_run_but_are_not_recorded() {
    let w = Arc::new(FakeWorkload::new(MS));
    let m = go(
        &w,
        config(
            100,
            8,
            Duration::from_secs(1),
            StopAt::Elapsed(Duration::from_secs(2)),
        ),
    )
    .await;
    assert_eq!(w.starts.lock().unwrap().len(), 300);
    assert_eq!(m.tally.ops, 200);
    // A timed run's measured time is its window; every op completed within it.
    assert_eq!(m.measured_elapsed, Duration::from_secs(2));
    assert_eq!(m.completed_in_time, 200);
    assert!((m.throughput() - 100.0).abs() < 1e-9);
}

#[tokio::test(start_paused = true)]
async fn ops_still_in_flight_when_the_window_closes_count_in_latency_not_throughput() {
    // 10 ops/s for 1 s; the last op (due at 0.9 s) stalls for 5 s.
    let mut fake = FakeWorkload::new(MS);
    fake.stall_seq = Some(9);
    fake.stall = Duration::from_secs(5);
    let w = Arc::new(fake);
    let m = go(
        &w,
        config(
            10,
            4,
            Duration::ZERO,
            StopAt::Elapsed(Duration::from_secs(1)),
        ),
    )
    .await;
    assert_eq!(m.tally.ops, 10);
    assert_eq!(m.completed_in_time, 9);
    assert!((m.throughput() - 9.0).abs() < 1e-9);
    assert_eq!(
        m.tally.latency_us.max(),
        m.tally.latency_us.highest_equivalent(5_000_000)
    );
}

#[tokio::test(start_paused = true)]
async fn op_count_runs_last_until_the_final_completion() {
    let w = Arc::new(FakeWorkload::new(10 * MS));
    let m = go(&w, config(100, 4, Duration::ZERO, StopAt::Ops(50))).await;
    // Op 49 is due at 490 ms and completes at 500 ms.
    assert_eq!(m.measured_elapsed, Duration::from_millis(500));
    assert!((m.throughput() - 100.0).abs() < 1e-9);
}

#[tokio::test(start_paused = true)]
async fn concurrency_bound_holds_when_ops_outlast_the_interval() {
    let w = Arc::new(FakeWorkload::new(100 * MS));
    let m = go(&w, config(1000, 8, Duration::ZERO, StopAt::Ops(80))).await;
    assert_eq!(m.tally.ops, 80);
    assert_eq!(w.max_in_flight.load(Ordering::SeqCst), 8);
    // Slots free up in waves of 8 every 100 ms: op 79 (due at 79 ms) starts in the tenth wave at
    // 907 ms and ends at 1007 ms, so its latency counts the 828 ms it waited for a slot.
    assert_eq!(
        m.tally.latency_us.max(),
        m.tally.latency_us.highest_equivalent(928_000)
    );
}

#[tokio::test(start_paused = true)]
async fn closed_loop_keeps_every_worker_busy() {
    let w = Arc::new(FakeWorkload::new(10 * MS));
    let m = go(
        &w,
        config(
            0,
            4,
            Duration::ZERO,
            StopAt::Elapsed(Duration::from_secs(1)),
        ),
    )
    .await;
    // Each worker starts ops at 0, 10, ..., 990 ms.
    assert_eq!(m.tally.ops, 400);
    assert_eq!(w.max_in_flight.load(Ordering::SeqCst), 4);
    assert_eq!(m.tally.latency_us.min(), 10_000);
    assert_eq!(m.measured_elapsed, Duration::from_secs(1));
}

#[tokio::test(start_paused = true)]
async fn closed_loop_stops_after_the_op_count() {
    let w = Arc::new(FakeWorkload::new(MS));
    let m = go(&w, config(0, 3, Duration::from_millis(10), StopAt::Ops(31))).await;
    assert_eq!(m.tally.ops, 31);
    // 3 workers x 10 warm-up ops each, then 31 measured.
    assert_eq!(w.starts.lock().unwrap().len(), 61);
}

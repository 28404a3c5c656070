//! Priority-based execution, measured: a bulk load saturates a container's throughput while point
//! reads run at a fixed rate, once with the load at the default (High) priority and once at Low.
//! The emulator enforces the container's RU/s (`enforce_throughput`) and throttles Low first while
//! High traffic uses the share. Prints, for each run, the reads' throttling (reads that met a 429
//! on any attempt) and latency, and the load's write rate.
//!
//!     cargo run --release -p cosmos-driver --example priority_isolation [-- --seconds 15]
//!
//! A measurement: nothing fails when the machine is slow.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cosmos_driver::prelude::*;
use cosmos_emulator::EmulatorBuilder;
use serde_json::{json, Value};

/// The container's provisioned throughput, on one partition key range.
const RU_PER_SECOND: u64 = 1_000;
/// Point reads per second, spread evenly.
const READS_PER_SECOND: u64 = 50;
/// Concurrent writers of the load.
const WRITERS: usize = 8;

struct RunResult {
    reads: usize,
    throttled_reads: usize,
    p50_ms: f64,
    p99_ms: f64,
    max_ms: f64,
    writes_per_second: f64,
}

fn seconds_arg() -> u64 {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == "--seconds")
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(15)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

async fn run(
    load_priority: Option<PriorityLevel>,
    seconds: u64,
) -> Result<RunResult, Box<dyn std::error::Error>> {
    let emulator = EmulatorBuilder::new()
        .partitions(1)
        .enforce_throughput(true)
        .start()
        .await?;
    let driver = CosmosDriver::new(DriverOptions::new(
        emulator.endpoint(),
        Credential::master_key(emulator.key())?,
    ))
    .await?;
    let db = driver.create_database("shop", None).await?;
    let key = PartitionKeyDefinition::new("/pk")?;
    db.create_container(
        &ContainerProperties::new("orders", &key),
        Some(ThroughputProperties::manual(RU_PER_SECOND)),
    )
    .await?;
    let orders = driver.container("shop", "orders");
    orders
        .create_item("reader", &json!({"id": "r", "pk": "reader", "n": 1}), None)
        .await?;

    let stop = Arc::new(AtomicBool::new(false));
    let written = Arc::new(AtomicU64::new(0));
    let mut writers = Vec::new();
    for w in 0..WRITERS {
        let orders = orders.clone();
        let stop = stop.clone();
        let written = written.clone();
        writers.push(tokio::spawn(async move {
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let id = format!("w{w}-{n}");
                let doc = json!({"id": id, "pk": format!("load-{w}"), "pad": "x".repeat(2_000)});
                let mut options = ItemOptions::new();
                if let Some(p) = load_priority {
                    options = options.with_priority_level(p);
                }
                if orders
                    .create_item(format!("load-{w}"), &doc, Some(options))
                    .await
                    .is_ok()
                {
                    written.fetch_add(1, Ordering::Relaxed);
                }
                n += 1;
            }
        }));
    }
    // Let the load reach saturation before measuring.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let written_before = written.load(Ordering::Relaxed);
    let started = Instant::now();
    let mut tick = tokio::time::interval(Duration::from_micros(1_000_000 / READS_PER_SECOND));
    let mut reads = Vec::new();
    while started.elapsed() < Duration::from_secs(seconds) {
        tick.tick().await;
        let orders = orders.clone();
        reads.push(tokio::spawn(async move {
            let t = Instant::now();
            let options = ItemOptions::new().with_priority_level(PriorityLevel::High);
            let read = orders
                .read_item::<Value>("reader", "r", Some(options))
                .await;
            let ms = t.elapsed().as_secs_f64() * 1000.0;
            let throttled = match &read {
                Ok(r) => r
                    .diagnostics()
                    .requests()
                    .iter()
                    .any(|q| q.status().is_some_and(|s| s.status == 429)),
                Err(_) => true,
            };
            (ms, throttled)
        }));
    }
    let mut latencies = Vec::new();
    let mut throttled_reads = 0;
    for r in reads {
        let (ms, throttled) = r.await?;
        latencies.push(ms);
        throttled_reads += usize::from(throttled);
    }
    let elapsed = started.elapsed().as_secs_f64();
    let writes = written.load(Ordering::Relaxed) - written_before;
    stop.store(true, Ordering::Relaxed);
    for w in writers {
        w.await?;
    }
    latencies.sort_by(f64::total_cmp);
    Ok(RunResult {
        reads: latencies.len(),
        throttled_reads,
        p50_ms: percentile(&latencies, 0.50),
        p99_ms: percentile(&latencies, 0.99),
        max_ms: latencies.last().copied().unwrap_or(0.0),
        writes_per_second: writes as f64 / elapsed,
    })
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let seconds = seconds_arg();
    println!(
        "{RU_PER_SECOND} RU/s on one range, {WRITERS} writers of 2 KB documents, {READS_PER_SECOND} High-priority point reads/s for {seconds} s"
    );
    println!(
        "{:<18} {:>6} {:>16} {:>9} {:>9} {:>9} {:>10}",
        "load priority", "reads", "reads met a 429", "p50 ms", "p99 ms", "max ms", "writes/s"
    );
    for (name, priority) in [("High (default)", None), ("Low", Some(PriorityLevel::Low))] {
        let r = run(priority, seconds).await?;
        println!(
            "{name:<18} {:>6} {:>9} ({:>4.1}%) {:>9.2} {:>9.2} {:>9.2} {:>10.1}",
            r.reads,
            r.throttled_reads,
            100.0 * r.throttled_reads as f64 / r.reads.max(1) as f64,
            r.p50_ms,
            r.p99_ms,
            r.max_ms,
            r.writes_per_second
        );
    }
    Ok(())
}

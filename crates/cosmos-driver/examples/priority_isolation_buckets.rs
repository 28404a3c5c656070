//! Throughput buckets, measured: a container of 1,000 RU/s on one partition key range caps bucket 1
//! at 20% of its throughput; writers naming bucket 1 try to use as much as they can, alone and then
//! beside as many writers naming no bucket. The emulator enforces the container's RU/s
//! (`enforce_throughput`) and refuses a bucket's requests (429/3212) once the bucket has used its
//! share of the second. Prints, for each run, the RU/s each load was served (the sum of the request
//! charges of its successful writes) as a share of the container's throughput, over the whole
//! run and in its busiest second, and the 429s met.
//!
//!     cargo run --release -p cosmos-driver --example priority_isolation_buckets [-- --seconds 10]
//!
//! A measurement: nothing fails when the machine is slow.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cosmos_driver::prelude::*;
use cosmos_driver::resources::ThroughputBucketLimit;
use cosmos_driver::{ContainerClient, ThroughputBucket};
use cosmos_emulator::EmulatorBuilder;
use serde_json::json;

/// The container's provisioned throughput, on one partition key range.
const RU_PER_SECOND: u64 = 1_000;
/// Bucket 1's cap, in percent of the container's throughput.
const BUCKET_PERCENT: u8 = 20;
/// Concurrent writers of each load.
const WRITERS: usize = 8;

/// What one load was served: (when, RU) of each successful write, and the 429s its writes met.
#[derive(Default)]
struct Served {
    charges: Mutex<Vec<(Instant, f64)>>,
    throttled: std::sync::atomic::AtomicU64,
}

impl Served {
    /// RU/s over `[from, from + seconds)`, and in the busiest whole second of it.
    fn rates(&self, from: Instant, seconds: u64) -> (f64, f64) {
        let charges = self.charges.lock().map(|c| c.clone()).unwrap_or_default();
        let mut per_second = vec![0.0; seconds as usize];
        for (at, ru) in charges {
            if let Some(second) = at
                .checked_duration_since(from)
                .map(|d| d.as_secs() as usize)
                .filter(|&s| s < per_second.len())
            {
                per_second[second] += ru;
            }
        }
        let total: f64 = per_second.iter().sum();
        let busiest = per_second.iter().copied().fold(0.0, f64::max);
        (total / seconds.max(1) as f64, busiest)
    }
}

fn seconds_arg() -> u64 {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == "--seconds")
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(10)
}

/// Starts `WRITERS` writers of 2 KB documents naming `bucket` (none: no bucket).
fn load(
    orders: &ContainerClient,
    bucket: Option<ThroughputBucket>,
    name: &'static str,
    stop: &Arc<AtomicBool>,
    served: &Arc<Served>,
) -> Vec<tokio::task::JoinHandle<()>> {
    (0..WRITERS)
        .map(|w| {
            let (orders, stop, served) = (orders.clone(), stop.clone(), served.clone());
            tokio::spawn(async move {
                let mut n = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let pk = format!("{name}-{w}");
                    let doc = json!({"id": format!("{n}"), "pk": pk, "pad": "x".repeat(2_000)});
                    let mut options = ItemOptions::new();
                    if let Some(b) = bucket {
                        options = options.with_throughput_bucket(b);
                    }
                    match orders.create_item(pk.clone(), &doc, Some(options)).await {
                        Ok(r) => {
                            let retried = r
                                .diagnostics()
                                .requests()
                                .iter()
                                .filter(|q| q.status().is_some_and(|s| s.status == 429))
                                .count();
                            served
                                .throttled
                                .fetch_add(retried as u64, Ordering::Relaxed);
                            if let Ok(mut c) = served.charges.lock() {
                                c.push((Instant::now(), r.request_charge()));
                            }
                        }
                        Err(_) => {
                            served.throttled.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                    n += 1;
                }
            })
        })
        .collect()
}

/// One run: the bucket-1 load, and beside it an unbucketed load when `with_other`. Returns the
/// bucket load's (mean RU/s, busiest second, 429s) and the other load's, when there is one.
async fn run(
    with_other: bool,
    seconds: u64,
) -> Result<((f64, f64, u64), Option<(f64, f64, u64)>), Box<dyn std::error::Error>> {
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
        .replace_throughput_buckets(vec![ThroughputBucketLimit::new(1, BUCKET_PERCENT)?])
        .await?;
    let stop = Arc::new(AtomicBool::new(false));
    let bucketed = Arc::new(Served::default());
    let other = Arc::new(Served::default());
    let mut tasks = load(
        &orders,
        Some(ThroughputBucket::new(1)?),
        "bucket1",
        &stop,
        &bucketed,
    );
    if with_other {
        tasks.extend(load(&orders, None, "other", &stop, &other));
    }
    // Let the loads reach saturation before measuring.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let from = Instant::now();
    let throttled_before = (
        bucketed.throttled.load(Ordering::Relaxed),
        other.throttled.load(Ordering::Relaxed),
    );
    tokio::time::sleep(Duration::from_secs(seconds)).await;
    stop.store(true, Ordering::Relaxed);
    for t in tasks {
        t.await?;
    }
    let figures = |s: &Served, before: u64| {
        let (mean, busiest) = s.rates(from, seconds);
        (mean, busiest, s.throttled.load(Ordering::Relaxed) - before)
    };
    Ok((
        figures(&bucketed, throttled_before.0),
        with_other.then(|| figures(&other, throttled_before.1)),
    ))
}

fn share(ru: f64) -> f64 {
    100.0 * ru / RU_PER_SECOND as f64
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let seconds = seconds_arg();
    println!(
        "{RU_PER_SECOND} RU/s on one range, bucket 1 capped at {BUCKET_PERCENT}%, {WRITERS} writers of 2 KB documents per load, {seconds} s measured"
    );
    println!(
        "{:<32} {:>8} {:>8} {:>12} {:>9}",
        "run / load", "RU/s", "share", "busiest 1 s", "429s met"
    );
    for (name, with_other) in [("bucket 1 alone", false), ("bucket 1 + no bucket", true)] {
        let (bucketed, other) = run(with_other, seconds).await?;
        let row = |label: String, (mean, busiest, throttled): (f64, f64, u64)| {
            println!(
                "{label:<32} {mean:>8.1} {:>7.1}% {:>11.1}% {throttled:>9}",
                share(mean),
                share(busiest)
            );
        };
        row(format!("{name}: bucket 1"), bucketed);
        if let Some(o) = other {
            row(format!("{name}: no bucket"), o);
        }
    }
    Ok(())
}

//! Change feed processor figures on loopback: an embedded emulator (profile `local`, one region,
//! 8 partition key ranges) on its own thread and runtime. For 1, 2 and 4 instances (each its own
//! driver, sharing one lease container, in this process):
//! - throughput: N items written first, then the instances start from the beginning; the changes
//!   handled per second until every item was handled;
//! - latency: with the instances caught up, items written at a steady rate, each carrying the
//!   time just before its write was sent; the time from then to the handler's call, p50 and p99.
//!
//! A measurement, not a test.
//!
//!     cargo run --release -p cosmos-driver --example change_feed_processor_rate \
//!         [-- --items N --rate R --seconds S --poll-ms P]

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use cosmos_driver::processor::{ChangeFeedProcessor, ProcessorOptions, ProcessorStart};
use cosmos_driver::{
    ContainerProperties, CosmosDriver, Credential, DriverOptions, PartitionKeyDefinition,
};
use futures::StreamExt;
use serde_json::{json, Value};

fn arg(name: &str, default: u64) -> u64 {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn now_us() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_micros() as u64
}

fn percentile(sorted: &[u64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i] as f64 / 1000.0
}

struct Tally {
    handled: u64,
    latencies_us: Vec<u64>,
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let items = arg("--items", 20_000);
    let rate = arg("--rate", 200);
    let seconds = arg("--seconds", 10);
    let poll_ms = arg("--poll-ms", 100);
    let emu = cosmos_emulator::EmulatorBuilder::new()
        .regions(["East US"])
        .partitions(8)
        .profile("local")
        .start_detached()
        .expect("emulator");
    let (endpoint, key) = (emu.endpoint().to_owned(), emu.key().to_owned());
    let connect = || async {
        CosmosDriver::new(DriverOptions::new(&endpoint, Credential::master_key(&key)?)).await
    };
    let driver = connect().await?;
    driver.create_database("bench", None).await?;
    println!("instances,items,seconds,changes_per_s,latency_p50_ms,latency_p99_ms,latency_n");
    for (round, instances) in [1usize, 2, 4].into_iter().enumerate() {
        let cname = format!("items{round}");
        let db = driver.database("bench");
        db.create_container(
            &ContainerProperties::new(&cname, &PartitionKeyDefinition::new("/pk")?),
            None,
        )
        .await?;
        db.create_container(
            &ContainerProperties::new(
                format!("leases{round}"),
                &PartitionKeyDefinition::new("/id")?,
            ),
            None,
        )
        .await?;
        let c = driver.container("bench", &cname);
        // Throughput: the items first.
        let writes = futures::stream::iter(0..items).map(|i| {
            let c = c.clone();
            async move {
                let pk = format!("p{}", i % 1000);
                c.create_item(
                    pk.as_str(),
                    &json!({"id": format!("d{i}"), "pk": pk, "t": 0}),
                    None,
                )
                .await
                .map(|_| ())
            }
        });
        let results: Vec<_> = writes.buffer_unordered(32).collect().await;
        results.into_iter().collect::<Result<Vec<()>, _>>()?;
        let tally = Arc::new(Mutex::new(Tally {
            handled: 0,
            latencies_us: Vec::new(),
        }));
        let options = ProcessorOptions::new()
            .with_start(ProcessorStart::Beginning)
            .with_max_items(100)
            .with_lease_intervals(
                Duration::from_millis(500),
                Duration::from_millis(500),
                Duration::from_secs(5),
            )
            .with_poll_delay(Duration::from_millis(poll_ms));
        let started = Instant::now();
        let mut running = Vec::new();
        for i in 0..instances {
            let d = connect().await?;
            let tally = tally.clone();
            let p = ChangeFeedProcessor::builder(
                d.container("bench", &cname),
                d.container("bench", &format!("leases{round}")),
                "bench",
                &format!("i{i}"),
            )
            .with_options(options.clone())
            .start(move |batch: Vec<Value>, _ctx| {
                let tally = tally.clone();
                async move {
                    let at = now_us();
                    let mut t = tally.lock().unwrap();
                    t.handled += batch.len() as u64;
                    for doc in &batch {
                        let w = doc["t"].as_u64().unwrap_or(0);
                        if w > 0 {
                            t.latencies_us.push(at.saturating_sub(w));
                        }
                    }
                    Ok::<(), String>(())
                }
            })
            .await?;
            running.push(p);
        }
        while tally.lock().unwrap().handled < items {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let took = started.elapsed().as_secs_f64();
        // Latency: a steady rate of writes, each carrying its write time (taken just before the
        // request is sent).
        let total = rate * seconds;
        let mut tick = tokio::time::interval(Duration::from_micros(1_000_000 / rate.max(1)));
        let mut pending = Vec::new();
        for i in 0..total {
            tick.tick().await;
            let c = c.clone();
            pending.push(tokio::spawn(async move {
                let pk = format!("p{}", i % 1000);
                let id = format!("l{i}");
                c.create_item(
                    pk.as_str(),
                    &json!({"id": id, "pk": pk, "t": now_us()}),
                    None,
                )
                .await
                .map(|_| ())
            }));
        }
        for p in pending {
            p.await??;
        }
        let deadline = Instant::now() + Duration::from_secs(30);
        while tally.lock().unwrap().latencies_us.len() < total as usize && Instant::now() < deadline
        {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        for p in running {
            p.stop().await;
        }
        let mut lat = tally.lock().unwrap().latencies_us.clone();
        lat.sort_unstable();
        println!(
            "{instances},{items},{took:.2},{:.0},{:.1},{:.1},{}",
            items as f64 / took,
            percentile(&lat, 0.50),
            percentile(&lat, 0.99),
            lat.len()
        );
    }
    Ok(())
}

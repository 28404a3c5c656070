//! Point-read throughput of the emulator: signed `GET .../docs/{id}` requests over N keep-alive
//! connections, printing reads/s and latency percentiles. A benchmark, not a test.
//!
//! ```text
//! cargo run --release -p cosmos-emulator --example point_reads -- [--connections 32]
//!     [--duration-secs 10] [--warmup-secs 2] [--endpoint http://127.0.0.1:8081/] [--key BASE64]
//! ```
//!
//! Without `--endpoint` it starts an emulator in this process (profile `local`, auth on, on its own
//! runtime threads); with it, it targets a running `cosmos-emulator` (start that with
//! `--profile local`). The load client runs on one runtime thread, beside the server.

mod common;

use std::time::{Duration, Instant};

use clap::Parser;
use common::{Connection, Signer};
use cosmos_emulator::{EmulatorBuilder, WELL_KNOWN_KEY};
use http::{Method, StatusCode};

const DB: &str = "bench";
const COLL: &str = "items";
const ITEMS: usize = 100;

#[derive(Parser, Clone)]
struct Args {
    /// Concurrent keep-alive connections, one request in flight on each.
    #[arg(long, default_value_t = 32)]
    connections: usize,
    /// Measured seconds.
    #[arg(long, default_value_t = 10)]
    duration_secs: u64,
    /// Seconds of load before measuring.
    #[arg(long, default_value_t = 2)]
    warmup_secs: u64,
    /// A running emulator's global endpoint; without it one is started in this process.
    #[arg(long)]
    endpoint: Option<String>,
    /// The account key (base64).
    #[arg(long, default_value = WELL_KNOWN_KEY)]
    key: String,
}

async fn setup(endpoint: &str, signer: &Signer) -> Result<(), String> {
    let mut c = Connection::open(endpoint).await?;
    let (status, _) = c
        .send(
            signer,
            Method::POST,
            "/dbs",
            ("dbs", ""),
            &[],
            Some(format!(r#"{{"id":"{DB}"}}"#)),
        )
        .await?;
    check(status, "create database")?;
    let container = format!(
        r#"{{"id":"{COLL}","partitionKey":{{"paths":["/pk"],"kind":"Hash","version":2}}}}"#
    );
    let (status, _) = c
        .send(
            signer,
            Method::POST,
            &format!("/dbs/{DB}/colls"),
            ("colls", &format!("dbs/{DB}")),
            &[],
            Some(container),
        )
        .await?;
    check(status, "create container")?;
    for i in 0..ITEMS {
        let pk = format!(r#"["pk{i}"]"#);
        let doc = format!(
            r#"{{"id":"item{i}","pk":"pk{i}","value":{i},"payload":"{}"}}"#,
            "x".repeat(200)
        );
        let headers = [
            ("x-ms-documentdb-partitionkey", pk.as_str()),
            ("x-ms-documentdb-is-upsert", "true"),
        ];
        let link = format!("dbs/{DB}/colls/{COLL}");
        let (status, _) = c
            .send(
                signer,
                Method::POST,
                &format!("/{link}/docs"),
                ("docs", &link),
                &headers,
                Some(doc),
            )
            .await?;
        check(status, "upsert item")?;
    }
    Ok(())
}

fn check(status: StatusCode, what: &str) -> Result<(), String> {
    if status.is_success() || status == StatusCode::CONFLICT {
        Ok(())
    } else {
        Err(format!("{what}: HTTP {status}"))
    }
}

/// Reads items round-robin until `stop`; returns latencies (µs) of reads that started after
/// `measure_from`, and the number of failed reads.
async fn reader(
    endpoint: String,
    signer: std::sync::Arc<Signer>,
    first: usize,
    measure_from: Instant,
    stop: Instant,
) -> Result<(Vec<u32>, u64), String> {
    let mut c = Connection::open(&endpoint).await?;
    let mut latencies = Vec::with_capacity(1 << 16);
    let mut failures = 0;
    let mut i = first;
    loop {
        let started = Instant::now();
        if started >= stop {
            break;
        }
        let n = i % ITEMS;
        i += 1;
        let link = format!("dbs/{DB}/colls/{COLL}/docs/item{n}");
        let pk = format!(r#"["pk{n}"]"#);
        let headers = [("x-ms-documentdb-partitionkey", pk.as_str())];
        let ok = match c
            .send(
                &signer,
                Method::GET,
                &format!("/{link}"),
                ("docs", &link),
                &headers,
                None,
            )
            .await
        {
            Ok((status, _)) => status == StatusCode::OK,
            Err(_) => {
                c = Connection::open(&endpoint).await?;
                false
            }
        };
        if started >= measure_from {
            if ok {
                latencies.push(started.elapsed().as_micros().min(u32::MAX as u128) as u32);
            } else {
                failures += 1;
            }
        }
    }
    Ok((latencies, failures))
}

fn percentile(sorted: &[u32], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted[rank.min(sorted.len() - 1)] as f64 / 1000.0
}

fn main() -> Result<(), String> {
    let args = Args::parse();
    let signer = std::sync::Arc::new(Signer::new(&args.key)?);
    // The embedded emulator gets its own runtime so client and server do not share a scheduler.
    let server_runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let (endpoint, _emulator) = match &args.endpoint {
        Some(endpoint) => (endpoint.clone(), None),
        None => {
            let emulator = server_runtime
                .block_on(
                    EmulatorBuilder::new()
                        .key(args.key.clone())
                        .profile("local")
                        .start(),
                )
                .map_err(|e| e.to_string())?;
            (emulator.endpoint().to_owned(), Some(emulator))
        }
    };
    let client_runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    client_runtime.block_on(async {
        setup(&endpoint, &signer).await?;
        let measure_from = Instant::now() + Duration::from_secs(args.warmup_secs);
        let stop = measure_from + Duration::from_secs(args.duration_secs);
        let tasks: Vec<_> = (0..args.connections)
            .map(|i| {
                tokio::spawn(reader(
                    endpoint.clone(),
                    signer.clone(),
                    i * 7,
                    measure_from,
                    stop,
                ))
            })
            .collect();
        let mut latencies = Vec::new();
        let mut failures = 0;
        for task in tasks {
            let (l, f) = task.await.map_err(|e| e.to_string())??;
            latencies.extend(l);
            failures += f;
        }
        latencies.sort_unstable();
        let reads = latencies.len();
        println!(
            "endpoint       {endpoint} ({})",
            if args.endpoint.is_some() {
                "external"
            } else {
                "in-process, profile local"
            }
        );
        println!("connections    {}", args.connections);
        println!(
            "measured       {} s after {} s warm-up",
            args.duration_secs, args.warmup_secs
        );
        println!("reads          {reads} ok, {failures} failed");
        println!(
            "throughput     {:.0} reads/s",
            reads as f64 / args.duration_secs.max(1) as f64
        );
        println!(
            "latency (ms)   p50 {:.3}  p90 {:.3}  p99 {:.3}  p99.9 {:.3}  max {:.3}",
            percentile(&latencies, 50.0),
            percentile(&latencies, 90.0),
            percentile(&latencies, 99.0),
            percentile(&latencies, 99.9),
            percentile(&latencies, 100.0)
        );
        Ok::<(), String>(())
    })?;
    Ok(())
}

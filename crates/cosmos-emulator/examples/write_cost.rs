//! The cost of `--data-dir` per acknowledged write: item creates over HTTP against two emulators
//! in this process, one in memory and one keeping a data directory, in alternating rounds (in
//! memory, data directory, in memory, ...) so both see the same machine load. A benchmark, not a
//! test.
//!
//! ```text
//! cargo run --release -p cosmos-emulator --example write_cost -- [--clients 1,16]
//!     [--writes 2000] [--rounds 5] [--item-bytes 1024] [--dir PATH]
//! ```
//!
//! Each round creates `--writes` new items of about `--item-bytes` over `--clients` keep-alive
//! connections, one request in flight on each, and times every create from send to answer (an
//! answer from the data directory's emulator means the write is fsync'd). It prints each round and
//! then, per client count, the medians over rounds and the median of the rounds' throughput ratios
//! (data directory over in memory, pair by pair). The data directory is made under `--dir` (the
//! system's temporary directory by default: give a path on the disk to measure) and removed.

mod common;

use std::sync::Arc;
use std::time::Instant;

use clap::Parser;
use common::{Connection, Signer};
use cosmos_emulator::{Emulator, EmulatorBuilder, WELL_KNOWN_KEY};
use http::{Method, StatusCode};

const DB: &str = "bench";
const COLL: &str = "items";

#[derive(Parser, Clone)]
struct Args {
    /// Client counts to measure, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,16")]
    clients: Vec<usize>,
    /// Creates per round.
    #[arg(long, default_value_t = 2000)]
    writes: usize,
    /// Rounds per client count and emulator.
    #[arg(long, default_value_t = 5)]
    rounds: usize,
    /// Size of each item's payload field.
    #[arg(long, default_value_t = 1024)]
    item_bytes: usize,
    /// Where the data directory is made.
    #[arg(long)]
    dir: Option<std::path::PathBuf>,
}

async fn request(
    c: &mut Connection,
    signer: &Signer,
    path: &str,
    link: (&str, &str),
    headers: &[(&str, &str)],
    body: String,
) -> Result<StatusCode, String> {
    c.send(signer, Method::POST, path, link, headers, Some(body))
        .await
        .map(|(status, _)| status)
}

async fn setup(endpoint: &str, signer: &Signer) -> Result<(), String> {
    let mut c = Connection::open(endpoint).await?;
    let status = request(
        &mut c,
        signer,
        "/dbs",
        ("dbs", ""),
        &[],
        format!(r#"{{"id":"{DB}"}}"#),
    )
    .await?;
    if status != StatusCode::CREATED {
        return Err(format!("create database: HTTP {status}"));
    }
    let container = format!(
        r#"{{"id":"{COLL}","partitionKey":{{"paths":["/pk"],"kind":"Hash","version":2}}}}"#
    );
    let status = request(
        &mut c,
        signer,
        &format!("/dbs/{DB}/colls"),
        ("colls", &format!("dbs/{DB}")),
        &[],
        container,
    )
    .await?;
    if status != StatusCode::CREATED {
        return Err(format!("create container: HTTP {status}"));
    }
    Ok(())
}

/// Creates items `first, first + step, ...` below `end`; the latency of each create (µs).
async fn writer(
    endpoint: String,
    signer: Arc<Signer>,
    round: usize,
    (first, step, end): (usize, usize, usize),
    payload: Arc<String>,
) -> Result<Vec<u32>, String> {
    let mut c = Connection::open(&endpoint).await?;
    let link = format!("dbs/{DB}/colls/{COLL}");
    let path = format!("/{link}/docs");
    let mut latencies = Vec::with_capacity(end / step + 1);
    for n in (first..end).step_by(step) {
        let pk = format!(r#"["k{}"]"#, n % 64);
        let doc = format!(
            r#"{{"id":"r{round}-{n}","pk":"k{}","n":{n},"payload":"{payload}"}}"#,
            n % 64
        );
        let headers = [("x-ms-documentdb-partitionkey", pk.as_str())];
        let started = Instant::now();
        let status = request(&mut c, &signer, &path, ("docs", &link), &headers, doc).await?;
        if status != StatusCode::CREATED {
            return Err(format!("create r{round}-{n}: HTTP {status}"));
        }
        latencies.push(started.elapsed().as_micros().min(u32::MAX as u128) as u32);
    }
    Ok(latencies)
}

/// One round's figures.
#[derive(Clone, Copy)]
struct Round {
    mean_ms: f64,
    p50_ms: f64,
    p99_ms: f64,
    writes_per_s: f64,
}

async fn round(
    endpoint: &str,
    signer: &Arc<Signer>,
    id: usize,
    clients: usize,
    args: &Args,
) -> Result<Round, String> {
    let payload = Arc::new("x".repeat(args.item_bytes));
    let started = Instant::now();
    let tasks: Vec<_> = (0..clients)
        .map(|i| {
            tokio::spawn(writer(
                endpoint.to_owned(),
                signer.clone(),
                id,
                (i, clients, args.writes),
                payload.clone(),
            ))
        })
        .collect();
    let mut latencies = Vec::with_capacity(args.writes);
    for task in tasks {
        latencies.extend(task.await.map_err(|e| e.to_string())??);
    }
    let elapsed = started.elapsed();
    latencies.sort_unstable();
    let at = |p: f64| {
        let rank = ((p / 100.0) * (latencies.len().max(1) - 1) as f64).round() as usize;
        latencies.get(rank).copied().unwrap_or(0) as f64 / 1000.0
    };
    let mean = latencies.iter().map(|&l| l as f64).sum::<f64>() / latencies.len().max(1) as f64;
    Ok(Round {
        mean_ms: mean / 1000.0,
        p50_ms: at(50.0),
        p99_ms: at(99.0),
        writes_per_s: latencies.len() as f64 / elapsed.as_secs_f64().max(f64::EPSILON),
    })
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    match values.len() {
        0 => 0.0,
        n if n % 2 == 1 => values[n / 2],
        n => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

fn main() -> Result<(), String> {
    let args = Args::parse();
    if args.clients.is_empty() || args.clients.contains(&0) || args.rounds == 0 {
        return Err("give at least one client count above 0 and at least one round".into());
    }
    let signer = Arc::new(Signer::new(WELL_KNOWN_KEY)?);
    let base = args.dir.clone().unwrap_or_else(std::env::temp_dir);
    let dir = base.join(format!("write-cost-{}", std::process::id()));
    // Both emulators get their own runtime so the client does not share their scheduler.
    let server_runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let start = |builder: EmulatorBuilder| -> Result<Emulator, String> {
        server_runtime
            .block_on(builder.profile("local").start())
            .map_err(|e| e.to_string())
    };
    let memory = start(EmulatorBuilder::new())?;
    let kept = start(EmulatorBuilder::new().data_dir(&dir))?;
    let client_runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let targets = [
        ("in memory", memory.endpoint()),
        ("--data-dir", kept.endpoint()),
    ];
    let result = client_runtime.block_on(async {
        for (_, endpoint) in targets {
            setup(endpoint, &signer).await?;
        }
        println!(
            "{} creates of {}-byte items per round, {} rounds per emulator, alternating; data directory in {}",
            args.writes,
            args.item_bytes,
            args.rounds,
            base.display()
        );
        let mut id = 0;
        for &clients in &args.clients {
            // One round each to warm up, not counted.
            for (_, endpoint) in targets {
                id += 1;
                round(endpoint, &signer, id, clients, &args).await?;
            }
            let mut figures: [Vec<Round>; 2] = [Vec::new(), Vec::new()];
            for r in 0..args.rounds {
                for (t, (label, endpoint)) in targets.iter().enumerate() {
                    id += 1;
                    let f = round(endpoint, &signer, id, clients, &args).await?;
                    println!(
                        "  {clients:>3} clients, round {}, {label:<10}: mean {:>7.3} ms  p50 {:>7.3} ms  p99 {:>7.3} ms  {:>7.0} writes/s",
                        r + 1,
                        f.mean_ms,
                        f.p50_ms,
                        f.p99_ms,
                        f.writes_per_s
                    );
                    figures[t].push(f);
                }
            }
            for (t, (label, _)) in targets.iter().enumerate() {
                let of = |g: fn(&Round) -> f64| median(figures[t].iter().map(g).collect());
                println!(
                    "{clients:>3} clients, {label:<10} (medians): mean {:>7.3} ms  p50 {:>7.3} ms  p99 {:>7.3} ms  {:>7.0} writes/s",
                    of(|f| f.mean_ms),
                    of(|f| f.p50_ms),
                    of(|f| f.p99_ms),
                    of(|f| f.writes_per_s)
                );
            }
            let ratios = figures[0]
                .iter()
                .zip(&figures[1])
                .map(|(m, d)| d.writes_per_s / m.writes_per_s)
                .collect::<Vec<_>>();
            let extra = figures[0]
                .iter()
                .zip(&figures[1])
                .map(|(m, d)| d.mean_ms - m.mean_ms)
                .collect::<Vec<_>>();
            println!(
                "{clients:>3} clients: --data-dir / in memory throughput, median of pairs {:.2} (min {:.2}, max {:.2}); added time per write, median of pairs {:.3} ms",
                median(ratios.clone()),
                ratios.iter().copied().fold(f64::INFINITY, f64::min),
                ratios.iter().copied().fold(0.0, f64::max),
                median(extra)
            );
        }
        Ok::<(), String>(())
    });
    drop(client_runtime);
    drop((memory, kept));
    drop(server_runtime);
    let _ = std::fs::remove_dir_all(&dir);
    result
}

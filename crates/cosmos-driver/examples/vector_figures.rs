//! The README's vector search figures: a top-10 cosine query over N vectors (default 100,000) of
//! 256 dimensions in a container of 4 partition key ranges, through `query_items`. The emulator
//! runs in a child process (this program started again with `--serve`), so the heap measured here
//! is the driver's alone: the peak of live heap bytes during the query, above what was live before.
//!
//!     cargo run --release -p cosmos-driver --example vector_figures [-- N]
//!
//! It prints, per query: the wall time through the driver, the time the emulator took to answer
//! the query's pages (the sum of their request durations, ranges read concurrently), and the
//! driver's peak heap growth.

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use cosmos_driver::query::{QueryOptions, QueryScope};
use cosmos_driver::resources::{
    DistanceFunction, VectorDataType, VectorEmbedding, VectorEmbeddingPolicy, VectorIndex,
    VectorIndexType,
};
use cosmos_driver::{
    ContainerProperties, CosmosDriver, CosmosOperation, Credential, DatabaseReference,
    DriverOptions, IndexingPolicy, OperationOptions, PartitionKeyDefinition, Query, VectorHit,
};
use futures::{StreamExt, TryStreamExt};
use serde_json::{json, Map, Value};

const DIMS: usize = 256;
const TOP: u32 = 10;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

/// The system allocator, keeping the live bytes and their peak.
struct Tracking;

fn grew(n: usize) {
    let live = LIVE.fetch_add(n, Ordering::Relaxed) + n;
    PEAK.fetch_max(live, Ordering::Relaxed);
}

// SAFETY: every call goes unchanged to the system allocator; the counters are atomics.
unsafe impl GlobalAlloc for Tracking {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        grew(layout.size());
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        grew(layout.size());
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size >= layout.size() {
            grew(new_size - layout.size());
        } else {
            LIVE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
        }
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Tracking = Tracking;

fn vector(seed: u64) -> Vec<f32> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add(1);
    (0..DIMS)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((x >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        })
        .collect()
}

/// The child: an emulator with 4 ranges, its endpoint and key on stdout, until stdin closes.
async fn serve() -> Result<(), Box<dyn std::error::Error>> {
    let emu = cosmos_emulator::EmulatorBuilder::new()
        .partitions(4)
        .start()
        .await?;
    println!("{} {}", emu.endpoint(), emu.key());
    tokio::task::spawn_blocking(|| {
        let mut sink = Vec::new();
        let _ = std::io::stdin().read_to_end(&mut sink);
    })
    .await?;
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let arg = std::env::args().nth(1);
    if arg.as_deref() == Some("--serve") {
        return serve().await;
    }
    let count: usize = arg.map(|a| a.parse()).transpose()?.unwrap_or(100_000);
    let mut child = Command::new(std::env::current_exe()?)
        .arg("--serve")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()?;
    let mut line = String::new();
    BufReader::new(child.stdout.take().ok_or("no child stdout")?).read_line(&mut line)?;
    let (endpoint, key) = line
        .trim()
        .split_once(' ')
        .ok_or("no endpoint from the emulator")?;
    let driver =
        CosmosDriver::new(DriverOptions::new(endpoint, Credential::master_key(key)?)).await?;
    let none = OperationOptions::new();
    driver
        .execute(
            CosmosOperation::create_database(DatabaseReference::new("bench")?),
            &none,
        )
        .await?;
    let props = ContainerProperties::new("vectors", &PartitionKeyDefinition::new("/pk")?)
        .with_vector_embedding_policy(VectorEmbeddingPolicy {
            vector_embeddings: vec![VectorEmbedding {
                path: "/e".into(),
                data_type: VectorDataType::Float32,
                distance_function: DistanceFunction::Cosine,
                dimensions: DIMS as u32,
            }],
        })
        .with_indexing_policy(IndexingPolicy {
            vector_indexes: vec![VectorIndex {
                path: "/e".into(),
                kind: VectorIndexType::QuantizedFlat,
                other: Map::new(),
            }],
            ..IndexingPolicy::default()
        });
    driver
        .database("bench")
        .create_container(&props, None)
        .await?;
    let c = driver.container("bench", "vectors");
    let loading = Instant::now();
    futures::stream::iter(0..count)
        .map(|i| {
            let c = c.clone();
            async move {
                let pk = format!("p{}", i % 1000);
                let doc = json!({"id": format!("d{i}"), "pk": pk, "e": vector(i as u64)});
                c.create_item(pk.as_str(), &doc, None).await.map(|_| ())
            }
        })
        .buffer_unordered(64)
        .try_collect::<Vec<()>>()
        .await?;
    println!(
        "loaded {count} vectors of {DIMS} dimensions into 4 partition key ranges in {:.1} s",
        loading.elapsed().as_secs_f64()
    );
    for round in 1..=5u64 {
        let q = Query::vector_search("/e", vector(u64::MAX - round), TOP)?;
        let before = LIVE.load(Ordering::Relaxed);
        PEAK.store(before, Ordering::Relaxed);
        let started = Instant::now();
        let mut pages = c
            .query_items_with::<VectorHit<Value>>(
                q,
                QueryScope::CrossPartition,
                QueryOptions::new(),
            )
            .into_pages();
        let mut hits = 0;
        let mut served = Duration::ZERO;
        let mut requests = 0;
        while let Some(page) = pages.next().await {
            let page = page?;
            hits += page.items().len();
            for d in page.diagnostics() {
                for r in d.requests() {
                    served += r.duration();
                    requests += 1;
                }
            }
        }
        let wall = started.elapsed();
        let peak = PEAK.load(Ordering::Relaxed).saturating_sub(before);
        println!(
            "query {round}: {hits} results; driver {:.0} ms; emulator {:.0} ms over {requests} page requests; driver peak heap +{:.1} KiB",
            wall.as_secs_f64() * 1000.0,
            served.as_secs_f64() * 1000.0,
            peak as f64 / 1024.0
        );
    }
    drop(child.stdin.take());
    let _ = child.wait();
    Ok(())
}

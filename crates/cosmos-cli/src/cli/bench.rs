//! `cosmos bench` flags.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, ValueEnum};

use crate::args::duration::parse_duration;
use crate::args::hedging::{parse_budget, parse_hedging, BudgetChoice, HedgingChoice};
use crate::args::request_class::RequestClassArgs;
use crate::args::target::TargetArgs;

/// Benchmark workloads.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkloadKind {
    /// Point reads of seeded items.
    Read,
    /// Every operation increments one shared counter item with PATCH.
    PatchCounter,
    /// 80% point reads, 10% upserts, 10% patches.
    Mixed,
    /// A single-partition query finding one seeded item by id.
    Query,
    /// A cross-partition `ORDER BY` with `TOP 10` over every partition.
    QueryCross,
    /// Top-k vector search: `--items` random embeddings of `--dimensions` numbers are seeded into a
    /// container with a vector embedding policy (cosine, float32) and a `quantizedFlat` index, then
    /// each operation runs `SELECT TOP k ... ORDER BY VectorDistance(...)` (k = `--top`) with a new
    /// random probe vector across every partition.
    Vector,
    /// High-priority point reads of the seeded items (at `--rate`, 50/s by default) beside a
    /// background load of 8 writers of 2 KB documents that saturates the container; one run with
    /// the load at High priority, one at Low. Embedded emulator only; throughput is enforced.
    Priority,
    /// One bulk run creating `--items` new items in a fresh container (items/s and RU per item).
    BulkInsert,
    /// Reads, queries, creates, replaces and PATCH increments while a schedule of faults plays
    /// (read-region outage, write failover, split, 429 storm, unanswered writes); then every write
    /// is read back and lost, phantom and double-applied writes are counted, and the 429 storm's
    /// requests per operation. Embedded emulator only; runs hedging off and at 50 ms unless
    /// `--hedging` is given.
    Chaos,
}

impl WorkloadKind {
    /// The name used in reports.
    pub fn name(self) -> &'static str {
        match self {
            WorkloadKind::Read => "read",
            WorkloadKind::PatchCounter => "patch-counter",
            WorkloadKind::Mixed => "mixed",
            WorkloadKind::Query => "query",
            WorkloadKind::QueryCross => "query-cross",
            WorkloadKind::Vector => "vector",
            WorkloadKind::BulkInsert => "bulk-insert",
            WorkloadKind::Chaos => "chaos",
            WorkloadKind::Priority => "priority",
        }
    }
}

fn parse_patch_strategy(s: &str) -> Result<cosmos_driver::PatchStrategy, String> {
    s.parse()
        .map_err(|e: cosmos_driver::options::UnknownPatchStrategy| e.to_string())
}

/// `cosmos bench` flags.
#[derive(Args, Debug, Clone)]
pub struct BenchArgs {
    /// The account to measure; without `--endpoint` an embedded emulator is started.
    #[command(flatten)]
    pub target: TargetArgs,
    /// Emulator latency profile (local, geo, slow-primary, slow-both, brownout, blackhole); only
    /// without `--endpoint`. The 10 s episode of brownout and blackhole is centred in each run.
    #[arg(long)]
    pub profile: Option<String>,
    /// What each operation does.
    #[arg(long, value_enum, default_value = "read")]
    pub workload: WorkloadKind,
    /// How `patch-counter` carries out each PATCH: `rmw` (the driver's read-modify-write loop),
    /// `native` (the service's PATCH verb) or `auto`; repeat the flag for one run per strategy
    /// (default: rmw).
    #[arg(long = "patch-strategy", value_name = "STRATEGY", value_parser = parse_patch_strategy)]
    pub patch_strategy: Vec<cosmos_driver::PatchStrategy>,
    /// `off`, `on`, a threshold such as `50ms`, or `adaptive` (p95 of the primary region's recent
    /// latencies within 5ms..100ms; `adaptive:p99`, `adaptive:p90:10ms..200ms` change that); repeat
    /// for several runs. Default: off and 50ms.
    #[arg(long, value_parser = parse_hedging)]
    pub hedging: Vec<HedgingChoice>,
    /// Bound hedging to this share of reads (a token bucket per driver, with a floor of 2 hedges
    /// per second), e.g. `10%`; `off` (the default) hedges every read whose threshold passes.
    #[arg(long, value_parser = parse_budget, default_value = "off")]
    pub hedge_budget: BudgetChoice,
    /// After consecutive hedge wins mark a partition unhealthy in a region, probe the region again
    /// after this long (default: the breaker's 60 s), e.g. `3s`.
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    pub hedge_win_probe_after: Option<Duration>,
    /// Operations started per second (open loop); 0 for closed loop. Default 500, 300 for the
    /// chaos workload, 50 for priority.
    #[arg(long = "rate", value_name = "RATE")]
    pub rate_given: Option<u64>,
    /// Most operations in flight (the number of workers in closed loop).
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub concurrency: u32,
    /// Measured time per run, e.g. 20s.
    #[arg(long, value_parser = parse_duration, default_value = "20s", conflicts_with = "ops")]
    pub duration: Duration,
    /// Measured operations per run (instead of --duration).
    #[arg(long)]
    pub ops: Option<u64>,
    /// Unrecorded time before each run.
    #[arg(long, value_parser = parse_duration, default_value = "2s")]
    pub warmup: Duration,
    /// Write the runs as JSON here.
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,
    /// Write every run's latency histogram here as an HDR histogram interval log (one interval per
    /// run, tagged with its title), which HdrHistogram tools can read, merge and compare.
    #[arg(long, value_name = "PATH")]
    pub hdr: Option<PathBuf>,
    /// Exit 0 even when operations failed (by default a run with failed operations exits 1 after
    /// printing and writing its results).
    #[arg(long)]
    pub allow_errors: bool,
    /// Speak HTTP/2 to the account (ALPN over TLS, prior knowledge over plain HTTP, as to the
    /// embedded emulator) instead of HTTP/1.1.
    #[arg(long)]
    pub http2: bool,
    /// Draw the latency distribution of every run here (SVG).
    #[arg(long, value_name = "PATH")]
    pub svg: Option<PathBuf>,
    /// Database used (created when missing).
    #[arg(long, default_value = "cosmos-bench")]
    pub db: String,
    /// Container used (created when missing, partition key `/pk`).
    #[arg(long, default_value = "items")]
    pub container: String,
    /// Items seeded for the read, query and vector workloads; items created by `bulk-insert`.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub items: u64,
    /// Numbers in each embedding of the vector workload (the `quantizedFlat` index takes up to
    /// 4,096).
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub dimensions: u32,
    /// Results each vector search asks for (`TOP k`).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub top: u32,
    /// The embedded emulator throttles (429) each partition key range past its share of the
    /// container's RU/s (see `--throughput`).
    #[arg(long, conflicts_with = "endpoint")]
    pub enforce_throughput: bool,
    /// RU/s provisioned on the container `bulk-insert` creates (the service's default when absent).
    #[arg(long, value_name = "RU_PER_S", value_parser = clap::value_parser!(u32).range(400..=1_000_000))]
    pub throughput: Option<u32>,
    /// Use the database, container and items as they are: no creation, no seeding (with --endpoint).
    #[arg(long, requires = "endpoint")]
    pub skip_setup: bool,
    /// The priority and throughput bucket of the measured operations (setup is sent without).
    #[command(flatten)]
    pub class: RequestClassArgs,
}

impl BenchArgs {
    /// Operations started per second: `--rate`, or the workload's default (500; 300 for chaos).
    pub fn rate(&self) -> u64 {
        self.rate_given.unwrap_or(match self.workload {
            WorkloadKind::Chaos => 300,
            WorkloadKind::Priority => 50,
            _ => 500,
        })
    }
}

//! `peer-azure-sdk`: the `cosmos bench` read workload driven by Microsoft's `azure_data_cosmos`
//! driver, through the same engine (open-loop schedule, HDR histogram, JSON report) as `cosmos bench`,
//! so the two clients can be compared against one emulator process.
//!
//! The SDK runs with its default options (HTTP/2, Cosmos binary JSON); the endpoint must be on
//! 127.0.0.1, as the SDK allows plain http only for emulator hosts. `--http1` and `--text-json`
//! turn HTTP/2 and binary encoding off for comparison.

use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use azure_data_cosmos::clients::ContainerClient;
use azure_data_cosmos::options::{
    AvailabilityStrategy, BinaryEncodingOptions, ConnectionPoolOptions, HedgeThreshold,
    HedgingStrategy, OperationOptions, Region, RoutingStrategy,
};
use azure_data_cosmos::{AccountEndpoint, AccountReference, CosmosClientBuilder, CosmosRuntime};
use azure_data_cosmos_driver::diagnostics::HedgeTerminalState;
use azure_data_cosmos_driver::DiagnosticsContext;
use clap::Parser;
use cosmos_cli::args::duration::parse_duration;
use cosmos_cli::args::hedging::{parse_hedging, HedgingChoice};
use cosmos_cli::bench::items::{item_for, item_id};
use cosmos_cli::bench::meta::{redacted_command_line, rfc3339_utc, ToolInfo};
use cosmos_cli::bench::progress::{ProgressBar, ProgressCounters};
use cosmos_cli::bench::{
    table, BenchReport, EngineConfig, HedgeFacts, OpReport, Pacing, RunLabels, RunReport, StopAt,
    Window, Workload,
};

/// The `cosmos bench` read workload with Microsoft's Rust driver.
#[derive(Parser)]
#[command(name = "peer-azure-sdk", about)]
struct Args {
    /// Account endpoint (an emulator on 127.0.0.1).
    #[arg(long, env = "COSMOS_ENDPOINT")]
    endpoint: String,
    /// Account key (base64).
    #[arg(long, env = "COSMOS_KEY", hide_env_values = true)]
    key: String,
    /// Preferred regions, in order, comma-separated.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "East US,West US,North Europe"
    )]
    preferred_regions: Vec<String>,
    /// `off` or a threshold such as `50ms`; repeat for several runs.
    #[arg(long, value_parser = parse_hedging, default_value = "50ms")]
    hedging: Vec<HedgingChoice>,
    /// Operations started per second (open loop); 0 for closed loop.
    #[arg(long, default_value_t = 500)]
    rate: u64,
    /// Most operations in flight.
    #[arg(long, default_value_t = 64)]
    concurrency: usize,
    /// Measured time per run.
    #[arg(long, value_parser = parse_duration, default_value = "20s")]
    duration: Duration,
    /// Unrecorded time before each run.
    #[arg(long, value_parser = parse_duration, default_value = "2s")]
    warmup: Duration,
    /// Items to read (seeded beforehand by `cosmos bench` with the same names).
    #[arg(long, default_value_t = 1000)]
    items: u64,
    /// Database holding the items.
    #[arg(long, default_value = "cosmos-bench")]
    db: String,
    /// Container holding the items.
    #[arg(long, default_value = "items")]
    container: String,
    /// The emulator's latency profile, recorded in the report.
    #[arg(long, default_value = "slow-primary")]
    profile: String,
    /// Write the runs as JSON here.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Speak HTTP/1.1 only (the SDK's default allows HTTP/2).
    #[arg(long)]
    http1: bool,
    /// Send and accept JSON text (the SDK's default is Cosmos binary JSON).
    #[arg(long)]
    text_json: bool,
}

/// Point reads through the SDK's container client.
struct SdkRead {
    container: ContainerClient,
    items: u64,
    /// Threshold against which a primary attempt counts as slow (the hedge threshold, or 50 ms).
    slow_after: Duration,
}

fn facts(d: &DiagnosticsContext, slow_after: Duration) -> (HedgeFacts, u32, f64) {
    let hedge = match d.hedge_diagnostics() {
        Some(h) => {
            let state = h.terminal_state();
            HedgeFacts {
                alternate_sent: h.alternate_region().is_some() || d.hedging_started(),
                alternate_won: state == HedgeTerminalState::AlternateWon,
                primary_over_threshold: !matches!(
                    state,
                    HedgeTerminalState::PrimaryWonPreThreshold
                        | HedgeTerminalState::DeadlineExceededPreThreshold
                ),
                budget_denied: false,
            }
        }
        None => {
            let first = d.requests().first().map(|r| r.duration_ms());
            HedgeFacts {
                alternate_sent: d.hedging_started(),
                alternate_won: false,
                primary_over_threshold: first
                    .is_some_and(|ms| Duration::from_millis(ms) > slow_after),
                budget_denied: false,
            }
        }
    };
    // A hedge loser cancelled before it answered is dropped from the SDK's request list, so a race
    // that sent its alternate counts at least two requests.
    let sent = d
        .request_count()
        .max(d.total_requested_regions())
        .max(1 + usize::from(hedge.alternate_sent));
    let extra = u32::try_from(sent.saturating_sub(1)).unwrap_or(u32::MAX);
    (hedge, extra, d.total_request_charge().value())
}

impl Workload for SdkRead {
    async fn run_op(&self, seq: u64) -> OpReport {
        let id = item_id(item_for(seq, self.items));
        match self.container.read_item(id.clone(), &id, None).await {
            Ok(response) => {
                let caller = response
                    .headers()
                    .request_charge()
                    .map_or(0.0, |c| c.value());
                let (hedge, extra_requests, total) =
                    facts(&response.diagnostics(), self.slow_after);
                OpReport {
                    hedge,
                    extra_requests,
                    ru_caller_visible: caller,
                    ru_total: total,
                    ..OpReport::ok()
                }
            }
            Err(e) => {
                let status = u16::from(e.status().status_code());
                let sub_status = e.status().sub_status().map_or(0, |s| u32::from(s.value()));
                let mut report = OpReport::failed(Some(status), sub_status);
                if let Some(d) = e.diagnostics() {
                    let (hedge, extra_requests, total) = facts(&d, self.slow_after);
                    report.hedge = hedge;
                    report.extra_requests = extra_requests;
                    report.ru_total = total;
                }
                report
            }
        }
    }
}

async fn container(args: &Args, hedging: HedgingChoice) -> Result<ContainerClient, String> {
    let endpoint: AccountEndpoint = args
        .endpoint
        .parse()
        .map_err(|e| format!("--endpoint {:?} is not a URL: {e}", args.endpoint))?;
    let mut pool = ConnectionPoolOptions::builder()
        .with_max_idle_connections_per_endpoint(args.concurrency.max(1) * 2);
    if args.http1 {
        pool = pool.with_is_http2_allowed(false);
    }
    let pool = pool
        .build()
        .map_err(|e| format!("connection pool options: {e}"))?;
    let runtime = CosmosRuntime::builder()
        .with_connection_pool(pool)
        .build()
        .await
        .map_err(|e| format!("cannot build the SDK runtime: {e}"))?;
    let mut defaults = OperationOptions::default();
    defaults.availability_strategy = Some(match hedging {
        HedgingChoice::Off => AvailabilityStrategy::Disabled,
        HedgingChoice::Threshold(t) => AvailabilityStrategy::Hedging(HedgingStrategy::new(
            HedgeThreshold::new(t).ok_or("a hedging threshold of zero is not allowed")?,
        )),
        HedgingChoice::On => {
            return Err("give the SDK an explicit threshold, e.g. --hedging 50ms".into())
        }
        HedgingChoice::Adaptive(_) => {
            return Err(
                "the SDK has no adaptive threshold: give it one, e.g. --hedging 50ms".into(),
            )
        }
    });
    let regions: Vec<Region> = args
        .preferred_regions
        .iter()
        .map(|r| Region::new(r.trim().to_owned()))
        .collect();
    let account = AccountReference::with_authentication_key(endpoint, args.key.clone());
    let mut builder = CosmosClientBuilder::new().with_runtime(runtime);
    if args.text_json {
        builder =
            builder.with_binary_encoding_options(BinaryEncodingOptions::new().with_enabled(false));
    }
    let client = builder
        .with_default_operation_options(defaults)
        .build(account, RoutingStrategy::PreferredRegions(regions))
        .await
        .map_err(|e| format!("cannot build the SDK client: {e}"))?;
    client
        .database_client(args.db.as_str())
        .container_client(args.container.as_str(), None)
        .await
        .map_err(|e| format!("cannot open container {}/{}: {e}", args.db, args.container))
}

/// Upserts, replaces and reads back one item with the SDK, so a run stops early when the emulator
/// does not understand the SDK's bodies (Cosmos binary JSON by default).
async fn probe_writes(container: &ContainerClient) -> Result<(), String> {
    let id = "peer-probe";
    let first = serde_json::json!({"id": id, "pk": id, "n": 1, "tags": ["a", "b"]});
    container
        .upsert_item(id.to_owned(), id, &first, None)
        .await
        .map_err(|e| format!("cannot upsert {id}: {e}"))?;
    let second = serde_json::json!({"id": id, "pk": id, "n": 2, "tags": ["c"], "f": 2.5});
    container
        .replace_item(id.to_owned(), id, &second, None)
        .await
        .map_err(|e| format!("cannot replace {id}: {e}"))?;
    let read: serde_json::Value = container
        .read_item(id.to_owned(), id, None)
        .await
        .map_err(|e| format!("cannot read {id}: {e}"))?
        .into_model()
        .map_err(|e| format!("cannot parse {id}: {e}"))?;
    for field in ["n", "tags", "f"] {
        if read[field] != second[field] {
            return Err(format!(
                "{id} reads back as {read}, not as replaced ({second})"
            ));
        }
    }
    Ok(())
}

async fn run(args: &Args, hedging: HedgingChoice) -> Result<RunReport, String> {
    let container = container(args, hedging).await?;
    probe_writes(&container).await?;
    eprintln!(
        "peer-azure-sdk: upserted, replaced and read back peer-probe (HTTP/2 {}, binary JSON {})",
        if args.http1 { "off" } else { "allowed" },
        if args.text_json { "off" } else { "on" },
    );
    let first = item_id(0);
    container
        .read_item(first.clone(), &first, None)
        .await
        .map_err(|e| {
            format!("cannot read {first} (seed the items with `cosmos bench` first): {e}")
        })?;
    let slow_after = match hedging {
        HedgingChoice::Threshold(t) => t,
        _ => Duration::from_millis(50),
    };
    let workload = Arc::new(SdkRead {
        container,
        items: args.items.max(1),
        slow_after,
    });
    let window = Window {
        warmup: args.warmup,
        stop: StopAt::Elapsed(args.duration),
    };
    let config = EngineConfig {
        pacing: Pacing::from_rate(args.rate),
        concurrency: NonZeroUsize::new(args.concurrency)
            .ok_or("--concurrency must be at least 1")?,
        window,
    };
    let counters = Arc::new(ProgressCounters::default());
    let bar = ProgressBar::start(
        format!("sdk hedging {}", hedging.label()),
        window,
        counters.clone(),
    );
    let measurement = cosmos_cli::bench::run(workload, config, counters).await;
    drop(bar);
    let labels = RunLabels {
        workload: "read".into(),
        profile: args.profile.clone(),
        hedging: hedging.label(),
        rate: args.rate,
        concurrency: args.concurrency,
    };
    Ok(RunReport::new(labels, &measurement, None))
}

#[tokio::main]
async fn main() {
    let args = Args::parse();
    let command_line: Vec<String> = std::env::args().collect();
    let mut report = BenchReport {
        tool: ToolInfo {
            name: "peer-azure-sdk".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        },
        started_at: rfc3339_utc(std::time::SystemTime::now()),
        command_line: redacted_command_line(&command_line),
        runs: Vec::new(),
    };
    for &hedging in &args.hedging {
        match run(&args, hedging).await {
            Ok(r) => report.runs.push(r),
            Err(e) => {
                eprintln!("peer-azure-sdk: {e}");
                std::process::exit(1);
            }
        }
    }
    print!("{}", table::render(&report.runs));
    if let Some(path) = &args.json {
        if let Err(e) = std::fs::write(path, report.to_json()) {
            eprintln!("peer-azure-sdk: cannot write {}: {e}", path.display());
            std::process::exit(1);
        }
    }
}

//! `cosmos bench`: prepare the account (or start an embedded emulator), run the workload once per
//! hedging setting, then print the table and write the JSON and the SVG.

use std::num::NonZeroUsize;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use cosmos_driver::{CosmosDriver, Credential, PatchStrategy};
use cosmos_emulator::faults::profiles::{EPISODE_LENGTH, EPISODE_START};
use cosmos_emulator::{Emulator, EmulatorBuilder};

use super::{bench_chaos, connect, sign_in, CommandError};
use crate::args::hedging::{run_label, HedgingChoice};
use crate::args::request_class::Priority;
use crate::bench::meta::redacted_command_line;
use crate::bench::output::{self, CompletedRun, Invocation};
use crate::bench::progress::{ProgressBar, ProgressCounters};
use crate::bench::region_timeline::{self, RegionTimeline};
use crate::bench::report::VectorReport;
use crate::bench::workloads::priority::{BackgroundLoad, PriorityReads};
use crate::bench::workloads::setup::{self, BenchAccount, SeededItems};
use crate::bench::workloads::{
    bulk_insert, BulkInsertRun, MixedWorkload, PatchCounterWorkload, QueryShape, QueryWorkload,
    ReadWorkload,
};
use crate::bench::{
    EngineConfig, Pacing, RunLabels, RunMeasurement, RunReport, StopAt, Window, Workload,
};
use crate::cli::{BenchArgs, WorkloadKind};

/// The profile the embedded emulator uses when none is given.
pub const DEFAULT_PROFILE: &str = "slow-primary";
/// The profile the embedded emulator uses for the chaos workload when none is given.
pub const CHAOS_PROFILE: &str = "geo";
/// The threshold compared with hedging off when no `--hedging` is given.
pub const DEFAULT_THRESHOLD: Duration = Duration::from_millis(50);

/// The hedging settings to run: as given, or off and 50 ms. Bulk writes are never hedged: one run,
/// off, unless settings are given.
pub fn hedging_runs(given: &[HedgingChoice], workload: WorkloadKind) -> Vec<HedgingChoice> {
    if !given.is_empty() {
        given.to_vec()
    } else if matches!(workload, WorkloadKind::BulkInsert | WorkloadKind::Priority) {
        vec![HedgingChoice::Off]
    } else {
        vec![
            HedgingChoice::Off,
            HedgingChoice::Threshold(DEFAULT_THRESHOLD),
        ]
    }
}

/// Where the benchmark runs, and the emulator kept alive for it.
struct Target {
    account: BenchAccount,
    profile: String,
    emulator: Option<Emulator>,
}

/// Where the profile's clock must read zero for its episode (`brownout`, `blackhole`: from
/// [`EPISODE_START`] for [`EPISODE_LENGTH`]) to be centred in a run that starts at `run_start` and
/// measures `measured` after `warmup`.
pub fn episode_clock_zero(
    run_start: tokio::time::Instant,
    warmup: Duration,
    measured: Duration,
) -> tokio::time::Instant {
    let centre = run_start + warmup + measured / 2;
    let offset = EPISODE_START + EPISODE_LENGTH / 2;
    centre.checked_sub(offset).unwrap_or(run_start)
}

impl Target {
    /// Restarts the embedded emulator's profile clock so that its episode, if it has one, falls in
    /// the middle of the run about to start.
    fn centre_episode(&self, args: &BenchArgs) {
        if let Some(emulator) = &self.emulator {
            let zero = episode_clock_zero(tokio::time::Instant::now(), args.warmup, args.duration);
            emulator.faults().restart_profile_clock(zero);
        }
    }
}

async fn target(args: &BenchArgs) -> Result<Target, String> {
    if args.target.endpoint.is_some() {
        if args.workload == WorkloadKind::Chaos {
            return Err(
                "the chaos workload plays its faults on the embedded emulator; it cannot run against --endpoint"
                    .into(),
            );
        }
        if args.workload == WorkloadKind::Priority {
            return Err(
                "the priority workload saturates the embedded emulator's enforced throughput; it cannot run against --endpoint"
                    .into(),
            );
        }
        if args.profile.is_some() {
            return Err(
                "--profile sets the embedded emulator's latency; it cannot apply to --endpoint"
                    .into(),
            );
        }
        let endpoint = args.target.endpoint()?;
        connect::checked_endpoint(endpoint, args.target.allow_insecure_http)?;
        let account = BenchAccount {
            endpoint: endpoint.to_owned(),
            credential: sign_in::credential(&args.target)?,
            allow_insecure_http: args.target.allow_insecure_http,
            http2: args.http2,
            regions: args.target.regions(),
            database: args.db.clone(),
            container: args.container.clone(),
            class: args.class,
        };
        return Ok(Target {
            account,
            profile: "external".into(),
            emulator: None,
        });
    }
    let default_profile = match args.workload {
        // Bulk writes go to the write region: a slow primary would only measure its latency.
        WorkloadKind::BulkInsert | WorkloadKind::Priority => "local",
        WorkloadKind::Chaos => CHAOS_PROFILE,
        _ => DEFAULT_PROFILE,
    };
    let profile = args
        .profile
        .clone()
        .unwrap_or_else(|| default_profile.to_owned());
    let emulator = EmulatorBuilder::new()
        .profile(&profile)
        .enforce_throughput(args.enforce_throughput || args.workload == WorkloadKind::Priority)
        .start()
        .await
        .map_err(|e| format!("cannot start the embedded emulator: {e}"))?;
    eprintln!(
        "embedded emulator at {} (regions {}; profile {profile})",
        emulator.endpoint(),
        emulator.regions().join(", ")
    );
    let regions =
        if args.target.preferred_regions.is_empty() && args.workload == WorkloadKind::Chaos {
            bench_chaos::chaos_regions(emulator.regions(), &emulator.write_region())
        } else if args.target.preferred_regions.is_empty() {
            emulator.regions().to_vec()
        } else {
            args.target.regions()
        };
    let account = BenchAccount {
        endpoint: emulator.endpoint().to_owned(),
        credential: Credential::master_key(emulator.key())
            .map_err(|e| format!("the embedded emulator's key is refused: {}", e.message()))?,
        allow_insecure_http: false,
        http2: args.http2,
        regions,
        database: args.db.clone(),
        container: args.container.clone(),
        class: args.class,
    };
    Ok(Target {
        account,
        profile,
        emulator: Some(emulator),
    })
}

fn engine_config(args: &BenchArgs) -> Result<EngineConfig, String> {
    let concurrency = usize::try_from(args.concurrency)
        .ok()
        .and_then(NonZeroUsize::new);
    Ok(EngineConfig {
        pacing: Pacing::from_rate(args.rate()),
        concurrency: concurrency.ok_or("--concurrency must be at least 1")?,
        window: Window {
            warmup: args.warmup,
            stop: match args.ops {
                Some(n) => StopAt::Ops(n),
                None => StopAt::Elapsed(args.duration),
            },
        },
    })
}

async fn measure<W: Workload>(workload: W, config: EngineConfig, label: String) -> RunMeasurement {
    let counters = Arc::new(ProgressCounters::default());
    let bar = ProgressBar::start(label, config.window, counters.clone());
    let m = crate::bench::run(Arc::new(workload), config, counters).await;
    drop(bar);
    m
}

/// One run at one hedging setting.
async fn one_run(
    args: &BenchArgs,
    target: &Target,
    items: Option<&SeededItems>,
    hedging: HedgingChoice,
    strategy: PatchStrategy,
    load: Option<Priority>,
) -> Result<CompletedRun, String> {
    let driver: CosmosDriver = target
        .account
        .driver(hedging, args.hedge_budget.0, args.hedge_win_probe_after)
        .await?;
    let config = engine_config(args)?;
    let slow_after = match hedging {
        HedgingChoice::Threshold(t) => t,
        _ => DEFAULT_THRESHOLD,
    };
    let mut label = format!("hedging {}", run_label(hedging, args.hedge_budget.0));
    if args.workload == WorkloadKind::PatchCounter {
        label = format!("{label}, patch {strategy}");
    }
    let run_name = match load {
        Some(p) => format!(
            "{}/load-{}",
            run_label(hedging, args.hedge_budget.0),
            p.name()
        ),
        None => run_label(hedging, args.hedge_budget.0),
    };
    if load.is_some() {
        label = format!("hedging {run_name}");
    }
    target.centre_episode(args);
    let timeline = target
        .emulator
        .as_ref()
        .map(|e| RegionTimeline::start(e.counters().clone(), e.regions().to_vec()));
    let mut chaos = None;
    let mut vector = None;
    let mut priority = None;
    let (m, final_counter) = match (args.workload, items) {
        (WorkloadKind::BulkInsert, _) => {
            let labels = RunLabels {
                workload: args.workload.name().into(),
                profile: target.profile.clone(),
                hedging: run_label(hedging, args.hedge_budget.0),
                rate: 0,
                concurrency: 0,
            };
            let run = BulkInsertRun {
                items: args.items,
                throughput: args.throughput,
                enforce_throughput: args.enforce_throughput,
            };
            let report = bulk_insert(
                &driver,
                &target.account.database,
                &target.account.container,
                labels,
                &run,
            )
            .await?;
            let latency_us = hdrhistogram::Histogram::new(3)
                .map_err(|e| format!("cannot make an empty histogram: {e}"))?;
            return Ok(CompletedRun { report, latency_us });
        }
        (WorkloadKind::Chaos, Some(items)) => {
            let emulator = target
                .emulator
                .as_ref()
                .ok_or("the chaos workload needs the embedded emulator")?;
            let run = bench_chaos::ChaosRun {
                emulator,
                driver,
                container: target.account.container_ref()?,
                preferred: target.account.regions.clone(),
                items: items.clone(),
                config,
                duration: args.duration,
                slow_after,
            };
            let (m, report) = bench_chaos::run(run, |w, config| measure(w, config, label)).await?;
            chaos = Some(report);
            (m, None)
        }
        (WorkloadKind::PatchCounter, _) => {
            let container = target.account.container_ref()?;
            let (counter, pk) = setup::reset_counter(&driver, &container).await?;
            let w = PatchCounterWorkload::new(
                driver.clone(),
                counter.clone(),
                pk.clone(),
                slow_after,
                strategy,
            )?;
            let m = measure(w, config, label).await;
            let final_counter = setup::read_counter(&driver, &counter, &pk).await;
            (m, Some(final_counter))
        }
        (WorkloadKind::Priority, Some(items)) => {
            // The load has a driver of its own (its own connections), without the request class.
            let load_driver = target
                .account
                .unclassed()
                .driver(HedgingChoice::Off, None, None)
                .await?;
            let load_container =
                load_driver.container(&target.account.database, &target.account.container);
            let background = BackgroundLoad::start(&load_container, load.unwrap_or(Priority::High));
            let w = PriorityReads::new(driver, items.clone(), slow_after);
            let met = w.met_429();
            let m = measure(w, config, label).await;
            priority = Some(background.finish(met.load(Ordering::Relaxed)).await);
            (m, None)
        }
        (WorkloadKind::Read, Some(items)) => (
            measure(
                ReadWorkload::new(driver, items.clone(), slow_after),
                config,
                label,
            )
            .await,
            None,
        ),
        (WorkloadKind::Mixed, Some(items)) => (
            measure(
                MixedWorkload::new(driver, items.clone(), slow_after)?,
                config,
                label,
            )
            .await,
            None,
        ),
        (kind @ (WorkloadKind::Query | WorkloadKind::QueryCross), Some(items)) => {
            let shape = if kind == WorkloadKind::Query {
                QueryShape::PointLike
            } else {
                QueryShape::CrossOrderByTop
            };
            let w = QueryWorkload::new(
                &driver,
                &target.account.database,
                &target.account.container,
                items.clone(),
                shape,
                slow_after,
            );
            (measure(w, config, label).await, None)
        }
        (WorkloadKind::Vector, Some(items)) => {
            let shape = QueryShape::Vector {
                dimensions: args.dimensions,
                top: args.top,
            };
            let w = QueryWorkload::new(
                &driver,
                &target.account.database,
                &target.account.container,
                items.clone(),
                shape,
                slow_after,
            );
            let short = w.short_results();
            let m = measure(w, config, label).await;
            vector = Some(VectorReport {
                items: items.len(),
                dimensions: args.dimensions,
                top: args.top,
                short_results: short.load(std::sync::atomic::Ordering::Relaxed),
            });
            (m, None)
        }
        (_, None) => return Err("the items were not seeded".into()),
    };
    if m.max_start_lag > Duration::from_secs(1) {
        eprintln!(
            "warning: the target could not keep up with {} ops/s: operations waited up to {:.1} s for one of the \
             {} slots (that wait is part of their latency); lower --rate or raise --concurrency",
            args.rate(),
            m.max_start_lag.as_secs_f64(),
            config.concurrency
        );
    }
    let labels = RunLabels {
        workload: args.workload.name().into(),
        profile: target.profile.clone(),
        hedging: run_name,
        rate: args.rate(),
        concurrency: config.concurrency.get(),
    };
    let mut report = RunReport::new(labels, &m, final_counter);
    if let Some(patch) = report.patch.as_mut() {
        patch.strategy = Some(strategy.to_string());
    }
    report.chaos = chaos;
    report.vector = vector;
    report.priority = priority;
    if let Some(timeline) = timeline {
        let timeline = timeline.finish().await;
        if target.profile == "brownout" || target.profile == "blackhole" {
            eprint!("{}", region_timeline::describe(&timeline));
        }
        report.region_reads_per_second = Some(timeline);
    }
    Ok(CompletedRun {
        report,
        latency_us: m.tally.latency_us.clone(),
    })
}

/// Why a benchmark that ran to the end still fails: its operations that failed, unless
/// `--allow-errors`.
pub fn errors_verdict(runs: &[RunReport], allow_errors: bool) -> Result<(), String> {
    let failed: u64 = runs.iter().map(|r| r.errors).sum();
    if failed == 0 || allow_errors {
        return Ok(());
    }
    let ops: u64 = runs.iter().map(|r| r.ops).sum();
    Err(format!(
        "{failed} of {ops} measured operations failed (see \"errors by status\"); pass \
         --allow-errors to exit 0 anyway"
    ))
}

/// Runs the benchmark, then fails when operations failed (unless `--allow-errors`).
pub async fn run_checked(args: &BenchArgs) -> Result<(), CommandError> {
    let runs = run(args).await.map_err(CommandError::Failed)?;
    let reports: Vec<RunReport> = runs.into_iter().map(|r| r.report).collect();
    errors_verdict(&reports, args.allow_errors).map_err(CommandError::Failed)
}

/// Runs the benchmark as `args` say; prints the table and writes the files.
pub async fn run(args: &BenchArgs) -> Result<Vec<CompletedRun>, String> {
    let how = Invocation {
        started: SystemTime::now(),
        command_line: redacted_command_line(&std::env::args().collect::<Vec<_>>()),
    };
    let clock = std::time::Instant::now();
    let target = target(args).await?;
    let container = target.account.container_ref()?;
    let setup_driver = target
        .account
        .unclassed()
        .driver(HedgingChoice::Off, None, None)
        .await?;
    if !args.skip_setup && args.workload == WorkloadKind::Vector {
        setup::ensure_vector_container(&setup_driver, &container, args.dimensions).await?;
    } else if !args.skip_setup {
        setup::ensure_container(&setup_driver, &container).await?;
    }
    let items = match args.workload {
        WorkloadKind::PatchCounter | WorkloadKind::BulkInsert => None,
        WorkloadKind::Read
        | WorkloadKind::Mixed
        | WorkloadKind::Query
        | WorkloadKind::QueryCross
        | WorkloadKind::Vector
        | WorkloadKind::Chaos
        | WorkloadKind::Priority
            if args.skip_setup =>
        {
            Some(SeededItems::new(&container, args.items)?)
        }
        WorkloadKind::Read
        | WorkloadKind::Mixed
        | WorkloadKind::Query
        | WorkloadKind::QueryCross
        | WorkloadKind::Chaos
        | WorkloadKind::Priority => {
            eprintln!(
                "seeding {} items into {}/{}",
                args.items, args.db, args.container
            );
            Some(setup::seed_items(&setup_driver, &container, args.items).await?)
        }
        WorkloadKind::Vector => {
            eprintln!(
                "seeding {} vectors of {} dimensions into {}/{}",
                args.items, args.dimensions, args.db, args.container
            );
            Some(setup::seed_vectors(&setup_driver, &container, args.items, args.dimensions).await?)
        }
    };
    let mut runs = Vec::new();
    let mut began = Vec::new();
    let settings = hedging_runs(&args.hedging, args.workload);
    let strategies = match (args.workload, args.patch_strategy.is_empty()) {
        (WorkloadKind::PatchCounter, false) => args.patch_strategy.clone(),
        _ => vec![PatchStrategy::ReadModifyWrite],
    };
    // The priority workload runs once with its background load at High, once at Low.
    let loads = match args.workload {
        WorkloadKind::Priority => vec![Some(Priority::High), Some(Priority::Low)],
        _ => vec![None],
    };
    for hedging in settings {
        for (&strategy, &load) in strategies
            .iter()
            .flat_map(|s| loads.iter().map(move |l| (s, l)))
        {
            eprintln!(
                "run: workload {}, hedging {}{}",
                args.workload.name(),
                run_label(hedging, args.hedge_budget.0),
                if args.workload == WorkloadKind::PatchCounter {
                    format!(", patch strategy {strategy}")
                } else {
                    String::new()
                }
            );
            began.push(clock.elapsed());
            runs.push(one_run(args, &target, items.as_ref(), hedging, strategy, load).await?);
        }
    }
    print!("{}", output::table(&runs));
    print!("{}", output::legend(&runs));
    for run in &runs {
        if let Some(chaos) = &run.report.chaos {
            print!("hedging {}:\n{}", run.report.hedging, chaos.describe());
        }
    }
    let reports: Vec<_> = runs.iter().map(|r| r.report.clone()).collect();
    if let Some(line) = crate::bench::conclusion::conclusion(&reports) {
        println!("{line}");
    }
    if let Some(path) = &args.json {
        output::write_json(path, &runs, &how)?;
        eprintln!("wrote {}", path.display());
    }
    if let Some(path) = &args.hdr {
        output::write_hdr(path, &runs, &began, &how)?;
        eprintln!("wrote {}", path.display());
    }
    if let Some(path) = &args.svg {
        output::write_svg(path, &runs)?;
        eprintln!("wrote {}", path.display());
    }
    Ok(runs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn episodes_are_centred_in_the_measured_window() {
        let start = tokio::time::Instant::now() + Duration::from_secs(100);
        let s = Duration::from_secs;
        // (warm-up s, measured s): the episode's middle (15 s on the clock) is the measured
        // window's middle, before or after the run's start.
        for (warmup, measured) in [(0, 30), (2, 25), (2, 40), (5, 4)] {
            let zero = episode_clock_zero(start, s(warmup), s(measured));
            assert_eq!(
                zero + EPISODE_START + EPISODE_LENGTH / 2,
                start + s(warmup) + s(measured) / 2,
                "{warmup}+{measured}"
            );
        }
    }

    #[test]
    fn default_runs_are_off_and_50ms() {
        assert_eq!(
            hedging_runs(&[], WorkloadKind::Read),
            [
                HedgingChoice::Off,
                HedgingChoice::Threshold(Duration::from_millis(50))
            ]
        );
        assert_eq!(
            hedging_runs(&[HedgingChoice::On], WorkloadKind::Read),
            [HedgingChoice::On]
        );
        // The chaos workload compares the 429 storm's requests per operation off and on.
        assert_eq!(
            hedging_runs(&[], WorkloadKind::Chaos),
            hedging_runs(&[], WorkloadKind::Read)
        );
        assert_eq!(
            hedging_runs(&[HedgingChoice::Off], WorkloadKind::Chaos),
            [HedgingChoice::Off]
        );
        assert_eq!(
            hedging_runs(&[], WorkloadKind::BulkInsert),
            [HedgingChoice::Off]
        );
        assert_eq!(
            hedging_runs(&[HedgingChoice::On], WorkloadKind::BulkInsert),
            [HedgingChoice::On]
        );
    }
}

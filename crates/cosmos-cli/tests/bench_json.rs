//! `cosmos bench` end to end: the binary starts its embedded emulator, runs, and writes the JSON and
//! the SVG. Checks the shape and the internal consistency of the figures, never their speed.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cosmos-cli-bench-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn bench(args: &[&str], dir: &Path) -> Value {
    let json = dir.join("runs.json");
    let svg = dir.join("runs.svg");
    let hdr = dir.join("runs.hlog");
    let out = Command::new(env!("CARGO_BIN_EXE_cosmos"))
        .arg("bench")
        .args(args)
        .arg("--json")
        .arg(&json)
        .arg("--svg")
        .arg(&svg)
        .arg("--hdr")
        .arg(&hdr)
        .env_remove("COSMOS_ENDPOINT")
        .env_remove("COSMOS_KEY")
        .output()
        .expect("the cosmos binary runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "bench failed: {stderr}");
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        table.contains("p99.9 (ms)") && table.contains("throughput (ops/s)"),
        "{table}"
    );
    let svg_text = std::fs::read_to_string(&svg).expect("the SVG was written");
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("the JSON was written"))
            .unwrap();
    let runs = report["runs"].as_array().expect("runs is an array").len();
    let doc = roxmltree::Document::parse(&svg_text).expect("the SVG is well-formed");
    let lines = doc
        .descendants()
        .filter(|n| n.attribute("class") == Some("series"))
        .count();
    assert_eq!(lines, runs, "one line per run");
    check_invocation(&report, args);
    check_hdr_log(
        &std::fs::read(&hdr).expect("the HDR log was written"),
        &report,
    );
    assert!(
        table.lines().any(|l| l.starts_with("  p99.9 (ms) ")
            && l.ends_with(" 99.9% of the operations took at most this")),
        "the table explains its rows: {table}"
    );
    std::fs::remove_dir_all(dir).unwrap();
    report
}

/// The report names the tool, its start and the command line it ran.
fn check_invocation(report: &Value, args: &[&str]) {
    assert_eq!(report["tool"]["name"], "cosmos", "{}", report["tool"]);
    assert_eq!(report["tool"]["version"], env!("CARGO_PKG_VERSION"));
    let started = report["started_at"].as_str().expect("started_at");
    assert!(
        started.len() == 24 && started.ends_with('Z') && started.as_bytes()[10] == b'T',
        "{started}"
    );
    let line: Vec<&str> = report["command_line"]
        .as_array()
        .expect("command_line")
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(line[1], "bench", "{line:?}");
    for a in args {
        assert!(line.contains(a), "{a} missing from {line:?}");
    }
}

/// One tagged interval per run, holding as many latencies as the run measured.
fn check_hdr_log(log: &[u8], report: &Value) {
    use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
    let runs = report["runs"].as_array().unwrap();
    let intervals: Vec<_> = IntervalLogIterator::new(log)
        .filter_map(|e| match e.expect("the HDR log parses") {
            LogEntry::Interval(h) => Some(h),
            _ => None,
        })
        .collect();
    assert_eq!(intervals.len(), runs.len());
    for (h, run) in intervals.iter().zip(runs) {
        let tag = h
            .tag()
            .expect("each interval is tagged")
            .as_str()
            .to_owned();
        assert!(tag.contains(run["hedging"].as_str().unwrap()), "{tag}");
        // The log's max column is in milliseconds, as the report's.
        assert!(
            (h.max() - number(run, "latency_ms.max")).abs()
                < 0.01 * number(run, "latency_ms.max").max(1.0),
            "{} vs {run}",
            h.max()
        );
    }
}

fn number(v: &Value, path: &str) -> f64 {
    let mut at = v;
    for key in path.split('.') {
        at = at
            .get(key)
            .unwrap_or_else(|| panic!("missing {path} in {v}"));
    }
    at.as_f64()
        .unwrap_or_else(|| panic!("{path} is not a number in {v}"))
}

fn check_run_shape(run: &Value) {
    for key in ["workload", "profile", "hedging"] {
        assert!(run[key].is_string(), "{key} in {run}");
    }
    for key in [
        "rate",
        "concurrency",
        "ops",
        "errors",
        "duration_s",
        "throughput_ops_s",
        "latency_ms.p50",
        "latency_ms.p90",
        "latency_ms.p99",
        "latency_ms.p999",
        "latency_ms.max",
        "hedge.hedged_ops",
        "hedge.alternate_won",
        "hedge.extra_requests_fraction",
        "hedge.primary_over_threshold_fraction",
        "ru.caller_visible",
        "ru.total",
    ] {
        number(run, key);
    }
    let p = |k: &str| number(run, &format!("latency_ms.{k}"));
    assert!(p("p50") > 0.0, "{run}");
    assert!(
        p("p50") <= p("p90")
            && p("p90") <= p("p99")
            && p("p99") <= p("p999")
            && p("p999") <= p("max"),
        "{run}"
    );
    assert!(
        number(run, "hedge.alternate_won") <= number(run, "hedge.hedged_ops"),
        "{run}"
    );
    assert!(
        number(run, "ru.total") >= number(run, "ru.caller_visible"),
        "{run}"
    );
    let spectrum = run["latency_percentiles_ms"]
        .as_array()
        .expect("latency_percentiles_ms");
    assert!(spectrum.len() > 10, "{run}");
    let points: Vec<(f64, f64)> = spectrum
        .iter()
        .map(|p| (number(p, "percentile"), number(p, "ms")))
        .collect();
    assert!(
        points
            .windows(2)
            .all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1),
        "{points:?}"
    );
    assert_eq!(points.last().unwrap().0, 100.0, "{points:?}");
    assert!(
        (points.last().unwrap().1 - p("max")).abs() <= 0.01 * p("max"),
        "{points:?} {run}"
    );
    let by_status = run["errors_by_status"]
        .as_object()
        .unwrap_or_else(|| panic!("errors_by_status is not an object in {run}"));
    let counted: u64 = by_status.values().map(|v| v.as_u64().unwrap()).sum();
    assert_eq!(Some(counted), run["errors"].as_u64(), "{run}");
}

#[test]
fn read_bench_writes_both_runs() {
    let report = bench(
        &[
            "--duration",
            "2s",
            "--warmup",
            "500ms",
            "--rate",
            "200",
            "--items",
            "50",
        ],
        &scratch("read"),
    );
    let runs = report["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2, "hedging off and 50ms by default");
    assert_eq!(runs[0]["hedging"], "off");
    assert_eq!(runs[1]["hedging"], "50ms");
    for run in runs {
        check_run_shape(run);
        assert_eq!(run["workload"], "read");
        assert_eq!(run["profile"], "slow-primary");
        assert_eq!(run["rate"], 200);
        assert_eq!(run["concurrency"], 64);
        assert_eq!(run["errors"], 0);
        assert!(run.get("patch").is_none(), "patch only for patch-counter");
        // 200/s for 2 s, scheduled exactly.
        assert_eq!(run["ops"], 400);
        assert_eq!(number(run, "duration_s"), 2.0);
        assert!(number(run, "ru.caller_visible") > 0.0);
    }
    assert_eq!(
        number(&runs[0], "hedge.hedged_ops"),
        0.0,
        "no race with hedging off"
    );
}

#[test]
fn patch_counter_reads_back_every_successful_increment() {
    // Sixteen tasks in closed loop, all incrementing one item.
    let report = bench(
        &[
            "--workload",
            "patch-counter",
            "--concurrency",
            "16",
            "--rate",
            "0",
            "--ops",
            "400",
            "--warmup",
            "0s",
            "--hedging",
            "off",
            "--profile",
            "local",
            "--allow-errors",
        ],
        &scratch("patch"),
    );
    let runs = report["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1);
    let run = &runs[0];
    check_run_shape(run);
    assert_eq!(run["workload"], "patch-counter");
    assert_eq!(run["rate"], 0);
    assert_eq!(run["concurrency"], 16);
    assert_eq!(run["ops"], 400);
    let patch = &run["patch"];
    let successful = number(patch, "successful");
    let failed = number(patch, "failed_412") + number(patch, "failed_other");
    assert_eq!(successful + failed, 400.0, "{patch}");
    assert_eq!(
        number(patch, "final_counter"),
        successful,
        "no increment lost or invented: {patch}"
    );
    assert_eq!(number(patch, "failed_other"), 0.0, "{patch}");
    let attempts = patch["attempts_histogram"]
        .as_object()
        .expect("a histogram object");
    assert!(attempts.contains_key("1"), "{patch}");
    let counted: f64 = attempts.values().map(|v| v.as_f64().unwrap()).sum();
    assert_eq!(counted, 400.0, "{patch}");
    for k in attempts.keys() {
        let n: u32 = k.parse().expect("attempt counts are numbers");
        assert!((1..=5).contains(&n), "{patch}");
    }
}

#[test]
fn chaos_plays_every_fault_and_accounts_for_every_operation() {
    let report = bench(
        &[
            "--workload",
            "chaos",
            "--duration",
            "3s",
            "--warmup",
            "0s",
            "--rate",
            "150",
            "--profile",
            "local",
            "--allow-errors",
        ],
        &scratch("chaos"),
    );
    let runs = report["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2, "hedging off and 50ms by default");
    let labels: Vec<&str> = runs.iter().filter_map(|r| r["hedging"].as_str()).collect();
    assert_eq!(labels, ["off", "50ms"]);
    for run in runs {
        check_chaos_run(run);
    }
}

fn check_chaos_run(run: &Value) {
    check_run_shape(run);
    assert_eq!(run["workload"].as_str(), Some("chaos"));
    let chaos = &run["chaos"];
    let faults: Vec<&str> = chaos["timeline"]
        .as_array()
        .expect("a timeline")
        .iter()
        .map(|e| {
            assert!(e["error"].is_null(), "every fault applies: {e}");
            e["fault"].as_str().unwrap()
        })
        .collect();
    assert_eq!(
        faults,
        [
            "unanswered-writes",
            "throttle-storm",
            "read-region-outage",
            "write-failover",
            "partition-split"
        ]
    );
    for key in [
        "lost_writes",
        "phantom_writes",
        "patch_double_applied",
        "ambiguous_errors",
        "read_errors",
        "write_errors",
        "max_write_unavailable_ms",
        "unverified",
    ] {
        number(chaos, key);
    }
    assert!(number(chaos, "acknowledged_writes") > 0.0, "{chaos}");
    assert!(
        number(chaos, "ambiguous_errors") <= number(chaos, "write_errors"),
        "{chaos}"
    );
    // The ledger sees every operation the engine measured (and those of the warm-up, none here).
    let recorded = number(chaos, "acknowledged_writes")
        + number(chaos, "write_errors")
        + number(chaos, "reads_ok")
        + number(chaos, "read_errors");
    assert!(recorded >= number(run, "ops"), "{recorded} < ops: {run}");
    // The storm's window: operations started in it, and its ratio is requests over operations.
    let operations = number(chaos, "storm.operations");
    let requests = number(chaos, "storm.requests");
    assert!(operations > 0.0, "{chaos}");
    assert!(operations <= recorded, "{chaos}");
    let ratio = number(chaos, "storm.requests_per_operation");
    assert!((ratio - requests / operations).abs() < 1e-9, "{chaos}");
}

#[test]
fn vector_bench_searches_the_seeded_embeddings() {
    // 300 embeddings of 32 numbers over the emulator's 4 ranges; eight workers in closed loop.
    let report = bench(
        &[
            "--workload",
            "vector",
            "--items",
            "300",
            "--dimensions",
            "32",
            "--top",
            "7",
            "--rate",
            "0",
            "--concurrency",
            "8",
            "--ops",
            "60",
            "--warmup",
            "0s",
            "--hedging",
            "off",
            "--profile",
            "local",
        ],
        &scratch("vector"),
    );
    let runs = report["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1);
    let run = &runs[0];
    check_run_shape(run);
    assert_eq!(run["workload"], "vector");
    assert_eq!(run["ops"], 60);
    assert_eq!(run["errors"], 0);
    let vector = &run["vector"];
    assert_eq!(
        (&vector["items"], &vector["dimensions"], &vector["top"]),
        (&300.into(), &32.into(), &7.into()),
        "{vector}"
    );
    assert_eq!(
        vector["short_results"], 0,
        "every search found its 7: {vector}"
    );
    assert!(number(run, "ru.caller_visible") > 0.0, "{run}");
    assert!(number(run, "throughput_ops_s") > 0.0, "{run}");
}

#[test]
fn priority_bench_runs_the_reads_beside_a_high_then_a_low_load() {
    // High point reads at 40/s beside 8 writers of 2 KB documents; throughput enforced.
    let report = bench(
        &[
            "--workload",
            "priority",
            "--items",
            "20",
            "--rate",
            "40",
            "--duration",
            "2s",
            "--warmup",
            "1s",
            "--profile",
            "local",
        ],
        &scratch("priority"),
    );
    let runs = report["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2, "one run with the load at High, one at Low");
    for (run, load) in runs.iter().zip(["high", "low"]) {
        check_run_shape(run);
        assert_eq!(run["workload"], "priority");
        let p = &run["priority"];
        assert_eq!(p["load"], load, "{run}");
        // Warm-up reads count too: at most 40/s over the 3 s of warm-up and measurement.
        let met = p["reads_met_429"].as_u64().expect("a count of reads");
        assert!(met <= 3 * 40 + 40, "{p}");
        assert!(p["load_writes_per_second"].as_f64().unwrap() > 0.0, "{p}");
    }
}

//! The JSON a benchmark writes: `{"tool":{...},"started_at":"...","command_line":[...],"runs":[RUN, ...]}`.
//! Other tools read it; the names are fixed.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::chaos::ChaosReport;
use super::engine::RunMeasurement;
use super::meta::ToolInfo;

/// Every run of one benchmark invocation.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct BenchReport {
    /// The tool and its version.
    pub tool: ToolInfo,
    /// When the benchmark started, RFC 3339 in UTC.
    pub started_at: String,
    /// The command line it was started with (secret values redacted).
    pub command_line: Vec<String>,
    /// One entry per run, in the order they ran.
    pub runs: Vec<RunReport>,
}

/// What identifies a run: the workload and the settings it ran with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunLabels {
    /// `read`, `patch-counter` or `mixed`.
    pub workload: String,
    /// Emulator latency profile, or `external` for an account given by endpoint.
    pub profile: String,
    /// `off`, `on` (the driver's default threshold) or the threshold, e.g. `50ms`.
    pub hedging: String,
    /// Requests started per second; 0 for closed loop.
    pub rate: u64,
    /// Most operations in flight.
    pub concurrency: usize,
}

/// One run.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct RunReport {
    /// `read`, `patch-counter` or `mixed`.
    pub workload: String,
    /// Emulator latency profile, or `external`.
    pub profile: String,
    /// `off`, `on` or the threshold.
    pub hedging: String,
    /// Requests started per second; 0 for closed loop.
    pub rate: u64,
    /// Most operations in flight.
    pub concurrency: usize,
    /// Measured operations.
    pub ops: u64,
    /// Measured operations that failed.
    pub errors: u64,
    /// Measured operations that failed, by `status/sub_status` (`404/1002`, `503/0`), or
    /// `no_response` when no answer came; the counts add up to `errors`.
    #[serde(default)]
    pub errors_by_status: BTreeMap<String, u64>,
    /// Measured time: the `--duration` window, or for `--ops` runs the time until the last
    /// operation completed.
    pub duration_s: f64,
    /// Operations completed within `duration_s`, per second.
    pub throughput_ops_s: f64,
    /// Latency percentiles, milliseconds, measured from each operation's scheduled start.
    pub latency_ms: LatencyReport,
    /// The whole latency distribution as HdrHistogram prints it (steps that halve the distance to
    /// 100% five times per halving), ending at the maximum; empty when no latency was measured.
    #[serde(default)]
    pub latency_percentiles_ms: Vec<PercentilePoint>,
    /// Hedging facts.
    pub hedge: HedgeReport,
    /// Request charges, summed over the measured operations.
    pub ru: RuReport,
    /// PATCH facts, only for the `patch-counter` workload.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub patch: Option<PatchReport>,
    /// Point reads per second that reached each region, from the run's start (warm-up included);
    /// only with the embedded emulator.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub region_reads_per_second: Option<std::collections::BTreeMap<String, Vec<u64>>>,
    /// Bulk facts, only for the `bulk-insert` workload (whose `ops` are items, `throughput_ops_s`
    /// items per second, and whose latency percentiles do not apply and are 0).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub bulk: Option<BulkReport>,
    /// Lost, phantom and double-applied writes and the fault timeline, only for `chaos`.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub chaos: Option<ChaosReport>,
    /// What each search asked for, only for `vector`.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub vector: Option<VectorReport>,
    /// The background load and the reads that met a 429, only for `priority`.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub priority: Option<PriorityReport>,
}

/// One `priority` run: the background load's priority and write rate, and how many of the
/// High-priority reads (warm-up included) met a 429 on any attempt.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct PriorityReport {
    /// `high` or `low`.
    pub load: String,
    /// Reads answered 429 on at least one attempt (each was retried after its retry-after).
    pub reads_met_429: u64,
    /// Documents the load created per second over the run.
    pub load_writes_per_second: f64,
}

/// One `vector` run: the container searched and what each search asked for.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct VectorReport {
    /// Embeddings in the container.
    pub items: u64,
    /// Numbers in each embedding.
    pub dimensions: u32,
    /// Results each search asked for (`TOP k`).
    pub top: u32,
    /// Searches, warm-up included, that succeeded with fewer results than `min(top, items)`.
    pub short_results: u64,
}

/// One bulk run.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct BulkReport {
    /// Items the run was given.
    pub items: u64,
    /// Items created (201).
    pub created: u64,
    /// Items created per second over the whole run.
    pub items_per_second: f64,
    /// Request units per item given.
    pub ru_per_item: f64,
    /// Request units of the whole run.
    pub ru_total: f64,
    /// Batch requests answered.
    pub batches: u64,
    /// Throttled (429) answers seen.
    pub throttled: u64,
    /// Times the partition key ranges were read again after a split.
    pub range_refreshes: u64,
    /// RU/s provisioned on the container, when the bench set it.
    pub container_throughput: Option<u32>,
    /// Whether the embedded emulator enforced the container's RU/s.
    pub enforce_throughput: bool,
}

/// Latency percentiles in milliseconds.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq)]
pub struct LatencyReport {
    /// Median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
    /// 99.9th percentile.
    pub p999: f64,
    /// Highest.
    pub max: f64,
}

/// One point of the latency distribution: `percentile`% of operations took at most `ms`.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq)]
pub struct PercentilePoint {
    /// 0 to 100.
    pub percentile: f64,
    /// Milliseconds.
    pub ms: f64,
}

/// The percentile spectrum of a latency histogram in microseconds.
pub fn percentile_spectrum(latency_us: &hdrhistogram::Histogram<u64>) -> Vec<PercentilePoint> {
    if latency_us.is_empty() {
        return Vec::new();
    }
    let mut points: Vec<PercentilePoint> = latency_us
        .iter_quantiles(5)
        .map(|v| PercentilePoint {
            percentile: (v.quantile_iterated_to() * 100.0 * 1e6).round() / 1e6,
            ms: ms3(latency_us.highest_equivalent(v.value_iterated_to()) as f64 / 1000.0),
        })
        .collect();
    points.dedup_by(|b, a| a.percentile == b.percentile);
    points
}

/// Hedging facts of the measured operations.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq)]
pub struct HedgeReport {
    /// Operations whose alternate attempt was sent.
    pub hedged_ops: u64,
    /// Operations answered by the alternate.
    pub alternate_won: u64,
    /// Requests beyond one per operation, as a fraction of operations.
    pub extra_requests_fraction: f64,
    /// Operations whose primary attempt exceeded the threshold, as a fraction of operations.
    pub primary_over_threshold_fraction: f64,
    /// Operations whose alternate the hedge budget refused (`--hedge-budget`).
    #[serde(default)]
    pub budget_denied_ops: u64,
}

/// Request charges in RU.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq)]
pub struct RuReport {
    /// What the caller saw (the winning attempt's charge).
    pub caller_visible: f64,
    /// Every request sent, losing hedges and retries included.
    pub total: f64,
}

/// PATCH facts over the whole run (warm-up included, so `final_counter` can equal `successful`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct PatchReport {
    /// How the driver carried out each PATCH: `rmw`, `native` or `auto`.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub strategy: Option<String>,
    /// Patches that returned success.
    pub successful: u64,
    /// Patches that failed with 412 after exhausting their attempts.
    pub failed_412: u64,
    /// Patches that failed any other way.
    pub failed_other: u64,
    /// The shared counter read back after the run; null when it could not be read.
    pub final_counter: Option<i64>,
    /// Operations by number of Read-Modify-Write attempts (keys are attempt counts).
    pub attempts_histogram: BTreeMap<u32, u64>,
}

/// Rounds to microsecond precision so the JSON stays readable.
fn ms3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

impl RunReport {
    /// The report of one run. `final_counter` is `Some` only for `patch-counter` (the read-back value,
    /// itself `None` when it could not be read).
    pub fn new(labels: RunLabels, m: &RunMeasurement, final_counter: Option<Option<i64>>) -> Self {
        let t = &m.tally;
        let duration_s = m.measured_elapsed.as_secs_f64();
        Self {
            workload: labels.workload,
            profile: labels.profile,
            hedging: labels.hedging,
            rate: labels.rate,
            concurrency: labels.concurrency,
            ops: t.ops,
            errors: t.errors,
            errors_by_status: t.errors_by_status.clone(),
            duration_s: ms3(duration_s),
            throughput_ops_s: ms3(m.throughput()),
            latency_ms: LatencyReport {
                p50: t.latency_ms_at(0.50),
                p90: t.latency_ms_at(0.90),
                p99: t.latency_ms_at(0.99),
                p999: t.latency_ms_at(0.999),
                max: t.max_latency_ms(),
            },
            latency_percentiles_ms: percentile_spectrum(&t.latency_us),
            hedge: HedgeReport {
                hedged_ops: t.hedged,
                alternate_won: t.alternate_won,
                extra_requests_fraction: t.fraction(t.extra_requests),
                primary_over_threshold_fraction: t.fraction(t.primary_over_threshold),
                budget_denied_ops: t.budget_denied,
            },
            ru: RuReport {
                caller_visible: ms3(t.ru_caller_visible),
                total: ms3(t.ru_total),
            },
            patch: final_counter.map(|final_counter| PatchReport {
                strategy: None,
                successful: t.patch.successful,
                failed_412: t.patch.failed_412,
                failed_other: t.patch.failed_other,
                final_counter,
                attempts_histogram: t.patch.attempts.clone(),
            }),
            region_reads_per_second: None,
            bulk: None,
            chaos: None,
            vector: None,
            priority: None,
        }
    }
}

impl BenchReport {
    /// Pretty JSON with a trailing newline.
    pub fn to_json(&self) -> String {
        let mut s =
            serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"));
        s.push('\n');
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::tally::RunTally;
    use crate::bench::workload::{HedgeFacts, OpReport};
    use std::time::Duration;

    fn labels(workload: &str) -> RunLabels {
        RunLabels {
            workload: workload.into(),
            profile: "slow-primary".into(),
            hedging: "50ms".into(),
            rate: 500,
            concurrency: 64,
        }
    }

    fn measurement() -> RunMeasurement {
        let mut tally = RunTally::default();
        let mut r = OpReport::ok();
        r.hedge = HedgeFacts {
            alternate_sent: true,
            alternate_won: false,
            primary_over_threshold: true,
            budget_denied: false,
        };
        r.extra_requests = 1;
        r.ru_caller_visible = 1.0;
        r.ru_total = 2.0;
        r.patch_attempts = Some(1);
        tally.record(true, Duration::from_millis(60), &r);
        tally.record(
            true,
            Duration::from_millis(2),
            &OpReport {
                patch_attempts: Some(3),
                ..OpReport::ok()
            },
        );
        RunMeasurement {
            completed_in_time: tally.ops,
            tally,
            measured_elapsed: Duration::from_millis(500),
            max_start_lag: Duration::ZERO,
        }
    }

    fn keys(v: &serde_json::Value) -> Vec<&str> {
        v.as_object().unwrap().keys().map(String::as_str).collect()
    }

    #[test]
    fn every_field_is_present_with_its_name() {
        let report = BenchReport {
            tool: crate::bench::meta::ToolInfo::current(),
            started_at: "2026-12-02T00:53:49.120Z".into(),
            command_line: vec!["cosmos".into(), "bench".into()],
            runs: vec![RunReport::new(
                labels("patch-counter"),
                &measurement(),
                Some(Some(2)),
            )],
        };
        let v: serde_json::Value = serde_json::from_str(&report.to_json()).unwrap();
        assert_eq!(keys(&v), ["tool", "started_at", "command_line", "runs"]);
        let run = &v["runs"][0];
        assert_eq!(
            keys(run),
            [
                "workload",
                "profile",
                "hedging",
                "rate",
                "concurrency",
                "ops",
                "errors",
                "errors_by_status",
                "duration_s",
                "throughput_ops_s",
                "latency_ms",
                "latency_percentiles_ms",
                "hedge",
                "ru",
                "patch"
            ]
        );
        assert_eq!(
            keys(&run["latency_ms"]),
            ["p50", "p90", "p99", "p999", "max"]
        );
        assert_eq!(
            keys(&run["hedge"]),
            [
                "hedged_ops",
                "alternate_won",
                "extra_requests_fraction",
                "primary_over_threshold_fraction",
                "budget_denied_ops"
            ]
        );
        assert_eq!(keys(&run["ru"]), ["caller_visible", "total"]);
        assert_eq!(
            keys(&run["patch"]),
            [
                "successful",
                "failed_412",
                "failed_other",
                "final_counter",
                "attempts_histogram"
            ]
        );
        assert_eq!(run["ops"], 2);
        assert_eq!(run["throughput_ops_s"], 4.0);
        assert_eq!(run["hedge"]["hedged_ops"], 1);
        assert_eq!(run["hedge"]["extra_requests_fraction"], 0.5);
        assert_eq!(run["ru"]["total"], 2.0);
        assert_eq!(run["patch"]["final_counter"], 2);
        assert_eq!(
            run["patch"]["attempts_histogram"],
            serde_json::json!({"1": 1, "3": 1})
        );
        assert!(run["latency_ms"]["max"].as_f64().unwrap() >= 60.0);
    }

    #[test]
    fn patch_is_absent_for_other_workloads() {
        let report = BenchReport {
            tool: crate::bench::meta::ToolInfo::current(),
            started_at: "2026-12-02T00:53:49.120Z".into(),
            command_line: vec!["cosmos".into(), "bench".into()],
            runs: vec![RunReport::new(labels("read"), &measurement(), None)],
        };
        let v: serde_json::Value = serde_json::from_str(&report.to_json()).unwrap();
        assert!(v["runs"][0].get("patch").is_none());
        let back: BenchReport = serde_json::from_value(v).unwrap();
        assert_eq!(back, report);
    }

    #[test]
    fn unreadable_final_counter_is_null() {
        let r = RunReport::new(labels("patch-counter"), &measurement(), Some(None));
        let v = serde_json::to_value(&r).unwrap();
        assert!(v["patch"]["final_counter"].is_null());
    }
}

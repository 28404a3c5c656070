//! Writing a benchmark's results: the table on stdout, the JSON report and the SVG plot.

use std::path::Path;

use hdrhistogram::Histogram;

use super::report::{BenchReport, RunReport};
use super::svg::{self, Series};
use super::table;

/// One finished run: its report and its latency histogram (microseconds).
#[derive(Clone, Debug)]
pub struct CompletedRun {
    /// What the JSON holds.
    pub report: RunReport,
    /// Every measured latency, for the plot.
    pub latency_us: Histogram<u64>,
}

/// A one-line description of what was run, for the plot's subtitle.
pub fn describe(runs: &[RunReport]) -> String {
    let Some(first) = runs.first() else {
        return "no runs".into();
    };
    let same = |f: fn(&RunReport) -> String| runs.iter().all(|r| f(r) == f(first));
    let mut parts = Vec::new();
    if same(|r| r.workload.clone()) {
        parts.push(format!("workload {}", first.workload));
    }
    if same(|r| r.profile.clone()) {
        parts.push(format!("profile {}", first.profile));
    }
    if same(|r| r.rate.to_string()) {
        parts.push(if first.rate == 0 {
            "closed loop".to_string()
        } else {
            format!("{} req/s open loop", first.rate)
        });
    }
    if same(|r| r.concurrency.to_string()) {
        parts.push(format!("≤{} in flight", first.concurrency));
    }
    if same(|r| r.ops.to_string()) {
        parts.push(format!("{} ops per run", first.ops));
    } else {
        let ops: u64 = runs.iter().map(|r| r.ops).sum();
        parts.push(format!("{ops} ops measured"));
    }
    parts.join(" · ")
}

/// The table of every run.
pub fn table(runs: &[CompletedRun]) -> String {
    let reports: Vec<RunReport> = runs.iter().map(|r| r.report.clone()).collect();
    table::render(&reports)
}

/// Writes `{"runs":[...]}` to `path`.
pub fn write_json(path: &Path, runs: &[CompletedRun]) -> Result<(), String> {
    let report = BenchReport {
        runs: runs.iter().map(|r| r.report.clone()).collect(),
    };
    std::fs::write(path, report.to_json())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// The SVG of every run's latency distribution.
pub fn svg(runs: &[CompletedRun]) -> String {
    let reports: Vec<RunReport> = runs.iter().map(|r| r.report.clone()).collect();
    let series: Vec<Series<'_>> = runs
        .iter()
        .map(|r| Series {
            label: table::run_title(&r.report, &reports),
            latency_us: &r.latency_us,
        })
        .collect();
    svg::render("Latency by percentile", &describe(&reports), &series)
}

/// Writes the SVG to `path`.
pub fn write_svg(path: &Path, runs: &[CompletedRun]) -> Result<(), String> {
    std::fs::write(path, svg(runs)).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::engine::RunMeasurement;
    use crate::bench::report::RunLabels;
    use crate::bench::tally::RunTally;
    use crate::bench::workload::OpReport;
    use std::time::Duration;

    fn run(hedging: &str, slow_ms: u64) -> CompletedRun {
        let mut tally = RunTally::default();
        for i in 0..100 {
            let ms = if i == 99 { slow_ms } else { 2 };
            tally.record(true, Duration::from_millis(ms), &OpReport::ok());
        }
        let m = RunMeasurement {
            completed_in_time: tally.ops,
            tally,
            measured_elapsed: Duration::from_secs(1),
            max_start_lag: Duration::ZERO,
        };
        let labels = RunLabels {
            workload: "read".into(),
            profile: "slow-primary".into(),
            hedging: hedging.into(),
            rate: 100,
            concurrency: 64,
        };
        CompletedRun {
            report: RunReport::new(labels, &m, None),
            latency_us: m.tally.latency_us.clone(),
        }
    }

    #[test]
    fn files_hold_every_run() {
        let runs = [run("off", 1200), run("50ms", 70)];
        let dir = std::env::temp_dir().join(format!("cosmos-cli-output-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let json = dir.join("runs.json");
        let svg_path = dir.join("runs.svg");
        write_json(&json, &runs).unwrap();
        write_svg(&svg_path, &runs).unwrap();
        let back: BenchReport =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        assert_eq!(back.runs.len(), 2);
        assert_eq!(back.runs[0].hedging, "off");
        let svg_text = std::fs::read_to_string(&svg_path).unwrap();
        let doc = roxmltree::Document::parse(&svg_text).unwrap();
        assert_eq!(
            doc.descendants()
                .filter(|n| n.attribute("class") == Some("series"))
                .count(),
            2
        );
        assert!(
            svg_text.contains("workload read · profile slow-primary · 100 req/s open loop"),
            "{svg_text}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn unwritable_path_is_an_error_naming_it() {
        let e = write_json(Path::new("/nonexistent-dir/x.json"), &[run("off", 5)]).unwrap_err();
        assert!(e.contains("/nonexistent-dir/x.json"), "{e}");
    }

    #[test]
    fn description_lists_what_runs_share() {
        let runs = [run("off", 5).report, run("50ms", 5).report];
        assert_eq!(describe(&runs), "workload read · profile slow-primary · 100 req/s open loop · ≤64 in flight · 100 ops per run");
        assert_eq!(describe(&[]), "no runs");
    }
}

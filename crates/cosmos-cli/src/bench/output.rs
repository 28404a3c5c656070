//! Writing a benchmark's results: the table on stdout, the JSON report and the SVG plot.

use std::path::Path;
use std::time::{Duration, SystemTime};

use hdrhistogram::serialization::interval_log::{IntervalLogWriterBuilder, Tag};
use hdrhistogram::serialization::V2DeflateSerializer;
use hdrhistogram::Histogram;

use super::meta::{rfc3339_utc, ToolInfo};
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

/// How the benchmark was started.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Invocation {
    /// When it started.
    pub started: SystemTime,
    /// Its command line, secrets redacted.
    pub command_line: Vec<String>,
}

/// The report of every run.
pub fn report(runs: &[CompletedRun], how: &Invocation) -> BenchReport {
    BenchReport {
        tool: ToolInfo::current(),
        started_at: rfc3339_utc(how.started),
        command_line: how.command_line.clone(),
        runs: runs.iter().map(|r| r.report.clone()).collect(),
    }
}

/// What each row of the table means, one line each.
pub fn legend(runs: &[CompletedRun]) -> String {
    let reports: Vec<RunReport> = runs.iter().map(|r| r.report.clone()).collect();
    table::legend(&reports)
}

/// Writes the report as JSON to `path`.
pub fn write_json(path: &Path, runs: &[CompletedRun], how: &Invocation) -> Result<(), String> {
    std::fs::write(path, report(runs, how).to_json())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// The tag of a run in the HDR log: its column title with spaces and commas as `_`.
pub fn hdr_tag(title: &str) -> String {
    title
        .chars()
        .map(|c| {
            if matches!(c, ' ' | ',' | '\r' | '\n') {
                '_'
            } else {
                c
            }
        })
        .collect()
}

/// The HDR histogram interval log of the runs (latencies in microseconds; the max column in
/// milliseconds): one interval per run, tagged, starting `began[i]` after `how.started`.
pub fn hdr_log(
    runs: &[CompletedRun],
    began: &[Duration],
    how: &Invocation,
) -> Result<Vec<u8>, String> {
    let reports: Vec<RunReport> = runs.iter().map(|r| r.report.clone()).collect();
    let mut out = Vec::new();
    let mut serializer = V2DeflateSerializer::new();
    let fail = |e: &dyn std::fmt::Display| format!("cannot write the HDR log: {e}");
    let mut log = IntervalLogWriterBuilder::new()
        .add_comment(&format!(
            "cosmos {} bench; latencies in microseconds",
            env!("CARGO_PKG_VERSION")
        ))
        .with_start_time(how.started)
        .with_base_time(how.started)
        .with_max_value_divisor(1000.0)
        .begin_log_with(&mut out, &mut serializer)
        .map_err(|e| fail(&e))?;
    for (i, run) in runs.iter().enumerate() {
        let tag = hdr_tag(&table::run_title(&run.report, &reports));
        let start = began.get(i).copied().unwrap_or_default();
        let length = Duration::from_secs_f64(run.report.duration_s.max(0.0));
        log.write_histogram(&run.latency_us, start, length, Tag::new(&tag))
            .map_err(|e| fail(&e))?;
    }
    Ok(out)
}

/// Writes the HDR histogram interval log to `path`.
pub fn write_hdr(
    path: &Path,
    runs: &[CompletedRun],
    began: &[Duration],
    how: &Invocation,
) -> Result<(), String> {
    std::fs::write(path, hdr_log(runs, began, how)?)
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
        let how = Invocation {
            started: SystemTime::UNIX_EPOCH + Duration::from_secs(1_796_172_829),
            command_line: vec!["cosmos".into(), "bench".into()],
        };
        write_json(&json, &runs, &how).unwrap();
        write_svg(&svg_path, &runs).unwrap();
        let back: BenchReport =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        assert_eq!(back.runs.len(), 2);
        assert_eq!(back.started_at, "2026-12-02T00:53:49.000Z");
        assert_eq!(back.command_line, ["cosmos", "bench"]);
        assert_eq!(back.tool.version, env!("CARGO_PKG_VERSION"));
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
        let how = Invocation {
            started: SystemTime::now(),
            command_line: Vec::new(),
        };
        let e =
            write_json(Path::new("/nonexistent-dir/x.json"), &[run("off", 5)], &how).unwrap_err();
        assert!(e.contains("/nonexistent-dir/x.json"), "{e}");
    }

    #[test]
    fn the_hdr_log_reads_back_one_tagged_interval_per_run() {
        use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
        use hdrhistogram::serialization::Deserializer;

        let runs = [run("off", 1200), run("50ms", 70)];
        let how = Invocation {
            started: SystemTime::UNIX_EPOCH + Duration::from_secs(1_796_172_829),
            command_line: Vec::new(),
        };
        let began = [Duration::from_secs(3), Duration::from_secs(30)];
        let log = hdr_log(&runs, &began, &how).unwrap();
        let text = String::from_utf8(log.clone()).unwrap();
        assert!(text.contains("#[StartTime: 1796172829.000"), "{text}");
        let mut intervals = Vec::new();
        for entry in IntervalLogIterator::new(&log) {
            if let LogEntry::Interval(h) = entry.expect("the log parses") {
                use base64::Engine;
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(h.encoded_histogram())
                    .expect("base64");
                let back: Histogram<u64> = Deserializer::new()
                    .deserialize(&mut bytes.as_slice())
                    .expect("the histogram decodes");
                intervals.push((
                    h.tag().map(|t| t.as_str().to_owned()),
                    h.start_timestamp(),
                    back,
                ));
            }
        }
        assert_eq!(intervals.len(), 2);
        assert_eq!(intervals[0].0.as_deref(), Some("hedging_off"));
        assert_eq!(intervals[1].0.as_deref(), Some("hedging_50ms"));
        assert_eq!(intervals[1].1, Duration::from_secs(30));
        for (i, (_, _, h)) in intervals.iter().enumerate() {
            assert_eq!(h.len(), runs[i].latency_us.len());
            assert_eq!(h.max(), runs[i].latency_us.max());
        }
    }

    #[test]
    fn description_lists_what_runs_share() {
        let runs = [run("off", 5).report, run("50ms", 5).report];
        assert_eq!(describe(&runs), "workload read · profile slow-primary · 100 req/s open loop · ≤64 in flight · 100 ops per run");
        assert_eq!(describe(&[]), "no runs");
    }
}

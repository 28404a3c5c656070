//! The end-of-benchmark table: one column per run, one row per figure.

use super::report::RunReport;

/// The column heading of a run: what differs between the runs shown, or the hedging setting.
pub fn run_title(run: &RunReport, all: &[RunReport]) -> String {
    let differs = |f: fn(&RunReport) -> String| all.iter().any(|r| f(r) != f(run));
    let mut parts = Vec::new();
    if differs(|r| r.workload.clone()) {
        parts.push(run.workload.clone());
    }
    if differs(|r| r.profile.clone()) {
        parts.push(run.profile.clone());
    }
    if differs(|r| r.rate.to_string()) {
        parts.push(format!("{}/s", run.rate));
    }
    parts.push(format!("hedging {}", run.hedging));
    parts.join(" ")
}

fn pct(v: f64) -> String {
    format!("{:.2}%", v * 100.0)
}

fn per_op(total: f64, ops: u64) -> String {
    if ops == 0 {
        "-".into()
    } else {
        format!("{:.2}", total / ops as f64)
    }
}

/// A latency figure; `-` for a bulk run, which measures no per-operation latency.
fn latency(r: &RunReport, ms: f64) -> String {
    if r.bulk.is_some() {
        "-".into()
    } else {
        format!("{ms:.2}")
    }
}

type Row = (&'static str, fn(&RunReport) -> String);

const ROWS: &[Row] = &[
    ("throughput (ops/s)", |r| {
        format!("{:.1}", r.throughput_ops_s)
    }),
    ("ops", |r| r.ops.to_string()),
    ("errors", |r| r.errors.to_string()),
    ("errors by status", |r| {
        if r.errors_by_status.is_empty() {
            return "-".into();
        }
        let parts: Vec<String> = r
            .errors_by_status
            .iter()
            .map(|(status, n)| format!("{status}: {n}"))
            .collect();
        parts.join(", ")
    }),
    ("p50 (ms)", |r| latency(r, r.latency_ms.p50)),
    ("p90 (ms)", |r| latency(r, r.latency_ms.p90)),
    ("p99 (ms)", |r| latency(r, r.latency_ms.p99)),
    ("p99.9 (ms)", |r| latency(r, r.latency_ms.p999)),
    ("max (ms)", |r| latency(r, r.latency_ms.max)),
    ("hedged", |r| {
        pct(if r.ops == 0 {
            0.0
        } else {
            r.hedge.hedged_ops as f64 / r.ops as f64
        })
    }),
    ("alternate won", |r| {
        pct(if r.ops == 0 {
            0.0
        } else {
            r.hedge.alternate_won as f64 / r.ops as f64
        })
    }),
    ("budget denied", |r| {
        pct(if r.ops == 0 {
            0.0
        } else {
            r.hedge.budget_denied_ops as f64 / r.ops as f64
        })
    }),
    ("extra requests", |r| pct(r.hedge.extra_requests_fraction)),
    ("primary over threshold", |r| {
        pct(r.hedge.primary_over_threshold_fraction)
    }),
    ("RU/op caller-visible", |r| {
        per_op(r.ru.caller_visible, r.ops)
    }),
    ("RU/op total", |r| per_op(r.ru.total, r.ops)),
];

const PATCH_ROWS: &[Row] = &[
    ("patch strategy", |r| {
        r.patch
            .as_ref()
            .and_then(|p| p.strategy.clone())
            .unwrap_or_else(|| "-".into())
    }),
    ("patch successful", |r| {
        r.patch
            .as_ref()
            .map_or("-".into(), |p| p.successful.to_string())
    }),
    ("patch failed 412", |r| {
        r.patch
            .as_ref()
            .map_or("-".into(), |p| p.failed_412.to_string())
    }),
    ("patch failed other", |r| {
        r.patch
            .as_ref()
            .map_or("-".into(), |p| p.failed_other.to_string())
    }),
    ("final counter", |r| {
        r.patch.as_ref().map_or("-".into(), |p| {
            p.final_counter.map_or("unread".into(), |c| c.to_string())
        })
    }),
    ("patch attempts", |r| {
        r.patch.as_ref().map_or("-".into(), |p| {
            p.attempts_histogram
                .iter()
                .map(|(k, v)| format!("{k}:{v}"))
                .collect::<Vec<_>>()
                .join(" ")
        })
    }),
];

fn bulk_figure(r: &RunReport, f: fn(&super::report::BulkReport) -> String) -> String {
    r.bulk.as_ref().map_or("-".into(), f)
}

const BULK_ROWS: &[Row] = &[
    ("items/s", |r| {
        bulk_figure(r, |b| format!("{:.1}", b.items_per_second))
    }),
    ("RU/item", |r| {
        bulk_figure(r, |b| format!("{:.2}", b.ru_per_item))
    }),
    ("items created", |r| {
        bulk_figure(r, |b| b.created.to_string())
    }),
    ("batches", |r| bulk_figure(r, |b| b.batches.to_string())),
    ("throttled (429)", |r| {
        bulk_figure(r, |b| b.throttled.to_string())
    }),
];

fn vector_figure(r: &RunReport, f: fn(&super::report::VectorReport) -> String) -> String {
    r.vector.as_ref().map_or("-".into(), f)
}

const VECTOR_ROWS: &[Row] = &[
    ("vectors", |r| vector_figure(r, |v| v.items.to_string())),
    ("dimensions", |r| {
        vector_figure(r, |v| v.dimensions.to_string())
    }),
    ("top k", |r| vector_figure(r, |v| v.top.to_string())),
    ("short results", |r| {
        vector_figure(r, |v| v.short_results.to_string())
    }),
];

fn priority_figure(r: &RunReport, f: fn(&super::report::PriorityReport) -> String) -> String {
    r.priority.as_ref().map_or("-".into(), f)
}

const PRIORITY_ROWS: &[Row] = &[
    ("background load priority", |r| {
        priority_figure(r, |p| p.load.clone())
    }),
    ("reads met a 429", |r| {
        priority_figure(r, |p| p.reads_met_429.to_string())
    }),
    ("load writes/s", |r| {
        priority_figure(r, |p| format!("{:.1}", p.load_writes_per_second))
    }),
];

/// What each row means, one line each, printed under the table.
const LEGEND: &[(&str, &str)] = &[
    (
        "throughput (ops/s)",
        "operations completed within the measured window, per second",
    ),
    ("ops", "operations measured (warm-up excluded)"),
    ("errors", "measured operations that failed"),
    (
        "errors by status",
        "failures by status/sub-status; no_response when no answer came",
    ),
    (
        "p50 (ms)",
        "half of the operations took at most this, from their scheduled start",
    ),
    ("p90 (ms)", "90% of the operations took at most this"),
    ("p99 (ms)", "99% of the operations took at most this"),
    ("p99.9 (ms)", "99.9% of the operations took at most this"),
    ("max (ms)", "the slowest operation"),
    ("hedged", "operations whose second-region attempt was sent"),
    (
        "alternate won",
        "operations answered by that second-region attempt",
    ),
    (
        "budget denied",
        "operations whose hedge the hedge budget refused",
    ),
    (
        "extra requests",
        "requests beyond one per operation (hedges and retries), per operation",
    ),
    (
        "primary over threshold",
        "operations whose first-region attempt outlasted the hedging threshold",
    ),
    (
        "RU/op caller-visible",
        "request units per operation, as the caller saw them (the winning attempt)",
    ),
    (
        "RU/op total",
        "request units per operation over every request sent, losing hedges included",
    ),
    (
        "patch strategy",
        "how each PATCH ran: rmw (read-modify-write), native or auto",
    ),
    (
        "patch successful",
        "patches that succeeded (warm-up included)",
    ),
    (
        "patch failed 412",
        "patches that still met a changed etag after their last attempt",
    ),
    ("patch failed other", "patches that failed any other way"),
    (
        "final counter",
        "the shared counter read back after the run",
    ),
    (
        "patch attempts",
        "attempts:operations, how many patches took each number of attempts",
    ),
    (
        "items/s",
        "items created per second over the whole bulk run",
    ),
    ("RU/item", "request units per item given"),
    ("items created", "items the service answered 201 for"),
    ("batches", "batch requests answered"),
    ("throttled (429)", "throttled answers seen (and retried)"),
    (
        "background load priority",
        "the priority of the writes saturating the container beside the measured High reads",
    ),
    (
        "reads met a 429",
        "measured reads (warm-up included) answered 429 on an attempt, retried after the wait",
    ),
    (
        "load writes/s",
        "documents the background load created per second",
    ),
    (
        "vectors",
        "embeddings in the searched container (each operation is one top-k search over all)",
    ),
    ("dimensions", "numbers in each embedding"),
    ("top k", "results each search asked for"),
    (
        "short results",
        "searches (warm-up included) that returned fewer than min(top k, vectors) results",
    ),
    (
        "acknowledged writes",
        "writes the service acknowledged, every one read back after the run",
    ),
    ("lost writes", "acknowledged writes missing when read back"),
    (
        "phantom writes",
        "writes that failed yet are there when read back",
    ),
    (
        "patch double-applied",
        "increments that landed more often than they were acknowledged",
    ),
    (
        "ambiguous errors",
        "writes whose outcome the driver could not tell (then read back)",
    ),
    ("write errors", "writes that failed"),
    ("read errors", "reads and queries that failed"),
    ("unverified", "writes that could not be read back"),
    (
        "max write unavailable",
        "the longest time without an acknowledged write, and when it began",
    ),
    (
        "429 storm: requests / operation",
        "requests sent per operation during the 429 storm",
    ),
];

/// The one-line explanation of a row.
pub fn explain(label: &str) -> Option<&'static str> {
    LEGEND.iter().find(|(l, _)| *l == label).map(|(_, e)| *e)
}

/// The legend of the rows `render` shows for `runs`, one line each, ending with a newline.
pub fn legend(runs: &[RunReport]) -> String {
    let rows = table_rows(runs);
    let width = rows.iter().map(|(l, _)| l.len()).max().unwrap_or(0);
    let mut out = String::new();
    for (label, _) in &rows {
        let text = explain(label).unwrap_or("");
        out.push_str(&format!("  {label:width$}  {text}\n"));
    }
    out
}

/// Every row shown for `runs`: its label and one cell per run.
fn table_rows(runs: &[RunReport]) -> Vec<(&'static str, Vec<String>)> {
    let mut rows: Vec<Row> = ROWS.to_vec();
    if runs.iter().any(|r| r.patch.is_some()) {
        rows.extend_from_slice(PATCH_ROWS);
    }
    if runs.iter().any(|r| r.bulk.is_some()) {
        rows.extend_from_slice(BULK_ROWS);
    }
    if runs.iter().any(|r| r.vector.is_some()) {
        rows.extend_from_slice(VECTOR_ROWS);
    }
    if runs.iter().any(|r| r.priority.is_some()) {
        rows.extend_from_slice(PRIORITY_ROWS);
    }
    let mut rows: Vec<(&'static str, Vec<String>)> = rows
        .iter()
        .map(|(label, f)| (*label, runs.iter().map(f).collect()))
        .collect();
    if let Some(first) = runs.iter().find_map(|r| r.chaos.as_ref()) {
        for (i, (label, _)) in first.rows().into_iter().enumerate() {
            let cells = runs
                .iter()
                .map(|r| {
                    r.chaos
                        .as_ref()
                        .and_then(|c| c.rows().into_iter().nth(i))
                        .map_or("-".into(), |(_, v)| v)
                })
                .collect();
            rows.push((label, cells));
        }
    }
    rows
}

/// The table, runs side by side, ending with a newline.
pub fn render(runs: &[RunReport]) -> String {
    let titles: Vec<String> = runs.iter().map(|r| run_title(r, runs)).collect();
    let rows = table_rows(runs);
    let cells: Vec<&Vec<String>> = rows.iter().map(|(_, c)| c).collect();
    let label_w = rows.iter().map(|(l, _)| l.len()).max().unwrap_or(0);
    let col_w: Vec<usize> = (0..runs.len())
        .map(|i| {
            cells
                .iter()
                .map(|c| c[i].len())
                .chain([titles[i].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    out.push_str(&format!("{:label_w$}", ""));
    for (t, w) in titles.iter().zip(&col_w) {
        out.push_str(&format!("  {t:>w$}"));
    }
    out.push('\n');
    for ((label, _), row) in rows.iter().zip(&cells) {
        out.push_str(&format!("{label:label_w$}"));
        for (c, w) in row.iter().zip(&col_w) {
            out.push_str(&format!("  {c:>w$}"));
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::report::{HedgeReport, LatencyReport, PatchReport, RuReport};

    fn run(hedging: &str, p999: f64) -> RunReport {
        RunReport {
            workload: "read".into(),
            profile: "slow-primary".into(),
            hedging: hedging.into(),
            rate: 500,
            concurrency: 64,
            ops: 10_000,
            errors: 0,
            errors_by_status: Default::default(),
            duration_s: 20.0,
            throughput_ops_s: 500.0,
            latency_ms: LatencyReport {
                p50: 2.5,
                p90: 23.0,
                p99: 900.0,
                p999,
                max: 1500.0,
            },
            latency_percentiles_ms: Vec::new(),
            hedge: HedgeReport {
                hedged_ops: 300,
                alternate_won: 290,
                extra_requests_fraction: 0.03,
                primary_over_threshold_fraction: 0.031,
                budget_denied_ops: 0,
            },
            ru: RuReport {
                caller_visible: 10_000.0,
                total: 10_300.0,
            },
            patch: None,
            region_reads_per_second: None,
            bulk: None,
            chaos: None,
            vector: None,
            priority: None,
        }
    }

    #[test]
    fn runs_are_columns_titled_by_what_differs() {
        let runs = [run("off", 1400.0), run("50ms", 71.5)];
        let t = render(&runs);
        let lines: Vec<&str> = t.lines().collect();
        assert!(
            lines[0].contains("hedging off") && lines[0].contains("hedging 50ms"),
            "{t}"
        );
        assert!(
            !lines[0].contains("read"),
            "same workload is not repeated: {t}"
        );
        let p999 = lines.iter().find(|l| l.starts_with("p99.9 (ms)")).unwrap();
        assert!(p999.contains("1400.00") && p999.contains("71.50"), "{p999}");
        let hedged = lines.iter().find(|l| l.starts_with("hedged")).unwrap();
        assert!(hedged.contains("3.00%"), "{hedged}");
        assert!(t.contains("RU/op total") && t.contains("1.03"), "{t}");
        assert!(!t.contains("patch"), "{t}");
        // Every line has the same width, so columns line up.
        assert!(lines.iter().all(|l| l.len() == lines[0].len()), "{t}");
    }

    #[test]
    fn errors_are_shown_by_status() {
        let mut failing = run("50ms", 71.5);
        failing.errors = 3;
        failing.errors_by_status = [("404/1002".to_string(), 2), ("no_response".to_string(), 1)]
            .into_iter()
            .collect();
        let t = render(&[run("off", 1400.0), failing]);
        let row = t
            .lines()
            .find(|l| l.starts_with("errors by status"))
            .unwrap();
        assert!(row.contains(" -  ") || row.contains(" - "), "{row}");
        assert!(row.ends_with("404/1002: 2, no_response: 1"), "{row}");
    }

    #[test]
    fn every_row_is_explained_in_one_line() {
        let mut patch = run("off", 10.0);
        patch.patch = Some(PatchReport {
            strategy: None,
            successful: 1,
            failed_412: 0,
            failed_other: 0,
            final_counter: Some(1),
            attempts_histogram: Default::default(),
        });
        let runs = [run("off", 1400.0), patch];
        let (t, legend) = (render(&runs), legend(&runs));
        let rows = t.lines().count() - 1;
        assert_eq!(legend.lines().count(), rows, "{legend}");
        for line in legend.lines() {
            let label = line.trim_start();
            let (label, text) = LEGEND
                .iter()
                .find(|(l, _)| label.starts_with(l) && label[l.len()..].starts_with("  "))
                .unwrap_or_else(|| panic!("unexplained row: {line}"));
            assert!(!text.is_empty(), "{label}");
        }
        for (label, _) in ROWS
            .iter()
            .chain(PATCH_ROWS)
            .chain(BULK_ROWS)
            .chain(VECTOR_ROWS)
            .chain(PRIORITY_ROWS)
        {
            assert!(explain(label).is_some(), "{label} has no legend line");
        }
    }

    #[test]
    fn patch_rows_appear_for_patch_runs() {
        let mut r = run("off", 10.0);
        r.workload = "patch-counter".into();
        r.patch = Some(PatchReport {
            strategy: Some("native".into()),
            successful: 790,
            failed_412: 10,
            failed_other: 0,
            final_counter: Some(790),
            attempts_histogram: [(1, 500), (2, 290)].into_iter().collect(),
        });
        let t = render(&[r]);
        assert!(t.contains("final counter") && t.contains("790"), "{t}");
        assert!(t.contains("1:500 2:290"), "{t}");
        assert!(t.contains("patch strategy") && t.contains("native"), "{t}");
    }

    #[test]
    fn bulk_rows_appear_for_bulk_runs_without_latencies() {
        let mut r = run("off", 10.0);
        r.workload = "bulk-insert".into();
        r.bulk = Some(crate::bench::report::BulkReport {
            items: 1000,
            created: 1000,
            items_per_second: 2500.5,
            ru_per_item: 5.0,
            ru_total: 5000.0,
            batches: 10,
            throttled: 3,
            range_refreshes: 0,
            container_throughput: None,
            enforce_throughput: false,
        });
        let t = render(&[r, run("50ms", 71.5)]);
        let row = |name: &str| {
            t.lines()
                .find(|l| l.starts_with(name))
                .unwrap_or_else(|| panic!("no {name} row: {t}"))
                .split_whitespace()
                .rev()
                .take(2)
                .collect::<Vec<_>>()
        };
        assert_eq!(row("items/s"), ["-", "2500.5"], "{t}");
        assert_eq!(row("RU/item"), ["-", "5.00"], "{t}");
        assert_eq!(row("throttled (429)"), ["-", "3"], "{t}");
        assert_eq!(row("p50 (ms)"), ["2.50", "-"], "{t}");
    }

    #[test]
    fn vector_rows_appear_for_vector_runs() {
        let mut r = run("off", 10.0);
        r.workload = "vector".into();
        r.vector = Some(crate::bench::report::VectorReport {
            items: 5000,
            dimensions: 128,
            top: 10,
            short_results: 2,
        });
        let t = render(&[r.clone(), run("50ms", 71.5)]);
        let row = |name: &str| {
            t.lines()
                .find(|l| l.starts_with(name))
                .unwrap_or_else(|| panic!("no {name} row: {t}"))
                .split_whitespace()
                .rev()
                .take(2)
                .collect::<Vec<_>>()
        };
        assert_eq!(row("vectors"), ["-", "5000"], "{t}");
        assert_eq!(row("dimensions"), ["-", "128"], "{t}");
        assert_eq!(row("top k"), ["-", "10"], "{t}");
        assert_eq!(row("short results"), ["-", "2"], "{t}");
        assert_eq!(
            legend(&[r]).lines().count(),
            render(&[run("off", 1.0)]).lines().count() + 3
        );
    }
}

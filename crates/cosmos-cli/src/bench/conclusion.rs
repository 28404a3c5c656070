//! The one line `cosmos bench` ends with: what hedging did to the tail, at what cost.

use super::report::RunReport;

/// The hedging label of a run without hedging.
const OFF: &str = "off";

/// One line comparing each hedged run with the run without hedging (when there is one), or
/// saying what a single run measured. `None` when there is no run.
pub fn conclusion(runs: &[RunReport]) -> Option<String> {
    let baseline = runs.iter().find(|r| r.hedging == OFF);
    let hedged: Vec<&RunReport> = runs.iter().filter(|r| r.hedging != OFF).collect();
    let parts: Vec<String> = match (baseline, hedged.as_slice()) {
        (_, []) => runs.iter().map(alone).collect(),
        (None, hedged) => hedged.iter().map(|r| alone(r)).collect(),
        (Some(off), hedged) => hedged.iter().map(|r| against(r, off)).collect(),
    };
    if parts.is_empty() {
        return None;
    }
    let errors: u64 = runs.iter().map(|r| r.errors).sum();
    let tail = if errors == 0 {
        String::new()
    } else {
        format!(" ({errors} operations failed: see the table)")
    };
    Some(format!("conclusion: {}{tail}.", parts.join("; ")))
}

fn alone(run: &RunReport) -> String {
    let hedging = if run.hedging == OFF {
        "without hedging".to_owned()
    } else {
        format!("with hedging {}", run.hedging)
    };
    format!(
        "{hedging}, p99 {} and p99.9 {}{}",
        ms(run.latency_ms.p99),
        ms(run.latency_ms.p999),
        cost(run)
    )
}

fn against(run: &RunReport, off: &RunReport) -> String {
    let (p99, base) = (run.latency_ms.p99, off.latency_ms.p99);
    let change = if p99 > 0.0 && base >= p99 {
        format!("{:.1}x lower", base / p99)
    } else if base > 0.0 && p99 > base {
        format!("{:.1}x higher", p99 / base)
    } else {
        "unchanged".to_owned()
    };
    format!(
        "hedging {} put p99 at {} against {} without ({change}){}",
        run.hedging,
        ms(p99),
        ms(base),
        cost(run)
    )
}

fn cost(run: &RunReport) -> String {
    let extra = run.hedge.extra_requests_fraction;
    if run.hedging == OFF {
        String::new()
    } else {
        format!(", for {:.2}% extra requests", extra * 100.0)
    }
}

fn ms(v: f64) -> String {
    format!("{v:.2} ms")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(hedging: &str, p99: f64, p999: f64, extra: f64, errors: u64) -> RunReport {
        serde_json::from_value(serde_json::json!({
            "workload": "read", "profile": "slow-primary", "hedging": hedging, "rate": 500,
            "concurrency": 64, "ops": 10000, "errors": errors, "errors_by_status": {},
            "duration_s": 20.0, "throughput_ops_s": 500.0,
            "latency_ms": {"p50": 4.6, "p90": 7.2, "p99": p99, "p999": p999, "max": 1500.0},
            "latency_percentiles_ms": [],
            "hedge": {"hedged_ops": 311, "alternate_won": 311, "extra_requests_fraction": extra,
                      "primary_over_threshold_fraction": 0.0311, "budget_denied_ops": 0},
            "ru": {"caller_visible": 10000.0, "total": 10311.0}
        }))
        .unwrap()
    }

    #[test]
    fn one_line_for_each_shape_of_runs() {
        let off = run("off", 1316.86, 1479.68, 0.0, 0);
        let fixed = run("50ms", 75.33, 78.66, 0.0311, 0);
        let adaptive = run("adaptive", 29.81, 31.34, 0.0331, 0);
        let table: Vec<(Vec<RunReport>, Option<&str>)> = vec![
            (vec![], None),
            (
                vec![off.clone(), fixed.clone()],
                Some("conclusion: hedging 50ms put p99 at 75.33 ms against 1316.86 ms without (17.5x lower), for 3.11% extra requests."),
            ),
            (
                vec![off.clone(), fixed.clone(), adaptive],
                Some("conclusion: hedging 50ms put p99 at 75.33 ms against 1316.86 ms without (17.5x lower), for 3.11% extra requests; hedging adaptive put p99 at 29.81 ms against 1316.86 ms without (44.2x lower), for 3.31% extra requests."),
            ),
            (
                vec![fixed.clone()],
                Some("conclusion: with hedging 50ms, p99 75.33 ms and p99.9 78.66 ms, for 3.11% extra requests."),
            ),
            (
                vec![off.clone()],
                Some("conclusion: without hedging, p99 1316.86 ms and p99.9 1479.68 ms."),
            ),
            (
                vec![run("off", 10.0, 12.0, 0.0, 0), run("50ms", 20.0, 22.0, 0.01, 3)],
                Some("conclusion: hedging 50ms put p99 at 20.00 ms against 10.00 ms without (2.0x higher), for 1.00% extra requests (3 operations failed: see the table)."),
            ),
        ];
        for (runs, want) in table {
            assert_eq!(conclusion(&runs).as_deref(), want);
        }
    }
}

//! `--hedging off|on|<threshold>|adaptive[:pQ][:MIN..MAX]`.

use std::time::Duration;

use cosmos_driver::hedging::{AdaptiveThreshold, HedgeBudgetConfig};

use super::duration::{format_duration, parse_duration};

/// The quantile of `--hedging adaptive`.
pub const ADAPTIVE_QUANTILE: f64 = 0.95;
/// The lowest threshold of `--hedging adaptive`.
pub const ADAPTIVE_MIN: Duration = Duration::from_millis(5);
/// The highest threshold of `--hedging adaptive`, and the one used while a region has too few
/// recent latencies (a region the breaker moved reads away from has none when it is probed).
pub const ADAPTIVE_MAX: Duration = Duration::from_millis(100);

/// What hedging a benchmark run uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HedgingChoice {
    /// Hedging disabled.
    Off,
    /// The driver's default threshold.
    On,
    /// Hedging at this threshold.
    Threshold(Duration),
    /// Hedging at an adaptive threshold: a quantile of the primary region's recent latencies.
    Adaptive(AdaptiveThreshold),
}

impl HedgingChoice {
    /// The label used in the table and the JSON: `off`, `on`, e.g. `50ms`, or `adaptive` (with
    /// what differs from its defaults, e.g. `adaptive:p99` or `adaptive:p95:10ms..200ms`).
    pub fn label(self) -> String {
        match self {
            HedgingChoice::Off => "off".into(),
            HedgingChoice::On => "on".into(),
            HedgingChoice::Threshold(d) => format_duration(d),
            HedgingChoice::Adaptive(a) => {
                let mut label = String::from("adaptive");
                let default_bounds = a.min() == ADAPTIVE_MIN && a.max() == ADAPTIVE_MAX;
                if a.quantile() != ADAPTIVE_QUANTILE || !default_bounds {
                    label.push(':');
                    label.push_str(&a.label());
                }
                if !default_bounds {
                    label.push_str(&format!(
                        ":{}..{}",
                        format_duration(a.min()),
                        format_duration(a.max())
                    ));
                }
                label
            }
        }
    }
}

/// Parses what follows `adaptive`: nothing, `:pQ`, `:MIN..MAX` or `:pQ:MIN..MAX`.
fn parse_adaptive(rest: &str) -> Result<AdaptiveThreshold, String> {
    let usage = "--hedging adaptive takes an optional percentile and bounds, e.g. adaptive, \
                 adaptive:p99, adaptive:p95:10ms..500ms";
    let mut quantile = ADAPTIVE_QUANTILE;
    let (mut min, mut max) = (ADAPTIVE_MIN, ADAPTIVE_MAX);
    let parts: Vec<&str> = if rest.is_empty() {
        Vec::new()
    } else {
        match rest.strip_prefix(':') {
            Some(r) => r.split(':').collect(),
            None => return Err(usage.into()),
        }
    };
    if parts.len() > 2 {
        return Err(usage.into());
    }
    for part in parts {
        if let Some(p) = part.strip_prefix('p') {
            let percent: f64 = p
                .parse()
                .map_err(|_| format!("{part:?} is not a percentile such as p95 or p99.9"))?;
            if !(percent > 0.0 && percent < 100.0) {
                return Err(format!(
                    "{part:?}: the percentile must lie between 0 and 100"
                ));
            }
            quantile = percent / 100.0;
        } else if let Some((lo, hi)) = part.split_once("..") {
            min = parse_duration(lo)?;
            max = parse_duration(hi)?;
        } else {
            return Err(format!(
                "{part:?} is neither a percentile nor bounds: {usage}"
            ));
        }
    }
    AdaptiveThreshold::new(quantile, min, max).ok_or_else(|| {
        format!(
            "adaptive bounds {}..{} must be non-zero with the lower one first",
            format_duration(min),
            format_duration(max)
        )
    })
}

/// Hedges allowed per second whatever the traffic, with `--hedge-budget`.
pub const BUDGET_FLOOR_PER_SECOND: u32 = 2;
/// The most tokens the budget saves up, with `--hedge-budget`.
pub const BUDGET_MAX_BALANCE: u32 = 20;

/// The `--hedge-budget` setting: none, or the budget's settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BudgetChoice(pub Option<HedgeBudgetConfig>);

/// Parses `--hedge-budget`: `off`, or the share of reads that may hedge (`10%` or `0.1`), with a
/// floor of [`BUDGET_FLOOR_PER_SECOND`] hedges per second and at most [`BUDGET_MAX_BALANCE`] saved.
pub fn parse_budget(text: &str) -> Result<BudgetChoice, String> {
    parse_budget_config(text).map(BudgetChoice)
}

fn parse_budget_config(text: &str) -> Result<Option<HedgeBudgetConfig>, String> {
    let t = text.trim();
    if matches!(t.to_ascii_lowercase().as_str(), "off" | "none" | "no") {
        return Ok(None);
    }
    let ratio = match t.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|p| p / 100.0),
        None => t.parse::<f64>(),
    }
    .map_err(|_| {
        format!("--hedge-budget takes off or a share of reads such as 10% or 0.1, not {t:?}")
    })?;
    HedgeBudgetConfig::new(ratio, BUDGET_FLOOR_PER_SECOND, BUDGET_MAX_BALANCE)
        .map(Some)
        .ok_or_else(|| format!("--hedge-budget {t}: the share must lie between 0% and 100%"))
}

/// The run label of a hedging choice with its budget: e.g. `adaptive` or `50ms, budget 10%`.
pub fn run_label(hedging: HedgingChoice, budget: Option<HedgeBudgetConfig>) -> String {
    match (hedging, budget) {
        (HedgingChoice::Off, _) | (_, None) => hedging.label(),
        (_, Some(b)) => format!(
            "{}, budget {}%",
            hedging.label(),
            (b.ratio() * 1000.0).round() / 10.0
        ),
    }
}

/// Parses `off`, `on`, a threshold such as `50ms`, or `adaptive` with an optional percentile and
/// bounds (`adaptive:p99`, `adaptive:p95:10ms..500ms`).
pub fn parse_hedging(text: &str) -> Result<HedgingChoice, String> {
    let lower = text.trim().to_ascii_lowercase();
    if let Some(rest) = lower.strip_prefix("adaptive") {
        return parse_adaptive(rest).map(HedgingChoice::Adaptive);
    }
    match lower.as_str() {
        "off" | "false" | "no" | "none" => Ok(HedgingChoice::Off),
        "on" | "true" | "yes" => Ok(HedgingChoice::On),
        _ => match parse_duration(text) {
            Ok(d) if d.is_zero() => {
                Err("a hedging threshold of zero is not allowed; use `off` to disable".into())
            }
            Ok(d) => Ok(HedgingChoice::Threshold(d)),
            Err(e) => Err(format!(
                "--hedging takes off, on, a threshold such as 50ms, or adaptive: {e}"
            )),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn choices() {
        assert_eq!(parse_hedging("off"), Ok(HedgingChoice::Off));
        assert_eq!(parse_hedging("ON"), Ok(HedgingChoice::On));
        assert_eq!(
            parse_hedging("50ms"),
            Ok(HedgingChoice::Threshold(Duration::from_millis(50)))
        );
        assert!(parse_hedging("0ms").unwrap_err().contains("zero"));
        assert!(parse_hedging("sometimes")
            .unwrap_err()
            .contains("off, on, a threshold such as 50ms, or adaptive"));
        assert_eq!(
            HedgingChoice::Threshold(Duration::from_millis(50)).label(),
            "50ms"
        );
        assert_eq!(HedgingChoice::Off.label(), "off");
    }

    #[test]
    fn adaptive_choices() {
        let ms = Duration::from_millis;
        // (text, quantile, min ms, max ms, label)
        let ok: &[(&str, f64, u64, u64, &str)] = &[
            ("adaptive", 0.95, 5, 100, "adaptive"),
            ("Adaptive", 0.95, 5, 100, "adaptive"),
            ("adaptive:p99", 0.99, 5, 100, "adaptive:p99"),
            ("adaptive:p99.9", 0.999, 5, 100, "adaptive:p99.9"),
            ("adaptive:p95", 0.95, 5, 100, "adaptive"),
            (
                "adaptive:p90:10ms..200ms",
                0.9,
                10,
                200,
                "adaptive:p90:10ms..200ms",
            ),
            ("adaptive:1ms..1s", 0.95, 1, 1000, "adaptive:p95:1ms..1s"),
        ];
        for &(text, q, min, max, label) in ok {
            let choice = parse_hedging(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            let HedgingChoice::Adaptive(a) = choice else {
                panic!("{text}: {choice:?}");
            };
            assert_eq!(
                (a.quantile(), a.min(), a.max()),
                (q, ms(min), ms(max)),
                "{text}"
            );
            assert_eq!(choice.label(), label, "{text}");
            assert_eq!(
                parse_hedging(label),
                Ok(choice),
                "the label {label} reads back"
            );
        }
        // (text, part of the error)
        let bad: &[(&str, &str)] = &[
            ("adaptive:p100", "between 0 and 100"),
            ("adaptive:p0", "between 0 and 100"),
            ("adaptive:pxx", "not a percentile"),
            ("adaptive:fast", "neither a percentile nor bounds"),
            ("adaptive:200ms..10ms", "lower one first"),
            ("adaptive:0ms..10ms", "non-zero"),
            ("adaptive:p9:1ms..2ms:x", "optional percentile"),
            ("adaptivep95", "optional percentile"),
            ("adaptive:1ms..", "not a duration"),
        ];
        for &(text, want) in bad {
            let err = parse_hedging(text).unwrap_err();
            assert!(err.contains(want), "{text}: {err}");
        }
    }

    #[test]
    fn budgets() {
        assert_eq!(parse_budget("off"), Ok(BudgetChoice(None)));
        for (text, ratio) in [("10%", 0.1), ("0.1", 0.1), (" 5 % ", 0.05), ("0%", 0.0)] {
            let b = parse_budget(text)
                .unwrap()
                .0
                .unwrap_or_else(|| panic!("{text}"));
            assert!((b.ratio() - ratio).abs() < 1e-12, "{text}");
            assert_eq!(b.min_per_second(), BUDGET_FLOOR_PER_SECOND);
        }
        assert!(parse_budget("150%")
            .unwrap_err()
            .contains("between 0% and 100%"));
        assert!(parse_budget("lots").unwrap_err().contains("10% or 0.1"));
        let b = parse_budget("10%").unwrap().0;
        assert_eq!(
            run_label(HedgingChoice::Threshold(Duration::from_millis(50)), b),
            "50ms, budget 10%"
        );
        assert_eq!(run_label(HedgingChoice::Off, b), "off");
        assert_eq!(run_label(HedgingChoice::On, None), "on");
    }
}

//! Running totals of one benchmark run: the latency histogram and the per-operation facts.

use std::collections::BTreeMap;
use std::time::Duration;

use hdrhistogram::Histogram;

use super::workload::{OpOutcome, OpReport};

/// Lowest latency the histogram tells apart: 1 µs.
pub const LATENCY_LOW_US: u64 = 1;
/// Highest latency recorded exactly: 60 s (longer ones are recorded as 60 s).
pub const LATENCY_HIGH_US: u64 = 60_000_000;
const SIGNIFICANT_DIGITS: u8 = 3;

/// A fresh latency histogram in microseconds, 1 µs to 60 s, three significant digits.
pub fn latency_histogram() -> Histogram<u64> {
    match Histogram::new_with_bounds(LATENCY_LOW_US, LATENCY_HIGH_US, SIGNIFICANT_DIGITS) {
        Ok(h) => h,
        // The bounds are constants that hdrhistogram accepts; this arm is unreachable in practice.
        Err(e) => unreachable!("latency histogram bounds rejected: {e}"),
    }
}

/// Outcomes of PATCH operations, counted over the whole run (warm-up included) so that the final
/// counter read back can be compared with the number of successful patches.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PatchTally {
    /// Patches that returned success.
    pub successful: u64,
    /// Patches that failed with 412 (attempts exhausted).
    pub failed_412: u64,
    /// Patches that failed any other way.
    pub failed_other: u64,
    /// Number of operations by attempts taken.
    pub attempts: BTreeMap<u32, u64>,
}

impl PatchTally {
    fn record(&mut self, outcome: OpOutcome, attempts: u32) {
        match outcome {
            OpOutcome::Ok => self.successful += 1,
            OpOutcome::Failed {
                status: Some(412), ..
            } => self.failed_412 += 1,
            OpOutcome::Failed { .. } => self.failed_other += 1,
        }
        *self.attempts.entry(attempts).or_insert(0) += 1;
    }

    /// True when no PATCH operation was counted.
    pub fn is_empty(&self) -> bool {
        self.successful + self.failed_412 + self.failed_other == 0
    }
}

/// Totals of the measured operations of one run.
#[derive(Clone, Debug)]
pub struct RunTally {
    /// Latency of every measured operation (successes and failures), in microseconds.
    pub latency_us: Histogram<u64>,
    /// Measured operations completed.
    pub ops: u64,
    /// Measured operations that failed.
    pub errors: u64,
    /// Measured operations that failed, by `status/sub_status` (`no_response` without an answer).
    pub errors_by_status: BTreeMap<String, u64>,
    /// Measured operations whose alternate attempt was sent.
    pub hedged: u64,
    /// Measured operations answered by the alternate.
    pub alternate_won: u64,
    /// Measured operations whose primary attempt exceeded the hedge threshold.
    pub primary_over_threshold: u64,
    /// Requests beyond one per measured operation.
    pub extra_requests: u64,
    /// Request charge the caller saw, summed.
    pub ru_caller_visible: f64,
    /// Request charge of every request, summed.
    pub ru_total: f64,
    /// PATCH outcomes over the whole run, warm-up included.
    pub patch: PatchTally,
}

impl Default for RunTally {
    fn default() -> Self {
        Self {
            latency_us: latency_histogram(),
            ops: 0,
            errors: 0,
            errors_by_status: BTreeMap::new(),
            hedged: 0,
            alternate_won: 0,
            primary_over_threshold: 0,
            extra_requests: 0,
            ru_caller_visible: 0.0,
            ru_total: 0.0,
            patch: PatchTally::default(),
        }
    }
}

impl RunTally {
    /// Adds one operation. Warm-up operations (`measured` false) only feed the PATCH totals.
    pub fn record(&mut self, measured: bool, latency: Duration, report: &OpReport) {
        if let Some(attempts) = report.patch_attempts {
            self.patch.record(report.outcome, attempts);
        }
        if !measured {
            return;
        }
        let us = u64::try_from(latency.as_micros()).unwrap_or(u64::MAX);
        self.latency_us
            .saturating_record(us.clamp(LATENCY_LOW_US, LATENCY_HIGH_US));
        self.ops += 1;
        if let OpOutcome::Failed { status, sub_status } = report.outcome {
            self.errors += 1;
            *self
                .errors_by_status
                .entry(error_key(status, sub_status))
                .or_insert(0) += 1;
        }
        self.hedged += u64::from(report.hedge.alternate_sent);
        self.alternate_won += u64::from(report.hedge.alternate_won);
        self.primary_over_threshold += u64::from(report.hedge.primary_over_threshold);
        self.extra_requests += u64::from(report.extra_requests);
        self.ru_caller_visible += report.ru_caller_visible;
        self.ru_total += report.ru_total;
    }

    /// Latency at quantile `q` (0..=1) in milliseconds; 0 when nothing was recorded.
    pub fn latency_ms_at(&self, q: f64) -> f64 {
        if self.latency_us.is_empty() {
            return 0.0;
        }
        self.latency_us.value_at_quantile(q) as f64 / 1000.0
    }

    /// Highest latency recorded, in milliseconds.
    pub fn max_latency_ms(&self) -> f64 {
        if self.latency_us.is_empty() {
            return 0.0;
        }
        self.latency_us.max() as f64 / 1000.0
    }

    /// `count` as a fraction of the measured operations (0 when there were none).
    pub fn fraction(&self, count: u64) -> f64 {
        if self.ops == 0 {
            0.0
        } else {
            count as f64 / self.ops as f64
        }
    }
}

/// How a failure is counted: `404/1002`, `503/0`, or `no_response` when no answer came.
pub fn error_key(status: Option<u16>, sub_status: u32) -> String {
    match status {
        Some(status) => format!("{status}/{sub_status}"),
        None => "no_response".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::workload::HedgeFacts;

    #[test]
    fn warmup_only_feeds_patch_totals() {
        let mut t = RunTally::default();
        let mut r = OpReport::ok();
        r.patch_attempts = Some(2);
        t.record(false, Duration::from_millis(5), &r);
        assert_eq!(t.ops, 0);
        assert!(t.latency_us.is_empty());
        assert_eq!(t.patch.successful, 1);
        assert_eq!(t.patch.attempts.get(&2), Some(&1));
    }

    #[test]
    fn measured_ops_count_every_fact() {
        let mut t = RunTally::default();
        let mut hedged = OpReport::ok();
        hedged.hedge = HedgeFacts {
            alternate_sent: true,
            alternate_won: true,
            primary_over_threshold: true,
        };
        hedged.extra_requests = 1;
        hedged.ru_caller_visible = 1.0;
        hedged.ru_total = 2.0;
        t.record(true, Duration::from_millis(72), &hedged);
        t.record(true, Duration::from_millis(3), &OpReport::ok());
        t.record(
            true,
            Duration::from_millis(4),
            &OpReport::failed(Some(503), 0),
        );
        assert_eq!((t.ops, t.errors, t.hedged, t.alternate_won), (3, 1, 1, 1));
        assert_eq!((t.primary_over_threshold, t.extra_requests), (1, 1));
        assert_eq!((t.ru_caller_visible, t.ru_total), (1.0, 2.0));
        assert!((t.max_latency_ms() - 72.0).abs() < 0.1);
        assert!((t.latency_ms_at(0.5) - 4.0).abs() < 0.01);
        assert!((t.fraction(1) - 1.0 / 3.0).abs() < 1e-9);
    }

    #[test]
    fn patch_outcomes_split_by_status() {
        let mut t = RunTally::default();
        for (outcome, attempts) in [
            (OpOutcome::Ok, 1),
            (
                OpOutcome::Failed {
                    status: Some(412),
                    sub_status: 0,
                },
                5,
            ),
            (
                OpOutcome::Failed {
                    status: Some(503),
                    sub_status: 0,
                },
                1,
            ),
            (
                OpOutcome::Failed {
                    status: None,
                    sub_status: 0,
                },
                1,
            ),
        ] {
            let r = OpReport {
                outcome,
                patch_attempts: Some(attempts),
                ..OpReport::ok()
            };
            t.record(true, Duration::from_millis(1), &r);
        }
        assert_eq!(
            (t.patch.successful, t.patch.failed_412, t.patch.failed_other),
            (1, 1, 2)
        );
        assert_eq!(t.patch.attempts.get(&1), Some(&3));
        assert_eq!(t.patch.attempts.get(&5), Some(&1));
    }

    #[test]
    fn errors_are_counted_by_status_and_sub_status() {
        let mut t = RunTally::default();
        for (status, sub) in [
            (Some(404), 1002),
            (Some(404), 1002),
            (Some(503), 0),
            (None, 0),
        ] {
            t.record(
                true,
                Duration::from_millis(1),
                &OpReport::failed(status, sub),
            );
        }
        t.record(true, Duration::from_millis(1), &OpReport::ok());
        // Warm-up failures are not measured.
        t.record(
            false,
            Duration::from_millis(1),
            &OpReport::failed(Some(500), 0),
        );
        assert_eq!(t.errors, 4);
        let by: Vec<(&str, u64)> = t
            .errors_by_status
            .iter()
            .map(|(k, v)| (k.as_str(), *v))
            .collect();
        assert_eq!(by, [("404/1002", 2), ("503/0", 1), ("no_response", 1)]);
        assert_eq!(t.errors_by_status.values().sum::<u64>(), t.errors);
    }

    #[test]
    fn out_of_range_latencies_are_clamped_not_lost() {
        let mut t = RunTally::default();
        t.record(true, Duration::ZERO, &OpReport::ok());
        t.record(true, Duration::from_secs(3600), &OpReport::ok());
        assert_eq!(t.ops, 2);
        assert_eq!(t.latency_us.len(), 2);
        assert!(t.max_latency_ms() >= 59_000.0);
    }

    #[test]
    fn empty_tally_reads_as_zero() {
        let t = RunTally::default();
        assert_eq!(t.latency_ms_at(0.99), 0.0);
        assert_eq!(t.max_latency_ms(), 0.0);
        assert_eq!(t.fraction(0), 0.0);
    }
}

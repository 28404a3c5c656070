//! The chaos benchmark's fault schedule, scaled to the run's length: a pure function of it.
//!
//! Offsets are from the start of the measured window. For a 60 s run: executed-but-unanswered
//! writes from 3 s to 54 s, a 429 storm from 7.2 s for 4.8 s, the primary read region out from
//! 15 s to 25 s, the write region failed over at 30 s and a partition split at 42 s. Shorter runs
//! keep every fault, each shrunk in proportion (the outage lasts a sixth of the run, at most 10 s).
//!
//! The 429 storm (writes 429/3200, reads a bare 429, see [`FaultKind::ThrottleStorm`]) comes before
//! any other fault but the unanswered writes, so the requests per operation counted in its window
//! are those of throttling alone.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// What one scheduled fault does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FaultKind {
    /// Some creates, replaces, upserts and patches are carried out and then lose their answer
    /// (the connection closes, or a 408 or 503 replaces the result).
    UnansweredWrites,
    /// Many data-plane requests are throttled with a short retry-after: writes answered 429/3200
    /// (an RU budget spent in every region), reads (point reads, queries, read feeds) a bare 429
    /// (a throttle that says nothing of the other regions, which a hedged read could send again
    /// elsewhere). The requests and operations of its window are counted.
    ThrottleStorm,
    /// The primary read region refuses every connection.
    ReadRegionOutage,
    /// The write region moves to another region.
    WriteFailover,
    /// A partition key range of the container splits in two.
    PartitionSplit,
}

/// One fault of the schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlannedFault {
    /// What happens.
    pub kind: FaultKind,
    /// When it starts, from the start of the measured window.
    pub at: Duration,
    /// How long it lasts (zero for a one-off change such as a failover or a split).
    pub length: Duration,
}

/// The longest read-region outage.
pub const MAX_OUTAGE: Duration = Duration::from_secs(10);
/// The longest 429 storm.
pub const MAX_STORM: Duration = Duration::from_secs(5);

/// The schedule for a measured window of `duration`, in start order.
pub fn plan(duration: Duration) -> Vec<PlannedFault> {
    let part = |fraction: f64| duration.mul_f64(fraction);
    vec![
        PlannedFault {
            kind: FaultKind::UnansweredWrites,
            at: part(0.05),
            length: part(0.85),
        },
        PlannedFault {
            kind: FaultKind::ThrottleStorm,
            at: part(0.12),
            length: part(0.08).min(MAX_STORM),
        },
        PlannedFault {
            kind: FaultKind::ReadRegionOutage,
            at: part(0.25),
            length: (duration / 6).min(MAX_OUTAGE),
        },
        PlannedFault {
            kind: FaultKind::WriteFailover,
            at: part(0.5),
            length: Duration::ZERO,
        },
        PlannedFault {
            kind: FaultKind::PartitionSplit,
            at: part(0.7),
            length: Duration::ZERO,
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_run_length_keeps_every_fault_inside_the_window() {
        let s = Duration::from_secs;
        for duration in [s(3), s(10), s(20), s(60), s(600)] {
            let faults = plan(duration);
            let kinds: Vec<FaultKind> = faults.iter().map(|f| f.kind).collect();
            assert_eq!(
                kinds,
                [
                    FaultKind::UnansweredWrites,
                    FaultKind::ThrottleStorm,
                    FaultKind::ReadRegionOutage,
                    FaultKind::WriteFailover,
                    FaultKind::PartitionSplit
                ]
            );
            for f in &faults {
                assert!(f.at + f.length <= duration, "{duration:?}: {f:?}");
            }
            assert!(faults.windows(2).all(|w| w[0].at <= w[1].at));
            let outage = faults[2];
            // The outage ends before the failover, so the two are told apart.
            assert!(outage.at + outage.length <= faults[3].at, "{duration:?}");
        }
    }

    #[test]
    fn a_minute_has_the_ten_second_outage() {
        let faults = plan(Duration::from_secs(60));
        let outage = faults[2];
        assert_eq!(
            (outage.at, outage.length),
            (Duration::from_secs(15), Duration::from_secs(10))
        );
        assert_eq!(faults[3].at, Duration::from_secs(30));
        assert_eq!(faults[1].length, Duration::from_millis(4800));
        assert_eq!(plan(Duration::from_secs(600))[2].length, MAX_OUTAGE);
        assert_eq!(plan(Duration::from_secs(600))[1].length, MAX_STORM);
    }
}

//! What the partition circuit breaker learns from a hedge race.
//!
//! An alternate win says the primary region was slow for this partition; enough of them in a row
//! and the partition is marked unhealthy in that region, so later reads go straight to the
//! alternate until the breaker probes the primary healthy again. Any final result from the primary
//! in time (a 404 or 412 as much as a 200) says the primary is fine and clears the count, so a
//! workload of quick 4xx answers cannot keep stale alternate wins around.

use std::num::NonZeroU32;

use super::events::{self, Leg};
use super::race::{HedgeLegOutput, HedgedRace};
use crate::diagnostics::HedgeTerminalState;
use crate::protocol::Region;
use crate::routing::HedgeWinRecorder;

/// The signal a race sends to the breaker.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum HedgeWinFeedback {
    /// The alternate's final result was returned.
    AlternateWon,
    /// The primary's final result was returned.
    PrimaryFinal,
    /// Neither attempt produced a final result in time: nothing to learn.
    Nothing,
}

/// The signal of a finished race.
pub(crate) fn hedge_win_feedback<O: HedgeLegOutput>(race: &HedgedRace<O>) -> HedgeWinFeedback {
    let primary_final = matches!(&race.output, Some((Leg::Primary, o)) if o.is_final());
    match race.terminal_state {
        HedgeTerminalState::AlternateWon => HedgeWinFeedback::AlternateWon,
        HedgeTerminalState::PrimaryWonPreThreshold
        | HedgeTerminalState::PrimaryWonAfterHedge
        | HedgeTerminalState::BudgetDenied
            if primary_final =>
        {
            HedgeWinFeedback::PrimaryFinal
        }
        _ => HedgeWinFeedback::Nothing,
    }
}

/// Sends `feedback` for (`partition_key_range_id`, `primary_region`) to the breaker. Without a
/// partition key range id there is no partition to count against, and nothing is sent. Returns
/// true when this alternate win tripped the breaker.
pub(crate) fn apply_hedge_win_feedback(
    recorder: &impl HedgeWinRecorder,
    feedback: HedgeWinFeedback,
    partition_key_range_id: Option<&str>,
    primary_region: &Region,
    threshold: NonZeroU32,
) -> bool {
    let Some(pk) = partition_key_range_id else {
        return false;
    };
    match feedback {
        HedgeWinFeedback::AlternateWon => {
            events::recorded_alternate_win(primary_region, pk);
            recorder.record_consecutive_hedge_win(pk, primary_region, threshold)
        }
        HedgeWinFeedback::PrimaryFinal => {
            recorder.reset_consecutive_hedge_wins(pk, primary_region);
            false
        }
        HedgeWinFeedback::Nothing => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hedging::{HedgeDiagnostics, HedgeThreshold};
    use crate::protocol::CosmosStatus;
    use std::sync::Mutex;
    use std::time::Duration;

    #[derive(Debug)]
    struct Out(u16, u32);
    impl HedgeLegOutput for Out {
        fn status(&self) -> Option<CosmosStatus> {
            Some(CosmosStatus::new(self.0, self.1))
        }
        fn partition_key_range_id(&self) -> Option<&str> {
            None
        }
        fn observed_session_unavailable(&self) -> bool {
            false
        }
    }

    /// Counts like the breaker does, and logs every call.
    #[derive(Default)]
    struct Recorder {
        calls: Mutex<Vec<(String, String, &'static str)>>,
        count: Mutex<u32>,
    }
    impl HedgeWinRecorder for Recorder {
        fn record_consecutive_hedge_win(
            &self,
            pk: &str,
            region: &Region,
            threshold: NonZeroU32,
        ) -> bool {
            self.calls
                .lock()
                .unwrap()
                .push((pk.into(), region.to_string(), "record"));
            let mut c = self.count.lock().unwrap();
            *c += 1;
            *c == threshold.get()
        }
        fn reset_consecutive_hedge_wins(&self, pk: &str, region: &Region) {
            self.calls
                .lock()
                .unwrap()
                .push((pk.into(), region.to_string(), "reset"));
            *self.count.lock().unwrap() = 0;
        }
    }

    fn race(state: HedgeTerminalState, output: Option<(Leg, Out)>) -> HedgedRace<Out> {
        let t = HedgeThreshold::new(Duration::from_millis(100)).unwrap();
        let diagnostics = HedgeDiagnostics::new(t.get(), "A".into(), Some("B".into()), state);
        HedgedRace {
            terminal_state: state,
            diagnostics,
            output,
            earlier: None,
        }
    }

    fn five() -> NonZeroU32 {
        NonZeroU32::new(5).unwrap()
    }

    #[test]
    fn feedback_table() {
        use HedgeTerminalState::*;
        use HedgeWinFeedback as F;
        let table = [
            (
                race(AlternateWon, Some((Leg::Alternate, Out(200, 0)))),
                F::AlternateWon,
            ),
            (
                race(AlternateWon, Some((Leg::Alternate, Out(404, 0)))),
                F::AlternateWon,
            ),
            (
                race(PrimaryWonPreThreshold, Some((Leg::Primary, Out(200, 0)))),
                F::PrimaryFinal,
            ),
            (
                race(PrimaryWonAfterHedge, Some((Leg::Primary, Out(200, 0)))),
                F::PrimaryFinal,
            ),
            (
                race(PrimaryWonPreThreshold, Some((Leg::Primary, Out(404, 0)))),
                F::PrimaryFinal,
            ),
            (
                race(PrimaryWonAfterHedge, Some((Leg::Primary, Out(412, 0)))),
                F::PrimaryFinal,
            ),
            (
                race(PrimaryWonPreThreshold, Some((Leg::Primary, Out(429, 0)))),
                F::Nothing,
            ),
            // The budget refused the alternate and the primary answered: any primary final
            // resets the count (§9.5), whether or not an alternate was allowed.
            (
                race(BudgetDenied, Some((Leg::Primary, Out(200, 0)))),
                F::PrimaryFinal,
            ),
            (
                race(BudgetDenied, Some((Leg::Primary, Out(404, 0)))),
                F::PrimaryFinal,
            ),
            (
                race(BudgetDenied, Some((Leg::Primary, Out(503, 0)))),
                F::Nothing,
            ),
            (
                race(
                    BothTransient {
                        deadline_elapsed: false,
                    },
                    Some((Leg::Primary, Out(503, 0))),
                ),
                F::Nothing,
            ),
            (
                race(
                    BothTransient {
                        deadline_elapsed: true,
                    },
                    None,
                ),
                F::Nothing,
            ),
            (
                race(CancelledAwaitingPartner, Some((Leg::Primary, Out(200, 0)))),
                F::Nothing,
            ),
            (
                race(
                    DeadlineExceededPreThreshold,
                    Some((Leg::Primary, Out(200, 0))),
                ),
                F::Nothing,
            ),
        ];
        for (i, (r, want)) in table.iter().enumerate() {
            assert_eq!(
                hedge_win_feedback(r),
                *want,
                "row {i}: {:?}",
                r.terminal_state
            );
        }
    }

    #[test]
    fn record_hedge_win_increments_ppcb_counter() {
        let rec = Recorder::default();
        let r = race(
            HedgeTerminalState::AlternateWon,
            Some((Leg::Alternate, Out(200, 0))),
        );
        let tripped =
            apply_hedge_win_feedback(&rec, hedge_win_feedback(&r), Some("3"), &"A".into(), five());
        assert!(!tripped);
        assert_eq!(
            *rec.calls.lock().unwrap(),
            [("3".to_string(), "A".to_string(), "record")]
        );
        assert_eq!(*rec.count.lock().unwrap(), 1);
    }

    #[test]
    fn primary_win_resets_hedge_win_counter() {
        let rec = Recorder::default();
        let alt = race(
            HedgeTerminalState::AlternateWon,
            Some((Leg::Alternate, Out(200, 0))),
        );
        for _ in 0..3 {
            apply_hedge_win_feedback(
                &rec,
                hedge_win_feedback(&alt),
                Some("3"),
                &"A".into(),
                five(),
            );
        }
        assert_eq!(*rec.count.lock().unwrap(), 3);
        // A quick 404 from the primary is a final primary outcome: it resets too.
        let primary = race(
            HedgeTerminalState::PrimaryWonPreThreshold,
            Some((Leg::Primary, Out(404, 0))),
        );
        apply_hedge_win_feedback(
            &rec,
            hedge_win_feedback(&primary),
            Some("3"),
            &"A".into(),
            five(),
        );
        assert_eq!(*rec.count.lock().unwrap(), 0);
        assert_eq!(rec.calls.lock().unwrap().last().map(|c| c.2), Some("reset"));
    }

    #[test]
    fn threshold_trips_on_the_configured_win() {
        let rec = Recorder::default();
        let alt = race(
            HedgeTerminalState::AlternateWon,
            Some((Leg::Alternate, Out(200, 0))),
        );
        let trips: Vec<bool> = (0..5)
            .map(|_| {
                apply_hedge_win_feedback(
                    &rec,
                    hedge_win_feedback(&alt),
                    Some("3"),
                    &"A".into(),
                    five(),
                )
            })
            .collect();
        assert_eq!(trips, [false, false, false, false, true]);
    }

    #[test]
    fn no_partition_no_feedback() {
        let rec = Recorder::default();
        assert!(!apply_hedge_win_feedback(
            &rec,
            HedgeWinFeedback::AlternateWon,
            None,
            &"A".into(),
            five()
        ));
        assert!(rec.calls.lock().unwrap().is_empty());
    }
}

//! How often, and after what wait, a compound operation plans again after a range was found gone.
//!
//! A request pinned to a partition key range that answers 410/1002, 1007 or 1008 comes straight
//! back from the pipeline (every region and every retry would answer the same); the query pager,
//! the change feed, read many and bulk then read the ranges again and go to the range's children.
//! While a split or a migration is still completing, the listing shows the old range and the same
//! request is refused again: each further re-plan waits a little longer, so the caller's bounded
//! number of re-plans covers a few seconds of completion instead of spinning through them.
//!
//! One budget and one decision for all of them: [`Replans::after`] says whether an error lets a
//! compound operation plan again (the range it was pinned to is gone and a re-plan is left, at
//! most [`MAX_REPLANS`]) and how long to wait first; the query pager, read many, the change feed
//! and bulk each ask it before they read the ranges again. [`Replanning`] is the loop around it
//! that the query pager (each page's rounds, one budget over the query's run), the change feed and
//! read many run their rounds through; bulk takes its re-plans from the same budget and decision.

use std::fmt;
use std::time::Duration;

use crate::error::CosmosError;

/// The wait before the first re-plan after one.
const FIRST_WAIT: Duration = Duration::from_millis(20);
/// The longest wait between two re-plans.
const MAX_WAIT: Duration = Duration::from_secs(1);

/// The most re-plans one compound operation makes (a query over its whole run, one read many, one
/// change feed page) before it gives up with the range-gone error.
pub(crate) const MAX_REPLANS: u32 = 64;

/// The re-plans one compound operation has taken.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Replans {
    used: u32,
}

impl Replans {
    /// A budget of which `used` re-plans are already spent.
    #[cfg(test)]
    pub(crate) fn spent(used: u32) -> Self {
        Self {
            used: used.min(MAX_REPLANS),
        }
    }

    /// Whether a re-plan is left.
    pub(crate) fn left(self) -> bool {
        self.used < MAX_REPLANS
    }

    /// Takes one re-plan: the wait before it ([`replan_delay`]), or `None` when none is left.
    pub(crate) fn take(&mut self) -> Option<Duration> {
        if !self.left() {
            return None;
        }
        let wait = replan_delay(self.used);
        self.used += 1;
        Some(wait)
    }

    /// What a compound operation does after a request answered `error`: when the range it was
    /// pinned to is gone (410/1002, 1007, 1008) and a re-plan is left, takes it and answers the
    /// wait before the ranges are read again; otherwise answers the error (when the budget is
    /// spent, saying that `what` followed [`MAX_REPLANS`] splits).
    pub(crate) fn after(
        &mut self,
        error: CosmosError,
        what: impl fmt::Display,
    ) -> Result<Duration, CosmosError> {
        if !error.is_range_gone() {
            return Err(error);
        }
        match self.take() {
            Some(wait) => Ok(wait),
            None => Err(error.with_context(format!(
                "{what} followed {MAX_REPLANS} partition splits and gives up"
            ))),
        }
    }
}

/// How one round of a compound operation against the ranges it read ended.
#[derive(Debug)]
pub(crate) enum Round<T> {
    /// The operation is complete.
    Done(T),
    /// A request found its range gone (the error says so): plan again against fresh ranges.
    Gone(CosmosError),
    /// The ranges read do not cover what the operation must read (a listing taken while a split
    /// completes; the reason is the error): read them again.
    Stale(CosmosError),
}

/// The one re-plan loop of the compound operations, driven by the caller's rounds: each round
/// runs against the ranges (read again when the loop says so) and hands its outcome to
/// [`Replanning::settle`]. After a round that found a range gone or the ranges stale, a re-plan is
/// taken from the budget ([`Replans::after`] for a gone range), its wait passes, and the next
/// round reads the ranges again; when none is left, the round's error ends the operation. The
/// query pager, the change feed and read many run through it; bulk takes its re-plans from the
/// same budget and decision.
#[derive(Debug, Default)]
pub(crate) struct Replanning {
    replans: Replans,
    refresh: bool,
}

impl Replanning {
    /// A loop whose operation already took `replans` (a query resumed on its next page: one
    /// budget over its whole run).
    pub(crate) fn resumed(replans: Replans) -> Self {
        Self {
            replans,
            refresh: false,
        }
    }

    /// The re-plans taken so far, the ones it was resumed with included.
    pub(crate) fn replans(&self) -> Replans {
        self.replans
    }

    /// Whether the next round reads the ranges again (a round before it found them gone or
    /// stale) rather than take the kept ones.
    pub(crate) fn refresh(&self) -> bool {
        self.refresh
    }

    /// Takes a round's outcome: `Some` when the operation is done; `None` (after the re-plan's
    /// wait) to run another round; the error when the operation ends with one. `what` names the
    /// operation when the budget is spent.
    pub(crate) async fn settle<T>(
        &mut self,
        round: Round<T>,
        what: impl fmt::Display,
    ) -> Result<Option<T>, CosmosError> {
        let wait = match round {
            Round::Done(done) => return Ok(Some(done)),
            Round::Gone(error) => self.replans.after(error, what)?,
            Round::Stale(error) => self.replans.take().ok_or(error)?,
        };
        tokio::time::sleep(wait).await;
        self.refresh = true;
        Ok(None)
    }
}

/// How long to wait before a re-plan, given how many re-plans came before it: none before the
/// first (a completed split is planned again at once), then 20 ms doubling up to 1 s.
pub(crate) fn replan_delay(replans_before: u32) -> Duration {
    match replans_before {
        0 => Duration::ZERO,
        n => FIRST_WAIT
            .saturating_mul(1u32 << (n - 1).min(16))
            .min(MAX_WAIT),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_gives_the_waits_in_order_then_runs_out() {
        let mut replans = Replans::default();
        let mut waits = Vec::new();
        while let Some(wait) = replans.take() {
            waits.push(wait);
        }
        assert_eq!(waits.len(), MAX_REPLANS as usize);
        assert_eq!(
            &waits[..3],
            &[
                Duration::ZERO,
                Duration::from_millis(20),
                Duration::from_millis(40)
            ]
        );
        assert!(!replans.left());
        let mut resumed = Replans::spent(MAX_REPLANS - 1);
        assert!(resumed.left());
        assert_eq!(resumed.take(), Some(Duration::from_secs(1)));
        assert_eq!(resumed.take(), None);
        assert_eq!(Replans::spent(u32::MAX), Replans::spent(MAX_REPLANS));
    }

    #[test]
    fn only_a_gone_range_is_planned_again_and_only_while_the_budget_lasts() {
        use crate::protocol::CosmosStatus;
        let status = |code, sub| {
            CosmosError::new(crate::error::ErrorKind::Service, "answer")
                .with_status(CosmosStatus::new(code, sub))
        };
        // (status, sub-status, re-plans already used, planned again?)
        let table = [
            (410, 1002, 0, Some(Duration::ZERO)),
            (410, 1007, 1, Some(Duration::from_millis(20))),
            (410, 1008, 2, Some(Duration::from_millis(40))),
            (410, 1002, MAX_REPLANS, None),
            (410, 0, 0, None),
            (404, 1002, 0, None),
            (429, 0, 0, None),
            (503, 0, 0, None),
        ];
        for (code, sub, used, want) in table {
            let mut replans = Replans::spent(used);
            let got = replans.after(status(code, sub), "the test");
            match want {
                Some(wait) => {
                    assert_eq!(got.unwrap(), wait, "{code}/{sub} after {used}");
                    assert_eq!(replans, Replans::spent(used + 1));
                }
                None => {
                    let e = got.unwrap_err();
                    assert_eq!(e.status(), Some(code), "{code}/{sub} after {used}");
                    let gave_up = e.message().contains("followed 64 partition splits");
                    assert_eq!(gave_up, used == MAX_REPLANS, "{}", e.message());
                    assert_eq!(replans, Replans::spent(used));
                }
            }
        }
    }

    fn gone() -> CosmosError {
        CosmosError::new(crate::error::ErrorKind::Service, "gone")
            .with_status(crate::protocol::CosmosStatus::new(410, 1002))
    }

    /// Runs `rounds` (the outcome of each round by its number, told whether to refresh) through
    /// the loop; answers the result and the refresh flags the rounds saw.
    async fn drive(
        mut loop_: Replanning,
        rounds: impl Fn(usize) -> Result<Round<usize>, CosmosError>,
    ) -> (Result<usize, CosmosError>, Vec<bool>, Replans) {
        let mut seen = Vec::new();
        let result = loop {
            seen.push(loop_.refresh());
            let round = match rounds(seen.len()) {
                Ok(r) => r,
                Err(e) => break Err(e),
            };
            match loop_.settle(round, "the test").await {
                Ok(Some(done)) => break Ok(done),
                Ok(None) => continue,
                Err(e) => break Err(e),
            }
        };
        (result, seen, loop_.replans)
    }

    #[tokio::test(start_paused = true)]
    async fn the_loop_plans_again_with_fresh_ranges_until_done() {
        let started = tokio::time::Instant::now();
        let (done, seen, replans) = drive(Replanning::default(), |n| {
            Ok(match n {
                1 => Round::Gone(gone()),
                2 => Round::Stale(CosmosError::invalid_input("stale")),
                3 => Round::Gone(gone()),
                n => Round::Done(n),
            })
        })
        .await;
        assert_eq!(done.unwrap(), 4);
        assert_eq!(seen, [false, true, true, true]);
        assert_eq!(replans, Replans::spent(3));
        // No wait before the first re-plan, then 20 ms and 40 ms.
        assert_eq!(started.elapsed(), Duration::from_millis(60));
    }

    #[tokio::test(start_paused = true)]
    async fn the_loop_ends_with_the_rounds_error_once_the_budget_is_spent() {
        // A loop resumed with the re-plans its operation took before (a query's earlier pages).
        let almost = Replanning::resumed(Replans::spent(MAX_REPLANS - 1));
        assert_eq!(almost.replans(), Replans::spent(MAX_REPLANS - 1));
        assert!(!almost.refresh());
        let (e, seen, _) = drive(almost, |_| Ok(Round::Gone(gone()))).await;
        let e = e.unwrap_err();
        assert_eq!(seen.len(), 2);
        assert!(
            e.message()
                .contains("the test followed 64 partition splits"),
            "{}",
            e.message()
        );

        let spent = Replanning::resumed(Replans::spent(MAX_REPLANS));
        let (e, _, _) = drive(spent, |_| {
            Ok(Round::Stale(CosmosError::invalid_input("not covered")))
        })
        .await;
        assert_eq!(e.unwrap_err().message(), "not covered");

        // An error that is not a gone range ends the loop at once, as it is.
        let (e, seen, replans) = drive(Replanning::default(), |_| {
            Ok(Round::Gone(CosmosError::invalid_input("refused")))
        })
        .await;
        assert_eq!(e.unwrap_err().message(), "refused");
        assert_eq!((seen.len(), replans), (1, Replans::default()));
    }

    #[test]
    fn waits_grow_from_nothing_to_a_second() {
        let ms = |n| Duration::from_millis(n);
        let table = [
            (0, ms(0)),
            (1, ms(20)),
            (2, ms(40)),
            (3, ms(80)),
            (6, ms(640)),
            (7, ms(1000)),
            (60, ms(1000)),
            (u32::MAX, ms(1000)),
        ];
        for (n, want) in table {
            assert_eq!(replan_delay(n), want, "after {n} re-plans");
        }
        let eight: Duration = (0..8).map(replan_delay).sum();
        assert!(eight >= ms(2000), "eight re-plans cover {eight:?}");
    }
}

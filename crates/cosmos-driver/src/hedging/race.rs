//! The hedge race: the primary attempt against one alternate attempt.
//!
//! The primary future is already built and starts at once. It races the threshold timer and the
//! deadline in one `select!`; when it produces its result first, nothing for the alternate is built,
//! allocated or logged beyond the primary's own work. When the threshold fires (or the primary ends
//! transient with a result that may start a hedge, §7.2.1), the alternate future is built and both
//! race on this stack frame: no task spawn, no boxing. The first final result wins and the other
//! future is dropped, which cancels its request. A transient result keeps the other attempt racing.
//!
//! The race is generic over the attempts' futures so that its timing can be tested with fake
//! attempts under paused time; the pipeline plugs its own result type in through
//! [`HedgeLegOutput`].

use std::future::Future;
use std::time::Duration;

use tokio::time::{sleep, sleep_until, Instant};

use super::budget::HedgeBudget;
use super::events::{self, CancelReason, Leg};
use super::final_result::{classify_hedge_result, may_start_hedge_after, LegOutcome};
use super::hub_latch::HubRegionLatch;
use super::strategy::HedgeThreshold;
use crate::diagnostics::{HedgeDiagnostics, HedgeTerminalState};
use crate::protocol::{CosmosStatus, Region};

/// How long the race keeps polling in-flight attempts after the deadline, to attach the result of
/// one that is about to finish to the cancellation error's diagnostics.
pub const HARVEST_WINDOW: Duration = Duration::from_millis(50);

/// What the race needs to know about an attempt's result.
pub trait HedgeLegOutput {
    /// The HTTP status and sub-status, `None` when no response arrived.
    fn status(&self) -> Option<CosmosStatus>;

    /// The service's partition key range id from the response headers, if any.
    fn partition_key_range_id(&self) -> Option<&str>;

    /// Whether this attempt saw the 1002 that turns the hub-region latch on (§9.6.1).
    fn observed_session_unavailable(&self) -> bool;

    /// Whether this result ends the race. By default [`super::is_final_result`] on the status;
    /// override for local errors another region cannot change (an invalid request, say).
    fn is_final(&self) -> bool {
        classify_hedge_result(self.status()) == LegOutcome::Final
    }

    /// Whether a transient primary result sends the alternate at once (§7.2.1).
    fn may_start_hedge(&self) -> bool {
        !self.is_final() && may_start_hedge_after(self.status())
    }
}

/// The fixed inputs of one race.
#[derive(Clone, Copy, Debug)]
pub struct RaceSetup<'a> {
    /// When the alternate fires.
    pub threshold: HedgeThreshold,
    /// The operation's deadline, shared by both attempts.
    pub deadline: Option<Instant>,
    /// Where the primary went.
    pub primary_region: &'a Region,
    /// Where the alternate goes.
    pub alternate_region: &'a Region,
    /// Applicable read regions, for the `enabled_for_operation` event.
    pub applicable_regions: usize,
    /// The hub-region latch both attempts read, `Some` only for data-plane reads on single-write
    /// accounts ([`super::hub_latch_eligible`]). Its shared flag is created when the alternate
    /// launches, never before.
    pub hub_latch: Option<&'a HubRegionLatch>,
}

/// How a race ended, with the results it collected.
#[derive(Debug)]
pub struct HedgedRace<O> {
    /// How the race ended.
    pub terminal_state: HedgeTerminalState,
    /// The diagnostics to attach to the operation's response or error.
    pub diagnostics: HedgeDiagnostics,
    /// The result the operation continues with: the winner's for the won states, the last transient
    /// result for `BothTransient`, the harvested one after a deadline (`None` when nothing finished
    /// within the harvest window). After `PrimaryTransientPreThreshold` it is the primary's
    /// transient result that may not start a hedge (a plain 429): the operation's error.
    pub output: Option<(Leg, O)>,
    /// The other attempt's transient result, when it finished before `output`.
    pub earlier: Option<(Leg, O)>,
}

impl<O: HedgeLegOutput> HedgedRace<O> {
    /// Whether the operation ends in a cancellation error (the deadline passed).
    #[cfg(test)]
    pub fn deadline_exceeded(&self) -> bool {
        matches!(
            self.terminal_state,
            HedgeTerminalState::DeadlineExceededPreThreshold
                | HedgeTerminalState::CancelledAwaitingPartner
                | HedgeTerminalState::BothTransient {
                    deadline_elapsed: true
                }
        )
    }

    fn finished(&self) -> impl Iterator<Item = &O> {
        self.earlier
            .iter()
            .chain(self.output.iter())
            .map(|(_, o)| o)
    }

    /// The first partition key range id either attempt reported, in the order they finished.
    pub fn partition_key_range_id(&self) -> Option<&str> {
        self.finished()
            .find_map(HedgeLegOutput::partition_key_range_id)
    }

    /// Whether either attempt saw the 1002 that turns the hub-region latch on.
    pub fn observed_session_unavailable(&self) -> bool {
        self.finished()
            .any(HedgeLegOutput::observed_session_unavailable)
    }
}

/// Attempts in flight; when the race's future is dropped with attempts still in flight, they are
/// reported cancelled by the application.
struct InFlight<'a> {
    setup: &'a RaceSetup<'a>,
    primary: bool,
    alternate: bool,
}

impl InFlight<'_> {
    fn region(&self, leg: Leg) -> &Region {
        match leg {
            Leg::Primary => self.setup.primary_region,
            Leg::Alternate => self.setup.alternate_region,
        }
    }

    fn finished(&mut self, leg: Leg) {
        match leg {
            Leg::Primary => self.primary = false,
            Leg::Alternate => self.alternate = false,
        }
    }

    /// Reports every attempt still in flight as cancelled for `reason`; they are about to be
    /// dropped.
    fn cancel_all(&mut self, reason: CancelReason) {
        for (leg, live) in [
            (Leg::Primary, self.primary),
            (Leg::Alternate, self.alternate),
        ] {
            if live {
                events::canceled(leg, self.region(leg), reason);
            }
        }
        self.primary = false;
        self.alternate = false;
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.cancel_all(CancelReason::AppCanceled);
    }
}

/// Waits for the deadline, forever when there is none.
async fn deadline_passes(deadline: Option<Instant>) {
    match deadline {
        Some(at) => sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// Races `primary` (already built) against an alternate built by `build_alternate` when the
/// threshold fires, with no budget (tests; the pipeline uses [`race_hedged_within`]).
#[cfg(test)]
pub async fn race_hedged<O, P, A, F>(
    setup: RaceSetup<'_>,
    primary: P,
    build_alternate: F,
) -> HedgedRace<O>
where
    O: HedgeLegOutput,
    P: Future<Output = O>,
    F: FnOnce() -> A,
    A: Future<Output = O>,
{
    race_hedged_within(setup, None, primary, build_alternate).await
}

/// [`race_hedged`] bounded by a hedge budget: when the threshold fires and `budget` has no token,
/// no alternate is sent and the primary runs alone; its result ends the race as
/// [`HedgeTerminalState::BudgetDenied`] (or, if it is a transient result that may start a hedge,
/// the alternate is sent then, as a move away from a failing region is not speculative). The
/// diagnostics say the budget refused ([`HedgeDiagnostics::budget_denied`]) in every case.
pub async fn race_hedged_within<O, P, A, F>(
    setup: RaceSetup<'_>,
    budget: Option<&HedgeBudget>,
    primary: P,
    build_alternate: F,
) -> HedgedRace<O>
where
    O: HedgeLegOutput,
    P: Future<Output = O>,
    F: FnOnce() -> A,
    A: Future<Output = O>,
{
    let start = Instant::now();
    // Atomic only to keep the race's future `Send`: one task reads and writes it.
    let budget_denied = std::sync::atomic::AtomicBool::new(false);
    events::enabled_for_operation(setup.threshold, setup.applicable_regions);
    let mut in_flight = InFlight {
        setup: &setup,
        primary: true,
        alternate: false,
    };
    let end = |state: HedgeTerminalState, output, earlier| {
        let alternate = match state {
            HedgeTerminalState::PrimaryWonPreThreshold
            | HedgeTerminalState::PrimaryTransientPreThreshold
            | HedgeTerminalState::DeadlineExceededPreThreshold => None,
            _ => Some(setup.alternate_region.clone()),
        };
        let denied = budget_denied.load(std::sync::atomic::Ordering::Relaxed);
        let state = match state {
            HedgeTerminalState::PrimaryWonPreThreshold if denied => {
                HedgeTerminalState::BudgetDenied
            }
            other => other,
        };
        let mut diagnostics = HedgeDiagnostics::new(
            setup.threshold.get(),
            setup.primary_region.clone(),
            alternate,
            state,
        );
        if denied {
            diagnostics = diagnostics.with_budget_denied();
        }
        HedgedRace {
            terminal_state: state,
            diagnostics,
            output,
            earlier,
        }
    };

    tokio::pin!(primary);
    let early_primary: Option<O> = tokio::select! {
        biased;
        out = &mut primary => Some(out),
        _ = deadline_passes(setup.deadline) => {
            let harvested = tokio::select! {
                biased;
                out = &mut primary => Some((Leg::Primary, out)),
                _ = sleep(HARVEST_WINDOW) => None,
            };
            if harvested.is_some() {
                in_flight.finished(Leg::Primary);
            }
            // A primary still in flight is dropped now: reported cancelled by the deadline.
            in_flight.cancel_all(CancelReason::Deadline);
            return end(HedgeTerminalState::DeadlineExceededPreThreshold, harvested, None);
        }
        _ = sleep_until(start + setup.threshold.get()) => None,
    };
    // The threshold fired: an alternate needs a token of the budget, if there is one.
    let early_primary = match early_primary {
        None if budget.is_some_and(|b| !b.try_acquire(Instant::now())) => {
            budget_denied.store(true, std::sync::atomic::Ordering::Relaxed);
            events::budget_denied(setup.primary_region, start.elapsed());
            tokio::select! {
                biased;
                out = &mut primary => Some(out),
                _ = deadline_passes(setup.deadline) => {
                    let harvested = tokio::select! {
                        biased;
                        out = &mut primary => Some((Leg::Primary, out)),
                        _ = sleep(HARVEST_WINDOW) => None,
                    };
                    if harvested.is_some() {
                        in_flight.finished(Leg::Primary);
                    }
                    in_flight.cancel_all(CancelReason::Deadline);
                    return end(HedgeTerminalState::DeadlineExceededPreThreshold, harvested, None);
                }
            }
        }
        other => other,
    };

    let mut earlier: Option<(Leg, O)> = None;
    if let Some(out) = early_primary {
        in_flight.finished(Leg::Primary);
        if !out.may_start_hedge() {
            // A final result wins; a transient one that may not start the alternate (a plain
            // throttle) ends the race without a winner.
            let state = if out.is_final() {
                events::winner_selected(setup.primary_region, start.elapsed(), false);
                HedgeTerminalState::PrimaryWonPreThreshold
            } else {
                HedgeTerminalState::PrimaryTransientPreThreshold
            };
            return end(state, Some((Leg::Primary, out)), None);
        }
        if setup.deadline.is_some_and(|d| Instant::now() >= d) {
            return end(
                HedgeTerminalState::DeadlineExceededPreThreshold,
                Some((Leg::Primary, out)),
                None,
            );
        }
        earlier = Some((Leg::Primary, out));
    }

    // The alternate launches: from here on the race may allocate.
    if let Some(latch) = setup.hub_latch {
        latch.install();
    }
    events::alternate_spawned(setup.alternate_region, start.elapsed());
    let alternate = build_alternate();
    tokio::pin!(alternate);
    in_flight.alternate = true;
    let deadline = deadline_passes(setup.deadline);
    tokio::pin!(deadline);

    loop {
        let (leg, out) = tokio::select! {
            biased;
            out = &mut primary, if in_flight.primary => (Leg::Primary, out),
            out = &mut alternate, if in_flight.alternate => (Leg::Alternate, out),
            _ = &mut deadline => {
                let harvested = tokio::select! {
                    biased;
                    out = &mut primary, if in_flight.primary => Some((Leg::Primary, out)),
                    out = &mut alternate, if in_flight.alternate => Some((Leg::Alternate, out)),
                    _ = sleep(HARVEST_WINDOW) => None,
                };
                if let Some((leg, _)) = &harvested {
                    in_flight.finished(*leg);
                }
                in_flight.cancel_all(CancelReason::Deadline);
                // Both attempts were out and at least one was still awaited: not both transient
                // (that needs both results), whether one had ended or neither had.
                return end(HedgeTerminalState::CancelledAwaitingPartner, harvested, earlier);
            }
        };
        in_flight.finished(leg);
        if out.is_final() {
            in_flight.cancel_all(CancelReason::WinnerFound);
            let (state, region) = match leg {
                Leg::Primary => (
                    HedgeTerminalState::PrimaryWonAfterHedge,
                    setup.primary_region,
                ),
                Leg::Alternate => (HedgeTerminalState::AlternateWon, setup.alternate_region),
            };
            events::winner_selected(region, start.elapsed(), leg == Leg::Alternate);
            return end(state, Some((leg, out)), earlier);
        }
        if earlier.is_none() {
            earlier = Some((leg, out));
            continue;
        }
        events::both_transient(out.status());
        let deadline_elapsed = setup.deadline.is_some_and(|d| Instant::now() >= d);
        return end(
            HedgeTerminalState::BothTransient { deadline_elapsed },
            Some((leg, out)),
            earlier,
        );
    }
}

#[cfg(test)]
#[path = "race_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "race_budget_tests.rs"]
mod budget_tests;

#[cfg(test)]
#[path = "race_alloc_tests.rs"]
mod alloc_tests;

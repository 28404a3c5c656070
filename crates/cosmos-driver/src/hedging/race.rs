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
pub(crate) const HARVEST_WINDOW: Duration = Duration::from_millis(50);

/// What the race needs to know about an attempt's result.
pub(crate) trait HedgeLegOutput {
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
pub(crate) struct RaceSetup<'a> {
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
pub(crate) struct HedgedRace<O> {
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
    pub(crate) fn deadline_exceeded(&self) -> bool {
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
    pub(crate) fn partition_key_range_id(&self) -> Option<&str> {
        self.finished()
            .find_map(HedgeLegOutput::partition_key_range_id)
    }

    /// Whether either attempt saw the 1002 that turns the hub-region latch on.
    pub(crate) fn observed_session_unavailable(&self) -> bool {
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
pub(crate) async fn race_hedged<O, P, A, F>(
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
///
/// The race in steps: the primary alone until the threshold ([`primary_alone`]); if the budget
/// refuses the alternate, the primary alone again until it ends or the deadline passes; what an
/// early primary result means ([`after_early_primary`]); then both legs ([`race_both`]).
pub(crate) async fn race_hedged_within<O, P, A, F>(
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
    let mut budget_denied = false;
    events::enabled_for_operation(setup.threshold, setup.applicable_regions);
    let mut in_flight = InFlight {
        setup: &setup,
        primary: true,
        alternate: false,
    };
    tokio::pin!(primary);
    let (state, output, earlier) = 'race: {
        let threshold = Some(start + setup.threshold.get());
        let mut alone = primary_alone(&setup, threshold, &mut primary, &mut in_flight).await;
        // The threshold fired: an alternate needs a token of the budget, if there is one.
        if matches!(alone, Alone::ThresholdFired)
            && budget.is_some_and(|b| !b.try_acquire(Instant::now()))
        {
            budget_denied = true;
            events::budget_denied(setup.primary_region, start.elapsed());
            alone = primary_alone(&setup, None, &mut primary, &mut in_flight).await;
        }
        let earlier = match alone {
            Alone::DeadlinePassed(harvested) => {
                break 'race (
                    HedgeTerminalState::DeadlineExceededPreThreshold,
                    harvested,
                    None,
                )
            }
            Alone::Ended(out) => match after_early_primary(&setup, start, out, &mut in_flight) {
                Ok(earlier) => Some(earlier),
                Err(end) => break 'race end,
            },
            Alone::ThresholdFired => None,
        };
        race_both(
            &setup,
            start,
            &mut primary,
            build_alternate,
            earlier,
            &mut in_flight,
        )
        .await
    };
    race_end(&setup, budget_denied, state, output, earlier)
}

/// How a race ended: its state, the result the operation continues with, and the other attempt's
/// transient result when it finished first.
type RaceEnd<O> = (HedgeTerminalState, Option<(Leg, O)>, Option<(Leg, O)>);

/// How the primary's time alone ended.
enum Alone<O> {
    /// The primary produced its result.
    Ended(O),
    /// The threshold fired with the primary still in flight.
    ThresholdFired,
    /// The deadline passed: the primary's result if it came within the harvest window.
    DeadlinePassed(Option<(Leg, O)>),
}

/// The primary alone, until it ends, the `threshold` fires (never when `None`) or the deadline
/// passes. At the deadline the primary is given the harvest window; one still in flight then is
/// reported cancelled by the deadline (and is dropped by the caller).
async fn primary_alone<O, P>(
    setup: &RaceSetup<'_>,
    threshold: Option<Instant>,
    primary: &mut std::pin::Pin<&mut P>,
    in_flight: &mut InFlight<'_>,
) -> Alone<O>
where
    P: Future<Output = O>,
{
    tokio::select! {
        biased;
        out = primary.as_mut() => Alone::Ended(out),
        _ = deadline_passes(setup.deadline) => {
            let harvested = tokio::select! {
                biased;
                out = primary.as_mut() => Some((Leg::Primary, out)),
                _ = sleep(HARVEST_WINDOW) => None,
            };
            if harvested.is_some() {
                in_flight.finished(Leg::Primary);
            }
            in_flight.cancel_all(CancelReason::Deadline);
            Alone::DeadlinePassed(harvested)
        }
        _ = deadline_passes(threshold) => Alone::ThresholdFired,
    }
}

/// The primary's result came before the alternate was sent: the race's end (a final result wins;
/// a transient one that may not start the alternate, a plain throttle, ends the race without a
/// winner; past the deadline nothing more is sent), or the result kept while the alternate goes.
fn after_early_primary<O: HedgeLegOutput>(
    setup: &RaceSetup<'_>,
    start: Instant,
    out: O,
    in_flight: &mut InFlight<'_>,
) -> Result<(Leg, O), RaceEnd<O>> {
    in_flight.finished(Leg::Primary);
    if !out.may_start_hedge() {
        let state = if out.is_final() {
            events::winner_selected(setup.primary_region, start.elapsed(), false);
            HedgeTerminalState::PrimaryWonPreThreshold
        } else {
            HedgeTerminalState::PrimaryTransientPreThreshold
        };
        return Err((state, Some((Leg::Primary, out)), None));
    }
    if setup.deadline.is_some_and(|d| Instant::now() >= d) {
        return Err((
            HedgeTerminalState::DeadlineExceededPreThreshold,
            Some((Leg::Primary, out)),
            None,
        ));
    }
    Ok((Leg::Primary, out))
}

/// Launches the alternate and races it against the primary (still in flight unless `earlier`
/// holds its transient result) until a final result, two transient ones, or the deadline.
async fn race_both<O, P, A, F>(
    setup: &RaceSetup<'_>,
    start: Instant,
    primary: &mut std::pin::Pin<&mut P>,
    build_alternate: F,
    mut earlier: Option<(Leg, O)>,
    in_flight: &mut InFlight<'_>,
) -> RaceEnd<O>
where
    O: HedgeLegOutput,
    P: Future<Output = O>,
    F: FnOnce() -> A,
    A: Future<Output = O>,
{
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
            out = primary.as_mut(), if in_flight.primary => (Leg::Primary, out),
            out = &mut alternate, if in_flight.alternate => (Leg::Alternate, out),
            _ = &mut deadline => {
                let harvested = tokio::select! {
                    biased;
                    out = primary.as_mut(), if in_flight.primary => Some((Leg::Primary, out)),
                    out = &mut alternate, if in_flight.alternate => Some((Leg::Alternate, out)),
                    _ = sleep(HARVEST_WINDOW) => None,
                };
                if let Some((leg, _)) = &harvested {
                    in_flight.finished(*leg);
                }
                in_flight.cancel_all(CancelReason::Deadline);
                // Both attempts were out and at least one was still awaited: not both transient
                // (that needs both results), whether one had ended or neither had.
                return (HedgeTerminalState::CancelledAwaitingPartner, harvested, earlier);
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
            return (state, Some((leg, out)), earlier);
        }
        if earlier.is_none() {
            earlier = Some((leg, out));
            continue;
        }
        events::both_transient(out.status());
        let deadline_elapsed = setup.deadline.is_some_and(|d| Instant::now() >= d);
        return (
            HedgeTerminalState::BothTransient { deadline_elapsed },
            Some((leg, out)),
            earlier,
        );
    }
}

/// The race's result and diagnostics from how it ended (`budget_denied`: the budget refused the
/// alternate, which turns a primary win before the threshold into `BudgetDenied`).
fn race_end<O>(
    setup: &RaceSetup<'_>,
    budget_denied: bool,
    state: HedgeTerminalState,
    output: Option<(Leg, O)>,
    earlier: Option<(Leg, O)>,
) -> HedgedRace<O> {
    let alternate = match state {
        HedgeTerminalState::PrimaryWonPreThreshold
        | HedgeTerminalState::PrimaryTransientPreThreshold
        | HedgeTerminalState::DeadlineExceededPreThreshold => None,
        _ => Some(setup.alternate_region.clone()),
    };
    let state = match state {
        HedgeTerminalState::PrimaryWonPreThreshold if budget_denied => {
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
    if budget_denied {
        diagnostics = diagnostics.with_budget_denied();
    }
    HedgedRace {
        terminal_state: state,
        diagnostics,
        output,
        earlier,
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

//! One leg: a read or write carried out with its own routing and retry state until the retry
//! decision completes or aborts. The plain path runs one leg; a hedge race runs two, each pinned
//! to its region, on the same stack frame.

use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use super::attempt::{build_attempt, classify, record_response_facts, InFlightAttempt};
use super::attempt_outcome::AttemptOutcome;
use super::context::OperationContext;
use super::leg_result::{LegEnd, LegResult, ServiceResponse};
use super::pace::{AlternatePace, PaceRole};
use super::retry::{decide, RetryAction, RetryDecision, RoutingView, SessionRetryTarget};
use super::retry_state::RetryState;
use super::write_outcome::{end_is_ambiguous, leaves_outcome_unknown};
use crate::diagnostics::{AttemptReason, DiagnosticsSink};
use crate::error::{CosmosError, ErrorKind};
use crate::hedging::{emit_hub_region_header, latch_session_unavailable, HubRegionLatch};
use crate::protocol::{is_range_gone, CosmosStatus, Region};
use crate::routing::{AccountSnapshot, Candidates, RegionEndpoint};
use crate::transport::AttemptFailure;

/// How a leg may route.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LegRouting<'a> {
    /// Regions this leg must never use (the caller's, plus the pin of a hedge alternate).
    pub excluded_regions: &'a [Region],
    /// Retries stay in the leg's first region (a hedge leg).
    pub local_only: bool,
    /// A retry that would move to another region ends the leg instead, with the outcome that
    /// called for it (the primary leg of a race: the move is upgraded to the race's alternate,
    /// §6.5 #9). Retries in place and the hub step of a session retry stay in the leg.
    pub region_change_ends_leg: bool,
    /// For a leg kept in one region that ends on a region change (a race's alternate): whether
    /// the operation has regions beyond the race's two. The retry decision then sees the route of
    /// the read without hedging: where that read would move on, the alternate ends and leaves the
    /// move to the operation; where that read would retry in its last region, so does the
    /// alternate.
    pub regions_beyond: bool,
}

/// Everything one leg starts with.
#[derive(Debug)]
pub(crate) struct LegParams<'a> {
    pub routing: LegRouting<'a>,
    /// The hub-region latch shared with the other leg of a hedge race (`None` outside a race).
    pub hub_latch: Option<&'a HubRegionLatch>,
    /// Why the leg's first attempt is sent (`FirstAttempt`, or `Hedge` for a race's alternate).
    pub first_reason: AttemptReason,
    /// The first attempt goes to the hub region (the session retry a finished race called for),
    /// unless the leg's excluded regions hold it.
    pub start_at_hub: bool,
    pub state: RetryState,
    /// Where the leg records its attempts (shared by both legs of a race).
    pub diagnostics: &'a DiagnosticsSink,
    /// A race's pace, and this leg's side of it (`None` outside a race).
    pub pace: Option<(&'a AlternatePace, PaceRole)>,
}

impl<'a> LegParams<'a> {
    /// The plain (unhedged) leg of an operation: the caller's exclusions, free to fail over.
    pub(crate) fn plain(ctx: &OperationContext<'a>, diagnostics: &'a DiagnosticsSink) -> Self {
        Self {
            routing: LegRouting {
                excluded_regions: ctx.options.excluded_regions,
                local_only: false,
                region_change_ends_leg: false,
                regions_beyond: false,
            },
            hub_latch: None,
            first_reason: AttemptReason::FirstAttempt,
            start_at_hub: false,
            state: RetryState {
                partition_key_range_id: ctx.known_range(),
                ..RetryState::default()
            },
            diagnostics,
            pace: None,
        }
    }

    /// A hedge race's alternate leg: pinned to its region by `excluded_regions` (every other
    /// region), with all its retries kept there, sharing the race's hub-region latch. A retry the
    /// read without hedging would make in another region (`regions_beyond`: the operation has
    /// one the race does not use) ends the leg instead.
    pub(crate) fn hedge_alternate(
        excluded_regions: &'a [Region],
        regions_beyond: bool,
        hub_latch: Option<&'a HubRegionLatch>,
        state: RetryState,
        diagnostics: &'a DiagnosticsSink,
    ) -> Self {
        Self {
            routing: LegRouting {
                excluded_regions,
                local_only: true,
                region_change_ends_leg: true,
                regions_beyond,
            },
            hub_latch,
            first_reason: AttemptReason::Hedge,
            start_at_hub: false,
            state,
            diagnostics,
            pace: None,
        }
    }
}

/// Where the leg is: its candidate regions, its position, and whether it was sent to the hub.
#[derive(Clone, Copy)]
struct Route {
    candidates: Candidates,
    cursor: usize,
    at_hub: bool,
}

impl Route {
    /// The route over `account`'s regions. A leg pinned to one region (`pin`) keeps only that
    /// region, whatever `account` holds: its excluded regions were computed from the snapshot the
    /// operation started with, and a region the account gained since must not leak in (§14.4).
    fn new(
        ctx: &OperationContext<'_>,
        account: &AccountSnapshot,
        routing: &LegRouting<'_>,
        pin: Option<&Region>,
    ) -> Self {
        let mut candidates = ctx.candidates(account, routing.excluded_regions);
        if let Some(pin) = pin {
            let list = ctx.region_list(account);
            candidates.retain(|i| list.get(i).is_some_and(|r| &r.region == pin));
        }
        Route {
            candidates,
            cursor: 0,
            at_hub: false,
        }
    }

    fn current<'s>(
        &self,
        ctx: &OperationContext<'_>,
        account: &'s AccountSnapshot,
    ) -> Option<&'s RegionEndpoint> {
        if self.at_hub {
            return Some(account.properties.hub());
        }
        self.candidates
            .get(self.cursor)
            .and_then(|i| ctx.region_list(account).get(i))
    }

    /// Moves the route as `action` says: the one place a retry action becomes a route position.
    /// Returns false when the action sends no further attempt along this route (it completes,
    /// aborts, or re-routes from fresh account metadata).
    fn advance(&mut self, action: RetryAction) -> bool {
        match action {
            RetryAction::Failover
            | RetryAction::SessionRetry {
                target: SessionRetryTarget::NextRegion,
            } => {
                self.cursor += 1;
                self.at_hub = false;
            }
            RetryAction::SessionRetry {
                target: SessionRetryTarget::HubRegion,
            } => self.at_hub = true,
            RetryAction::SessionRetry {
                target: SessionRetryTarget::SameRegion,
            }
            | RetryAction::RetryLocal { .. } => {}
            RetryAction::RefreshAndReroute { .. }
            | RetryAction::Complete
            | RetryAction::Abort(_) => return false,
        }
        true
    }

    /// Where `action` would send the next attempt (`None`: nowhere, or not another attempt).
    fn after<'s>(
        &self,
        ctx: &OperationContext<'_>,
        account: &'s AccountSnapshot,
        action: RetryAction,
    ) -> Option<&'s RegionEndpoint> {
        let mut next = *self;
        if !next.advance(action) {
            return None;
        }
        next.current(ctx, account)
    }

    fn view(
        &self,
        ctx: &OperationContext<'_>,
        account: &AccountSnapshot,
        routing: &LegRouting<'_>,
    ) -> RoutingView {
        let hub = account.properties.hub();
        let current_is_hub = self
            .current(ctx, account)
            .is_some_and(|c| c.region == hub.region);
        let next_in_route = !self.at_hub && self.cursor + 1 < self.candidates.len();
        RoutingView {
            has_next_region: if routing.local_only {
                // A pinned leg never moves; one that ends on a region change decides as the read
                // without hedging would, over the operation's route.
                routing.region_change_ends_leg && routing.regions_beyond
            } else {
                next_in_route
            },
            hub_reachable: !routing.excluded_regions.contains(&hub.region)
                && (!routing.local_only || current_is_hub),
        }
    }
}

fn no_eligible_region(
    ctx: &OperationContext<'_>,
    account: &AccountSnapshot,
    excluded: &[Region],
) -> CosmosError {
    let all: Vec<String> = ctx
        .region_list(account)
        .iter()
        .map(|r| r.region.to_string())
        .collect();
    let excluded: Vec<String> = excluded.iter().map(|r| r.to_string()).collect();
    CosmosError::new(
        ErrorKind::NoEligibleRegion,
        format!(
            "every region that could serve {} is excluded (regions: [{}]; excluded: [{}])",
            ctx.operation,
            all.join(", "),
            excluded.join(", ")
        ),
    )
}

/// A leg in progress: what it has done so far.
struct Progress<'o> {
    state: RetryState,
    attempts: usize,
    last_status: Option<CosmosStatus>,
    observed_session_unavailable: bool,
    region: Option<RegionEndpoint>,
    moved_on: bool,
    /// The leg's last answer says the range its request names is gone.
    range_gone: bool,
    /// A write attempt of this leg was sent and its outcome is unknown (`write_outcome`).
    write_outcome_unknown: bool,
    /// What the operation is, for the unknown-outcome message.
    operation: &'o crate::operation::CosmosOperation,
}

impl Progress<'_> {
    fn end(self, end: LegEnd) -> LegResult {
        let end = if self.write_outcome_unknown {
            settle_unknown_outcome(end, self.operation)
        } else {
            end
        };
        LegResult {
            end,
            state: self.state,
            region: self.region,
            observed_session_unavailable: self.observed_session_unavailable,
            moved_on: self.moved_on,
            range_gone: self.range_gone,
        }
    }

    fn timeout(
        self,
        ctx: &OperationContext<'_>,
        why: Option<&str>,
        source: Option<CosmosError>,
    ) -> LegResult {
        let timeout = ctx.options.end_to_end_timeout.unwrap_or_default();
        let mut e = CosmosError::end_to_end_timeout(timeout, self.attempts, self.last_status);
        if let Some(w) = why {
            e = e.with_context(w);
        }
        if let Some(s) = source {
            e = e.with_source(s);
        }
        self.end(LegEnd::Error(e))
    }
}

/// The end of a write leg one of whose attempts left the outcome unknown: a success or a 400
/// stands; anything else becomes [`ErrorKind::OutcomeUnknown`] with the end as its source.
fn settle_unknown_outcome(end: LegEnd, operation: &crate::operation::CosmosOperation) -> LegEnd {
    let status = match &end {
        LegEnd::Response(r) => Some(r.status),
        LegEnd::Error(e) => e.cosmos_status(),
    };
    if !end_is_ambiguous(true, status) {
        return end;
    }
    let cause = match end {
        LegEnd::Response(r) => CosmosError::service(
            r.status,
            crate::protocol::ResponseHeaders::new(r.headers),
            r.body,
        ),
        LegEnd::Error(e) => e,
    };
    let last = match cause.cosmos_status() {
        Some(s) => format!("answered {}/{}", s.status, s.sub_status),
        None => "got no answer".to_owned(),
    };
    LegEnd::Error(CosmosError::outcome_unknown(
        format!(
            "the outcome of {operation} is unknown: an attempt was sent and its answer lost, and the last \
             attempt {last}, which does not say whether the write landed; read the item to find out \
             (last attempt: {})",
            cause.message()
        ),
        cause,
    ))
}

/// Why a leg stops before its retry decision completes it.
enum Stop {
    /// The leg ends with this.
    End(LegEnd),
    /// The deadline passed (or would): why, when there is more to say, and the last attempt's
    /// error.
    Timeout(Option<String>, Option<CosmosError>),
}

impl Progress<'_> {
    fn stop(self, ctx: &OperationContext<'_>, stop: Stop) -> LegResult {
        match stop {
            Stop::End(end) => self.end(end),
            Stop::Timeout(why, source) => self.timeout(ctx, why.as_deref(), source),
        }
    }
}

/// Runs one leg to its end. Location effects of every attempt are applied here, as they happen;
/// session tokens are captured from every response.
///
/// Each turn of the loop: pick the region, send one attempt ([`send_attempt`]), decide on its
/// outcome ([`decide_attempt`]), apply the decision's effects ([`apply_effects`]), then end the
/// leg or follow the decision's action to the next attempt ([`follow_action`]).
pub(crate) async fn run_leg(ctx: &OperationContext<'_>, params: LegParams<'_>) -> LegResult {
    let LegParams {
        routing,
        hub_latch,
        first_reason,
        start_at_hub,
        state,
        diagnostics,
        pace,
    } = params;
    let mut p = Progress {
        state,
        attempts: 0,
        last_status: None,
        observed_session_unavailable: false,
        region: None,
        moved_on: false,
        range_gone: false,
        write_outcome_unknown: false,
        operation: ctx.operation,
    };
    let (mut account, mut route, pin) = match start_route(ctx, &routing, start_at_hub).await {
        Ok(start) => start,
        Err(stop) => return p.stop(ctx, stop),
    };
    let mut reason = first_reason;

    loop {
        let Some(region) = route.current(ctx, &account).cloned() else {
            return p.end(LegEnd::Error(no_eligible_region(
                ctx,
                &account,
                routing.excluded_regions,
            )));
        };
        if ctx.deadline.is_some_and(|d| Instant::now() >= d) {
            return p.timeout(ctx, None, None);
        }
        let sent = send_attempt(
            ctx,
            &region,
            reason,
            first_reason,
            hub_latch,
            diagnostics,
            pace,
            &mut p,
        );
        let (outcome, end) = match sent.await {
            Ok(attempt) => attempt,
            Err(stop) => return p.stop(ctx, stop),
        };
        let decision = decide_attempt(ctx, &routing, &route, &account, &outcome, hub_latch, &mut p);
        // Where the action leads, over the route the decision was made on.
        let next = route
            .after(ctx, &account, decision.action)
            .map(|next| next.region.clone());
        let rebuilt = match apply_effects(ctx, &region, &decision, &account, &p).await {
            Ok(Some(fresh)) => {
                // The route's positions index the old account's region list: order them again
                // over the refreshed one (the endpoint just marked moves last).
                account = fresh;
                route = Route::new(ctx, &account, &routing, pin.as_ref());
                true
            }
            Ok(None) => false,
            Err(stop) => return p.stop(ctx, stop),
        };
        if region_change_ends_leg(&routing, decision.action, next.as_ref(), &region.region) {
            p.moved_on = true;
            tracing::debug!(
                target: "cosmos.hedge",
                region = %region.region,
                action = ?decision.action,
                "a region-changing retry ends the primary leg; the alternate takes over"
            );
            return p.end(end);
        }
        let followed = follow_action(
            ctx,
            decision.action,
            end,
            &mut route,
            &account,
            &routing,
            pin.as_ref(),
            rebuilt,
            &region,
            &p.state,
        );
        reason = match followed.await {
            Ok(reason) => reason,
            Err(stop) => return p.stop(ctx, stop),
        };
        if first_reason == AttemptReason::Hedge {
            // Every attempt of a race's alternate leg is marked as the hedge it belongs to.
            reason = AttemptReason::Hedge;
        }
    }
}

/// The route a leg starts on, and the region it is pinned to (a leg kept in one region stays in
/// the region its route starts in, across refreshes). When every candidate is marked unavailable
/// the account is read again first (within the deadline).
async fn start_route(
    ctx: &OperationContext<'_>,
    routing: &LegRouting<'_>,
    start_at_hub: bool,
) -> Result<(Arc<AccountSnapshot>, Route, Option<Region>), Stop> {
    let core = ctx.core;
    let mut account = ctx.account.clone();
    let mut route = Route::new(ctx, &account, routing, None);
    let pin = if routing.local_only {
        route.current(ctx, &account).map(|r| r.region.clone())
    } else {
        None
    };
    if route.candidates.all_unavailable() {
        // Boxed (rare path): keeps the leg's future, which every operation moves, small.
        let refresh = Box::pin(
            core.account
                .refresh_if_stale(&core.transport, Duration::from_secs(5)),
        );
        account = match ctx.deadline {
            Some(d) => match tokio::time::timeout_at(d, refresh).await {
                Ok(fresh) => fresh,
                Err(_) => {
                    let why = "re-reading the account metadata".to_owned();
                    return Err(Stop::Timeout(Some(why), None));
                }
            },
            None => refresh.await,
        };
        route = Route::new(ctx, &account, routing, pin.as_ref());
    }
    if start_at_hub {
        let hub = &account.properties.hub().region;
        route.at_hub =
            !routing.excluded_regions.contains(hub) && pin.as_ref().is_none_or(|pin| pin == hub);
    }
    Ok((account, route, pin))
}

/// Sends one attempt to `region` and records it: its outcome for the retry decision and the end
/// the leg has if the decision stops here. An attempt that could not be sent, a response whose
/// facts cannot be kept, or a failure past the deadline stops the leg.
#[allow(clippy::too_many_arguments)]
async fn send_attempt(
    ctx: &OperationContext<'_>,
    region: &RegionEndpoint,
    reason: AttemptReason,
    first_reason: AttemptReason,
    hub_latch: Option<&HubRegionLatch>,
    diagnostics: &DiagnosticsSink,
    pace: Option<(&AlternatePace, PaceRole)>,
    p: &mut Progress<'_>,
) -> Result<(AttemptOutcome, LegEnd), Stop> {
    // Once latched (by this leg, or by the other leg of its race), every attempt carries the
    // hub-region header (§9.6.2). A region that is not the hub refuses it with 403/3: a leg free
    // to move follows the hub, a pinned alternate stops and leaves the answer to the other leg.
    let hub_header = emit_hub_region_header(p.state.hub_region_processing_only, hub_latch);
    match pace {
        Some((pace, PaceRole::Primary)) => pace.primary_sent(),
        Some((pace, PaceRole::Alternate)) if p.attempts > 0 => {
            // Boxed (race path only): keeps the leg's future small.
            Box::pin(pace.turn(p.attempts as u32)).await;
        }
        _ => {}
    }
    let hedge_attempt = first_reason == AttemptReason::Hedge;
    let request = build_attempt(ctx, &region.endpoint, hub_header, hedge_attempt);
    let attempt = InFlightAttempt::start(diagnostics, region, reason, ctx.started);
    let started = attempt.started();
    let sent = ctx
        .core
        .transport
        .send(&request, ctx.deadline, ctx.attempt_timeout())
        .await;
    p.attempts += 1;
    p.region = Some(region.clone());
    let (outcome, end) = match sent {
        Err(AttemptFailure::Local(e)) => {
            attempt.failed("not sent");
            return Err(Stop::End(LegEnd::Error(e)));
        }
        Err(AttemptFailure::Send(failure)) => {
            attempt.failed(failure.describe());
            let (outcome, error) = classify(ctx, region, &failure, ctx.attempt_timeout());
            p.write_outcome_unknown |=
                leaves_outcome_unknown(ctx.operation.operation_type(), &outcome);
            if ctx.deadline.is_some_and(|d| Instant::now() >= d) {
                return Err(Stop::Timeout(None, Some(error)));
            }
            (outcome, LegEnd::Error(error))
        }
        Ok(raw) => {
            let response = ServiceResponse::from_raw(raw);
            attempt.answered(&response);
            if let Err(e) = record_response_facts(ctx, &response, &mut p.state) {
                return Err(Stop::End(LegEnd::Error(e)));
            }
            p.last_status = Some(response.status);
            let outcome = AttemptOutcome::Response {
                status: response.status,
                retry_after: response.retry_after(),
            };
            (outcome, LegEnd::Response(response))
        }
    };
    p.write_outcome_unknown |= leaves_outcome_unknown(ctx.operation.operation_type(), &outcome);
    tracing::debug!(
        target: "cosmos.attempt",
        region = %region.region,
        reason = reason.as_str(),
        outcome = ?outcome,
        elapsed_ms = started.elapsed().as_secs_f64() * 1e3,
        "attempt finished"
    );
    Ok((outcome, end))
}

/// The retry decision on one attempt's outcome, over the leg's route; the leg's counters, range
/// and hub latch take what it says.
fn decide_attempt(
    ctx: &OperationContext<'_>,
    routing: &LegRouting<'_>,
    route: &Route,
    account: &AccountSnapshot,
    outcome: &AttemptOutcome,
    hub_latch: Option<&HubRegionLatch>,
    p: &mut Progress<'_>,
) -> RetryDecision {
    // A pinned leg that ends on a region change decides like a free one: the move becomes the
    // end of the leg.
    let facts = ctx.facts(
        routing.local_only && !routing.region_change_ends_leg,
        account.properties.multi_write,
    );
    p.range_gone = facts.range_pinned
        && matches!(outcome, AttemptOutcome::Response { status, .. } if is_range_gone(*status));
    let view = route.view(ctx, account, routing);
    let latched =
        p.state.hub_region_processing_only || hub_latch.is_some_and(HubRegionLatch::is_set);
    let decision = decide(
        &facts,
        view,
        outcome,
        p.state.counters,
        latched,
        &ctx.core.limits,
    );
    p.state.counters = decision.counters;
    if decision.latch_hub_region {
        latch_session_unavailable(&mut p.state.hub_region_processing_only, hub_latch);
        p.observed_session_unavailable = true;
    }
    decision
}

/// Applies a decision's location effects (after the wait of a write-region failover): the
/// refreshed account when the effects re-read it.
async fn apply_effects(
    ctx: &OperationContext<'_>,
    region: &RegionEndpoint,
    decision: &RetryDecision,
    account: &AccountSnapshot,
    p: &Progress<'_>,
) -> Result<Option<Arc<AccountSnapshot>>, Stop> {
    if let RetryAction::RefreshAndReroute { delay } = decision.action {
        // Waiting out a write-region failover: wait, then re-read the account.
        if !delay.is_zero() {
            if ctx.deadline.is_some_and(|d| Instant::now() + delay >= d) {
                let why = format!(
                    "waiting {delay:?} more for the write region to move would pass the deadline"
                );
                return Err(Stop::Timeout(Some(why), None));
            }
            Box::pin(tokio::time::sleep(delay)).await;
        }
    }
    Ok(super::effects::apply(ctx, region, &p.state, &decision.effects, account).await)
}

/// Whether `action` ends the leg because it would change region (the primary of a race does not
/// move by itself: a retry in another region ends the leg and the race sends the alternate at
/// once). The hub step of a session retry is the one move it makes itself: only the primary can
/// reach the hub (the alternate is pinned to its own region), and the read needs the hub's answer.
fn region_change_ends_leg(
    routing: &LegRouting<'_>,
    action: RetryAction,
    next: Option<&Region>,
    region: &Region,
) -> bool {
    let hub_step = action
        == RetryAction::SessionRetry {
            target: SessionRetryTarget::HubRegion,
        };
    let moves = matches!(
        action,
        RetryAction::Failover
            | RetryAction::SessionRetry {
                target: SessionRetryTarget::NextRegion,
            }
    );
    routing.region_change_ends_leg
        && !hub_step
        && (moves || next.is_some_and(|next| next != region))
}

/// Moves the leg as a retry `action` says (waiting first where it says so): the reason of the next
/// attempt, or the leg's end `end` when the action completes or aborts. `rebuilt`: the route was
/// just rebuilt over a refreshed account.
#[allow(clippy::too_many_arguments)]
async fn follow_action(
    ctx: &OperationContext<'_>,
    action: RetryAction,
    end: LegEnd,
    route: &mut Route,
    account: &AccountSnapshot,
    routing: &LegRouting<'_>,
    pin: Option<&Region>,
    rebuilt: bool,
    region: &RegionEndpoint,
    state: &RetryState,
) -> Result<AttemptReason, Stop> {
    Ok(match action {
        RetryAction::Complete | RetryAction::Abort(_) => return Err(Stop::End(end)),
        RetryAction::RetryLocal { delay } => {
            if ctx.deadline.is_some_and(|d| Instant::now() + delay >= d) {
                let why = format!("a retry after {delay:?} would start past the deadline");
                return Err(Stop::Timeout(Some(why), None));
            }
            // Boxed (retry path only): keeps the leg's future small.
            Box::pin(tokio::time::sleep(delay)).await;
            AttemptReason::Retry
        }
        RetryAction::Failover => {
            // A rebuilt route already starts past the failed region, unless it is all there is.
            let stays = route.current(ctx, account).map(|r| &r.region) == Some(&region.region);
            if !rebuilt || stays {
                route.advance(action);
            } else {
                route.at_hub = false;
            }
            AttemptReason::Failover
        }
        RetryAction::SessionRetry { .. } => {
            route.advance(action);
            AttemptReason::SessionRetry
        }
        RetryAction::RefreshAndReroute { .. } => {
            // Writes of a single-write account re-resolve to the (new) hub by themselves; a read
            // refused by a moved hub follows the hub when its latch is on.
            *route = Route::new(ctx, account, routing, pin);
            let hub = &account.properties.hub().region;
            route.at_hub = ctx.is_read()
                && state.hub_region_processing_only
                && !routing.excluded_regions.contains(hub)
                && pin.is_none_or(|pin| pin == hub);
            AttemptReason::Failover
        }
    })
}

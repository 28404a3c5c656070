//! Cross-region hedging of reads: configuration, eligibility, the race and its diagnostics.
//!
//! - [`strategy`](HedgingStrategy): the configuration types.
//! - [`HedgingEnv`] and [`resolve_strategy`]: which strategy is in force for an operation.
//! - [`should_hedge`], [`select_alternate`] and [`AlternateRouting::pinned`]: whether to hedge,
//!   where the alternate goes and how it is pinned there.
//! - [`is_final_result`]: which results end a race, and which may start one.
//! - [`race_hedged`]: the race itself, with [`HubRegionLatch`] shared by its two attempts.
//! - [`hedge_win_feedback`]: what the partition circuit breaker learns from a race.

mod eligibility;
mod env;
mod events;
mod feedback;
mod final_result;
mod hub_latch;
mod race;
mod strategy;
mod strategy_resolution;

pub use crate::diagnostics::{HedgeDiagnostics, HedgeTerminalState, HedgingStrategyConfig};
pub use crate::routing::{HedgeWinRecorder, RegionalEndpoint};
pub use eligibility::{
    select_alternate, should_hedge, AlternateRouting, HedgeDecision, HedgeEligibility, NoHedge,
    RegionEndpoint, PHASE_ALLOWED_OPERATIONS,
};
pub use env::{
    parse_lenient_bool, HedgingEnv, RejectedEnvValue, CONSECUTIVE_HEDGE_WIN_THRESHOLD_ENV,
    DEFAULT_CONSECUTIVE_HEDGE_WIN_THRESHOLD, HEDGING_ENABLED_ENV, HEDGING_ENABLED_OVERRIDE_ENV,
};
pub use events::{CancelReason, Leg, TARGET as EVENT_TARGET};
pub use feedback::{apply_hedge_win_feedback, hedge_win_feedback, HedgeWinFeedback};
pub use final_result::{classify_hedge_result, is_final_result, may_start_hedge_after, LegOutcome};
pub use hub_latch::{
    emit_hub_region_header, hub_latch_eligible, hub_latch_triggers, latch_session_unavailable,
    propagate_hedge_session_unavailable, HubRegionLatch,
};
pub use race::{race_hedged, HedgeLegOutput, HedgedRace, RaceSetup, HARVEST_WINDOW};
pub use strategy::{AvailabilityStrategy, HedgeThreshold, HedgingStrategy};
pub use strategy_resolution::{
    default_threshold, resolve_consecutive_hedge_win_threshold, resolve_hedging_enabled,
    resolve_strategy, HedgingLayers, HedgingOff, ResolvedStrategy, StrategySource,
    DEFAULT_HEDGE_THRESHOLD,
};

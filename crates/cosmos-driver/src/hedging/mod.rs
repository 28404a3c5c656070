//! Cross-region hedging of reads: what a user configures ([`AvailabilityStrategy`],
//! [`HedgingStrategy`], [`HedgeThreshold`], [`AdaptiveThreshold`], [`HedgeBudgetConfig`],
//! [`HedgingEnv`]) and reads back ([`HedgeDiagnostics`], [`HedgeTerminalState`]).
//!
//! Inside the crate, the module also holds the decisions and the race the pipeline uses:
//! `strategy_resolution` (which strategy is in force), `eligibility` (whether to hedge and where the
//! alternate goes), `final_result` (which results end a race), `race` (the race itself, with the
//! `hub_latch` its two attempts share), `feedback` (what the partition circuit breaker learns),
//! `region_latencies` and `adaptive` (adaptive thresholds), `budget` (the token bucket that bounds
//! hedged requests to a share of reads).

mod adaptive;
#[cfg(test)]
mod adaptive_alloc_tests;
mod budget;
mod eligibility;
mod env;
mod events;
mod feedback;
mod final_result;
mod hub_latch;
mod latency_window;
mod race;
mod region_latencies;
mod strategy;
mod strategy_resolution;

// What a user configures and reads back.
pub use crate::diagnostics::{HedgeDiagnostics, HedgeTerminalState, HedgingStrategyConfig};
pub use adaptive::AdaptiveThreshold;
pub use budget::HedgeBudgetConfig;
pub use env::{
    HedgingEnv, RejectedEnvValue, CONSECUTIVE_HEDGE_WIN_THRESHOLD_ENV,
    DEFAULT_CONSECUTIVE_HEDGE_WIN_THRESHOLD, HEDGING_ENABLED_ENV, HEDGING_ENABLED_OVERRIDE_ENV,
};
pub use strategy::{AvailabilityStrategy, HedgeThreshold, HedgingStrategy};
pub use strategy_resolution::DEFAULT_HEDGE_THRESHOLD;

// What the pipeline uses.
pub(crate) use budget::HedgeBudget;
pub(crate) use eligibility::{
    select_alternate, should_hedge, AlternateRouting, HedgeDecision, HedgeEligibility,
    PHASE_ALLOWED_OPERATIONS,
};
pub(crate) use events::{disabled_for_operation, Leg};
pub(crate) use feedback::{apply_hedge_win_feedback, hedge_win_feedback, HedgeWinFeedback};
pub(crate) use final_result::{classify_hedge_result, may_start_hedge_after, LegOutcome};
pub(crate) use hub_latch::{
    emit_hub_region_header, hub_latch_eligible, hub_latch_triggers, latch_session_unavailable,
    propagate_hedge_session_unavailable, HubRegionLatch,
};
#[cfg(test)]
pub(crate) use race::race_hedged;
pub(crate) use race::{race_hedged_within, HedgeLegOutput, HedgedRace, RaceSetup};
pub(crate) use region_latencies::{ReadKind, RegionLatencies};
pub(crate) use strategy_resolution::{
    default_threshold, resolve_strategy, HedgingLayers, ResolvedStrategy,
};

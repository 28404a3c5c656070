//! How one operation is carried out across attempts and regions.
//!
//! - [`retry`]: the pure retry decision (table-tested).
//! - `leg`: one leg of an operation, with its own routing and retry state ([`run_leg`]).
//! - `execute`: resolves the options and dispatches (the plain path, or a hedge race).
//! - `hedged`: the hedged read: eligibility, the race of two legs, what the operation keeps from it.
//! - `effects`: the one place location effects are applied.
//! - `native_patch_support`: whether the account serves the PATCH verb, once learnt.
//! - `write_outcome`: the unknown-outcome rule for writes whose answer was lost (table-tested).

mod after_race;
mod attempt;
mod attempt_outcome;
mod conditional_writes;
mod context;
mod driver_core;
mod effects;
mod execute;
mod hedge_plan;
mod hedge_tuning;
mod hedged;
mod leg;
mod leg_result;
mod native_patch_support;
mod pace;
#[cfg(test)]
mod plan_tests;
mod recreated_container;
mod retry;
mod retry_state;
#[cfg(test)]
mod seam_tests;
#[cfg(feature = "otel")]
mod telemetry;
mod write_outcome;

pub(crate) use conditional_writes::{ConditionalWrites, SiblingVerdict, WriteKey, WriterOutcome};
pub(crate) use driver_core::DriverCore;
pub(crate) use execute::execute;
pub(crate) use native_patch_support::{says_not_served, NativePatchSupport};
pub(crate) use retry::RetryLimits;

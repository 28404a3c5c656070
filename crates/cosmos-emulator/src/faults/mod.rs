//! Fault rules, latency profiles and request counters.
//!
//! A [`FaultRule`] is a [`Condition`] (regions, operation kinds, path pattern, request header,
//! probability, first-N / after-N, on/off) plus a [`Reaction`] (delay then serve, answer a status,
//! close the connection, stall, execute then close or answer an error). [`RegionOutages`] take a
//! whole region down (refuse or close its connections), apart from the rules. The [`FaultInjector`] evaluates the latency profile's rules and then the user's rules for
//! every request and returns a `Verdict` the server carries out. [`RequestCounters`] count requests
//! per region and [`OpKind`]. `admin` answers the `/_emulator/` HTTP API over both.
//!
//! The server calls, per request: [`RequestCounters::record`], then `FaultInjector::evaluate`; it
//! sleeps `Verdict::delay` and applies `Verdict::reaction`.

pub(crate) mod admin;
mod condition;
mod counters;
mod delay;
mod injector;
mod installed_rule;
mod op_kind;
pub(crate) mod outage;
pub(crate) mod outage_admin;
mod pattern;
pub mod profiles;
mod quote;
mod reaction;
mod region;
mod rule;
pub(crate) mod rule_json;
pub(crate) mod rule_limits;
mod verdict;

#[cfg(test)]
mod admin_tests;
#[cfg(test)]
mod injector_tests;
#[cfg(test)]
mod rule_json_tests;

pub use condition::{Condition, HeaderMatch};
pub use counters::RequestCounters;
pub use delay::{DelaySpec, MAX_DELAY};
pub use injector::{FaultGuard, FaultInjector};
pub use op_kind::OpKind;
pub use outage::{OutageMode, RegionOutages};
pub use pattern::PathPattern;
pub use profiles::PROFILE_NAMES;
pub use reaction::Reaction;
pub(crate) use region::same_region;
pub use rule::{FaultRule, RuleId, RuleSnapshot};
pub(crate) use verdict::{RequestFacts, Verdict};

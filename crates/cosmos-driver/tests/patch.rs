//! PATCH as a read-modify-write loop, against the embedded emulator over real HTTP: pre-flight
//! refusals, the loop's rules, session tokens across regions, agreement with native PATCH
//! implementations, and concurrent increments.

#[path = "patch_cases/concurrency.rs"]
mod concurrency;
#[path = "patch_cases/differential.rs"]
mod differential;
#[path = "patch_cases/exactly_once.rs"]
mod exactly_once;
#[path = "patch_cases/loop_rules.rs"]
mod loop_rules;
#[path = "patch_cases/peer.rs"]
mod peer;
#[path = "patch_cases/preflight.rs"]
mod preflight;
#[path = "patch_cases/sessions.rs"]
mod sessions;
#[path = "patch_cases/strategies.rs"]
mod strategies;
#[path = "patch_cases/support.rs"]
mod support;

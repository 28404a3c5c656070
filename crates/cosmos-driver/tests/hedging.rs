//! Cross-region hedging of point reads against the embedded emulator over real HTTP, with fault
//! rules (delays, 503s, 404/1002, closed connections) and the emulator's per-region request
//! counters: the race, its cancellations and deadline, what is never hedged, the alternate's pinning
//! under every retry trigger, the hub-region header across legs, the circuit-breaker feedback,
//! session tokens and request charges, the rounds that follow a race both legs lost, and the
//! primary's region-changing retries that start the hedge at once.

#[path = "hedging_cases/breaker.rs"]
mod breaker;
#[path = "hedging_cases/hub.rs"]
mod hub;
#[path = "hedging_cases/race.rs"]
mod race;
#[path = "hedging_cases/rounds.rs"]
mod rounds;
#[path = "hedging_cases/routing.rs"]
mod routing;
#[path = "hedging_cases/support.rs"]
pub(crate) mod support;
#[path = "hedging_cases/upgrade.rs"]
mod upgrade;

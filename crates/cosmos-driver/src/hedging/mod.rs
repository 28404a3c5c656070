//! Cross-region hedging of reads: configuration, eligibility, the race and its diagnostics.

mod diagnostics;
mod strategy;

pub use diagnostics::{HedgeDiagnostics, HedgeTerminalState, HedgingStrategyConfig};
pub use strategy::{AvailabilityStrategy, HedgeThreshold, HedgingStrategy};

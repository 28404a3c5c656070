//! What a hedge race did: attached to every operation that entered the race, success or error.

use std::time::Duration;

use crate::protocol::Region;

/// How a hedge race ended. Consumers computing win rates must use this, not the region fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum HedgeTerminalState {
    /// The primary produced a final result before the threshold; no alternate was sent.
    PrimaryWonPreThreshold,
    /// The primary ended before the threshold with a transient result that may not start the
    /// alternate (a throttle other than 429/3092, §7.2.1); no alternate was sent and that result
    /// is the operation's error. Not a win: no region answered.
    PrimaryTransientPreThreshold,
    /// The deadline fired before the threshold; only the primary ran.
    DeadlineExceededPreThreshold,
    /// The alternate was sent, but the primary's final result came first.
    PrimaryWonAfterHedge,
    /// The alternate's final result came first and was returned.
    AlternateWon,
    /// Both attempts ended transient; `deadline_elapsed` tells whether the deadline had passed.
    BothTransient {
        /// Whether the end-to-end deadline had elapsed when the race ended.
        deadline_elapsed: bool,
    },
    /// The alternate was sent and the deadline fired while the race still waited for an attempt:
    /// one attempt had ended transient and the other was in flight, or both were in flight.
    CancelledAwaitingPartner,
}

impl HedgeTerminalState {
    /// A short stable name for logs and JSON.
    pub const fn as_str(self) -> &'static str {
        match self {
            HedgeTerminalState::PrimaryWonPreThreshold => "primary_won_pre_threshold",
            HedgeTerminalState::PrimaryTransientPreThreshold => "primary_transient_pre_threshold",
            HedgeTerminalState::DeadlineExceededPreThreshold => "deadline_exceeded_pre_threshold",
            HedgeTerminalState::PrimaryWonAfterHedge => "primary_won_after_hedge",
            HedgeTerminalState::AlternateWon => "alternate_won",
            HedgeTerminalState::BothTransient {
                deadline_elapsed: true,
            } => "both_transient_deadline",
            HedgeTerminalState::BothTransient {
                deadline_elapsed: false,
            } => "both_transient",
            HedgeTerminalState::CancelledAwaitingPartner => "cancelled_awaiting_partner",
        }
    }
}

/// The hedging configuration that was in force for the race.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct HedgingStrategyConfig {
    /// The threshold before the alternate fired (a `HedgeThreshold`'s duration).
    pub threshold: Duration,
}

/// Diagnostics of one hedge race.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct HedgeDiagnostics {
    strategy_config: HedgingStrategyConfig,
    primary_region: Region,
    alternate_region: Option<Region>,
    response_region: Option<Region>,
    terminal_state: HedgeTerminalState,
}

impl HedgeDiagnostics {
    /// Diagnostics of a race that ended in `terminal_state`.
    ///
    /// `alternate_region` is set when the alternate was sent; `response_region` is derived from the
    /// terminal state (the primary's region for primary wins, the alternate's for an alternate win,
    /// none when no attempt produced a final result).
    pub fn new(
        threshold: Duration,
        primary_region: Region,
        alternate_region: Option<Region>,
        terminal_state: HedgeTerminalState,
    ) -> Self {
        let response_region = match terminal_state {
            HedgeTerminalState::PrimaryWonPreThreshold
            | HedgeTerminalState::PrimaryWonAfterHedge => Some(primary_region.clone()),
            HedgeTerminalState::AlternateWon => alternate_region.clone(),
            _ => None,
        };
        Self {
            strategy_config: HedgingStrategyConfig { threshold },
            primary_region,
            alternate_region,
            response_region,
            terminal_state,
        }
    }

    /// The same diagnostics with the region that actually served the returned response: the primary
    /// attempt may have failed over before it answered. Ignored for states without a response.
    pub(crate) fn served_by(mut self, region: Option<&Region>) -> Self {
        if let (Some(served), Some(region)) = (self.response_region.as_mut(), region) {
            *served = region.clone();
        }
        self
    }

    /// The same diagnostics when, after this race ended with both attempts transient, the
    /// operation's own retry (a plain attempt in `served`, no race) produced the final answer:
    /// the primary path won after the hedge was sent.
    pub(crate) fn answered_after_race(mut self, served: Option<&Region>) -> Self {
        if self.alternate_region.is_some() {
            self.terminal_state = HedgeTerminalState::PrimaryWonAfterHedge;
            self.response_region = served
                .cloned()
                .or_else(|| Some(self.primary_region.clone()));
        }
        self
    }

    /// The strategy in force.
    pub fn strategy_config(&self) -> HedgingStrategyConfig {
        self.strategy_config
    }
    /// The region the primary attempt went to.
    pub fn primary_region(&self) -> &Region {
        &self.primary_region
    }
    /// The region the alternate attempt went to, if it was sent.
    pub fn alternate_region(&self) -> Option<&Region> {
        self.alternate_region.as_ref()
    }
    /// The region whose response was returned, if any attempt produced a final result.
    pub fn response_region(&self) -> Option<&Region> {
        self.response_region.as_ref()
    }
    /// How the race ended.
    pub fn terminal_state(&self) -> HedgeTerminalState {
        self.terminal_state
    }
    /// True only when the alternate's response was returned.
    pub fn was_hedge(&self) -> bool {
        matches!(self.terminal_state, HedgeTerminalState::AlternateWon)
    }
}

impl serde::Serialize for HedgeDiagnostics {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("HedgeDiagnostics", 6)?;
        st.serialize_field(
            "threshold_ms",
            &(self.strategy_config.threshold.as_secs_f64() * 1e3),
        )?;
        st.serialize_field("primary_region", &self.primary_region)?;
        st.serialize_field("alternate_region", &self.alternate_region)?;
        st.serialize_field("response_region", &self.response_region)?;
        st.serialize_field("terminal_state", self.terminal_state.as_str())?;
        st.serialize_field("was_hedge", &self.was_hedge())?;
        st.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t() -> Duration {
        Duration::from_millis(50)
    }

    #[test]
    fn was_hedge_only_for_alternate_won() {
        let all = [
            HedgeTerminalState::PrimaryWonPreThreshold,
            HedgeTerminalState::PrimaryTransientPreThreshold,
            HedgeTerminalState::DeadlineExceededPreThreshold,
            HedgeTerminalState::PrimaryWonAfterHedge,
            HedgeTerminalState::AlternateWon,
            HedgeTerminalState::BothTransient {
                deadline_elapsed: true,
            },
            HedgeTerminalState::BothTransient {
                deadline_elapsed: false,
            },
            HedgeTerminalState::CancelledAwaitingPartner,
        ];
        for state in all {
            let d = HedgeDiagnostics::new(t(), "A".into(), Some("B".into()), state);
            assert_eq!(
                d.was_hedge(),
                state == HedgeTerminalState::AlternateWon,
                "{state:?}"
            );
        }
    }

    #[test]
    fn a_plain_retry_after_a_race_answers_for_the_primary_path() {
        let both = HedgeTerminalState::BothTransient {
            deadline_elapsed: false,
        };
        let d = HedgeDiagnostics::new(t(), "A".into(), Some("B".into()), both);
        let d = d.answered_after_race(Some(&Region::new("C")));
        assert_eq!(d.terminal_state(), HedgeTerminalState::PrimaryWonAfterHedge);
        assert_eq!(d.response_region(), Some(&Region::new("C")));
        assert!(!d.was_hedge());
        // No race with an alternate: nothing to relabel.
        let d = HedgeDiagnostics::new(t(), "A".into(), None, both).answered_after_race(None);
        assert_eq!(d.terminal_state(), both);
        assert_eq!(d.response_region(), None);
    }

    #[test]
    fn a_transient_primary_before_the_threshold_is_no_win() {
        let d = HedgeDiagnostics::new(
            t(),
            "A".into(),
            None,
            HedgeTerminalState::PrimaryTransientPreThreshold,
        );
        assert_eq!(d.response_region(), None);
        assert!(!d.was_hedge());
    }

    #[test]
    fn response_region_follows_the_winner() {
        let d = HedgeDiagnostics::new(
            t(),
            "A".into(),
            None,
            HedgeTerminalState::PrimaryWonPreThreshold,
        );
        assert_eq!(d.response_region(), Some(&Region::new("A")));
        assert_eq!(d.alternate_region(), None);
        let d = HedgeDiagnostics::new(
            t(),
            "A".into(),
            Some("B".into()),
            HedgeTerminalState::AlternateWon,
        );
        assert_eq!(d.response_region(), Some(&Region::new("B")));
        let d = HedgeDiagnostics::new(
            t(),
            "A".into(),
            Some("B".into()),
            HedgeTerminalState::BothTransient {
                deadline_elapsed: false,
            },
        );
        assert_eq!(d.response_region(), None);
    }
}

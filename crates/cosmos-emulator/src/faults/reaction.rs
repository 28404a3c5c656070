//! What a rule does to a request it fires on.

use std::time::Duration;

use rand::Rng;

use super::DelaySpec;

/// What a rule does to a request it fires on.
#[derive(Clone, Debug, PartialEq)]
pub enum Reaction {
    /// Wait, then serve the request normally.
    Delay(DelaySpec),
    /// Wait `delay`, then answer `status` with `x-ms-substatus: sub_status` and, when set,
    /// `x-ms-retry-after-ms`, without touching data.
    Respond {
        /// HTTP status (the JSON format accepts 200..=599).
        status: u16,
        /// Value of `x-ms-substatus`.
        sub_status: u32,
        /// Value of `x-ms-retry-after-ms`, when set.
        retry_after_ms: Option<u64>,
        /// Wait before answering.
        delay: DelaySpec,
    },
    /// Close the connection without answering.
    Close,
    /// Never answer; hold the request until the client gives up.
    Stall,
    /// Carry the request out (its write is stored), then close the connection without answering:
    /// the client cannot tell whether its request landed.
    ExecuteThenClose,
    /// Carry the request out (its write is stored), then answer `status` (e.g. 408 or 503) with
    /// `x-ms-substatus: sub_status` instead of the result.
    ExecuteThenRespond {
        /// HTTP status of the answer (the JSON format accepts 400..=599).
        status: u16,
        /// Value of `x-ms-substatus`.
        sub_status: u32,
    },
}

impl Reaction {
    /// Serve the request normally, at once: what a request gets when no rule fires.
    pub const SERVE: Reaction = Reaction::Delay(DelaySpec::ZERO);

    /// Wait a fixed number of milliseconds, then serve (negative or huge values are clamped).
    pub fn delay_ms(ms: u64) -> Self {
        Reaction::Delay(DelaySpec::Fixed { ms: ms as f64 })
    }

    /// Answer `status` with `sub_status` at once.
    pub fn respond(status: u16, sub_status: u32) -> Self {
        Reaction::Respond {
            status,
            sub_status,
            retry_after_ms: None,
            delay: DelaySpec::ZERO,
        }
    }

    /// Answer `status` with `sub_status` and `x-ms-retry-after-ms` at once (e.g. 429 throttling).
    pub fn respond_retry_after(status: u16, sub_status: u32, retry_after_ms: u64) -> Self {
        Reaction::Respond {
            status,
            sub_status,
            retry_after_ms: Some(retry_after_ms),
            delay: DelaySpec::ZERO,
        }
    }

    /// The delay this reaction asks for, drawn from its distribution, and what happens once it has
    /// passed: the same reaction without its delay ([`Reaction::SERVE`] for a delay).
    pub fn outcome<R: Rng + ?Sized>(&self, rng: &mut R) -> (Duration, Reaction) {
        match self {
            Reaction::Delay(spec) => (spec.sample(rng), Reaction::SERVE),
            Reaction::Respond {
                status,
                sub_status,
                retry_after_ms,
                delay,
            } => (
                delay.sample(rng),
                Reaction::Respond {
                    status: *status,
                    sub_status: *sub_status,
                    retry_after_ms: *retry_after_ms,
                    delay: DelaySpec::ZERO,
                },
            ),
            Reaction::Close => (Duration::ZERO, Reaction::Close),
            Reaction::Stall => (Duration::ZERO, Reaction::Stall),
            Reaction::ExecuteThenClose => (Duration::ZERO, Reaction::ExecuteThenClose),
            Reaction::ExecuteThenRespond { .. } => (Duration::ZERO, self.clone()),
        }
    }

    /// Whether the request is carried out (its effects stored) before the reaction's answer.
    pub fn executes(&self) -> bool {
        matches!(
            self,
            Reaction::Delay(_) | Reaction::ExecuteThenClose | Reaction::ExecuteThenRespond { .. }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::SmallRng;
    use rand::SeedableRng;

    #[test]
    fn outcomes_table() {
        let mut rng = SmallRng::seed_from_u64(1);
        let slow_503 = Reaction::Respond {
            status: 503,
            sub_status: 0,
            retry_after_ms: None,
            delay: DelaySpec::Fixed { ms: 30.0 },
        };
        let cases = [
            (
                Reaction::delay_ms(40),
                Duration::from_millis(40),
                Reaction::SERVE,
            ),
            (
                Reaction::respond(503, 0),
                Duration::ZERO,
                Reaction::Respond {
                    status: 503,
                    sub_status: 0,
                    retry_after_ms: None,
                    delay: DelaySpec::ZERO,
                },
            ),
            (
                Reaction::respond_retry_after(429, 3200, 15),
                Duration::ZERO,
                Reaction::Respond {
                    status: 429,
                    sub_status: 3200,
                    retry_after_ms: Some(15),
                    delay: DelaySpec::ZERO,
                },
            ),
            (
                slow_503,
                Duration::from_millis(30),
                Reaction::Respond {
                    status: 503,
                    sub_status: 0,
                    retry_after_ms: None,
                    delay: DelaySpec::ZERO,
                },
            ),
            (Reaction::Close, Duration::ZERO, Reaction::Close),
            (Reaction::Stall, Duration::ZERO, Reaction::Stall),
            (
                Reaction::ExecuteThenClose,
                Duration::ZERO,
                Reaction::ExecuteThenClose,
            ),
            (
                Reaction::ExecuteThenRespond {
                    status: 408,
                    sub_status: 0,
                },
                Duration::ZERO,
                Reaction::ExecuteThenRespond {
                    status: 408,
                    sub_status: 0,
                },
            ),
        ];
        for (reaction, delay, action) in cases {
            assert_eq!(reaction.outcome(&mut rng), (delay, action), "{reaction:?}");
        }
    }

    #[test]
    fn which_reactions_execute_the_request() {
        let cases = [
            (Reaction::SERVE, true),
            (Reaction::respond(503, 0), false),
            (Reaction::Close, false),
            (Reaction::Stall, false),
            (Reaction::ExecuteThenClose, true),
            (
                Reaction::ExecuteThenRespond {
                    status: 503,
                    sub_status: 0,
                },
                true,
            ),
        ];
        for (reaction, executes) in cases {
            assert_eq!(reaction.executes(), executes, "{reaction:?}");
        }
    }
}

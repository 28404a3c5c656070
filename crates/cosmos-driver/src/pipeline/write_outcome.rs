//! The unknown-outcome rule for writes: a write whose request was sent and whose answer was lost
//! may or may not have landed, and the driver says so instead of guessing.
//!
//! | fact | rule |
//! |---|---|
//! | a write attempt ends in a lost connection, a request timeout, an answer past the size cap, or 408/500/503 | its outcome is unknown ([`leaves_outcome_unknown`]) |
//! | a connection that never opened, a 410, 429 or any other answer | the outcome is known |
//! | which writes are sent again after an unknown outcome | idempotent ones (Replace, Delete) and Create, whose repeat answers 409 and never writes twice ([`may_resend_after_unknown_outcome`]) |
//! | the leg ends with a 2xx | the answer stands: a conditional or idempotent repeat that succeeds wrote once |
//! | the leg ends with a 400 | the answer stands: the same request could not have landed before |
//! | the leg ends otherwise after an unknown outcome (412, 404, 409, a timeout, retries exhausted, ...) | the outcome is unknown ([`end_is_ambiguous`]) |
//!
//! Reads never have an unknown outcome.

use super::attempt_outcome::AttemptOutcome;
use crate::protocol::{status, CosmosStatus, OperationType};

/// Whether this attempt of an `op` leaves its outcome unknown: the request was (or may have been)
/// sent and its answer does not say whether the write was carried out.
pub(crate) fn leaves_outcome_unknown(op: OperationType, outcome: &AttemptOutcome) -> bool {
    if op.is_read_only() {
        return false;
    }
    match outcome {
        // An answer past the size cap was not read: whatever it said, the write may have landed.
        AttemptOutcome::ConnectionLost | AttemptOutcome::TimedOut | AttemptOutcome::TooLarge => {
            true
        }
        AttemptOutcome::ConnectFailed => false,
        AttemptOutcome::Response { status: s, .. } => matches!(
            s.status,
            status::REQUEST_TIMEOUT | status::INTERNAL_SERVER_ERROR | status::SERVICE_UNAVAILABLE
        ),
    }
}

/// Whether an `op` whose earlier attempt reached the server (and may have been carried out) may be
/// sent again: a repeat of it can never write twice.
pub(crate) fn may_resend_after_unknown_outcome(op: OperationType) -> bool {
    op.is_idempotent() || op == OperationType::Create
}

/// Whether a write leg that ended with `end` (`None`: no answer at all) must be reported as an
/// unknown outcome, given that one of its attempts left the outcome unknown.
pub(crate) fn end_is_ambiguous(earlier_unknown: bool, end: Option<CosmosStatus>) -> bool {
    if !earlier_unknown {
        return false;
    }
    match end {
        Some(s) => s.status >= 400 && s.status != status::BAD_REQUEST,
        None => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn resp(code: u16) -> AttemptOutcome {
        AttemptOutcome::Response {
            status: CosmosStatus::new(code, 0),
            retry_after: None,
        }
    }

    #[test]
    fn which_attempts_leave_the_outcome_unknown() {
        use OperationType::*;
        let rows = [
            (Replace, AttemptOutcome::ConnectionLost, true),
            (Replace, AttemptOutcome::TimedOut, true),
            (Replace, AttemptOutcome::ConnectFailed, false),
            (Create, resp(408), true),
            (Create, resp(500), true),
            (Delete, resp(503), true),
            (Upsert, resp(410), false),
            (Replace, resp(429), false),
            (Replace, resp(412), false),
            (Replace, resp(200), false),
            (Patch, AttemptOutcome::TimedOut, true),
            (Read, AttemptOutcome::TimedOut, false),
            (Read, resp(503), false),
            (Query, AttemptOutcome::ConnectionLost, false),
        ];
        for (op, outcome, unknown) in rows {
            assert_eq!(
                leaves_outcome_unknown(op, &outcome),
                unknown,
                "{op:?} {outcome:?}"
            );
        }
        let throttled_with_delay = AttemptOutcome::Response {
            status: CosmosStatus::new(429, 3200),
            retry_after: Some(Duration::from_millis(5)),
        };
        assert!(!leaves_outcome_unknown(Replace, &throttled_with_delay));
    }

    #[test]
    fn which_writes_are_sent_again() {
        use OperationType::*;
        let rows = [
            (Replace, true),
            (Delete, true),
            (Create, true),
            (Upsert, false),
            (Patch, false),
        ];
        for (op, resend) in rows {
            assert_eq!(may_resend_after_unknown_outcome(op), resend, "{op:?}");
        }
    }

    #[test]
    fn which_ends_are_ambiguous() {
        let s = |code| Some(CosmosStatus::new(code, 0));
        let rows = [
            (false, s(412), false),
            (false, None, false),
            (true, s(200), false),
            (true, s(201), false),
            (true, s(204), false),
            (true, s(400), false),
            (true, s(412), true),
            (true, s(404), true),
            (true, s(409), true),
            (true, s(503), true),
            (true, s(429), true),
            (true, None, true),
        ];
        for (earlier, end, ambiguous) in rows {
            assert_eq!(
                end_is_ambiguous(earlier, end),
                ambiguous,
                "{earlier} {end:?}"
            );
        }
    }
}

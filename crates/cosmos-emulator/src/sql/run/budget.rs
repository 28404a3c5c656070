//! What a page does when a budget runs out, and the answers that name a limit.
//!
//! A page whose meter runs out ends at the row it was on, with a continuation that resumes there,
//! as long as it has consumed at least one row (or document) already: the next page starts that
//! row with a whole budget. A row that runs out a page's whole budget alone can never be answered
//! within a page, so the query is refused with 400 naming the limit. What a build holds is capped
//! per query (400 past it) and, with every other query's, by the store's query memory (429 while
//! other queries' pages hold it).

use super::QueryLimits;
use super::{QueryState, Reservation};
use crate::protocol::ApiError;
use crate::sql::sql_error::Limit;
use crate::sql::SqlError;

/// Sub-status of a 429 for a resource the emulator ran short of (the service's "system resource
/// unavailable").
const RESOURCE_UNAVAILABLE: u32 = 3092;
/// Bytes a build reserves ahead of what it holds, so the counter is not touched for every row.
const RESERVE_AHEAD: usize = 1 << 20;

/// Why evaluation stopped.
pub(super) enum Halt {
    /// A budget ran out.
    Budget(Limit),
    /// The query (or the store) failed: answered as it is.
    Fail(ApiError),
}

impl From<SqlError> for Halt {
    fn from(e: SqlError) -> Self {
        match e.limit {
            Some(limit) => Halt::Budget(limit),
            None => Halt::Fail(sql_error(e)),
        }
    }
}

impl From<ApiError> for Halt {
    fn from(e: ApiError) -> Self {
        Halt::Fail(e)
    }
}

/// A query that cannot be run: 400 with what the evaluator said.
pub(super) fn sql_error(e: SqlError) -> ApiError {
    match e.limit {
        Some(limit) => over_budget(limit),
        None => ApiError::bad_request(format!("The query could not be run: {e}")),
    }
}

/// 400 for a row that needs more than a whole page's budget.
pub(super) fn over_budget(limit: Limit) -> ApiError {
    ApiError::bad_request(match limit {
        Limit::Work(units) => format!(
            "The query cannot be answered: one row of it needs more than the {units} units of work a page may use (--query-page-work). Narrow it: fewer JOIN or subquery rows, smaller values and parameters."
        ),
        Limit::Time(t) => format!(
            "The query cannot be answered: one row of it takes longer than the {} ms a page may take (--query-page-ms). Narrow it: fewer JOIN or subquery rows, smaller values and parameters.",
            t.as_millis()
        ),
    })
}

/// 400 for a query whose build holds more than one query may.
pub(super) fn exceeded(limits: &QueryLimits) -> ApiError {
    ApiError::bad_request(format!(
        "The query exceeded the memory it may use: building its result (ORDER BY, aggregates, GROUP BY or DISTINCT over every row it reads) holds more than {} bytes (--query-build-bytes). Add filters or a partition key to narrow it.",
        limits.build_bytes
    ))
}

/// 429 while the queries in progress hold all the memory queries may hold together.
pub(super) fn no_room(limits: &QueryLimits) -> ApiError {
    let mut e = ApiError::new(
        429,
        format!(
            "The emulator's queries hold all of the {} bytes they may hold together (--query-memory-bytes); retry once they end.",
            limits.memory_bytes
        ),
    )
    .with_sub_status(RESOURCE_UNAVAILABLE);
    e.retry_after_ms = Some(500);
    e
}

/// Checks what a build holds (`held` bytes) against the per-query cap and keeps `reservation` at
/// least that large (ahead of it by a margin).
pub(super) fn hold(
    limits: &QueryLimits,
    state: &QueryState,
    reservation: &mut Reservation,
    held: usize,
) -> Result<(), ApiError> {
    if held > limits.build_bytes {
        return Err(exceeded(limits));
    }
    if held > reservation.bytes() {
        let ahead = held.saturating_add(RESERVE_AHEAD).min(limits.build_bytes);
        if !state.reserve(reservation, ahead) && !state.reserve(reservation, held) {
            return Err(no_room(limits));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn refusals_name_the_limit_and_what_to_do() {
        let limits = QueryLimits::default();
        for (e, names) in [
            (over_budget(Limit::Work(77)), "77 units"),
            (
                over_budget(Limit::Time(Duration::from_millis(1500))),
                "1500 ms",
            ),
            (exceeded(&limits), "--query-build-bytes"),
        ] {
            assert_eq!(e.status, 400);
            assert!(e.message.contains(names), "{}", e.message);
            assert!(e.message.contains("arrow"), "{}", e.message);
        }
        let busy = no_room(&limits);
        assert_eq!((busy.status, busy.sub_status), (429, RESOURCE_UNAVAILABLE));
        assert!(busy.message.contains("--query-memory-bytes"));
        let halted: Halt = SqlError::budget(Limit::Work(5)).into();
        assert!(matches!(halted, Halt::Budget(Limit::Work(5))));
        let failed: Halt = SqlError::new("bad").into();
        assert!(matches!(failed, Halt::Fail(e) if e.status == 400));
    }

    #[test]
    fn a_build_is_held_to_its_cap_and_the_total() {
        let limits = QueryLimits {
            build_bytes: 10 << 20,
            memory_bytes: 4 << 20,
            ..QueryLimits::default()
        };
        let state = QueryState::new(limits.memory_bytes, Duration::from_secs(60));
        let mut mine = state.memory.reservation();
        hold(&limits, &state, &mut mine, 1000).unwrap();
        assert!(mine.bytes() >= 1000);
        let mut other = state.memory.reservation();
        assert_eq!(
            hold(&limits, &state, &mut other, 3 << 20)
                .unwrap_err()
                .status,
            429
        );
        assert_eq!(
            hold(&limits, &state, &mut mine, 11 << 20)
                .unwrap_err()
                .status,
            400
        );
    }
}

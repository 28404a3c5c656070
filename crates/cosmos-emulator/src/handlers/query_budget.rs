//! The budget decisions of a query page, as pure functions over what the page has used.
//!
//! A streaming page stops at its item, byte, work or time budget and resumes from its
//! continuation. A query that must see every row before its first result (ORDER BY, aggregates,
//! GROUP BY, DISTINCT) reads its scope under the same work and time budget: when it runs out the
//! page ends empty with a continuation and the next page reads on; the result is built whole
//! only once the scope is read. What such a build holds is capped: past the cap the query is
//! refused, so no query holds the server's thread or memory without bound.

use std::time::Duration;

use crate::exchange::QueryLimits;
use crate::protocol::ApiError;

/// What a page has used so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Spent {
    /// Rows bound (JOINs and subqueries included).
    pub work: u64,
    pub elapsed: Duration,
    /// Bytes the answer being built holds (0 for a streaming page).
    pub held: usize,
}

/// What a page does next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Read on.
    Go,
    /// End the page here with a continuation.
    Yield,
    /// Refuse the query: its answer would hold more than the service allows.
    Refuse,
}

/// The next step of a page that has used `spent` under `limits`.
pub fn next_step(spent: Spent, limits: &QueryLimits) -> Step {
    if spent.held > limits.build_bytes {
        Step::Refuse
    } else if spent.work >= limits.page_work || spent.elapsed >= limits.page_time {
        Step::Yield
    } else {
        Step::Go
    }
}

/// The answer to a query refused by [`Step::Refuse`].
pub fn exceeded(limits: &QueryLimits) -> ApiError {
    ApiError::bad_request(format!(
        "The query exceeded the memory it may use: building its result (ORDER BY, aggregates, GROUP BY or DISTINCT over every row it reads) holds more than {} bytes. Add filters or a partition key to narrow it.",
        limits.build_bytes
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_reads_on_until_its_work_or_time_ends_and_a_build_is_refused_past_its_memory() {
        let limits = QueryLimits {
            page_work: 100,
            page_time: Duration::from_millis(50),
            build_bytes: 1000,
        };
        let ms = Duration::from_millis;
        let table = [
            (0, ms(0), 0, Step::Go),
            (99, ms(49), 1000, Step::Go),
            (100, ms(0), 0, Step::Yield),
            (5, ms(50), 0, Step::Yield),
            (1_000_000, ms(9_999), 0, Step::Yield),
            (0, ms(0), 1001, Step::Refuse),
            (100, ms(50), 1001, Step::Refuse),
        ];
        for (work, elapsed, held, want) in table {
            let spent = Spent {
                work,
                elapsed,
                held,
            };
            assert_eq!(next_step(spent, &limits), want, "{spent:?}");
        }
    }

    #[test]
    fn the_refusal_says_what_was_exceeded_and_what_to_do() {
        let e = exceeded(&QueryLimits::default());
        assert_eq!(e.status, 400);
        assert!(e.message.contains("exceeded the memory"), "{}", e.message);
        assert!(e.message.contains("narrow"), "{}", e.message);
    }
}

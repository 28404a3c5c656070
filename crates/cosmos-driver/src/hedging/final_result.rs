//! Final versus transient: which outcomes end a hedge race, and which may start one.
//!
//! A *final* result is one another region cannot improve on (a success, or an error every region
//! would give); the race returns it at once and drops the other attempt. A *transient* result might
//! come out differently in another region, so the other attempt keeps racing.

use crate::protocol::{CosmosStatus, StatusClass};

/// How one attempt of a hedge race ended, as far as the race is concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum LegOutcome {
    /// The result stands: return it and drop the other attempt.
    Final,
    /// Another region might do better: keep the other attempt racing.
    Transient,
}

/// Whether a response with this status ends a hedge race (the final classes of
/// [`StatusClass`]).
///
/// Final: every status below 400; 400, 401, 403 (any sub-status but 1008, WriteForbidden included:
/// an authorization decision another region cannot change in parallel), 405, 409, 412, 413, 422, 451,
/// 501, 505; 404 without a sub-status (the resource does not exist); 429 with sub-status 3200, 3210
/// or 3214 (RU budget or hot-partition throttles apply in every region).
///
/// Transient: everything else, notably 403/1008 (the region that answered does not serve the
/// account, so another region may: whichever leg gets it, the race waits for the other), 404/1002 (the replica lags the session token), 408, 410,
/// 429 without one of those sub-statuses (3092 included), 500 and 503.
pub(crate) const fn is_final_result(s: CosmosStatus) -> bool {
    StatusClass::of(s).is_final()
}

/// The race's classification of an attempt's result: `status` is `None` when no response arrived
/// (connection refused, reset, timed out), which is always transient.
pub(crate) const fn classify_hedge_result(status: Option<CosmosStatus>) -> LegOutcome {
    match status {
        Some(s) if is_final_result(s) => LegOutcome::Final,
        _ => LegOutcome::Transient,
    }
}

/// Whether a primary attempt that ended with this result may start the alternate attempt early,
/// without waiting out the threshold.
///
/// Only transient results qualify, and among throttles only 429/3092 (SystemResourceUnavailable:
/// transient capacity pressure another region can absorb). Any other 429 (a bare 429, RU budget
/// exhaustion, a hot partition key) is throttled identically everywhere or says nothing about
/// another region, so it never starts a hedge: hedging it would only double the load.
/// A missing response (`None`) qualifies.
pub(crate) const fn may_start_hedge_after(status: Option<CosmosStatus>) -> bool {
    match status {
        None => true,
        Some(s) => match StatusClass::of(s) {
            StatusClass::Throttled | StatusClass::ThrottledEverywhere => false,
            StatusClass::ThrottledRegionally => true,
            class => !class.is_final(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn st(code: u16, sub: u32) -> CosmosStatus {
        CosmosStatus::new(code, sub)
    }

    /// (status, sub-status, final?) — the §7.2 table row by row, plus the spots around its edges.
    const TABLE: &[(u16, u32, bool)] = &[
        (100, 0, true),
        (200, 0, true),
        (201, 0, true),
        (204, 0, true),
        (304, 0, true),
        (399, 0, true),
        (400, 0, true),
        (400, 1001, true),
        (401, 0, true),
        (402, 0, false),
        (403, 0, true),
        (403, 3, true),
        (403, 1008, false),
        (404, 0, true),
        (404, 1002, false),
        (404, 1003, false),
        (405, 0, true),
        (406, 0, false),
        (408, 0, false),
        (409, 0, true),
        (410, 0, false),
        (410, 1002, false),
        (412, 0, true),
        (413, 0, true),
        (422, 0, true),
        (429, 0, false),
        (429, 3092, false),
        (429, 3200, true),
        (429, 3210, true),
        (429, 3214, true),
        (429, 3201, false),
        (449, 0, false),
        (451, 0, true),
        (500, 0, false),
        (501, 0, true),
        (502, 0, false),
        (503, 0, false),
        (503, 21008, false),
        (504, 0, false),
        (505, 0, true),
    ];

    #[test]
    fn is_final_result_table() {
        for &(code, sub, want) in TABLE {
            assert_eq!(is_final_result(st(code, sub)), want, "{code}/{sub}");
        }
    }

    #[test]
    fn is_final_result_success() {
        assert!(is_final_result(st(200, 0)));
    }

    #[test]
    fn is_final_result_conflict() {
        assert!(is_final_result(st(409, 0)));
    }

    #[test]
    fn is_final_result_503() {
        assert!(!is_final_result(st(503, 0)));
    }

    #[test]
    fn is_final_result_404_0() {
        assert!(is_final_result(st(404, 0)));
    }

    #[test]
    fn is_final_result_404_1002() {
        assert!(!is_final_result(st(404, 1002)));
    }

    #[test]
    fn is_final_result_429() {
        assert!(!is_final_result(st(429, 0)));
        assert!(!is_final_result(st(429, 3092)));
    }

    #[test]
    fn is_final_result_403_any_sub_status_but_account_not_in_region() {
        for sub in [0, 3, 5, 9999] {
            assert!(is_final_result(st(403, sub)), "403/{sub}");
        }
        // The region that answered does not serve the account: another region may.
        assert!(!is_final_result(st(403, 1008)));
    }

    /// (status, sub-status, may start a hedge?) — §7.2.1.
    const SPAWN_TABLE: &[(u16, u32, bool)] = &[
        (200, 0, false),
        (404, 0, false),
        (403, 3, false),
        (404, 1002, true),
        (408, 0, true),
        (410, 1002, true),
        (429, 3092, true),
        (429, 0, false),
        (429, 3200, false),
        (429, 3210, false),
        (429, 3214, false),
        (429, 3201, false),
        (500, 0, true),
        (503, 0, true),
        (501, 0, false),
    ];

    #[test]
    fn throttle_substatus_gates_hedge_eligibility() {
        for &(code, sub, want) in SPAWN_TABLE {
            assert_eq!(
                may_start_hedge_after(Some(st(code, sub))),
                want,
                "{code}/{sub}"
            );
        }
        assert!(
            may_start_hedge_after(None),
            "a missing response may start a hedge"
        );
    }

    /// Every status and sub-status the driver names, swept against both predicates.
    fn sweep() -> impl Iterator<Item = CosmosStatus> {
        const SUBS: [u32; 9] = [0, 3, 1002, 1008, 3092, 3200, 3210, 3214, 21008];
        (100u16..600).flat_map(|code| SUBS.iter().map(move |&sub| st(code, sub)))
    }

    #[test]
    fn result_is_final_agrees_with_classify_hedge_result() {
        for s in sweep() {
            let want = if is_final_result(s) {
                LegOutcome::Final
            } else {
                LegOutcome::Transient
            };
            assert_eq!(classify_hedge_result(Some(s)), want, "{s}");
        }
        assert_eq!(classify_hedge_result(None), LegOutcome::Transient);
    }

    #[test]
    fn a_hedge_never_starts_on_a_final_result() {
        for s in sweep() {
            if may_start_hedge_after(Some(s)) {
                assert!(!is_final_result(s), "{s} may start a hedge but is final");
            }
        }
    }
}

//! The one classification of the service's answers. The retry decision and the hedge race both
//! read a status through [`StatusClass::of`], so "what does 429/3092 mean" is written once.

use super::cosmos_status::{status, sub_status, CosmosStatus};

/// What an answer's status and sub-status mean, before anyone decides what to do about it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum StatusClass {
    /// Below 400: the operation succeeded.
    Success,
    /// 429/3092 (SystemResourceUnavailable): transient capacity pressure another region can absorb.
    ThrottledRegionally,
    /// 429/3200, 3210 or 3214: an RU budget or hot-partition throttle that applies in every region.
    ThrottledEverywhere,
    /// Any other 429: throttled, and another region says nothing about it.
    Throttled,
    /// 404/1002: the replica has not caught up with the session token.
    SessionNotAvailable,
    /// 403/3: the region no longer takes writes (the write region moved).
    WriteForbidden,
    /// 403/1008: the account is not available in this region.
    AccountNotInRegion,
    /// 410/1002, 410/1007, 410/1008: the partition split, merged or moved; the request was not
    /// executed. Refresh what is known of the container's ranges and retry in place.
    PartitionMoved,
    /// 410/1000: the name cache is stale (the container was recreated); the request was not
    /// executed. Refresh the container's metadata and retry in place.
    NameCacheStale,
    /// 408, 410 (other sub-statuses), 500, 503: the partition failed to answer this time; another
    /// attempt may succeed.
    Transient,
    /// An answer every region would give: 400, 401, any other 403, 404 without a sub-status, 405,
    /// 409, 412, 413, 422, 451, 501, 505.
    Definitive,
    /// Anything else (e.g. 404 with another sub-status, 502, 504): not retried, and not final
    /// either, since another region might answer differently.
    Unrecognized,
}

impl StatusClass {
    /// The class of `s`.
    pub(crate) const fn of(s: CosmosStatus) -> Self {
        if s.status < 400 {
            return StatusClass::Success;
        }
        match s.status {
            status::TOO_MANY_REQUESTS => match s.sub_status {
                sub_status::SYSTEM_RESOURCE_UNAVAILABLE => StatusClass::ThrottledRegionally,
                sub_status::RU_BUDGET_EXCEEDED
                | sub_status::RU_BUDGET_EXCEEDED_FOR_MASTER
                | sub_status::HOT_PARTITION_KEY_THROTTLED => StatusClass::ThrottledEverywhere,
                _ => StatusClass::Throttled,
            },
            status::NOT_FOUND => match s.sub_status {
                sub_status::NONE => StatusClass::Definitive,
                sub_status::READ_SESSION_NOT_AVAILABLE => StatusClass::SessionNotAvailable,
                _ => StatusClass::Unrecognized,
            },
            status::FORBIDDEN => match s.sub_status {
                sub_status::WRITE_FORBIDDEN => StatusClass::WriteForbidden,
                sub_status::DATABASE_ACCOUNT_NOT_FOUND => StatusClass::AccountNotInRegion,
                _ => StatusClass::Definitive,
            },
            status::GONE => match s.sub_status {
                sub_status::PARTITION_KEY_RANGE_GONE
                | sub_status::COMPLETING_SPLIT
                | sub_status::COMPLETING_PARTITION_MIGRATION => StatusClass::PartitionMoved,
                sub_status::NAME_CACHE_STALE => StatusClass::NameCacheStale,
                _ => StatusClass::Transient,
            },
            status::REQUEST_TIMEOUT
            | status::INTERNAL_SERVER_ERROR
            | status::SERVICE_UNAVAILABLE => StatusClass::Transient,
            status::BAD_REQUEST
            | status::UNAUTHORIZED
            | status::METHOD_NOT_ALLOWED
            | status::CONFLICT
            | status::PRECONDITION_FAILED
            | status::PAYLOAD_TOO_LARGE
            | status::UNPROCESSABLE_ENTITY
            | status::UNAVAILABLE_FOR_LEGAL_REASONS
            | status::NOT_IMPLEMENTED
            | status::HTTP_VERSION_NOT_SUPPORTED => StatusClass::Definitive,
            _ => StatusClass::Unrecognized,
        }
    }

    /// Whether no other region could give a better answer: a success, a definitive error, a
    /// throttle that applies everywhere, or an authorization decision (403/3 and 403 without a
    /// known sub-status).
    ///
    /// 403/1008 is the one 403 that is not final: it says the region that answered does not serve
    /// the account (a region just removed from it), which says nothing about any other region. A
    /// hedge race keeps waiting for the other attempt, the same whichever attempt got it.
    pub(crate) const fn is_final(self) -> bool {
        matches!(
            self,
            StatusClass::Success
                | StatusClass::Definitive
                | StatusClass::ThrottledEverywhere
                | StatusClass::WriteForbidden
        )
    }
}

/// Whether `s` says the partition key range a request named is gone: 410 with sub-status 1002
/// (the range split or merged), 1007 (a split completing) or 1008 (a migration completing). The
/// one rule for "range gone": the retry decision, the race, the query pager, the change feed,
/// read many and bulk all ask it. A request pinned to such a range gets the same answer from every
/// region and every retry; only reading the ranges again helps.
pub const fn is_range_gone(s: CosmosStatus) -> bool {
    matches!(StatusClass::of(s), StatusClass::PartitionMoved)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (status, sub-status, class) row by row.
    const TABLE: &[(u16, u32, StatusClass)] = &[
        (200, 0, StatusClass::Success),
        (304, 0, StatusClass::Success),
        (400, 0, StatusClass::Definitive),
        (401, 0, StatusClass::Definitive),
        (402, 0, StatusClass::Unrecognized),
        (403, 0, StatusClass::Definitive),
        (403, 3, StatusClass::WriteForbidden),
        (403, 1008, StatusClass::AccountNotInRegion),
        (403, 5, StatusClass::Definitive),
        (404, 0, StatusClass::Definitive),
        (404, 1002, StatusClass::SessionNotAvailable),
        (404, 1003, StatusClass::Unrecognized),
        (405, 0, StatusClass::Definitive),
        (408, 0, StatusClass::Transient),
        (409, 0, StatusClass::Definitive),
        (410, 0, StatusClass::Transient),
        (410, 1000, StatusClass::NameCacheStale),
        (410, 1002, StatusClass::PartitionMoved),
        (410, 1007, StatusClass::PartitionMoved),
        (410, 1008, StatusClass::PartitionMoved),
        (410, 1001, StatusClass::Transient),
        (412, 0, StatusClass::Definitive),
        (413, 0, StatusClass::Definitive),
        (422, 0, StatusClass::Definitive),
        (429, 0, StatusClass::Throttled),
        (429, 3092, StatusClass::ThrottledRegionally),
        (429, 3200, StatusClass::ThrottledEverywhere),
        (429, 3210, StatusClass::ThrottledEverywhere),
        (429, 3214, StatusClass::ThrottledEverywhere),
        (429, 3201, StatusClass::Throttled),
        (449, 0, StatusClass::Unrecognized),
        (451, 0, StatusClass::Definitive),
        (500, 0, StatusClass::Transient),
        (501, 0, StatusClass::Definitive),
        (502, 0, StatusClass::Unrecognized),
        (503, 0, StatusClass::Transient),
        (503, 21008, StatusClass::Transient),
        (504, 0, StatusClass::Unrecognized),
        (505, 0, StatusClass::Definitive),
    ];

    #[test]
    fn classes_by_status() {
        for &(code, sub, class) in TABLE {
            assert_eq!(
                StatusClass::of(CosmosStatus::new(code, sub)),
                class,
                "{code}/{sub}"
            );
        }
    }

    #[test]
    fn range_gone_is_exactly_the_split_merge_and_migration_sub_statuses() {
        for &(code, sub, _) in TABLE {
            let want = code == 410 && matches!(sub, 1002 | 1007 | 1008);
            assert_eq!(
                is_range_gone(CosmosStatus::new(code, sub)),
                want,
                "{code}/{sub}"
            );
        }
        for (code, sub, want) in [(410, 1000, false), (410, 0, false), (404, 1002, false)] {
            assert_eq!(
                is_range_gone(CosmosStatus::new(code, sub)),
                want,
                "{code}/{sub}"
            );
        }
    }

    #[test]
    fn final_classes() {
        let finals: Vec<_> = TABLE
            .iter()
            .filter(|(_, _, class)| class.is_final())
            .map(|&(code, sub, _)| (code, sub))
            .collect();
        assert!(finals.contains(&(403, 3)) && finals.contains(&(429, 3200)));
        assert!(
            !finals.contains(&(403, 1008)),
            "a region outside the account is no answer"
        );
        assert!(!finals.contains(&(404, 1002)) && !finals.contains(&(429, 3092)));
        assert!(!finals.contains(&(503, 0)) && !finals.contains(&(502, 0)));
    }
}

//! What a bulk run does with an answer: per operation (finished, throttled, sent to a range that
//! no longer holds its key) and per batch request (answered, throttled, misrouted, failed). Pure
//! functions, table-tested.

use std::time::Duration;

use crate::error::CosmosError;
use crate::protocol::{is_range_gone, CosmosStatus, StatusClass};

/// 429 Too Many Requests.
const THROTTLED: u16 = 429;

/// What becomes of one operation after its batch was answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OperationFate {
    /// Its result is final (success or the service's refusal).
    Finished,
    /// Throttled: send it again after the wait.
    Throttled(Option<Duration>),
    /// The range no longer holds its key: read the ranges again and route it anew.
    Misrouted,
}

/// Whether `status` says the batch went to a range that no longer holds its keys: the range is
/// gone (split, merged, moved: [`crate::protocol::is_range_gone`]) or the container's metadata
/// was stale (410/1000). Any other 410 is a transient failure the pipeline already retried.
fn misrouted(status: CosmosStatus) -> bool {
    is_range_gone(status) || StatusClass::of(status) == StatusClass::NameCacheStale
}

/// The fate of an operation the service answered with `status`.
pub(crate) fn operation_fate(status: CosmosStatus, retry_after: Option<Duration>) -> OperationFate {
    match status.status {
        THROTTLED => OperationFate::Throttled(retry_after),
        _ if misrouted(status) => OperationFate::Misrouted,
        _ => OperationFate::Finished,
    }
}

/// What becomes of a batch whose request failed as a whole.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RequestFate {
    /// Throttled past the pipeline's retries: send its operations again after the wait.
    Throttled(Option<Duration>),
    /// The range is gone: read the ranges again and route its operations anew.
    Misrouted,
    /// Any other failure: each of its operations finishes with the error.
    Failed,
}

/// The fate of a batch whose request failed with `error`.
pub(crate) fn request_fate(error: &CosmosError) -> RequestFate {
    match error.cosmos_status() {
        Some(s) if s.status == THROTTLED => {
            RequestFate::Throttled(error.headers().and_then(|h| h.retry_after()))
        }
        Some(s) if misrouted(s) => RequestFate::Misrouted,
        _ => RequestFate::Failed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    #[test]
    fn operation_fates() {
        let ms = Some(Duration::from_millis(7));
        let cases = [
            ((201, 0), None, OperationFate::Finished),
            ((409, 0), None, OperationFate::Finished),
            ((404, 0), None, OperationFate::Finished),
            ((412, 0), None, OperationFate::Finished),
            ((429, 3200), ms, OperationFate::Throttled(ms)),
            ((429, 0), None, OperationFate::Throttled(None)),
            ((410, 1002), None, OperationFate::Misrouted),
            ((410, 1007), None, OperationFate::Misrouted),
            ((410, 1008), None, OperationFate::Misrouted),
            ((410, 1000), None, OperationFate::Misrouted),
            ((410, 0), None, OperationFate::Finished),
            ((410, 1001), None, OperationFate::Finished),
        ];
        for ((status, sub), wait, expected) in cases {
            assert_eq!(
                operation_fate(CosmosStatus::new(status, sub), wait),
                expected,
                "{status}/{sub}"
            );
        }
    }

    #[test]
    fn request_fates() {
        let err = |status: u16, sub: u32| {
            CosmosError::new(ErrorKind::Service, "x").with_status(CosmosStatus::new(status, sub))
        };
        assert_eq!(request_fate(&err(429, 3200)), RequestFate::Throttled(None));
        assert_eq!(request_fate(&err(410, 1002)), RequestFate::Misrouted);
        assert_eq!(request_fate(&err(410, 1008)), RequestFate::Misrouted);
        assert_eq!(request_fate(&err(410, 0)), RequestFate::Failed);
        assert_eq!(request_fate(&err(400, 0)), RequestFate::Failed);
        assert_eq!(request_fate(&err(503, 0)), RequestFate::Failed);
        assert_eq!(
            request_fate(&CosmosError::invalid_input("bad")),
            RequestFate::Failed
        );
    }
}

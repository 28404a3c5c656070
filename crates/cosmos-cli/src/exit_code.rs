//! The process's exit status, by class of failure, so scripts can tell a missing item from a
//! throttled request without reading the message. `cosmos --help` lists them.

use cosmos_driver::ErrorKind;

/// What a failed command's exit status says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExitClass {
    /// Any other failure (including benchmark runs with failed operations, see `--allow-errors`).
    Failure,
    /// Bad usage: unknown flags, missing or conflicting settings (clap's own errors also exit 2).
    Usage,
    /// Bad input: a document, value or request the service or the command refused (400, or caught
    /// before sending).
    BadInput,
    /// The resource does not exist (404).
    NotFound,
    /// A conflict or a failed precondition (409, 412): it exists already, or its etag changed.
    Conflict,
    /// Throttled (429) past every retry.
    Throttled,
    /// Not signed in or not allowed (401, 403, or no credential gave a token).
    Auth,
    /// The account could not be reached or did not answer in time (connection failures, timeouts,
    /// 408, 503, no region left, or a write whose outcome is unknown).
    Unreachable,
}

impl ExitClass {
    /// The exit status.
    pub fn code(self) -> u8 {
        match self {
            ExitClass::Failure => 1,
            ExitClass::Usage => 2,
            ExitClass::BadInput => 3,
            ExitClass::NotFound => 4,
            ExitClass::Conflict => 5,
            ExitClass::Throttled => 6,
            ExitClass::Auth => 7,
            ExitClass::Unreachable => 8,
        }
    }
}

/// The class of a driver error, from its kind and status alone.
pub fn classify(kind: ErrorKind, status: Option<u16>) -> ExitClass {
    match (kind, status) {
        (_, Some(404)) => ExitClass::NotFound,
        (_, Some(409 | 412)) => ExitClass::Conflict,
        (_, Some(429)) => ExitClass::Throttled,
        (_, Some(401 | 403)) | (ErrorKind::Credential, _) => ExitClass::Auth,
        (_, Some(408 | 503))
        | (
            ErrorKind::Transport
            | ErrorKind::EndToEndTimeout
            | ErrorKind::RequestTimeout
            | ErrorKind::NoEligibleRegion
            | ErrorKind::OutcomeUnknown,
            _,
        ) => ExitClass::Unreachable,
        (_, Some(400 | 413 | 414)) | (ErrorKind::InvalidInput, _) => ExitClass::BadInput,
        _ => ExitClass::Failure,
    }
}

/// The exit statuses, as `--help` shows them.
pub const HELP: &str = "\
Exit status:
  0  success
  1  any other failure (a benchmark whose operations failed, without --allow-errors)
  2  usage: unknown or conflicting flags, a missing endpoint or key
  3  bad input: a document or value refused (400), by the service or before sending
  4  not found (404)
  5  conflict or failed precondition (409, 412)
  6  throttled (429) past every retry
  7  authentication or authorization (401, 403, no credential gave a token)
  8  unreachable or timed out (connection failure, timeout, 408, 503, outcome unknown)";

#[cfg(test)]
mod tests {
    use super::*;
    use ErrorKind as K;

    #[test]
    fn classes_by_kind_and_status() {
        for (kind, status, want) in [
            (K::Service, Some(404), ExitClass::NotFound),
            (K::Service, Some(409), ExitClass::Conflict),
            (K::Service, Some(412), ExitClass::Conflict),
            (K::Service, Some(429), ExitClass::Throttled),
            (K::Service, Some(401), ExitClass::Auth),
            (K::Service, Some(403), ExitClass::Auth),
            (K::Credential, None, ExitClass::Auth),
            (K::Service, Some(408), ExitClass::Unreachable),
            (K::Service, Some(503), ExitClass::Unreachable),
            (K::Transport, None, ExitClass::Unreachable),
            (K::EndToEndTimeout, None, ExitClass::Unreachable),
            (K::RequestTimeout, None, ExitClass::Unreachable),
            (K::NoEligibleRegion, None, ExitClass::Unreachable),
            (K::OutcomeUnknown, None, ExitClass::Unreachable),
            (K::Service, Some(400), ExitClass::BadInput),
            (K::Service, Some(413), ExitClass::BadInput),
            (K::InvalidInput, None, ExitClass::BadInput),
            (K::Service, Some(500), ExitClass::Failure),
            (K::Deserialization, None, ExitClass::Failure),
            (K::NotSupported, None, ExitClass::Failure),
        ] {
            assert_eq!(classify(kind, status), want, "{kind:?} {status:?}");
        }
    }

    #[test]
    fn codes_are_distinct_and_documented() {
        let all = [
            ExitClass::Failure,
            ExitClass::Usage,
            ExitClass::BadInput,
            ExitClass::NotFound,
            ExitClass::Conflict,
            ExitClass::Throttled,
            ExitClass::Auth,
            ExitClass::Unreachable,
        ];
        let mut codes: Vec<u8> = all.iter().map(|c| c.code()).collect();
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), all.len());
        for c in all {
            assert!(HELP.contains(&format!("\n  {}  ", c.code())), "{c:?}");
        }
    }
}

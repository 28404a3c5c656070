//! The error every driver operation returns.

use std::error::Error as StdError;
use std::fmt;
use std::time::Duration;

use bytes::Bytes;

use crate::diagnostics::DiagnosticsContext;
use crate::protocol::ResponseHeaders;
use crate::protocol::{status, sub_status, CosmosStatus, ProtocolError};

/// What kind of failure an error is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The service answered with an error status.
    Service,
    /// The request could not be sent or its response could not be read.
    Transport,
    /// The operation's end-to-end timeout elapsed (retries included).
    EndToEndTimeout,
    /// A single attempt exceeded the request timeout and no retry was possible.
    RequestTimeout,
    /// The caller's input was refused before any request was sent.
    InvalidInput,
    /// The credential could not produce an authorization header.
    Credential,
    /// Every region that could serve the operation is excluded.
    NoEligibleRegion,
    /// A response body could not be decoded.
    Deserialization,
    /// The driver does not support the requested operation.
    NotSupported,
    /// A write was sent and nobody can tell whether it landed: its answer was lost (a timeout, a
    /// connection closed after sending, 408/500/503) and no later attempt settled it (a retry's
    /// 412, 404 or 409 is what the first write's success would also cause). The item may or may
    /// not hold the write: read it before deciding what to do. The error's
    /// [`source`](std::error::Error::source) is the last attempt's error; the error itself has
    /// no status, so it is never mistaken for that attempt's definite 412, 404 or 409.
    OutcomeUnknown,
}

struct Inner {
    kind: ErrorKind,
    status: Option<CosmosStatus>,
    message: String,
    body: Option<Bytes>,
    headers: Option<ResponseHeaders>,
    diagnostics: DiagnosticsContext,
    source: Option<Box<dyn StdError + Send + Sync + 'static>>,
}

/// A value the protocol's rules refused is the caller's input, refused before any request.
impl From<ProtocolError> for CosmosError {
    fn from(e: ProtocolError) -> Self {
        CosmosError::invalid_input(e.message())
    }
}

/// An operation's failure: status and sub-status when the service answered, a message a person can
/// act on, the service's error body, the diagnostics of every attempt, and the underlying cause.
pub struct CosmosError(Box<Inner>);

impl CosmosError {
    /// An error of `kind` with `message`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        CosmosError(Box::new(Inner {
            kind,
            status: None,
            message: message.into(),
            body: None,
            headers: None,
            diagnostics: DiagnosticsContext::default(),
            source: None,
        }))
    }

    /// A write whose outcome is unknown ([`ErrorKind::OutcomeUnknown`]): `message` says why,
    /// `cause` (the last attempt's error) becomes the source and lends its diagnostics.
    pub fn outcome_unknown(message: impl Into<String>, cause: CosmosError) -> Self {
        let diagnostics = cause.diagnostics().clone();
        Self::new(ErrorKind::OutcomeUnknown, message)
            .with_diagnostics(diagnostics)
            .with_source(cause)
    }

    /// Input refused before any request was sent.
    pub fn invalid_input(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidInput, message)
    }

    /// The service answered `status` with `body`.
    pub fn service(status: CosmosStatus, headers: ResponseHeaders, body: Bytes) -> Self {
        let message = service_message(status, &body);
        let mut e = Self::new(ErrorKind::Service, message);
        e.0.status = Some(status);
        e.0.headers = Some(headers);
        e.0.body = Some(body);
        e
    }

    /// The same error with `source` as its cause.
    pub fn with_source(mut self, source: impl StdError + Send + Sync + 'static) -> Self {
        self.0.source = Some(Box::new(source));
        self
    }

    /// The same error with its diagnostics replaced.
    pub fn with_diagnostics(mut self, diagnostics: DiagnosticsContext) -> Self {
        self.0.diagnostics = diagnostics;
        self
    }

    /// The same error with `context` put in front of the message.
    pub fn with_context(mut self, context: impl fmt::Display) -> Self {
        self.0.message = format!("{context}: {}", self.0.message);
        self
    }

    /// The same error with the headers of the answer it is about (a page that could not be read).
    pub(crate) fn with_headers(mut self, headers: ResponseHeaders) -> Self {
        self.0.headers = Some(headers);
        self
    }

    /// The same error with a status attached (for synthesized errors such as PATCH exhaustion).
    pub fn with_status(mut self, status: CosmosStatus) -> Self {
        self.0.status = Some(status);
        self
    }

    /// What kind of failure this is.
    pub fn kind(&self) -> ErrorKind {
        self.0.kind
    }

    /// The HTTP status, when the service answered.
    pub fn status(&self) -> Option<u16> {
        self.0.status.map(|s| s.status)
    }

    /// The Cosmos DB sub-status, when the service answered (0 when it sent none).
    pub fn sub_status(&self) -> Option<u32> {
        self.0.status.map(|s| s.sub_status)
    }

    /// Status and sub-status together.
    pub fn cosmos_status(&self) -> Option<CosmosStatus> {
        self.0.status
    }

    /// What went wrong, in words.
    pub fn message(&self) -> &str {
        &self.0.message
    }

    /// The service's error body, when it sent one.
    pub fn body(&self) -> Option<&Bytes> {
        self.0.body.as_ref()
    }

    /// The response headers, when the service answered (session token, request charge, ...).
    pub fn headers(&self) -> Option<&ResponseHeaders> {
        self.0.headers.as_ref()
    }

    /// The diagnostics of every attempt made before the operation failed.
    pub fn diagnostics(&self) -> &DiagnosticsContext {
        &self.0.diagnostics
    }

    fn is(&self, code: u16) -> bool {
        self.status() == Some(code)
    }

    /// 404 (any sub-status).
    pub fn is_not_found(&self) -> bool {
        self.is(status::NOT_FOUND)
    }
    /// 412: an If-Match precondition failed.
    pub fn is_precondition_failed(&self) -> bool {
        self.is(status::PRECONDITION_FAILED)
    }
    /// 409: the resource already exists.
    pub fn is_conflict(&self) -> bool {
        self.is(status::CONFLICT)
    }
    /// 410/1002, 410/1007 or 410/1008: the partition key range the request named is gone (split,
    /// merged or moved); read the ranges again ([`crate::protocol::is_range_gone`]).
    pub fn is_range_gone(&self) -> bool {
        self.0.status.is_some_and(crate::protocol::is_range_gone)
    }
    /// 429: the request was throttled (after the driver's own throttling retries).
    pub fn is_throttled(&self) -> bool {
        self.is(status::TOO_MANY_REQUESTS)
    }
    /// A timeout: the end-to-end timeout, a request timeout, or a 408 from the service; for an
    /// unknown outcome, whether its last attempt timed out.
    pub fn is_timeout(&self) -> bool {
        matches!(
            self.0.kind,
            ErrorKind::EndToEndTimeout | ErrorKind::RequestTimeout
        ) || self.is(status::REQUEST_TIMEOUT)
            || self.unknown_outcome_cause().is_some_and(Self::is_timeout)
    }
    /// The end-to-end timeout of the operation elapsed (for an unknown outcome: it ended the
    /// operation before the outcome was known).
    pub fn is_end_to_end_timeout(&self) -> bool {
        self.0.kind == ErrorKind::EndToEndTimeout
            || self
                .unknown_outcome_cause()
                .is_some_and(Self::is_end_to_end_timeout)
    }
    /// The error an unknown outcome ([`ErrorKind::OutcomeUnknown`]) carries as its source.
    fn unknown_outcome_cause(&self) -> Option<&CosmosError> {
        if self.0.kind != ErrorKind::OutcomeUnknown {
            return None;
        }
        self.0.source.as_deref()?.downcast_ref::<CosmosError>()
    }
    /// A write was sent and whether it landed is unknown ([`ErrorKind::OutcomeUnknown`]).
    pub fn is_outcome_unknown(&self) -> bool {
        self.0.kind == ErrorKind::OutcomeUnknown
    }
    /// 401: the credential was refused.
    pub fn is_unauthorized(&self) -> bool {
        self.is(status::UNAUTHORIZED)
    }
    /// 403 (any sub-status).
    pub fn is_forbidden(&self) -> bool {
        self.is(status::FORBIDDEN)
    }
    /// 400: the service refused the request as malformed.
    pub fn is_bad_request(&self) -> bool {
        self.is(status::BAD_REQUEST)
    }
    /// 503: the service was unavailable (after the driver's retries).
    pub fn is_service_unavailable(&self) -> bool {
        self.is(status::SERVICE_UNAVAILABLE)
    }
    /// 404/1002: no replica had caught up with the session token.
    pub fn is_read_session_not_available(&self) -> bool {
        self.0.status
            == Some(CosmosStatus::new(
                status::NOT_FOUND,
                sub_status::READ_SESSION_NOT_AVAILABLE,
            ))
    }
    /// The input was refused before any request was sent.
    pub fn is_invalid_input(&self) -> bool {
        self.0.kind == ErrorKind::InvalidInput
    }
    /// The request never produced a response (connection failure, reset, TLS error).
    pub fn is_transport(&self) -> bool {
        self.0.kind == ErrorKind::Transport
    }
    /// Every eligible region was excluded.
    pub fn is_no_eligible_region(&self) -> bool {
        self.0.kind == ErrorKind::NoEligibleRegion
    }

    /// An end-to-end timeout error.
    pub(crate) fn end_to_end_timeout(
        timeout: Duration,
        attempts: usize,
        last: Option<CosmosStatus>,
    ) -> Self {
        let last = match last {
            Some(s) => format!("; the last attempt answered {s}"),
            None => String::new(),
        };
        Self::new(
            ErrorKind::EndToEndTimeout,
            format!(
                "the operation did not complete within its end-to-end timeout of {timeout:?} ({attempts} attempt{} made{last})",
                if attempts == 1 { "" } else { "s" }
            ),
        )
    }
}

/// A message for a service error: the service's own `message` field when the body carries one.
fn service_message(status: CosmosStatus, body: &Bytes) -> String {
    #[derive(serde::Deserialize)]
    struct ErrorBody<'a> {
        #[serde(borrow)]
        message: Option<std::borrow::Cow<'a, str>>,
        #[serde(borrow)]
        code: Option<std::borrow::Cow<'a, str>>,
    }
    let what = match (status.status, status.sub_status) {
        (404, 1002) => "read session not available",
        (404, _) => "not found",
        (409, _) => "conflict",
        (412, _) => "precondition failed",
        (429, _) => "request rate too large",
        (401, _) => "unauthorized",
        (403, 3) => "write forbidden in this region",
        (403, _) => "forbidden",
        (400, _) => "bad request",
        (408, _) => "request timeout",
        (410, _) => "gone",
        (413, _) => "request entity too large",
        (500, _) => "internal server error",
        (503, _) => "service unavailable",
        _ => "error",
    };
    let detail = serde_json::from_slice::<ErrorBody<'_>>(body)
        .ok()
        .and_then(|b| b.message.or(b.code))
        .map(|m| m.chars().take(500).collect::<String>());
    match detail {
        Some(d) if !d.is_empty() => format!("the service answered {status} ({what}): {d}"),
        _ => format!("the service answered {status} ({what})"),
    }
}

impl fmt::Display for CosmosError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.message)
    }
}

impl fmt::Debug for CosmosError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CosmosError")
            .field("kind", &self.0.kind)
            .field("status", &self.0.status)
            .field("message", &self.0.message)
            .field("attempts", &self.0.diagnostics.requests().len())
            .field("source", &self.0.source)
            .finish()
    }
}

impl StdError for CosmosError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        self.0
            .source
            .as_deref()
            .map(|s| s as &(dyn StdError + 'static))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_protocol_refusal_is_invalid_input_with_its_message() {
        let e = CosmosError::from(ProtocolError::new("the database id is empty"));
        assert!(e.is_invalid_input());
        assert_eq!(e.kind(), ErrorKind::InvalidInput);
        assert_eq!(e.message(), "the database id is empty");
    }

    #[test]
    fn service_errors_classify_and_carry_the_message() {
        let body = Bytes::from_static(
            br#"{"code":"NotFound","message":"Entity with the specified id does not exist"}"#,
        );
        let e = CosmosError::service(CosmosStatus::new(404, 0), ResponseHeaders::default(), body);
        assert!(e.is_not_found());
        assert!(!e.is_conflict());
        assert!(e.message().contains("does not exist"), "{}", e.message());
        assert!(e.message().contains("404"));
        let e = CosmosError::service(
            CosmosStatus::new(404, 1002),
            ResponseHeaders::default(),
            Bytes::new(),
        );
        assert!(e.is_read_session_not_available());
        assert_eq!(
            e.to_string(),
            "the service answered 404/1002 (read session not available)"
        );
    }

    #[test]
    fn timeouts_say_so() {
        let e = CosmosError::end_to_end_timeout(
            Duration::from_millis(500),
            3,
            Some(CosmosStatus::new(503, 0)),
        );
        assert!(e.is_timeout() && e.is_end_to_end_timeout());
        assert!(
            e.message().contains("end-to-end timeout of 500ms"),
            "{}",
            e.message()
        );
        assert!(e.message().contains("3 attempts"));
    }
}

//! A successful operation's answer: status, typed headers, body and diagnostics.

use std::time::Duration;

use bytes::Bytes;
use http::HeaderMap;

use crate::diagnostics::DiagnosticsContext;
use crate::error::{CosmosError, ErrorKind};
use crate::protocol::{header_names as h, CosmosStatus, SessionToken};

/// The response headers, with typed accessors for the ones that matter.
#[derive(Clone, Debug, Default)]
pub struct ResponseHeaders {
    map: HeaderMap,
}

impl ResponseHeaders {
    /// Wraps a header map.
    pub fn new(map: HeaderMap) -> Self {
        Self { map }
    }

    fn text(&self, name: &http::HeaderName) -> Option<&str> {
        self.map.get(name).and_then(|v| v.to_str().ok())
    }

    /// The raw header map.
    pub fn map(&self) -> &HeaderMap {
        &self.map
    }

    /// A header as text.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.map.get(name).and_then(|v| v.to_str().ok())
    }

    /// `etag`, exactly as the service sent it (send it back unchanged in If-Match).
    pub fn etag(&self) -> Option<&str> {
        self.text(&h::ETAG)
    }

    /// `x-ms-session-token`, as text.
    pub fn session_token(&self) -> Option<&str> {
        self.text(&h::SESSION_TOKEN)
    }

    /// `x-ms-session-token`, parsed; `None` when absent or malformed.
    pub fn parsed_session_token(&self) -> Option<SessionToken> {
        self.session_token()
            .and_then(|t| SessionToken::parse(t).ok())
    }

    /// `x-ms-request-charge` in request units (0 when absent).
    pub fn request_charge(&self) -> f64 {
        self.text(&h::REQUEST_CHARGE)
            .and_then(|t| t.trim().parse().ok())
            .unwrap_or(0.0)
    }

    /// `x-ms-activity-id`.
    pub fn activity_id(&self) -> Option<&str> {
        self.text(&h::ACTIVITY_ID)
    }

    /// `x-ms-documentdb-partitionkeyrangeid`.
    pub fn partition_key_range_id(&self) -> Option<&str> {
        self.text(&h::PARTITION_KEY_RANGE_ID)
    }

    /// `x-ms-substatus` (0 when absent).
    pub fn sub_status(&self) -> u32 {
        self.text(&h::SUB_STATUS)
            .and_then(|t| t.trim().parse().ok())
            .unwrap_or(0)
    }

    /// `x-ms-continuation`: present when a feed has more pages.
    pub fn continuation(&self) -> Option<&str> {
        self.text(&h::CONTINUATION).filter(|c| !c.is_empty())
    }

    /// `x-ms-item-count`.
    pub fn item_count(&self) -> Option<u64> {
        self.text(&h::ITEM_COUNT)
            .and_then(|t| t.trim().parse().ok())
    }

    /// `x-ms-retry-after-ms`.
    pub fn retry_after(&self) -> Option<Duration> {
        parse_retry_after(self.map.get(&h::RETRY_AFTER_MS))
    }
}

/// Parses `x-ms-retry-after-ms` (integer or fractional milliseconds).
pub(crate) fn parse_retry_after(v: Option<&http::HeaderValue>) -> Option<Duration> {
    let ms: f64 = v?.to_str().ok()?.trim().parse().ok()?;
    if ms.is_finite() && ms >= 0.0 {
        Some(Duration::from_secs_f64((ms / 1e3).min(3600.0)))
    } else {
        None
    }
}

/// The answer to an operation that succeeded (2xx, or 304 for a conditional read).
#[derive(Clone, Debug)]
pub struct CosmosResponse {
    status: CosmosStatus,
    headers: ResponseHeaders,
    body: Bytes,
    diagnostics: DiagnosticsContext,
}

impl CosmosResponse {
    /// A response from its parts.
    pub fn new(
        status: CosmosStatus,
        headers: ResponseHeaders,
        body: Bytes,
        diagnostics: DiagnosticsContext,
    ) -> Self {
        Self {
            status,
            headers,
            body,
            diagnostics,
        }
    }

    /// The HTTP status code.
    pub fn status(&self) -> u16 {
        self.status.status
    }

    /// Status and sub-status.
    pub fn cosmos_status(&self) -> CosmosStatus {
        self.status
    }

    /// The headers.
    pub fn headers(&self) -> &ResponseHeaders {
        &self.headers
    }

    /// `etag`.
    pub fn etag(&self) -> Option<&str> {
        self.headers.etag()
    }

    /// `x-ms-session-token`.
    pub fn session_token(&self) -> Option<&str> {
        self.headers.session_token()
    }

    /// The request charge the caller is billed for (this response's charge).
    pub fn request_charge(&self) -> f64 {
        self.headers.request_charge()
    }

    /// `x-ms-activity-id`.
    pub fn activity_id(&self) -> Option<&str> {
        self.headers.activity_id()
    }

    /// `x-ms-documentdb-partitionkeyrangeid`.
    pub fn partition_key_range_id(&self) -> Option<&str> {
        self.headers.partition_key_range_id()
    }

    /// `x-ms-substatus` (0 when absent).
    pub fn sub_status(&self) -> u32 {
        self.status.sub_status
    }

    /// `x-ms-continuation`.
    pub fn continuation(&self) -> Option<&str> {
        self.headers.continuation()
    }

    /// The body.
    pub fn body(&self) -> &Bytes {
        &self.body
    }

    /// The body decoded from JSON.
    pub fn json<T: serde::de::DeserializeOwned>(&self) -> Result<T, CosmosError> {
        serde_json::from_slice(&self.body).map_err(|e| {
            CosmosError::new(
                ErrorKind::Deserialization,
                format!(
                    "the response body ({} bytes) is not the expected JSON: {e}",
                    self.body.len()
                ),
            )
            .with_source(e)
        })
    }

    /// The diagnostics of the operation.
    pub fn diagnostics(&self) -> &DiagnosticsContext {
        &self.diagnostics
    }

    /// Mutable diagnostics (to attach hedge diagnostics).
    pub fn diagnostics_mut(&mut self) -> &mut DiagnosticsContext {
        &mut self.diagnostics
    }

    /// The parts, by value.
    pub fn into_parts(self) -> (CosmosStatus, ResponseHeaders, Bytes, DiagnosticsContext) {
        (self.status, self.headers, self.body, self.diagnostics)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    #[test]
    fn typed_headers() {
        let mut map = HeaderMap::new();
        map.insert(h::REQUEST_CHARGE, HeaderValue::from_static("2.86"));
        map.insert(h::ETAG, HeaderValue::from_static("\"00000-1\""));
        map.insert(h::SUB_STATUS, HeaderValue::from_static("1002"));
        map.insert(h::RETRY_AFTER_MS, HeaderValue::from_static("12.5"));
        map.insert(h::CONTINUATION, HeaderValue::from_static(""));
        let hs = ResponseHeaders::new(map);
        assert_eq!(hs.request_charge(), 2.86);
        assert_eq!(hs.etag(), Some("\"00000-1\""));
        assert_eq!(hs.sub_status(), 1002);
        assert_eq!(hs.retry_after(), Some(Duration::from_micros(12_500)));
        assert_eq!(hs.continuation(), None);
        assert_eq!(hs.session_token(), None);
    }

    #[test]
    fn json_errors_are_deserialization_errors() {
        let r = CosmosResponse::new(
            CosmosStatus::new(200, 0),
            ResponseHeaders::default(),
            Bytes::from_static(b"not json"),
            DiagnosticsContext::default(),
        );
        let e = r.json::<serde_json::Value>().unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Deserialization);
    }
}

//! The headers of a service answer, with typed accessors for the ones that matter.

use std::time::Duration;

use http::HeaderMap;

use super::header_names;
use super::SessionToken;

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
        self.text(&header_names::ETAG)
    }

    /// `x-ms-session-token`, as text.
    pub fn session_token(&self) -> Option<&str> {
        self.text(&header_names::SESSION_TOKEN)
    }

    /// `x-ms-session-token`, parsed; `None` when absent or malformed.
    pub fn parsed_session_token(&self) -> Option<SessionToken> {
        self.session_token()
            .and_then(|t| SessionToken::parse(t).ok())
    }

    /// `x-ms-request-charge` in request units (0 when absent).
    pub fn request_charge(&self) -> f64 {
        self.text(&header_names::REQUEST_CHARGE)
            .and_then(|t| t.trim().parse().ok())
            .unwrap_or(0.0)
    }

    /// `x-ms-activity-id`.
    pub fn activity_id(&self) -> Option<&str> {
        self.text(&header_names::ACTIVITY_ID)
    }

    /// `x-ms-documentdb-partitionkeyrangeid`.
    pub fn partition_key_range_id(&self) -> Option<&str> {
        self.text(&header_names::PARTITION_KEY_RANGE_ID)
    }

    /// `x-ms-substatus` (0 when absent).
    pub fn sub_status(&self) -> u32 {
        self.text(&header_names::SUB_STATUS)
            .and_then(|t| t.trim().parse().ok())
            .unwrap_or(0)
    }

    /// `x-ms-continuation`: present when a feed has more pages.
    pub fn continuation(&self) -> Option<&str> {
        self.text(&header_names::CONTINUATION)
            .filter(|c| !c.is_empty())
    }

    /// `x-ms-item-count`.
    pub fn item_count(&self) -> Option<u64> {
        self.text(&header_names::ITEM_COUNT)
            .and_then(|t| t.trim().parse().ok())
    }

    /// `x-ms-retry-after-ms`.
    pub fn retry_after(&self) -> Option<Duration> {
        parse_retry_after(self.map.get(&header_names::RETRY_AFTER_MS))
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

#[cfg(test)]
mod tests {
    use super::*;
    use header_names as h;
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
}

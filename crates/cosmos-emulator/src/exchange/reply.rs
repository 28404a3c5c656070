//! What a handler answers, and its conversion to an HTTP response with the service's headers.

use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use http::header::{HeaderName, HeaderValue};
use http::Response;
use http_body_util::Full;

use crate::protocol::ids::activity_id;
use crate::protocol::{headers, ApiError};

/// A successful (or 304) answer.
#[derive(Debug)]
pub(crate) struct Reply {
    pub status: u16,
    pub body: Bytes,
    pub charge: f64,
    pub headers: Vec<(HeaderName, HeaderValue)>,
}

impl Reply {
    /// A JSON answer.
    pub(crate) fn json(status: u16, body: Bytes, charge: f64) -> Self {
        Self {
            status,
            body,
            charge,
            headers: Vec::new(),
        }
    }

    /// An answer without a body (204, 304).
    pub(crate) fn empty(status: u16, charge: f64) -> Self {
        Self::json(status, Bytes::new(), charge)
    }

    /// Sets a header, replacing any value it had.
    pub(crate) fn replace_header(mut self, name: &'static str, value: impl AsRef<str>) -> Self {
        self.headers.retain(|(n, _)| n.as_str() != name);
        self.header(name, value)
    }

    /// Adds a header; values that are not valid header text are skipped.
    pub(crate) fn header(mut self, name: &'static str, value: impl AsRef<str>) -> Self {
        if let Ok(v) = HeaderValue::from_str(value.as_ref()) {
            self.headers.push((HeaderName::from_static(name), v));
        }
        self
    }
}

/// The HTTP response for a reply.
pub(crate) fn to_response(reply: Reply) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(reply.body));
    *response.status_mut() =
        http::StatusCode::from_u16(reply.status).unwrap_or(http::StatusCode::OK);
    let h = response.headers_mut();
    let typed = reply
        .headers
        .iter()
        .any(|(name, _)| name.as_str() == headers::CONTENT_TYPE);
    if reply.status != 204 && reply.status != 304 && !typed {
        h.insert(
            HeaderName::from_static(headers::CONTENT_TYPE),
            HeaderValue::from_static("application/json"),
        );
    }
    common_headers(h, reply.charge);
    for (name, value) in reply.headers {
        h.append(name, value);
    }
    response
}

/// The response for an error: `{"code","message"}` with sub-status (and retry-after when set).
pub(crate) fn error_response(error: &ApiError, charge: f64) -> Response<Full<Bytes>> {
    let mut body = serde_json::json!({"code": error.code(), "message": error.message});
    if let Some(info) = &error.additional_error_info {
        body["additionalErrorInfo"] = serde_json::Value::from(info.as_str());
    }
    let mut reply = Reply::json(error.status, Bytes::from(body.to_string()), charge)
        .header(headers::SUB_STATUS, error.sub_status.to_string());
    if let Some(ms) = error.retry_after_ms {
        reply = reply.header(headers::RETRY_AFTER_MS, ms.to_string());
    }
    for (name, value) in &error.headers {
        reply = reply.header(name, value);
    }
    to_response(reply)
}

/// Versions the service's gateway reports on every answer.
const SCHEMA_VERSION: &str = "1.18";
const SERVICE_VERSION: &str = "version=2.14.0.0";
const GATEWAY_VERSION: &str = "version=2.14.0";

/// Numbers each answer (`x-ms-transport-request-id`), distinct within the process.
static TRANSPORT_REQUESTS: AtomicU64 = AtomicU64::new(1);

fn common_headers(h: &mut http::HeaderMap, charge: f64) {
    if let Ok(v) = HeaderValue::from_str(&activity_id()) {
        h.insert(HeaderName::from_static(headers::ACTIVITY_ID), v);
    }
    if let Ok(v) = HeaderValue::from_str(&format_charge(charge)) {
        h.insert(HeaderName::from_static(headers::REQUEST_CHARGE), v);
    }
    for (name, value) in [
        (headers::SCHEMA_VERSION, SCHEMA_VERSION),
        (headers::SERVICE_VERSION, SERVICE_VERSION),
        (headers::GATEWAY_VERSION, GATEWAY_VERSION),
    ] {
        h.insert(
            HeaderName::from_static(name),
            HeaderValue::from_static(value),
        );
    }
    let id = TRANSPORT_REQUESTS.fetch_add(1, Ordering::Relaxed);
    h.insert(
        HeaderName::from_static(headers::TRANSPORT_REQUEST_ID),
        HeaderValue::from(id),
    );
}

/// Charges print like the service's: "1", "5.5".
pub(crate) fn format_charge(charge: f64) -> String {
    let rounded = (charge * 100.0).round() / 100.0;
    format!("{rounded}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_carry_code_message_and_sub_status() {
        let mut e = ApiError::new(429, "slow down").with_sub_status(3200);
        e.retry_after_ms = Some(15);
        let r = error_response(&e, 0.0);
        assert_eq!(r.status(), 429);
        assert_eq!(r.headers()[headers::SUB_STATUS], "3200");
        assert_eq!(r.headers()[headers::RETRY_AFTER_MS], "15");
        assert_eq!(r.headers()[headers::REQUEST_CHARGE], "0");
        assert_eq!(r.headers()[headers::CONTENT_TYPE], "application/json");
    }

    #[test]
    fn errors_carry_their_extra_headers() {
        let e = ApiError::precondition_failed()
            .with_header(headers::SESSION_TOKEN, "0:-1#7")
            .with_header(headers::LSN, "7");
        let r = error_response(&e, 1.0);
        assert_eq!(r.status(), 412);
        assert_eq!(r.headers()[headers::SESSION_TOKEN], "0:-1#7");
        assert_eq!(r.headers()[headers::LSN], "7");
    }

    #[test]
    fn charges_format_without_trailing_zeros() {
        assert_eq!(format_charge(1.0), "1");
        assert_eq!(format_charge(5.5), "5.5");
    }
}

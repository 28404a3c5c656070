//! A successful operation's answer: status, typed headers, body and diagnostics.

use bytes::Bytes;

use crate::diagnostics::DiagnosticsContext;
use crate::error::{CosmosError, ErrorKind};
use crate::protocol::{CosmosStatus, ResponseHeaders};

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

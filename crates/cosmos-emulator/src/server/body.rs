//! Reading a request body with the service's 2 MB limit and a time limit.

use std::time::Duration;

use bytes::Bytes;
use http::HeaderMap;
use http_body_util::{BodyExt, Limited};
use hyper::body::Body;
use hyper::body::Incoming;

use crate::protocol::ApiError;

/// Largest request body accepted.
pub(crate) const MAX_BODY_BYTES: usize = 2 * 1024 * 1024;
/// A body past [`MAX_BODY_BYTES`] is still read (and dropped) up to this size before the 413 is
/// sent, so a client that is still sending sees the answer rather than a connection torn down
/// under its upload; a larger one is cut off.
pub(super) const MAX_DRAINED_BYTES: u64 = 16 * 1024 * 1024;

/// Reads the whole body: 413 when it is larger than [`MAX_BODY_BYTES`], 400 when it breaks off,
/// 408 when it has not arrived within `timeout`.
pub(super) async fn read_body(
    headers: &HeaderMap,
    body: Incoming,
    timeout: Duration,
) -> Result<Bytes, ApiError> {
    let declared = headers
        .get(http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > MAX_BODY_BYTES as u64) {
        if declared.is_some_and(|n| n <= MAX_DRAINED_BYTES) {
            let _ = tokio::time::timeout(timeout, drain(body)).await;
        }
        return Err(too_large());
    }
    if body.is_end_stream() {
        // No body at all (most reads): nothing to wait for, so no timer either.
        return Ok(Bytes::new());
    }
    let read = tokio::time::timeout(timeout, Limited::new(body, MAX_BODY_BYTES).collect());
    let Ok(result) = read.await else {
        return Err(ApiError::new(
            408,
            format!(
                "The request body did not arrive within {} ms.",
                timeout.as_millis()
            ),
        ));
    };
    match result {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => Err(too_large()),
        Err(e) => Err(ApiError::bad_request(format!(
            "The request body could not be read: {e}"
        ))),
    }
}

/// Reads and drops `body` up to [`MAX_DRAINED_BYTES`].
async fn drain(mut body: Incoming) {
    let mut read: u64 = 0;
    while let Some(Ok(frame)) = body.frame().await {
        if let Some(data) = frame.data_ref() {
            read += data.len() as u64;
            if read > MAX_DRAINED_BYTES {
                return;
            }
        }
    }
}

fn too_large() -> ApiError {
    ApiError::new(
        413,
        format!("The request body is larger than the {MAX_BODY_BYTES} bytes allowed."),
    )
}

//! POST /_emulator/failover `{"writeRegion": "West US"}`: moves the write (hub) region.

use bytes::Bytes;
use http::Method;
use serde_json::{json, Value};

use super::account::account_document;
use crate::exchange::{Reply, Shared};
use crate::protocol::ApiError;

/// Handles the failover admin request.
pub(crate) fn failover(shared: &Shared, method: &Method, body: &[u8]) -> Reply {
    match try_failover(shared, method, body) {
        Ok(reply) => reply,
        Err(e) => {
            let body = json!({"code": e.code(), "message": e.message}).to_string();
            Reply::json(e.status, Bytes::from(body), 0.0)
        }
    }
}

fn try_failover(shared: &Shared, method: &Method, body: &[u8]) -> Result<Reply, ApiError> {
    if method != Method::POST {
        return Err(ApiError::new(
            405,
            "Use POST /_emulator/failover with {\"writeRegion\": \"<region>\"}.",
        ));
    }
    let parsed: Value = serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("The failover body is invalid JSON: {e}")))?;
    let region = parsed
        .get("writeRegion")
        .and_then(Value::as_str)
        .ok_or_else(|| {
            ApiError::bad_request("The failover body needs \"writeRegion\": \"<region name>\".")
        })?;
    shared
        .store
        .failover(region)
        .map_err(ApiError::bad_request)?;
    let account = account_document(shared);
    let body = json!({
        "writableLocations": account["writableLocations"],
        "readableLocations": account["readableLocations"],
    });
    Ok(Reply::json(200, Bytes::from(body.to_string()), 0.0))
}

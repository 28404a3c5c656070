//! PUT /_emulator/replication-lag `{"region": "West US", "lag": "2000"}`: changes how long writes
//! from now on take to reach a region (the spec is the CLI's: MS, uniform:MIN-MAX or
//! lognormal:MEDIAN,SIGMA).

use bytes::Bytes;
use http::Method;
use serde::Deserialize;
use serde_json::json;

use crate::exchange::{Reply, Shared};
use crate::protocol::ApiError;
use crate::store::ReplicationLag;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LagChange {
    region: String,
    lag: String,
}

/// Handles the replication-lag admin request.
pub(crate) fn replication_lag(shared: &Shared, method: &Method, body: &[u8]) -> Reply {
    let answer = (|| {
        if method != Method::PUT {
            return Err(ApiError::new(
                405,
                "Use PUT /_emulator/replication-lag with {\"region\": \"<region>\", \"lag\": \"<ms>\"}.",
            ));
        }
        let change: LagChange = serde_json::from_slice(body).map_err(|e| {
            ApiError::bad_request(format!(
                "The body must be {{\"region\": \"<region>\", \"lag\": \"<ms>\"}}: {e}"
            ))
        })?;
        let lag = ReplicationLag::parse(&change.lag).map_err(ApiError::bad_request)?;
        shared
            .store
            .set_lag(&change.region, lag)
            .map_err(ApiError::bad_request)?;
        Ok(json!({"region": change.region, "lag": change.lag}))
    })();
    match answer {
        Ok(body) => Reply::json(200, Bytes::from(body.to_string()), 0.0),
        Err(e) => {
            let body = json!({"code": e.code(), "message": e.message}).to_string();
            Reply::json(e.status, Bytes::from(body), 0.0)
        }
    }
}

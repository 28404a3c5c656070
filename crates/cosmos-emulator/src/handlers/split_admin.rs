//! POST /_emulator/split `{"db": "db", "container": "c", "range": "1"}`: splits a partition key
//! range in two (see [`crate::store::Container::split_range`]).

use bytes::Bytes;
use http::Method;
use serde::Deserialize;
use serde_json::json;

use crate::exchange::{Reply, Shared};
use crate::protocol::ApiError;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SplitRequest {
    db: String,
    container: String,
    range: String,
}

/// Handles the split admin request; answers the container's partition key ranges.
pub(crate) fn split(shared: &Shared, method: &Method, body: &[u8]) -> Reply {
    let answer = (|| {
        if method != Method::POST {
            return Err(ApiError::new(
                405,
                "Use POST /_emulator/split with {\"db\": .., \"container\": .., \"range\": \"<id>\"}.",
            ));
        }
        let request: SplitRequest = serde_json::from_slice(body).map_err(|e| {
            ApiError::bad_request(format!(
                "The body must be {{\"db\": \"<db>\", \"container\": \"<container>\", \"range\": \"<range id>\"}}: {e}"
            ))
        })?;
        let database = shared.store.catalog.owner_database(&request.db)?;
        let container = database.split_container(&request.container, &request.range)?;
        Ok(container.pkranges_body.clone())
    })();
    match answer {
        Ok(body) => Reply::json(200, body, 0.0),
        Err(e) => {
            let body = json!({"code": e.code(), "message": e.message}).to_string();
            Reply::json(e.status, Bytes::from(body), 0.0)
        }
    }
}

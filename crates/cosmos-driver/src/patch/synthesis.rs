//! The response a successful PATCH returns, built from the loop's sub-operations.

use bytes::Bytes;
use serde_json::Value;

use crate::diagnostics::DiagnosticsContext;
use crate::error::{CosmosError, ErrorKind};
use crate::response::CosmosResponse;

/// The PATCH response: status and headers of the successful Replace; its body when the service
/// sent one (`content_response_on_write`), else the merged document the Replace stored, with its
/// `_etag` set to the Replace's ETag; and one diagnostics context over every sub-operation.
///
/// `earlier` holds the diagnostics of the sub-operations before the final Replace, in dispatch
/// order. The aggregate concatenates their request rows and the Replace's, sums durations and
/// charges, and takes its operation-level fields (activity id, hedge diagnostics) from the final
/// Replace.
pub(crate) fn patch_response(
    merged: Value,
    replace: CosmosResponse,
    earlier: Vec<DiagnosticsContext>,
) -> Result<CosmosResponse, CosmosError> {
    let (status, headers, body, replace_diagnostics) = replace.into_parts();
    let activity_id = replace_diagnostics.activity_id;
    let hedge = replace_diagnostics.hedge.clone();
    let mut diagnostics = DiagnosticsContext::aggregate(
        earlier
            .into_iter()
            .chain(std::iter::once(replace_diagnostics)),
    );
    diagnostics.activity_id = activity_id;
    diagnostics.hedge = hedge;
    let body = if body.is_empty() {
        reconciled_body(merged, headers.etag())
            .map_err(|e| e.with_diagnostics(diagnostics.clone()))?
    } else {
        body
    };
    Ok(CosmosResponse::new(status, headers, body, diagnostics))
}

/// The merged document as bytes, its `_etag` overwritten with the Replace's (the Read's value is
/// stale once the Replace commits). `_rid`, `_self` and `_attachments` do not change across edits
/// of one item; `_ts` is not in the Replace's headers, so the Read's value stays (it may lag the
/// true one by the Read-to-Replace round trip, never more).
pub(crate) fn reconciled_body(
    mut merged: Value,
    replace_etag: Option<&str>,
) -> Result<Bytes, CosmosError> {
    if let (Value::Object(map), Some(etag)) = (&mut merged, replace_etag) {
        map.insert("_etag".to_owned(), Value::String(etag.to_owned()));
    }
    serde_json::to_vec(&merged).map(Bytes::from).map_err(|e| {
        CosmosError::new(
            ErrorKind::Deserialization,
            format!("the patched document cannot be serialized: {e}"),
        )
    })
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use http::{HeaderMap, HeaderValue};
    use serde_json::json;

    use super::*;
    use crate::protocol::ResponseHeaders;
    use crate::protocol::{header_names as h, CosmosStatus};

    fn context(ms: u64, charge: f64) -> DiagnosticsContext {
        DiagnosticsContext {
            duration: Duration::from_millis(ms),
            request_charge: charge,
            ..Default::default()
        }
    }

    fn replace(body: &'static [u8], ms: u64) -> CosmosResponse {
        let mut map = HeaderMap::new();
        map.insert(h::ETAG, HeaderValue::from_static("\"new-etag\""));
        map.insert(h::SESSION_TOKEN, HeaderValue::from_static("0:1#9"));
        CosmosResponse::new(
            CosmosStatus::new(200, 0),
            ResponseHeaders::new(map),
            Bytes::from_static(body),
            context(ms, 10.0),
        )
    }

    #[test]
    fn merged_body_gets_the_replace_etag_and_keeps_member_order() {
        let merged = json!({"id": "a", "z": 1, "_etag": "\"old\"", "_ts": 5, "a": [1]});
        let response = patch_response(
            merged,
            replace(b"", 4),
            vec![context(3, 1.0), context(2, 1.0)],
        )
        .unwrap();
        assert_eq!(
            std::str::from_utf8(response.body()).unwrap(),
            r#"{"id":"a","z":1,"_etag":"\"new-etag\"","_ts":5,"a":[1]}"#
        );
        assert_eq!(response.etag(), Some("\"new-etag\""));
        assert_eq!(response.session_token(), Some("0:1#9"));
        assert_eq!(response.status(), 200);
    }

    #[test]
    fn a_replace_body_is_returned_verbatim() {
        let response = patch_response(
            json!({"id": "a"}),
            replace(br#"{"id":"a","_ts":7}"#, 1),
            vec![],
        )
        .unwrap();
        assert_eq!(response.body().as_ref(), br#"{"id":"a","_ts":7}"#);
    }

    #[test]
    fn diagnostics_are_aggregated_with_the_final_replace_identity() {
        let earlier = vec![context(3, 1.0), context(2, 1.5)];
        let first_id = earlier[0].activity_id;
        let replace = replace(b"", 4);
        let replace_id = replace.diagnostics().activity_id();
        let response = patch_response(json!({}), replace, earlier).unwrap();
        let d = response.diagnostics();
        assert_eq!(d.duration(), Duration::from_millis(9));
        assert_eq!(d.request_charge(), 12.5);
        assert_eq!(d.activity_id(), replace_id);
        assert_ne!(d.activity_id(), first_id);
    }

    #[test]
    fn without_an_etag_the_body_is_left_alone() {
        let body = reconciled_body(json!({"_etag": "\"old\""}), None).unwrap();
        assert_eq!(body.as_ref(), br#"{"_etag":"\"old\""}"#);
    }
}

//! Which encoding a request's body and its answer use. An item body in Cosmos binary JSON is read
//! as JSON; a point operation on an item whose request accepts `CosmosBinary` is answered in it.
//! Queries and every other answer stay JSON text, which every client that accepts binary also
//! reads (clients tell the two apart by the first byte, 0x80 for binary).

use bytes::Bytes;
use http::{HeaderMap, Method};
use serde_json::Value;

use super::reply::Reply;
use super::request_class::{flag, is_query};
use crate::protocol::cosmos_binary::{decode, encode, is_binary};
use crate::protocol::{headers, ApiError, Resource, Route};

/// The content type of an answer in Cosmos binary JSON.
pub(crate) const BINARY_CONTENT_TYPE: &str = "application/octet-stream";

/// Whether the request lists `CosmosBinary` among the formats it accepts (a `+feature` suffix
/// is ignored).
pub(crate) fn accepts_binary(headers: &HeaderMap) -> bool {
    headers
        .get_all(headers::SUPPORTED_SERIALIZATION_FORMATS)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|format| format.split('+').next().unwrap_or("").trim())
        .any(|format| format.eq_ignore_ascii_case("CosmosBinary"))
}

/// Whether the answer is written in Cosmos binary JSON: a read, replace, create or upsert of an
/// item whose request accepts it. Queries, query plans, batches, patches, feeds and metadata are
/// answered in JSON text.
pub(crate) fn answers_binary(method: &Method, route: &Route, headers: &HeaderMap) -> bool {
    accepts_binary(headers)
        && match (&route.resource, method) {
            (Resource::Item { .. }, &Method::GET) | (Resource::Item { .. }, &Method::PUT) => true,
            (Resource::Items { .. }, &Method::POST) => {
                !is_query(headers)
                    && !flag(headers, headers::IS_QUERY_PLAN)
                    && !flag(headers, headers::IS_BATCH_REQUEST)
            }
            _ => false,
        }
}

/// The body the handlers read: an item body in Cosmos binary JSON becomes JSON text (400 when it
/// is not valid binary JSON); a binary body anywhere else is refused with 400; text is unchanged.
pub(crate) fn request_body(route: &Route, body: Bytes) -> Result<Bytes, ApiError> {
    if !is_binary(&body) {
        return Ok(body);
    }
    if !matches!(
        route.resource,
        Resource::Items { .. } | Resource::Item { .. }
    ) {
        return Err(ApiError::bad_request(
            "A Cosmos binary JSON body is accepted only for items (create, upsert and replace); send this request's body as JSON text.",
        ));
    }
    let value = decode(&body).map_err(|e| {
        ApiError::bad_request(format!(
            "The request body is not valid Cosmos binary JSON: {e}."
        ))
    })?;
    serde_json::to_vec(&value).map(Bytes::from).map_err(|e| {
        ApiError::bad_request(format!(
            "The Cosmos binary JSON request body has no JSON text form: {e}."
        ))
    })
}

/// `reply` in Cosmos binary JSON: a 200 or 201 answer with a JSON body is re-encoded and marked
/// with [`BINARY_CONTENT_TYPE`]. Other answers (errors, empty bodies) stay as they are, and so
/// does a body that does not parse or encode (JSON text, which clients that accept binary read).
pub(crate) fn encode_reply(mut reply: Reply) -> Reply {
    if !matches!(reply.status, 200 | 201) || reply.body.is_empty() {
        return reply;
    }
    let Ok(value) = serde_json::from_slice::<Value>(&reply.body) else {
        return reply;
    };
    match encode(&value) {
        Ok(bytes) => {
            reply.body = Bytes::from(bytes);
            reply.replace_header(headers::CONTENT_TYPE, BINARY_CONTENT_TYPE)
        }
        Err(_) => reply,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::route::parse;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(*name, value.parse().unwrap());
        }
        map
    }

    #[test]
    fn accepted_formats_are_read_from_the_list() {
        let name = headers::SUPPORTED_SERIALIZATION_FORMATS;
        let table = [
            (vec![], false),
            (vec![(name, "CosmosBinary")], true),
            (vec![(name, "JsonText,CosmosBinary")], true),
            (vec![(name, " jsontext , cosmosbinary ")], true),
            (vec![(name, "CosmosBinary+UInt64")], true),
            (vec![(name, "JsonText")], false),
            (vec![(name, "HybridRow")], false),
            (vec![(name, "CosmosBinaryX")], false),
        ];
        for (pairs, want) in table {
            assert_eq!(accepts_binary(&headers(&pairs)), want, "{pairs:?}");
        }
    }

    #[test]
    fn only_point_operations_on_items_answer_in_binary() {
        let binary = (headers::SUPPORTED_SERIALIZATION_FORMATS, "CosmosBinary");
        let doc = parse("/dbs/d/colls/c/docs/x").unwrap();
        let docs = parse("/dbs/d/colls/c/docs").unwrap();
        let coll = parse("/dbs/d/colls/c").unwrap();
        let table = [
            (Method::GET, &doc, vec![binary], true),
            (Method::PUT, &doc, vec![binary], true),
            (Method::POST, &docs, vec![binary], true),
            (
                Method::POST,
                &docs,
                vec![binary, (headers::IS_UPSERT, "True")],
                true,
            ),
            (Method::GET, &doc, vec![], false),
            (
                Method::PUT,
                &doc,
                vec![(headers::SUPPORTED_SERIALIZATION_FORMATS, "JsonText")],
                false,
            ),
            (
                Method::POST,
                &docs,
                vec![binary, (headers::IS_QUERY, "True")],
                false,
            ),
            (
                Method::POST,
                &docs,
                vec![binary, (headers::CONTENT_TYPE, "application/query+json")],
                false,
            ),
            (
                Method::POST,
                &docs,
                vec![binary, (headers::IS_QUERY_PLAN, "True")],
                false,
            ),
            (
                Method::POST,
                &docs,
                vec![binary, (headers::IS_BATCH_REQUEST, "True")],
                false,
            ),
            (Method::PATCH, &doc, vec![binary], false),
            (Method::DELETE, &doc, vec![binary], false),
            (Method::GET, &docs, vec![binary], false),
            (Method::GET, &coll, vec![binary], false),
        ];
        for (method, route, pairs, want) in table {
            assert_eq!(
                answers_binary(&method, route, &headers(&pairs)),
                want,
                "{method} {:?} {pairs:?}",
                route.resource
            );
        }
    }

    #[test]
    fn binary_item_bodies_become_json_text() {
        let docs = parse("/dbs/d/colls/c/docs").unwrap();
        let value = serde_json::json!({"id": "a", "pk": "p", "n": [1, 2.5]});
        let binary = Bytes::from(encode(&value).unwrap());
        let text = request_body(&docs, binary).unwrap();
        assert_eq!(serde_json::from_slice::<Value>(&text).unwrap(), value);
        let plain = Bytes::from_static(br#"{"id":"a"}"#);
        assert_eq!(request_body(&docs, plain.clone()).unwrap(), plain);
        let broken = request_body(&docs, Bytes::from_static(&[0x80, 0xE9])).unwrap_err();
        assert_eq!(broken.status, 400);
        assert!(
            broken
                .message
                .contains("not valid Cosmos binary JSON: at byte 2"),
            "{}",
            broken.message
        );
        let dbs = parse("/dbs").unwrap();
        let elsewhere = request_body(&dbs, Bytes::from_static(&[0x80, 0xE8])).unwrap_err();
        assert_eq!(elsewhere.status, 400);
        assert!(elsewhere.message.contains("only for items"));
    }

    #[test]
    fn successful_json_replies_are_re_encoded() {
        let body = Bytes::from_static(br#"{"id":"a","_ts":5}"#);
        let reply = encode_reply(Reply::json(201, body.clone(), 1.0));
        assert_eq!(
            decode(&reply.body).unwrap(),
            serde_json::json!({"id": "a", "_ts": 5})
        );
        assert!(reply
            .headers
            .iter()
            .any(|(n, v)| n == headers::CONTENT_TYPE && v == BINARY_CONTENT_TYPE));
        for status in [304, 404, 412] {
            let kept = encode_reply(Reply::json(status, body.clone(), 1.0));
            assert_eq!(kept.body, body, "{status}");
            assert!(kept.headers.is_empty());
        }
        let empty = encode_reply(Reply::empty(200, 1.0));
        assert!(empty.body.is_empty());
    }
}

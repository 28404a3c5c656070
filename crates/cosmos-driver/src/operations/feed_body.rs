//! Reading a feed page's body: the resources are the array under one name (`Documents`,
//! `PartitionKeyRanges`, ...). A body that is not that shape (cut short, the array an object, an
//! empty 200, the name missing) is an error naming the status, the activity id, the body's size
//! and where reading stopped; it is never an empty page.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, Visitor};
use serde::Deserialize;

use crate::error::{CosmosError, ErrorKind};
use crate::operation::{CosmosOperation, OperationTarget};
use crate::protocol::{status, OperationType};
use crate::response::CosmosResponse;

/// The longest reason from the JSON reader kept in an error (it may quote the body).
const MAX_REASON_CHARS: usize = 300;

/// The name of the array a feed page of `operation` carries its resources in; `None` for an
/// operation whose answer is not a feed page.
pub(crate) fn feed_array_name(operation: &CosmosOperation) -> Option<&'static str> {
    if !matches!(
        operation.operation_type(),
        OperationType::ReadFeed | OperationType::Query
    ) {
        return None;
    }
    match operation.target() {
        OperationTarget::Items(_) => Some("Documents"),
        OperationTarget::Databases => Some("Databases"),
        OperationTarget::Containers(_) => Some("DocumentCollections"),
        OperationTarget::PartitionKeyRanges(_) => Some("PartitionKeyRanges"),
        OperationTarget::Offers => Some("Offers"),
        OperationTarget::Scripts(_, kind) => Some(kind.feed_field()),
        OperationTarget::Users(_) => Some("Users"),
        OperationTarget::Permissions(_) => Some("Permissions"),
        OperationTarget::Conflicts(_) => Some("Conflicts"),
        OperationTarget::Account
        | OperationTarget::Database(_)
        | OperationTarget::Container(_)
        | OperationTarget::Item(_)
        | OperationTarget::Offer(_)
        | OperationTarget::Script(_)
        | OperationTarget::User(_)
        | OperationTarget::Permission(_)
        | OperationTarget::Conflict(_) => None,
    }
}

/// The resources of a feed page: the array `field` of `response`'s JSON body, each read as `T`.
/// A 304 (a change feed with nothing new) holds none. `what` names the page in the error.
pub(crate) fn feed_items<T: de::DeserializeOwned>(
    response: &CosmosResponse,
    field: &str,
    what: impl fmt::Display,
) -> Result<Vec<T>, CosmosError> {
    if response.status() == status::NOT_MODIFIED {
        return Ok(Vec::new());
    }
    read_array(response.body(), field).map_err(|why| unreadable(response, what, why))
}

/// The error for a `response` whose body cannot be read (`why`); `what` names it.
pub(crate) fn unreadable(
    response: &CosmosResponse,
    what: impl fmt::Display,
    why: impl fmt::Display,
) -> CosmosError {
    let activity = response.activity_id().unwrap_or("none");
    CosmosError::new(
        ErrorKind::Deserialization,
        format!(
            "{what}: the service's answer (status {}, activity id {activity}, {} bytes) cannot \
             be read: {why}",
            response.cosmos_status(),
            response.body().len()
        ),
    )
    .with_status(response.cosmos_status())
    .with_headers(response.headers().clone())
    .with_diagnostics(response.diagnostics().clone())
}

/// How many resources a feed page holds (checking its shape as [`feed_items`] does).
pub(crate) fn feed_item_count(
    response: &CosmosResponse,
    field: &str,
    what: impl fmt::Display,
) -> Result<usize, CosmosError> {
    feed_items::<Skipped>(response, field, what).map(|items| items.len())
}

/// Any JSON value, read and dropped. Unlike [`IgnoredAny`] it reads object keys as strings, so the
/// path of an error inside an item names them (`Documents[0].pk`).
struct Skipped;

impl<'de> Deserialize<'de> for Skipped {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(SkipVisitor)
    }
}

struct SkipVisitor;

impl<'de> Visitor<'de> for SkipVisitor {
    type Value = Skipped;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Skipped, E> {
        Ok(Skipped)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Skipped, E> {
        Ok(Skipped)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Skipped, E> {
        Ok(Skipped)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Skipped, E> {
        Ok(Skipped)
    }
    fn visit_str<E>(self, _: &str) -> Result<Skipped, E> {
        Ok(Skipped)
    }
    fn visit_unit<E>(self) -> Result<Skipped, E> {
        Ok(Skipped)
    }
    fn visit_none<E>(self) -> Result<Skipped, E> {
        Ok(Skipped)
    }
    fn visit_some<D: de::Deserializer<'de>>(self, d: D) -> Result<Skipped, D::Error> {
        Skipped::deserialize(d)
    }
    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Skipped, A::Error> {
        while seq.next_element::<Skipped>()?.is_some() {}
        Ok(Skipped)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Skipped, A::Error> {
        while map.next_key::<SkippedKey>()?.is_some() {
            map.next_value::<Skipped>()?;
        }
        Ok(Skipped)
    }
}

/// An object key, read as a string and dropped.
struct SkippedKey;

impl<'de> Deserialize<'de> for SkippedKey {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl Visitor<'_> for KeyVisitor {
            type Value = SkippedKey;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object key")
            }
            fn visit_str<E>(self, _: &str) -> Result<SkippedKey, E> {
                Ok(SkippedKey)
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

/// The array `field` of `body`, or why it cannot be read (with the path where reading stopped).
fn read_array<T: de::DeserializeOwned>(body: &[u8], field: &str) -> Result<Vec<T>, String> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(format!(
            "the body is empty (a feed page is a JSON object with a {field:?} array)"
        ));
    }
    let mut json = serde_json::Deserializer::from_slice(body);
    match FeedArray::<T>::new(field).deserialize(&mut json) {
        Ok(items) => {
            json.end()
                .map_err(|e| format!("after the page's object: {e}"))?;
            Ok(items)
        }
        // Read again, tracking the path (which costs on every value), only to say where.
        Err(e) => Err(where_reading_stops::<T>(body, field).unwrap_or_else(|| cut(&e))),
    }
}

/// Where and why reading `body` as a feed page stops: `at Documents[0].pk: EOF while ...`.
fn where_reading_stops<T: de::DeserializeOwned>(body: &[u8], field: &str) -> Option<String> {
    let mut json = serde_json::Deserializer::from_slice(body);
    let mut track = serde_path_to_error::Track::new();
    let e = FeedArray::<T>::new(field)
        .deserialize(serde_path_to_error::Deserializer::new(
            &mut json, &mut track,
        ))
        .err()?;
    let path = track.path().to_string();
    Some(if path == "." || path.is_empty() {
        cut(&e)
    } else {
        format!("at {path}: {}", cut(&e))
    })
}

/// The JSON reader's reason, cut to [`MAX_REASON_CHARS`].
fn cut(e: &serde_json::Error) -> String {
    e.to_string().chars().take(MAX_REASON_CHARS).collect()
}

/// Reads a JSON object, keeping only the array under `field` (read as `Vec<T>`).
struct FeedArray<'f, T> {
    field: &'f str,
    _items: PhantomData<fn() -> T>,
}

impl<'f, T> FeedArray<'f, T> {
    fn new(field: &'f str) -> Self {
        FeedArray {
            field,
            _items: PhantomData,
        }
    }
}

impl<'de, T: Deserialize<'de>> DeserializeSeed<'de> for FeedArray<'_, T> {
    type Value = Vec<T>;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Vec<T>, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de, T: Deserialize<'de>> Visitor<'de> for FeedArray<'_, T> {
    type Value = Vec<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a JSON object with a {:?} array", self.field)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Vec<T>, A::Error> {
        let mut found: Option<Vec<T>> = None;
        while let Some(key) = map.next_key::<String>()? {
            if key == self.field {
                if found.is_some() {
                    return Err(de::Error::custom(format_args!(
                        "the page holds {:?} twice",
                        self.field
                    )));
                }
                found = Some(map.next_value()?);
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        found.ok_or_else(|| {
            de::Error::custom(format_args!("the page has no {:?} array", self.field))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostics::DiagnosticsContext;
    use crate::protocol::DatabaseReference;
    use crate::protocol::ResponseHeaders;
    use crate::protocol::{header_names as h, CosmosStatus};
    use bytes::Bytes;
    use http::{HeaderMap, HeaderValue};
    use serde_json::Value;

    fn page(status: u16, body: &'static str) -> CosmosResponse {
        let mut headers = HeaderMap::new();
        headers.insert(h::ACTIVITY_ID, HeaderValue::from_static("act-1"));
        CosmosResponse::new(
            CosmosStatus::new(status, 0),
            ResponseHeaders::new(headers),
            Bytes::from_static(body.as_bytes()),
            DiagnosticsContext::default(),
        )
    }

    #[test]
    fn well_formed_pages_give_their_items() {
        let cases: &[(&str, usize)] = &[
            (r#"{"Documents":[]}"#, 0),
            (
                r#"{"_rid":"x","Documents":[{"id":"a"},{"id":"b"}],"_count":2}"#,
                2,
            ),
            (r#" {"_count":1,"Documents":[1]} "#, 1),
            (r#"{"Documents":[{"nested":{"Documents":{}}}]}"#, 1),
            (
                r#"{"Documents":[null,true,-1,2,3.5,"s",[[]],{"a":{"b":[{}]}}]}"#,
                8,
            ),
        ];
        for (body, n) in cases {
            let items: Vec<Value> = feed_items(&page(200, body), "Documents", "p").unwrap();
            assert_eq!(items.len(), *n, "{body}");
            assert_eq!(
                feed_item_count(&page(200, body), "Documents", "p").unwrap(),
                *n
            );
        }
        assert_eq!(
            feed_item_count(&page(304, ""), "Documents", "p").unwrap(),
            0,
            "nothing new"
        );
    }

    #[test]
    fn malformed_pages_are_errors_that_say_where() {
        let cases = [
            (
                r#"{"Documents":[{"id":"a","pk":"#,
                "at Documents[0].pk: EOF while parsing",
            ),
            (
                r#"{"Documents":{"id":"a"}}"#,
                "at Documents: invalid type: map",
            ),
            ("", "the body is empty"),
            ("  \n", "the body is empty"),
            (r#"{"_rid":"x"}"#, "has no \"Documents\" array"),
            (r#"{"Documents":[],"Documents":[]}"#, "twice"),
            (
                r#"[{"id":"a"}]"#,
                "expected a JSON object with a \"Documents\" array",
            ),
            (r#"{"Documents":[]} trailing"#, "after the page's object"),
            ("null", "invalid type: null"),
        ];
        for (body, needle) in cases {
            let e = feed_items::<Value>(&page(200, body), "Documents", "read feed X").unwrap_err();
            let m = e.message();
            assert_eq!(e.kind(), ErrorKind::Deserialization, "{body}");
            assert!(m.contains(needle), "{body:?}: {m}");
            assert!(m.starts_with("read feed X: "), "{m}");
            assert!(m.contains("status 200"), "{m}");
            assert!(m.contains("activity id act-1"), "{m}");
            assert!(m.contains(&format!("{} bytes", body.len())), "{m}");
            assert_eq!(e.status(), Some(200));
            assert_eq!(e.headers().and_then(|h| h.activity_id()), Some("act-1"));
            let counted = feed_item_count(&page(200, body), "Documents", "read feed X")
                .unwrap_err()
                .to_string();
            assert_eq!(counted, e.to_string(), "counting reads the same");
        }
    }

    #[test]
    fn items_of_the_wrong_type_name_the_item() {
        #[derive(Debug, Deserialize)]
        #[allow(dead_code)]
        struct Range {
            id: String,
        }
        let e = feed_items::<Range>(
            &page(200, r#"{"PartitionKeyRanges":[{"id":"0"},{"id":7}]}"#),
            "PartitionKeyRanges",
            "ranges",
        )
        .unwrap_err();
        assert!(e.message().contains("at PartitionKeyRanges[1].id"), "{e}");
    }

    #[test]
    fn a_long_reason_is_cut() {
        let body: &'static str =
            Box::leak(format!(r#"{{"Documents":"{}"}}"#, "x".repeat(5000)).into_boxed_str());
        let e = feed_items::<Value>(&page(200, body), "Documents", "p").unwrap_err();
        assert!(e.message().len() < 700, "{}", e.message().len());
    }

    #[test]
    fn array_names_by_feed() {
        let db = DatabaseReference::new("d").unwrap();
        let c = db.container("c").unwrap();
        let cases = [
            (
                CosmosOperation::read_all_items(c.clone()),
                Some("Documents"),
            ),
            (CosmosOperation::list_databases(), Some("Databases")),
            (
                CosmosOperation::list_containers(db.clone()),
                Some("DocumentCollections"),
            ),
            (
                CosmosOperation::read_partition_key_ranges(c.clone()),
                Some("PartitionKeyRanges"),
            ),
            (
                CosmosOperation::query_offer_of("r").unwrap(),
                Some("Offers"),
            ),
            (CosmosOperation::read_container(c.clone()), None),
            (CosmosOperation::read_item(c.item("i").unwrap()), None),
            (CosmosOperation::batch(c), None),
        ];
        for (op, name) in cases {
            assert_eq!(feed_array_name(&op), name, "{op}");
        }
    }
}

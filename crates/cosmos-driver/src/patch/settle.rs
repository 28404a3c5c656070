//! Did a PATCH's replace land? The decision the read-modify-write loop makes after a Replace whose
//! outcome is unknown (its answer was lost, or a retry of it met a 412), from the item as read
//! again. Pure: the loop does the reading.
//!
//! | item as read again | verdict |
//! |---|---|
//! | the ETag the Replace was conditioned on | [`Settlement::NotLanded`]: send the same Replace again (still conditioned on that ETag, so the lost one and the new one cannot both land) |
//! | a new ETag, and the body the Replace wrote (system properties aside) | [`Settlement::Landed`]: the PATCH succeeded, once |
//! | a new ETag and another body | [`Settlement::Unknown`]: the write may have landed and been overwritten, or lost to another writer |
//!
//! The one case no rule without a marker in the document can tell apart: another writer that read
//! the same ETag and wrote a byte-identical body (two increments of the same counter from the same
//! read) while this Replace lost its race. The loop asks the driver's registry of conditional
//! writes (`pipeline/conditional_writes.rs`) before it takes `Landed` as its own; writers in other
//! processes stay out of sight, and the driver README says so.

use serde_json::{Map, Value};

/// Properties the service sets on every write: they differ between the body sent and the body
/// stored, whoever wrote it.
const SYSTEM_PROPERTIES: [&str; 6] = ["_rid", "_self", "_etag", "_attachments", "_ts", "_lsn"];

/// A Replace whose outcome is unknown: the ETag it was conditioned on and the document it sent.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct UnsettledWrite {
    pub if_match: String,
    pub body: Value,
}

/// What the item as read again says about an [`UnsettledWrite`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Settlement {
    /// The write landed: the item holds its body under a new ETag.
    Landed,
    /// The write did not land (yet): the item is still at the ETag it was conditioned on.
    NotLanded,
    /// The item changed, to something else: nobody can tell whether the write landed.
    Unknown,
}

/// Decides what the item as read again (`etag`, `stored`) says about `write`.
pub(crate) fn settle(write: &UnsettledWrite, etag: &str, stored: &Value) -> Settlement {
    if etag == write.if_match {
        Settlement::NotLanded
    } else if same_user_content(&write.body, stored) {
        Settlement::Landed
    } else {
        Settlement::Unknown
    }
}

/// Whether two documents agree on everything but their system properties (member order aside).
fn same_user_content(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(a), Value::Object(b)) => user_members(a).eq(user_members(b)),
        _ => a == b,
    }
}

/// The members of a document that are not system properties, sorted by name.
fn user_members(map: &Map<String, Value>) -> impl Iterator<Item = (&String, &Value)> {
    let mut members: Vec<(&String, &Value)> = map
        .iter()
        .filter(|(k, _)| !SYSTEM_PROPERTIES.contains(&k.as_str()))
        .collect();
    members.sort_by(|x, y| x.0.cmp(y.0));
    members.into_iter()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn write(n: i64) -> UnsettledWrite {
        UnsettledWrite {
            if_match: "\"e1\"".to_owned(),
            body: json!({"id": "a", "pk": "p", "n": n, "tags": ["x"], "_etag": "\"e1\"", "_ts": 10, "_rid": "r"}),
        }
    }

    #[test]
    fn settlement_table() {
        use Settlement::*;
        let rows = [
            (
                "still at the read's etag",
                "\"e1\"",
                json!({"id": "a", "pk": "p", "n": 1, "tags": ["x"], "_etag": "\"e1\"", "_ts": 10}),
                NotLanded,
            ),
            (
                "still at the read's etag, even if the body matched",
                "\"e1\"",
                json!({"id": "a", "pk": "p", "n": 2, "tags": ["x"]}),
                NotLanded,
            ),
            (
                "new etag, our body, new system properties",
                "\"e2\"",
                json!({"id": "a", "pk": "p", "n": 2, "tags": ["x"], "_etag": "\"e2\"", "_ts": 11, "_rid": "r", "_self": "s", "_attachments": "at/", "_lsn": 9}),
                Landed,
            ),
            (
                "new etag, our body in another member order",
                "\"e2\"",
                json!({"tags": ["x"], "n": 2, "pk": "p", "id": "a"}),
                Landed,
            ),
            (
                "new etag, another body",
                "\"e2\"",
                json!({"id": "a", "pk": "p", "n": 3, "tags": ["x"]}),
                Unknown,
            ),
            (
                "new etag, a member more",
                "\"e2\"",
                json!({"id": "a", "pk": "p", "n": 2, "tags": ["x"], "extra": true}),
                Unknown,
            ),
            (
                "new etag, a member less",
                "\"e2\"",
                json!({"id": "a", "pk": "p", "n": 2}),
                Unknown,
            ),
            (
                "new etag, array order differs",
                "\"e2\"",
                json!({"id": "a", "pk": "p", "n": 2, "tags": ["x", "x"]}),
                Unknown,
            ),
            (
                "new etag, an integer stored as a float",
                "\"e2\"",
                json!({"id": "a", "pk": "p", "n": 2.5, "tags": ["x"]}),
                Unknown,
            ),
            ("new etag, not an object", "\"e2\"", json!([1]), Unknown),
        ];
        for (name, etag, stored, verdict) in rows {
            assert_eq!(settle(&write(2), etag, &stored), verdict, "{name}");
        }
    }
}

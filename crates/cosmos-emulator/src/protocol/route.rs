//! Resource paths: `/dbs/{db}/colls/{coll}/docs/{id}` and friends, with the resource type and link
//! the master-key signature covers.

use super::percent::percent_decode;
use super::ScriptKind;

/// What a request path names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Resource {
    /// `/`: the database account.
    Account,
    /// `/dbs`
    Databases,
    /// `/dbs/{db}`
    Database { db: String },
    /// `/dbs/{db}/colls`
    Containers { db: String },
    /// `/dbs/{db}/colls/{coll}`
    Container { db: String, coll: String },
    /// `/dbs/{db}/colls/{coll}/docs`
    Items { db: String, coll: String },
    /// `/dbs/{db}/colls/{coll}/docs/{id}`
    Item {
        db: String,
        coll: String,
        id: String,
    },
    /// `/dbs/{db}/colls/{coll}/pkranges`
    PkRanges { db: String, coll: String },
    /// `/dbs/{db}/colls/{coll}/conflicts`: the conflicts feed (multi-write conflicts the
    /// emulator resolves as last writer wins, so it is always empty)
    Conflicts { db: String, coll: String },
    /// `/dbs/{db}/colls/{coll}/conflicts/{id}`
    Conflict {
        db: String,
        coll: String,
        id: String,
    },
    /// `/dbs/{db}/colls/{coll}/operations/partitionkeydelete`: delete every item of a partition
    /// key (signed as the container is, resource type `colls` on its link, as the service wants)
    PartitionKeyDelete { db: String, coll: String },
    /// `/dbs/{db}/colls/{coll}/sprocs`, `/triggers` or `/udfs`
    Scripts {
        db: String,
        coll: String,
        kind: ScriptKind,
    },
    /// `/dbs/{db}/colls/{coll}/sprocs/{id}` (and triggers, udfs)
    Script {
        db: String,
        coll: String,
        kind: ScriptKind,
        id: String,
    },
    /// `/dbs/{db}/users`
    Users { db: String },
    /// `/dbs/{db}/users/{user}`
    User { db: String, user: String },
    /// `/dbs/{db}/users/{user}/permissions`
    Permissions { db: String, user: String },
    /// `/dbs/{db}/users/{user}/permissions/{id}`
    Permission {
        db: String,
        user: String,
        id: String,
    },
    /// `/offers`
    Offers,
    /// `/offers/{id}`
    Offer { id: String },
}

/// A routed request path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Route {
    pub resource: Resource,
    /// The signature's resource type ("dbs", "colls", "docs", "pkranges", "conflicts", "offers"
    /// or "").
    pub resource_type: &'static str,
    /// The signature's resource link (decoded names, no leading slash).
    pub resource_link: String,
}

/// The longest id (and database or container name) the service accepts, in bytes.
pub(crate) const MAX_ID_BYTES: usize = 1023;

/// Why a path does not route.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum RouteError {
    /// The path names nothing the emulator serves (404).
    NotServed,
    /// A segment can never name a resource (400, before auth): the message says why.
    BadSegment(String),
}

/// Parses a request path. Segments are percent-decoded one by one; a segment whose decoded text
/// holds `/`, `\\`, `?`, `#` or a control character, or is longer than [`MAX_ID_BYTES`], is refused
/// (it would otherwise be joined into a signed link that reads as a different path).
pub(crate) fn parse(path: &str) -> Result<Route, RouteError> {
    let trimmed = path.trim_matches('/');
    if trimmed.is_empty() {
        return Ok(Route {
            resource: Resource::Account,
            resource_type: "",
            resource_link: String::new(),
        });
    }
    let raw: Vec<&str> = trimmed.split('/').collect();
    if raw.len() > 6 {
        return Err(RouteError::NotServed);
    }
    let mut seg = Vec::with_capacity(raw.len());
    for s in &raw {
        let decoded = percent_decode(s).ok_or(RouteError::NotServed)?;
        if decoded.is_empty() {
            return Err(RouteError::NotServed);
        }
        if let Some(reason) = bad_segment_reason(&decoded) {
            return Err(RouteError::BadSegment(reason));
        }
        seg.push(decoded);
    }
    let (resource, resource_type, resource_link) = resolve(&seg)?;
    Ok(Route {
        resource,
        resource_type,
        resource_link,
    })
}

/// What a route resolves to: the resource, its type and its link as a signature names them.
type Resolved = (Resource, &'static str, String);

/// The resource the decoded segments `seg` name.
fn resolve(seg: &[String]) -> Result<Resolved, RouteError> {
    let kinds: Vec<&str> = seg.iter().step_by(2).map(String::as_str).collect();
    match kinds.as_slice() {
        ["dbs", "colls", _] => inside_container(seg, &kinds),
        _ => outside_containers(seg, &kinds),
    }
}

/// Offers, databases, containers, users and permissions.
fn outside_containers(seg: &[String], kinds: &[&str]) -> Result<Resolved, RouteError> {
    let link = |n: usize| seg[..n].join("/");
    Ok(match (kinds, seg.len()) {
        (["offers"], 1) => (Resource::Offers, "offers", String::new()),
        (["offers"], 2) => (
            Resource::Offer { id: seg[1].clone() },
            "offers",
            seg[1].to_ascii_lowercase(),
        ),
        (["dbs"], 1) => (Resource::Databases, "dbs", String::new()),
        (["dbs"], 2) => (Resource::Database { db: seg[1].clone() }, "dbs", link(2)),
        (["dbs", "colls"], 3) => (
            Resource::Containers { db: seg[1].clone() },
            "colls",
            link(2),
        ),
        (["dbs", "colls"], 4) => (
            Resource::Container {
                db: seg[1].clone(),
                coll: seg[3].clone(),
            },
            "colls",
            link(4),
        ),
        (["dbs", "users"], 3) => (Resource::Users { db: seg[1].clone() }, "users", link(2)),
        (["dbs", "users"], 4) => (
            Resource::User {
                db: seg[1].clone(),
                user: seg[3].clone(),
            },
            "users",
            link(4),
        ),
        (["dbs", "users", "permissions"], 5) => (
            Resource::Permissions {
                db: seg[1].clone(),
                user: seg[3].clone(),
            },
            "permissions",
            link(4),
        ),
        (["dbs", "users", "permissions"], 6) => (
            Resource::Permission {
                db: seg[1].clone(),
                user: seg[3].clone(),
                id: seg[5].clone(),
            },
            "permissions",
            link(6),
        ),
        _ => return Err(RouteError::NotServed),
    })
}

/// What lives in a container: items, partition key ranges, conflicts, scripts and the
/// delete-by-partition-key operation.
fn inside_container(seg: &[String], kinds: &[&str]) -> Result<Resolved, RouteError> {
    let link = |n: usize| seg[..n].join("/");
    Ok(match (kinds, seg.len()) {
        (["dbs", "colls", "docs"], 5) => (
            Resource::Items {
                db: seg[1].clone(),
                coll: seg[3].clone(),
            },
            "docs",
            link(4),
        ),
        (["dbs", "colls", "docs"], 6) => (
            Resource::Item {
                db: seg[1].clone(),
                coll: seg[3].clone(),
                id: seg[5].clone(),
            },
            "docs",
            link(6),
        ),
        (["dbs", "colls", "pkranges"], 5) => (
            Resource::PkRanges {
                db: seg[1].clone(),
                coll: seg[3].clone(),
            },
            "pkranges",
            link(4),
        ),
        (["dbs", "colls", "conflicts"], 5) => (
            Resource::Conflicts {
                db: seg[1].clone(),
                coll: seg[3].clone(),
            },
            "conflicts",
            link(4),
        ),
        (["dbs", "colls", "conflicts"], 6) => (
            Resource::Conflict {
                db: seg[1].clone(),
                coll: seg[3].clone(),
                id: seg[5].clone(),
            },
            "conflicts",
            link(6),
        ),
        (["dbs", "colls", "operations"], 6) if seg[5] == "partitionkeydelete" => (
            Resource::PartitionKeyDelete {
                db: seg[1].clone(),
                coll: seg[3].clone(),
            },
            "colls",
            link(4),
        ),
        (["dbs", "colls", kind], n @ (5 | 6)) if ScriptKind::from_segment(kind).is_some() => {
            let kind = ScriptKind::from_segment(kind).ok_or(RouteError::NotServed)?;
            let (db, coll) = (seg[1].clone(), seg[3].clone());
            if n == 5 {
                (
                    Resource::Scripts { db, coll, kind },
                    kind.segment(),
                    link(4),
                )
            } else {
                let id = seg[5].clone();
                (
                    Resource::Script { db, coll, kind, id },
                    kind.segment(),
                    link(6),
                )
            }
        }
        _ => return Err(RouteError::NotServed),
    })
}

/// For a path addressed by resource ids (`/dbs/{db _rid}/...`, the `_self` links SDKs follow),
/// the link its signature covers: the last resource id, lower-cased, as the SDKs sign it. `None`
/// for a path addressed by names: a database segment is a resource id when it is 8 characters of
/// base64 (`-` for `/`) decoding to 4 bytes, as the SDKs tell them apart.
pub(crate) fn rid_signing_link(resource_link: &str) -> Option<String> {
    let mut parts = resource_link.split('/');
    if parts.next() != Some("dbs") {
        return None;
    }
    let db = parts.next()?;
    if !is_database_rid(db) {
        return None;
    }
    resource_link
        .rsplit('/')
        .next()
        .map(str::to_ascii_lowercase)
}

fn is_database_rid(segment: &str) -> bool {
    use base64::Engine;
    segment.len() == 8
        && base64::engine::general_purpose::STANDARD
            .decode(segment.replace('-', "/"))
            .is_ok_and(|bytes| bytes.len() == 4)
}

/// Why a decoded path segment cannot name anything, if it cannot.
fn bad_segment_reason(segment: &str) -> Option<String> {
    if segment.len() > MAX_ID_BYTES {
        return Some(format!(
            "A path segment is {} bytes long; ids and names are at most {MAX_ID_BYTES} bytes.",
            segment.len()
        ));
    }
    let c = segment
        .chars()
        .find(|c| matches!(c, '/' | '\\' | '?' | '#') || c.is_control())?;
    Some(format!(
        "A path segment holds {c:?} (percent-encoded or not); ids and names cannot contain '/', '\\', '?', '#' or control characters."
    ))
}

/// Why an id cannot name a resource, if it cannot.
pub(crate) fn invalid_id_reason(id: &str) -> Option<String> {
    if id.is_empty() {
        return Some("The id must not be empty.".into());
    }
    if id.len() > MAX_ID_BYTES {
        return Some(format!(
            "The id is longer than {MAX_ID_BYTES} bytes. Ensure to provide a unique non-empty string less than '{}' characters.",
            MAX_ID_BYTES + 1
        ));
    }
    if let Some(c) = id.chars().find(|c| matches!(c, '/' | '\\' | '?' | '#')) {
        return Some(format!(
            "The resource name presented contains invalid character '{c}'."
        ));
    }
    if id.ends_with(' ') {
        return Some("The id must not end with a space.".into());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_id_paths_sign_with_their_last_id_lower_cased() {
        let cases = [
            ("dbs/AAAAAQ==", Some("aaaaaq==")),
            ("dbs/AAAAAQ==/colls/AAAAAYAAAAI=", Some("aaaaayaaaai=")),
            (
                "dbs/AAAAAQ==/colls/AAAAAYAAAAI=/docs/AAAAAYAAAAIFAAAAAAAAAA==",
                Some("aaaaayaaaaifaaaaaaaaaa=="),
            ),
            ("dbs/mydb/colls/c", None),
            ("dbs/abcdefgh/colls/c", None),
            ("dbs/AAAA-Q==", Some("aaaa-q==")),
            ("offers/abc", None),
            ("", None),
        ];
        for (link, expected) in cases {
            assert_eq!(rid_signing_link(link).as_deref(), expected, "{link}");
        }
    }

    #[test]
    fn routes_each_resource_with_its_signing_link() {
        let table: &[(&str, &str, &str)] = &[
            ("/", "", ""),
            ("/dbs", "dbs", ""),
            ("/dbs/", "dbs", ""),
            ("/dbs/d1", "dbs", "dbs/d1"),
            ("/dbs/d1/colls", "colls", "dbs/d1"),
            ("/dbs/d1/users", "users", "dbs/d1"),
            ("/dbs/d1/users/u", "users", "dbs/d1/users/u"),
            (
                "/dbs/d1/users/u/permissions",
                "permissions",
                "dbs/d1/users/u",
            ),
            (
                "/dbs/d1/users/u/permissions/p",
                "permissions",
                "dbs/d1/users/u/permissions/p",
            ),
            ("/dbs/d1/colls/c1/", "colls", "dbs/d1/colls/c1"),
            ("/dbs/d1/colls/c1/docs", "docs", "dbs/d1/colls/c1"),
            (
                "/dbs/d1/colls/c1/docs/a%20b",
                "docs",
                "dbs/d1/colls/c1/docs/a b",
            ),
            ("/dbs/d1/colls/c1/pkranges", "pkranges", "dbs/d1/colls/c1"),
            ("/dbs/d1/colls/c1/conflicts", "conflicts", "dbs/d1/colls/c1"),
            (
                "/dbs/d1/colls/c1/conflicts/x",
                "conflicts",
                "dbs/d1/colls/c1/conflicts/x",
            ),
            (
                "/dbs/d1/colls/c1/operations/partitionkeydelete",
                "colls",
                "dbs/d1/colls/c1",
            ),
            ("/dbs/d1/colls/c1/sprocs", "sprocs", "dbs/d1/colls/c1"),
            (
                "/dbs/d1/colls/c1/sprocs/s%201",
                "sprocs",
                "dbs/d1/colls/c1/sprocs/s 1",
            ),
            ("/dbs/d1/colls/c1/triggers", "triggers", "dbs/d1/colls/c1"),
            ("/dbs/d1/colls/c1/udfs/u", "udfs", "dbs/d1/colls/c1/udfs/u"),
            ("/offers", "offers", ""),
            ("/offers/Of1A/", "offers", "of1a"),
        ];
        for (path, kind, link) in table {
            let route = parse(path).unwrap_or_else(|e| panic!("{path} did not route: {e:?}"));
            assert_eq!(
                (route.resource_type, route.resource_link.as_str()),
                (*kind, *link),
                "{path}"
            );
        }
        assert_eq!(
            parse("/dbs/d/colls/c/docs/x").unwrap().resource,
            Resource::Item {
                db: "d".into(),
                coll: "c".into(),
                id: "x".into()
            }
        );
    }

    #[test]
    fn unknown_paths_do_not_route() {
        for path in [
            "/foo",
            "/dbs/d/users/u/x",
            "/dbs/d/colls/c/docs/x/attachments",
            "/dbs/d/colls/c/sprocs/x/y",
            "/dbs//colls",
            "/dbs/%zz",
            "/dbs/d/colls/c/docs/x/y/z",
        ] {
            assert_eq!(parse(path), Err(RouteError::NotServed), "{path}");
        }
    }

    #[test]
    fn segments_with_encoded_separators_control_characters_or_too_many_bytes_are_refused() {
        let long = format!("/dbs/{}", "a".repeat(MAX_ID_BYTES + 1));
        for path in [
            "/dbs/a%2Fb",
            "/dbs/a%2fb/colls",
            "/dbs/d/colls/c/docs/a%5Cb",
            "/dbs/d/colls/c/docs/a\\b",
            "/dbs/d/colls/c/docs/a%3Fb",
            "/dbs/d/colls/c/docs/a%23b",
            "/dbs/d/colls/c/docs/a%0Ab",
            "/dbs/d/colls/c/docs/a%00",
            "/dbs/d/colls/c/docs/%7F",
            long.as_str(),
        ] {
            assert!(
                matches!(parse(path), Err(RouteError::BadSegment(_))),
                "{path} was not refused"
            );
        }
        let longest = format!("/dbs/{}", "a".repeat(MAX_ID_BYTES));
        assert!(parse(&longest).is_ok());
        assert!(parse("/dbs/d/colls/c/docs/caf%C3%A9%20ok").is_ok());
    }

    #[test]
    fn ids_with_reserved_characters_are_refused() {
        for bad in ["a/b", "a\\b", "a?b", "a#b", "", "trailing "] {
            assert!(invalid_id_reason(bad).is_some(), "{bad:?} accepted");
        }
        assert!(invalid_id_reason("fine-id_1.x").is_none());
    }
}

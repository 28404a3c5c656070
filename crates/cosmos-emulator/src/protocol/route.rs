//! Resource paths: `/dbs/{db}/colls/{coll}/docs/{id}` and friends, with the resource type and link
//! the master-key signature covers.

use crate::auth::percent_decode;

/// What a request path names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Resource {
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
    /// `/offers`
    Offers,
    /// `/offers/{id}`
    Offer { id: String },
}

/// A routed request path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Route {
    pub resource: Resource,
    /// The signature's resource type ("dbs", "colls", "docs", "pkranges" or "").
    pub resource_type: &'static str,
    /// The signature's resource link (decoded names, no leading slash).
    pub resource_link: String,
}

/// Parses a request path; None when it names nothing the emulator serves.
pub fn parse(path: &str) -> Option<Route> {
    let trimmed = path.trim_matches('/');
    if trimmed.is_empty() {
        return Some(Route {
            resource: Resource::Account,
            resource_type: "",
            resource_link: String::new(),
        });
    }
    let raw: Vec<&str> = trimmed.split('/').collect();
    let mut seg = Vec::with_capacity(raw.len());
    for s in &raw {
        let decoded = percent_decode(s)?;
        if decoded.is_empty() {
            return None;
        }
        seg.push(decoded);
    }
    let link = |n: usize| seg[..n].join("/");
    let kinds: Vec<&str> = seg.iter().step_by(2).map(String::as_str).collect();
    let (resource, resource_type, resource_link) = match (kinds.as_slice(), seg.len()) {
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
        _ => return None,
    };
    Some(Route {
        resource,
        resource_type,
        resource_link,
    })
}

/// Why an id cannot name a resource, if it cannot.
pub fn invalid_id_reason(id: &str) -> Option<String> {
    if id.is_empty() {
        return Some("The id must not be empty.".into());
    }
    if id.len() > 1023 {
        return Some("The id is longer than 1023 bytes.".into());
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
    fn routes_each_resource_with_its_signing_link() {
        let table: &[(&str, &str, &str)] = &[
            ("/", "", ""),
            ("/dbs", "dbs", ""),
            ("/dbs/", "dbs", ""),
            ("/dbs/d1", "dbs", "dbs/d1"),
            ("/dbs/d1/colls", "colls", "dbs/d1"),
            ("/dbs/d1/colls/c1/", "colls", "dbs/d1/colls/c1"),
            ("/dbs/d1/colls/c1/docs", "docs", "dbs/d1/colls/c1"),
            (
                "/dbs/d1/colls/c1/docs/a%20b",
                "docs",
                "dbs/d1/colls/c1/docs/a b",
            ),
            ("/dbs/d1/colls/c1/pkranges", "pkranges", "dbs/d1/colls/c1"),
            ("/offers", "offers", ""),
            ("/offers/Of1A/", "offers", "of1a"),
        ];
        for (path, kind, link) in table {
            let route = parse(path).unwrap_or_else(|| panic!("{path} did not route"));
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
            "/dbs/d/users",
            "/dbs/d/colls/c/sprocs",
            "/dbs/d/colls/c/docs/x/attachments",
            "/dbs//colls",
            "/dbs/%zz",
            "/dbs/d/colls/c/docs/x/y/z",
        ] {
            assert!(parse(path).is_none(), "{path} routed");
        }
    }

    #[test]
    fn ids_with_reserved_characters_are_refused() {
        for bad in ["a/b", "a\\b", "a?b", "a#b", "", "trailing "] {
            assert!(invalid_id_reason(bad).is_some(), "{bad:?} accepted");
        }
        assert!(invalid_id_reason("fine-id_1.x").is_none());
    }
}

//! The kinds of operation that fault rules and request counters tell apart.

use std::fmt;
use std::str::FromStr;

use super::quote::quoted;

/// What kind of operation a request is (used by rules and counters).
///
/// Serde and JSON names are lowercase: `"read"`, `"create"`, `"replace"`, `"upsert"`, `"delete"`,
/// `"patch"`, `"query"`, `"read-feed"`, `"metadata"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OpKind {
    /// Point read of one item.
    Read,
    /// Item create (POST without the upsert header).
    Create,
    /// Item replace (PUT).
    Replace,
    /// Item upsert (POST with `x-ms-documentdb-is-upsert: true`).
    Upsert,
    /// Item delete.
    Delete,
    /// Native partial update (PATCH).
    Patch,
    /// Query over a container's items.
    Query,
    /// Read feed of a container's items (GET .../docs).
    ReadFeed,
    /// Account, database, container and partition-key-range requests.
    Metadata,
}

impl OpKind {
    /// Every kind, in a fixed order (the order of [`OpKind::index`]).
    pub const ALL: [OpKind; 9] = [
        OpKind::Read,
        OpKind::Create,
        OpKind::Replace,
        OpKind::Upsert,
        OpKind::Delete,
        OpKind::Patch,
        OpKind::Query,
        OpKind::ReadFeed,
        OpKind::Metadata,
    ];

    /// Number of kinds.
    pub const COUNT: usize = Self::ALL.len();

    /// Position of this kind in [`OpKind::ALL`], for table lookups.
    pub fn index(self) -> usize {
        self as usize
    }

    /// The JSON name of this kind.
    pub fn as_str(self) -> &'static str {
        match self {
            OpKind::Read => "read",
            OpKind::Create => "create",
            OpKind::Replace => "replace",
            OpKind::Upsert => "upsert",
            OpKind::Delete => "delete",
            OpKind::Patch => "patch",
            OpKind::Query => "query",
            OpKind::ReadFeed => "read-feed",
            OpKind::Metadata => "metadata",
        }
    }

    /// True for operations on items (everything except [`OpKind::Metadata`]).
    pub fn is_data_plane(self) -> bool {
        self != OpKind::Metadata
    }

    /// The JSON names of all kinds, comma separated (for error messages).
    pub fn known_names() -> String {
        Self::ALL
            .iter()
            .map(|k| k.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl fmt::Display for OpKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for OpKind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .iter()
            .copied()
            .find(|k| k.as_str() == s)
            .ok_or_else(|| {
                format!(
                    "unknown operation kind {} (known: {})",
                    quoted(s),
                    Self::known_names()
                )
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_matches_position_in_all() {
        for (i, kind) in OpKind::ALL.iter().enumerate() {
            assert_eq!(kind.index(), i);
        }
    }

    #[test]
    fn names_round_trip_through_from_str_and_serde() {
        for kind in OpKind::ALL {
            assert_eq!(kind.as_str().parse::<OpKind>(), Ok(kind));
            let json = serde_json::to_string(&kind).unwrap();
            assert_eq!(json, format!("\"{}\"", kind.as_str()));
            assert_eq!(serde_json::from_str::<OpKind>(&json).unwrap(), kind);
        }
        assert_eq!(OpKind::ReadFeed.as_str(), "read-feed");
    }

    #[test]
    fn unknown_name_lists_known_names() {
        let err = "reed".parse::<OpKind>().unwrap_err();
        assert!(err.contains("\"reed\""), "{err}");
        assert!(err.contains("read-feed"), "{err}");
    }

    #[test]
    fn only_metadata_is_outside_the_data_plane() {
        let outside: Vec<_> = OpKind::ALL
            .into_iter()
            .filter(|k| !k.is_data_plane())
            .collect();
        assert_eq!(outside, vec![OpKind::Metadata]);
    }
}

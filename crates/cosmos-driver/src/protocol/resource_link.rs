//! Addresses of databases, containers and items, validated once and kept ready for the wire.
//!
//! Each reference holds the service's resource link (`dbs/{db}/colls/{c}/docs/{id}`, unencoded, the
//! form the authorization signature uses) and the request path (`/dbs/...`, percent-encoded), both
//! computed at construction so that sending a request formats nothing.

use std::fmt;
use std::sync::Arc;

use bytes::Bytes;

use crate::error::CosmosError;

/// The longest id the service accepts, in characters.
pub const MAX_ID_LENGTH: usize = 255;

/// Checks an id the way the service would, before any request is sent.
///
/// `what` names the kind of resource for the error message ("database", "container", "item").
pub fn validate_id(what: &str, id: &str) -> Result<(), CosmosError> {
    if id.is_empty() {
        return Err(CosmosError::invalid_input(format!(
            "the {what} id is empty"
        )));
    }
    let chars = id.chars().count();
    if chars > MAX_ID_LENGTH {
        return Err(CosmosError::invalid_input(format!(
            "the {what} id is {chars} characters long; the service allows at most {MAX_ID_LENGTH}"
        )));
    }
    if let Some(bad) = id.chars().find(|c| matches!(c, '/' | '\\' | '?' | '#')) {
        return Err(CosmosError::invalid_input(format!(
            "the {what} id {id:?} contains {bad:?}, which the service does not allow in ids"
        )));
    }
    if id.ends_with(' ') {
        return Err(CosmosError::invalid_input(format!(
            "the {what} id {id:?} ends with a space, which the service does not allow"
        )));
    }
    Ok(())
}

/// Appends `segment` to `out`, percent-encoding every byte outside the URI unreserved set.
fn push_encoded(out: &mut String, segment: &str) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    for &b in segment.as_bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push('%');
            out.push(HEX[(b >> 4) as usize] as char);
            out.push(HEX[(b & 0xf) as usize] as char);
        }
    }
}

/// A link and its request path, built together.
#[derive(Clone, PartialEq, Eq, Hash)]
struct Address {
    /// Unencoded resource link without a leading slash, as signed.
    link: Arc<str>,
    /// Percent-encoded request path with a leading slash.
    path: Bytes,
}

impl Address {
    fn child(parent: Option<&Address>, kind: &str, id: &str) -> Address {
        let mut link = String::new();
        let mut path = String::new();
        if let Some(p) = parent {
            link.push_str(&p.link);
            link.push('/');
            path.push_str(p.path_str());
        }
        link.push_str(kind);
        link.push('/');
        link.push_str(id);
        path.push('/');
        path.push_str(kind);
        path.push('/');
        push_encoded(&mut path, id);
        Address {
            link: Arc::from(link),
            path: Bytes::from(path),
        }
    }

    fn path_str(&self) -> &str {
        // The path is built from `String`s only, so it is UTF-8.
        std::str::from_utf8(&self.path).unwrap_or_default()
    }
}

/// A database, by id.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct DatabaseReference {
    id: Arc<str>,
    address: Address,
}

impl DatabaseReference {
    /// A reference to the database `id`; fails when the id is empty, too long or holds `/ \ ? #`.
    pub fn new(id: impl AsRef<str>) -> Result<Self, CosmosError> {
        let id = id.as_ref();
        validate_id("database", id)?;
        Ok(Self {
            id: Arc::from(id),
            address: Address::child(None, "dbs", id),
        })
    }

    /// A container of this database.
    pub fn container(&self, id: impl AsRef<str>) -> Result<ContainerReference, CosmosError> {
        ContainerReference::new(self.clone(), id)
    }

    /// The database id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The resource link (`dbs/{id}`).
    pub fn link(&self) -> &str {
        &self.address.link
    }

    /// The percent-encoded request path (`/dbs/{id}`).
    pub fn path(&self) -> &str {
        self.address.path_str()
    }

    pub(crate) fn path_bytes(&self) -> &Bytes {
        &self.address.path
    }
}

/// A container, by database and id.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct ContainerReference {
    database: DatabaseReference,
    id: Arc<str>,
    address: Address,
}

impl ContainerReference {
    /// A reference to container `id` in `database`.
    pub fn new(database: DatabaseReference, id: impl AsRef<str>) -> Result<Self, CosmosError> {
        let id = id.as_ref();
        validate_id("container", id)?;
        let address = Address::child(Some(&database.address), "colls", id);
        Ok(Self {
            database,
            id: Arc::from(id),
            address,
        })
    }

    /// An item of this container.
    pub fn item(&self, id: impl AsRef<str>) -> Result<ItemReference, CosmosError> {
        ItemReference::new(self.clone(), id)
    }

    /// The database the container belongs to.
    pub fn database(&self) -> &DatabaseReference {
        &self.database
    }

    /// The container id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The resource link (`dbs/{db}/colls/{id}`).
    pub fn link(&self) -> &str {
        &self.address.link
    }

    pub(crate) fn link_arc(&self) -> &Arc<str> {
        &self.address.link
    }

    /// The percent-encoded request path.
    pub fn path(&self) -> &str {
        self.address.path_str()
    }

    pub(crate) fn path_bytes(&self) -> &Bytes {
        &self.address.path
    }
}

/// An item (document), by container and id.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct ItemReference {
    container: ContainerReference,
    id: Arc<str>,
    address: Address,
}

impl ItemReference {
    /// A reference to item `id` in `container`.
    pub fn new(container: ContainerReference, id: impl AsRef<str>) -> Result<Self, CosmosError> {
        let id = id.as_ref();
        validate_id("item", id)?;
        let address = Address::child(Some(&container.address), "docs", id);
        Ok(Self {
            container,
            id: Arc::from(id),
            address,
        })
    }

    /// The container the item belongs to.
    pub fn container(&self) -> &ContainerReference {
        &self.container
    }

    /// The item id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The resource link (`dbs/{db}/colls/{c}/docs/{id}`).
    pub fn link(&self) -> &str {
        &self.address.link
    }

    /// The percent-encoded request path.
    pub fn path(&self) -> &str {
        self.address.path_str()
    }

    pub(crate) fn path_bytes(&self) -> &Bytes {
        &self.address.path
    }
}

macro_rules! debug_as_link {
    ($($t:ty),*) => {$(
        impl fmt::Debug for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}({:?})", stringify!($t), self.link())
            }
        }
        impl fmt::Display for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.link())
            }
        }
    )*};
}
debug_as_link!(DatabaseReference, ContainerReference, ItemReference);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_and_paths() {
        let item = DatabaseReference::new("db")
            .and_then(|d| d.container("c 1"))
            .and_then(|c| c.item("a+b"))
            .unwrap();
        assert_eq!(item.link(), "dbs/db/colls/c 1/docs/a+b");
        assert_eq!(item.path(), "/dbs/db/colls/c%201/docs/a%2Bb");
        assert_eq!(item.container().link(), "dbs/db/colls/c 1");
        assert_eq!(item.container().database().path(), "/dbs/db");
    }

    #[test]
    fn id_rules_name_the_problem() {
        let cases: &[(&str, &str)] = &[
            ("", "is empty"),
            ("a/b", "'/'"),
            ("a\\b", "'\\\\'"),
            ("a?b", "'?'"),
            ("a#b", "'#'"),
            ("trailing ", "ends with a space"),
        ];
        for (id, needle) in cases {
            let err = DatabaseReference::new(id).unwrap_err();
            assert!(err.is_invalid_input());
            assert!(err.message().contains(needle), "{id:?}: {}", err.message());
            assert!(err.message().contains("database"), "{}", err.message());
        }
        let long = "x".repeat(MAX_ID_LENGTH + 1);
        let err = DatabaseReference::new("db")
            .unwrap()
            .container(&long)
            .unwrap_err();
        assert!(
            err.message().contains("256 characters"),
            "{}",
            err.message()
        );
        assert!(err.message().contains("container"), "{}", err.message());
        assert!(DatabaseReference::new("x".repeat(MAX_ID_LENGTH)).is_ok());
    }

    #[test]
    fn unicode_ids_are_encoded_as_utf8() {
        let db = DatabaseReference::new("é").unwrap();
        assert_eq!(db.path(), "/dbs/%C3%A9");
        assert_eq!(db.link(), "dbs/é");
    }
}

//! Addresses of databases, containers and items, validated once and kept ready for the wire.
//!
//! Each reference holds the service's resource link (`dbs/{db}/colls/{c}/docs/{id}`, unencoded, the
//! form the authorization signature uses) and the request path (`/dbs/...`, percent-encoded), both
//! computed at construction so that sending a request formats nothing.

use std::fmt;
use std::sync::Arc;

use bytes::Bytes;

use super::protocol_error::ProtocolError;

/// The longest id the service accepts, in characters.
pub const MAX_ID_LENGTH: usize = 255;

/// Checks an id the way the service would, before any request is sent.
///
/// `what` names the kind of resource for the error message ("database", "container", "item").
pub fn validate_id(what: &str, id: &str) -> Result<(), ProtocolError> {
    if id.is_empty() {
        return Err(ProtocolError::new(format!("the {what} id is empty")));
    }
    let chars = id.chars().count();
    if chars > MAX_ID_LENGTH {
        return Err(ProtocolError::new(format!(
            "the {what} id is {chars} characters long; the service allows at most {MAX_ID_LENGTH}"
        )));
    }
    if let Some(bad) = id.chars().find(|c| matches!(c, '/' | '\\' | '?' | '#')) {
        return Err(ProtocolError::new(format!(
            "the {what} id {id:?} contains {bad:?}, which the service does not allow in ids"
        )));
    }
    if id.ends_with(' ') {
        return Err(ProtocolError::new(format!(
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

/// An id with its link and request path, built together.
#[derive(Clone, PartialEq, Eq, Hash)]
struct Address {
    id: Arc<str>,
    /// Unencoded resource link without a leading slash, as signed.
    link: Arc<str>,
    /// Percent-encoded request path with a leading slash.
    path: Bytes,
}

impl Address {
    /// Checks `id` (`what` names the resource in the error) and builds its `kind/{id}` link and path
    /// under `parent`.
    fn child(
        parent: Option<&Address>,
        what: &str,
        kind: &str,
        id: &str,
    ) -> Result<Address, ProtocolError> {
        validate_id(what, id)?;
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
        Ok(Address {
            id: Arc::from(id),
            link: Arc::from(link),
            path: Bytes::from(path),
        })
    }

    fn path_str(&self) -> &str {
        // The path is built from `String`s only, so it is UTF-8.
        std::str::from_utf8(&self.path).unwrap_or_default()
    }
}

/// A database, by id.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct DatabaseReference {
    address: Address,
}

impl DatabaseReference {
    /// A reference to the database `id`; fails when the id is empty, too long or holds `/ \ ? #`.
    pub fn new(id: impl AsRef<str>) -> Result<Self, ProtocolError> {
        let address = Address::child(None, "database", "dbs", id.as_ref())?;
        Ok(Self { address })
    }

    /// A user of this database.
    pub fn user(&self, id: impl AsRef<str>) -> Result<UserReference, ProtocolError> {
        UserReference::new(self.clone(), id)
    }

    /// A container of this database.
    pub fn container(&self, id: impl AsRef<str>) -> Result<ContainerReference, ProtocolError> {
        ContainerReference::new(self.clone(), id)
    }
}

/// A container, by database and id.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct ContainerReference {
    database: DatabaseReference,
    address: Address,
}

impl ContainerReference {
    /// A reference to container `id` in `database`.
    pub fn new(database: DatabaseReference, id: impl AsRef<str>) -> Result<Self, ProtocolError> {
        let address = Address::child(Some(&database.address), "container", "colls", id.as_ref())?;
        Ok(Self { database, address })
    }

    /// An item of this container.
    pub fn item(&self, id: impl AsRef<str>) -> Result<ItemReference, ProtocolError> {
        ItemReference::new(self.clone(), id)
    }

    /// A conflict recorded in this container.
    pub fn conflict(&self, id: impl AsRef<str>) -> Result<ConflictReference, ProtocolError> {
        ConflictReference::new(self.clone(), id)
    }

    /// The database the container belongs to.
    pub fn database(&self) -> &DatabaseReference {
        &self.database
    }

    pub(crate) fn link_arc(&self) -> &Arc<str> {
        &self.address.link
    }
}

/// An item (document), by container and id.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct ItemReference {
    container: ContainerReference,
    address: Address,
}

impl ItemReference {
    /// A reference to item `id` in `container`.
    pub fn new(container: ContainerReference, id: impl AsRef<str>) -> Result<Self, ProtocolError> {
        let address = Address::child(Some(&container.address), "item", "docs", id.as_ref())?;
        Ok(Self { container, address })
    }

    /// The container the item belongs to.
    pub fn container(&self) -> &ContainerReference {
        &self.container
    }
}

/// A user of a database (who resource-token permissions are granted to), by database and id.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct UserReference {
    database: DatabaseReference,
    address: Address,
}

impl UserReference {
    /// A reference to user `id` in `database`.
    pub fn new(database: DatabaseReference, id: impl AsRef<str>) -> Result<Self, ProtocolError> {
        let address = Address::child(Some(&database.address), "user", "users", id.as_ref())?;
        Ok(Self { database, address })
    }

    /// The database the user belongs to.
    pub fn database(&self) -> &DatabaseReference {
        &self.database
    }

    /// A permission of this user.
    pub fn permission(&self, id: impl AsRef<str>) -> Result<PermissionReference, ProtocolError> {
        PermissionReference::new(self.clone(), id)
    }
}

/// A permission of a user, by user and id.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct PermissionReference {
    user: UserReference,
    address: Address,
}

impl PermissionReference {
    /// A reference to permission `id` of `user`.
    pub fn new(user: UserReference, id: impl AsRef<str>) -> Result<Self, ProtocolError> {
        let address = Address::child(
            Some(&user.address),
            "permission",
            "permissions",
            id.as_ref(),
        )?;
        Ok(Self { user, address })
    }

    /// The user the permission belongs to.
    pub fn user(&self) -> &UserReference {
        &self.user
    }
}

/// A conflict recorded in a container of a multi-write account, by container and id.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct ConflictReference {
    container: ContainerReference,
    address: Address,
}

impl ConflictReference {
    /// A reference to conflict `id` in `container`.
    pub fn new(container: ContainerReference, id: impl AsRef<str>) -> Result<Self, ProtocolError> {
        let address = Address::child(
            Some(&container.address),
            "conflict",
            "conflicts",
            id.as_ref(),
        )?;
        Ok(Self { container, address })
    }

    /// The container the conflict belongs to.
    pub fn container(&self) -> &ContainerReference {
        &self.container
    }
}

/// A stored procedure, trigger or user-defined function, by container, kind and id.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct ScriptReference {
    container: ContainerReference,
    kind: super::script_kind::ScriptKind,
    address: Address,
}

impl ScriptReference {
    /// A reference to the script `id` of `kind` in `container`.
    pub fn new(
        container: ContainerReference,
        kind: super::script_kind::ScriptKind,
        id: impl AsRef<str>,
    ) -> Result<Self, ProtocolError> {
        let address = Address::child(
            Some(&container.address),
            kind.what(),
            kind.path_segment(),
            id.as_ref(),
        )?;
        Ok(Self {
            container,
            kind,
            address,
        })
    }

    /// The container the script belongs to.
    pub fn container(&self) -> &ContainerReference {
        &self.container
    }

    /// Which kind of script it is.
    pub fn kind(&self) -> super::script_kind::ScriptKind {
        self.kind
    }
}

/// What every reference answers from its address: id, link, request path, `Debug` and `Display`.
macro_rules! reference_address {
    ($($t:ty, $what:literal, $link:literal;)*) => {$(
        impl $t {
            #[doc = concat!("The ", $what, " id.")]
            pub fn id(&self) -> &str {
                &self.address.id
            }

            #[doc = concat!("The resource link (`", $link, "`).")]
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
reference_address! {
    DatabaseReference, "database", "dbs/{id}";
    ContainerReference, "container", "dbs/{db}/colls/{id}";
    ItemReference, "item", "dbs/{db}/colls/{c}/docs/{id}";
    UserReference, "user", "dbs/{db}/users/{id}";
    PermissionReference, "permission", "dbs/{db}/users/{user}/permissions/{id}";
    ConflictReference, "conflict", "dbs/{db}/colls/{c}/conflicts/{id}";
    ScriptReference, "script", "dbs/{db}/colls/{c}/sprocs/{id}` or `triggers/{id}` or `udfs/{id}";
}

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

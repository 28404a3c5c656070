//! Users and permissions as typed data: a user of a database, and a permission that grants it
//! `Read` or `All` on a resource (optionally only on one partition key), with the resource token
//! the service issues for it.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::auth::ResourceToken;
use crate::protocol::PartitionKey;

/// A user as the service describes it.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
pub struct UserProperties {
    /// The user's id.
    pub id: String,
    /// Its resource id.
    #[serde(rename = "_rid", default)]
    pub resource_id: String,
    /// Its etag.
    #[serde(rename = "_etag", default)]
    pub etag: String,
}

/// What a permission allows on its resource.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum PermissionMode {
    /// Reads (point reads, queries, feeds).
    #[serde(alias = "read", alias = "READ")]
    Read,
    /// Reads, writes and stored procedure runs.
    #[serde(alias = "all", alias = "ALL")]
    All,
}

/// A permission: `mode` on `resource` for one user. Read back from the service it carries its
/// resource token ([`PermissionProperties::token`]), which `Debug` never shows.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
pub struct PermissionProperties {
    /// The permission's id.
    pub id: String,
    /// What it allows.
    #[serde(rename = "permissionMode")]
    pub permission_mode: PermissionMode,
    /// The resource link it is granted on (`dbs/{db}/colls/{c}`, or an item, a script...).
    pub resource: String,
    /// The partition key (as a JSON array) it is limited to, if any.
    #[serde(
        rename = "resourcePartitionKey",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub resource_partition_key: Option<Value>,
    /// Its resource id (set by the service).
    #[serde(rename = "_rid", default, skip_serializing)]
    pub resource_id: String,
    /// Its etag (set by the service).
    #[serde(rename = "_etag", default, skip_serializing)]
    pub etag: String,
    #[serde(rename = "_token", default, skip_serializing)]
    token: Option<ResourceToken>,
}

impl PermissionProperties {
    /// A permission `id` granting `mode` on `resource` (a resource link such as
    /// `dbs/shop/colls/orders`).
    pub fn new(id: impl Into<String>, mode: PermissionMode, resource: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            permission_mode: mode,
            resource: resource.into(),
            resource_partition_key: None,
            resource_id: String::new(),
            etag: String::new(),
            token: None,
        }
    }

    /// The same permission limited to the items of partition key `key`.
    pub fn with_partition_key(mut self, key: impl Into<PartitionKey>) -> Self {
        self.resource_partition_key = serde_json::from_str(key.into().as_json()).ok();
        self
    }

    /// The resource token the service issued with the permission (on create, replace, upsert
    /// and read), to hand to a client that is to act under it.
    pub fn token(&self) -> Option<&ResourceToken> {
        self.token.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_permission_is_written_without_service_fields_and_read_with_its_token() {
        let p = PermissionProperties::new("p", PermissionMode::Read, "dbs/d/colls/c")
            .with_partition_key("k");
        assert_eq!(
            serde_json::to_value(&p).unwrap(),
            json!({"id": "p", "permissionMode": "Read", "resource": "dbs/d/colls/c",
                   "resourcePartitionKey": ["k"]})
        );
        let read: PermissionProperties = serde_json::from_value(json!({
            "id": "p", "permissionMode": "all", "resource": "dbs/d/colls/c",
            "_rid": "r", "_etag": "e", "_token": "type=resource&ver=1.0&sig=SECRET"
        }))
        .unwrap();
        assert_eq!(read.permission_mode, PermissionMode::All);
        assert_eq!(
            read.token().map(ResourceToken::secret),
            Some("type=resource&ver=1.0&sig=SECRET")
        );
        assert!(!format!("{read:?}").contains("SECRET"));
        assert!(!serde_json::to_string(&read).unwrap().contains("SECRET"));
    }
}

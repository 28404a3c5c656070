//! What the caller asks for, as data: an operation type, a target resource and its inputs.

use std::fmt;

use bytes::Bytes;
use http::{HeaderName, HeaderValue, Method};

use crate::error::CosmosError;
use crate::protocol::{
    header_names as h, validate_id, ConflictReference, ContainerReference, DatabaseReference,
    ItemReference, OfferId, OperationType, PartitionKey, PartitionKeyDefinition,
    PermissionReference, ResourceType, ScriptKind, ScriptReference, UserReference,
};

/// A condition on the resource's current ETag.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Precondition {
    /// Succeed only when the current ETag equals this one (`If-Match`); 412 otherwise.
    IfMatch(String),
    /// Succeed only when the current ETag differs (`If-None-Match`); a read answers 304 otherwise.
    /// `"*"` makes a write fail with 412 when the resource exists.
    IfNoneMatch(String),
}

impl Precondition {
    pub(crate) fn header(&self) -> Result<(HeaderName, HeaderValue), CosmosError> {
        let (name, etag) = match self {
            Precondition::IfMatch(e) => (http::header::IF_MATCH, e),
            Precondition::IfNoneMatch(e) => (http::header::IF_NONE_MATCH, e),
        };
        if etag.is_empty() {
            return Err(CosmosError::invalid_input(format!(
                "the {name} precondition has an empty ETag"
            )));
        }
        let value = HeaderValue::from_str(etag).map_err(|_| {
            CosmosError::invalid_input(format!(
                "the {name} ETag {etag:?} is not a valid header value"
            ))
        })?;
        Ok((name, value))
    }
}

/// The resource an operation addresses.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum OperationTarget {
    /// The database account (`GET /`).
    Account,
    /// The feed of databases.
    Databases,
    /// One database.
    Database(DatabaseReference),
    /// The feed of containers of a database.
    Containers(DatabaseReference),
    /// One container.
    Container(ContainerReference),
    /// The feed of items of a container.
    Items(ContainerReference),
    /// One item.
    Item(ItemReference),
    /// The feed of partition key ranges of a container.
    PartitionKeyRanges(ContainerReference),
    /// The feed of throughput offers (read, or queried by the resource they provision).
    Offers,
    /// One throughput offer.
    Offer(OfferId),
    /// The feed of a container's stored procedures, triggers or user-defined functions.
    Scripts(ContainerReference, ScriptKind),
    /// One stored procedure, trigger or user-defined function (executing a stored procedure is a
    /// `Create` on it: a `POST` to its path).
    Script(ScriptReference),
    /// The feed of users of a database.
    Users(DatabaseReference),
    /// One user.
    User(UserReference),
    /// The feed of permissions of a user.
    Permissions(UserReference),
    /// One permission.
    Permission(PermissionReference),
    /// The feed of conflicts of a container (multi-write accounts).
    Conflicts(ContainerReference),
    /// One conflict.
    Conflict(ConflictReference),
}

impl OperationTarget {
    /// The resource type, as used in the signature.
    pub fn resource_type(&self) -> ResourceType {
        match self {
            OperationTarget::Account => ResourceType::DatabaseAccount,
            OperationTarget::Databases | OperationTarget::Database(_) => ResourceType::Database,
            OperationTarget::Containers(_) | OperationTarget::Container(_) => {
                ResourceType::Container
            }
            OperationTarget::Items(_) | OperationTarget::Item(_) => ResourceType::Document,
            OperationTarget::PartitionKeyRanges(_) => ResourceType::PartitionKeyRange,
            OperationTarget::Offers | OperationTarget::Offer(_) => ResourceType::Offer,
            OperationTarget::Scripts(_, kind) => kind.resource_type(),
            OperationTarget::Script(s) => s.kind().resource_type(),
            OperationTarget::Users(_) | OperationTarget::User(_) => ResourceType::User,
            OperationTarget::Permissions(_) | OperationTarget::Permission(_) => {
                ResourceType::Permission
            }
            OperationTarget::Conflicts(_) | OperationTarget::Conflict(_) => ResourceType::Conflict,
        }
    }

    /// The resource link used in the signature: the resource itself, or the parent of a feed.
    pub fn signing_link(&self) -> &str {
        match self {
            OperationTarget::Account | OperationTarget::Databases | OperationTarget::Offers => "",
            OperationTarget::Offer(o) => o.link(),
            OperationTarget::Database(d)
            | OperationTarget::Containers(d)
            | OperationTarget::Users(d) => d.link(),
            OperationTarget::Container(c)
            | OperationTarget::Items(c)
            | OperationTarget::PartitionKeyRanges(c)
            | OperationTarget::Scripts(c, _)
            | OperationTarget::Conflicts(c) => c.link(),
            OperationTarget::Item(i) => i.link(),
            OperationTarget::Script(s) => s.link(),
            OperationTarget::User(u) | OperationTarget::Permissions(u) => u.link(),
            OperationTarget::Permission(p) => p.link(),
            OperationTarget::Conflict(c) => c.link(),
        }
    }

    /// The container the target lives in, when there is one.
    pub fn container(&self) -> Option<&ContainerReference> {
        match self {
            OperationTarget::Container(c)
            | OperationTarget::Items(c)
            | OperationTarget::PartitionKeyRanges(c)
            | OperationTarget::Scripts(c, _)
            | OperationTarget::Conflicts(c) => Some(c),
            OperationTarget::Item(i) => Some(i.container()),
            OperationTarget::Script(s) => Some(s.container()),
            OperationTarget::Conflict(c) => Some(c.container()),
            _ => None,
        }
    }

    fn request_path(&self) -> Bytes {
        fn feed(parent: &str, kind: &str) -> Bytes {
            Bytes::from(format!("{parent}/{kind}"))
        }
        match self {
            OperationTarget::Account => Bytes::from_static(b"/"),
            OperationTarget::Databases => Bytes::from_static(b"/dbs"),
            OperationTarget::Database(d) => d.path_bytes().clone(),
            OperationTarget::Containers(d) => feed(d.path(), "colls"),
            OperationTarget::Container(c) => c.path_bytes().clone(),
            OperationTarget::Items(c) => feed(c.path(), "docs"),
            OperationTarget::Item(i) => i.path_bytes().clone(),
            OperationTarget::PartitionKeyRanges(c) => feed(c.path(), "pkranges"),
            OperationTarget::Offers => Bytes::from_static(b"/offers"),
            OperationTarget::Offer(o) => o.path_bytes().clone(),
            OperationTarget::Scripts(c, kind) => feed(c.path(), kind.path_segment()),
            OperationTarget::Script(s) => s.path_bytes().clone(),
            OperationTarget::Users(d) => feed(d.path(), "users"),
            OperationTarget::User(u) => u.path_bytes().clone(),
            OperationTarget::Permissions(u) => feed(u.path(), "permissions"),
            OperationTarget::Permission(p) => p.path_bytes().clone(),
            OperationTarget::Conflicts(c) => feed(c.path(), "conflicts"),
            OperationTarget::Conflict(c) => c.path_bytes().clone(),
        }
    }
}

/// One operation against the service, described as data. Build it with a constructor such as
/// [`CosmosOperation::read_item`], add inputs with the `with_*` methods, and run it with
/// `CosmosDriver::execute`. Cloning is cheap (references and body are shared).
#[derive(Clone)]
pub struct CosmosOperation {
    operation_type: OperationType,
    target: OperationTarget,
    path: Bytes,
    partition_key: Option<PartitionKey>,
    body: Option<Bytes>,
    precondition: Option<Precondition>,
    headers: Vec<(HeaderName, HeaderValue)>,
}

impl CosmosOperation {
    /// An operation of `operation_type` on `target`, with no inputs yet.
    pub fn new(operation_type: OperationType, target: OperationTarget) -> Self {
        let path = target.request_path();
        Self {
            operation_type,
            target,
            path,
            partition_key: None,
            body: None,
            precondition: None,
            headers: Vec::new(),
        }
    }

    /// Read the database account (regions, consistency).
    pub fn read_account() -> Self {
        Self::new(OperationType::Read, OperationTarget::Account)
    }

    /// Read one item. Needs a partition key.
    pub fn read_item(item: ItemReference) -> Self {
        Self::new(OperationType::Read, OperationTarget::Item(item))
    }
    /// Create an item in `container`. Needs a partition key and a JSON body with an `id`.
    pub fn create_item(container: ContainerReference) -> Self {
        Self::new(OperationType::Create, OperationTarget::Items(container))
    }
    /// Create or replace an item in `container`. Needs a partition key and a JSON body with an `id`.
    pub fn upsert_item(container: ContainerReference) -> Self {
        Self::new(OperationType::Upsert, OperationTarget::Items(container))
    }
    /// Replace an item. Needs a partition key and a JSON body with an `id`.
    pub fn replace_item(item: ItemReference) -> Self {
        Self::new(OperationType::Replace, OperationTarget::Item(item))
    }
    /// Delete an item. Needs a partition key.
    pub fn delete_item(item: ItemReference) -> Self {
        Self::new(OperationType::Delete, OperationTarget::Item(item))
    }
    /// Partially update an item (carried out by the driver as read-modify-write). Needs a partition
    /// key and a body of patch instructions.
    pub fn patch_item(item: ItemReference) -> Self {
        Self::new(OperationType::Patch, OperationTarget::Item(item))
    }
    /// Read a feed (databases, containers, items or partition key ranges), one page per call (see
    /// `with_continuation` and `with_max_item_count`).
    pub fn read_feed(target: OperationTarget) -> Self {
        Self::new(OperationType::ReadFeed, target)
    }
    /// Read the items of a container, one page per call (see `with_continuation`).
    pub fn read_all_items(container: ContainerReference) -> Self {
        Self::new(OperationType::ReadFeed, OperationTarget::Items(container))
    }

    /// A batch of item operations on `container` in one request (a transactional batch or one
    /// bulk batch). Needs a body (the JSON array of operations), the batch headers, and a partition
    /// key or a partition key range id header.
    pub fn batch(container: ContainerReference) -> Self {
        Self::new(OperationType::Batch, OperationTarget::Items(container))
    }

    /// Create a database.
    pub fn create_database(database: DatabaseReference) -> Self {
        let body = serde_json::json!({ "id": database.id() }).to_string();
        Self::new(OperationType::Create, OperationTarget::Databases).with_body(body)
    }
    /// Read a database.
    pub fn read_database(database: DatabaseReference) -> Self {
        Self::new(OperationType::Read, OperationTarget::Database(database))
    }
    /// Delete a database and everything in it.
    pub fn delete_database(database: DatabaseReference) -> Self {
        Self::new(OperationType::Delete, OperationTarget::Database(database))
    }
    /// List databases.
    pub fn list_databases() -> Self {
        Self::new(OperationType::ReadFeed, OperationTarget::Databases)
    }

    /// Create a container with a partition key definition.
    pub fn create_container(
        container: ContainerReference,
        partition_key: PartitionKeyDefinition,
    ) -> Self {
        let body =
            serde_json::json!({ "id": container.id(), "partitionKey": partition_key.to_json() })
                .to_string();
        Self::new(
            OperationType::Create,
            OperationTarget::Containers(container.database().clone()),
        )
        .with_body(body)
    }
    /// Read a container.
    pub fn read_container(container: ContainerReference) -> Self {
        Self::new(OperationType::Read, OperationTarget::Container(container))
    }
    /// Delete a container and its items.
    pub fn delete_container(container: ContainerReference) -> Self {
        Self::new(OperationType::Delete, OperationTarget::Container(container))
    }
    /// List the containers of a database.
    pub fn list_containers(database: DatabaseReference) -> Self {
        Self::new(
            OperationType::ReadFeed,
            OperationTarget::Containers(database),
        )
    }

    /// Delete every item of one partition key of `container`. Needs a partition key. The service
    /// answers at once and deletes in the background; the emulator deletes before answering.
    pub fn delete_all_items_by_partition_key(container: ContainerReference) -> Self {
        let path = Bytes::from(format!(
            "{}/operations/partitionkeydelete",
            container.path()
        ));
        let mut op = Self::new(
            OperationType::DeletePartitionKey,
            OperationTarget::Container(container),
        );
        op.path = path;
        op
    }

    /// Read the partition key ranges of a container.
    pub fn read_partition_key_ranges(container: ContainerReference) -> Self {
        Self::new(
            OperationType::ReadFeed,
            OperationTarget::PartitionKeyRanges(container),
        )
    }

    /// Replace a container's settings with `body`, its whole definition as JSON (`id`, partition
    /// key, indexing policy, default TTL, unique keys...). The service refuses a changed partition
    /// key definition or unique key policy.
    pub fn replace_container(container: ContainerReference, body: impl Into<Bytes>) -> Self {
        Self::new(
            OperationType::Replace,
            OperationTarget::Container(container),
        )
        .with_body(body)
    }

    /// Read a throughput offer.
    pub fn read_offer(offer: OfferId) -> Self {
        Self::new(OperationType::Read, OperationTarget::Offer(offer))
    }
    /// Replace a throughput offer with `body`, the offer document with its `content` changed.
    pub fn replace_offer(offer: OfferId, body: impl Into<Bytes>) -> Self {
        Self::new(OperationType::Replace, OperationTarget::Offer(offer)).with_body(body)
    }
    /// Find the offer of the database or container whose `_rid` is `resource_id` (the query the
    /// SDKs send to `/offers`).
    pub fn query_offer_of(resource_id: &str) -> Result<Self, CosmosError> {
        let body = serde_json::json!({
            "query": "SELECT * FROM root r WHERE r.offerResourceId = @rid",
            "parameters": [{"name": "@rid", "value": resource_id}],
        });
        Ok(Self::new(OperationType::Query, OperationTarget::Offers)
            .with_json_body(&body)?
            .with_header(
                HeaderName::from_static("x-ms-documentdb-isquery"),
                HeaderValue::from_static("True"),
            )
            .with_header(
                http::header::CONTENT_TYPE,
                HeaderValue::from_static("application/query+json"),
            ))
    }

    /// Sets the partition key.
    pub fn with_partition_key(mut self, partition_key: impl Into<PartitionKey>) -> Self {
        self.partition_key = Some(partition_key.into());
        self
    }

    /// Sets the body.
    pub fn with_body(mut self, body: impl Into<Bytes>) -> Self {
        self.body = Some(body.into());
        self
    }

    /// Sets the body to `value` serialized as JSON.
    pub fn with_json_body<T: serde::Serialize + ?Sized>(
        self,
        value: &T,
    ) -> Result<Self, CosmosError> {
        let bytes = serde_json::to_vec(value).map_err(|e| {
            CosmosError::invalid_input(format!("the body cannot be serialized as JSON: {e}"))
        })?;
        Ok(self.with_body(bytes))
    }

    /// Sets a precondition on the resource's ETag.
    pub fn with_precondition(mut self, precondition: Precondition) -> Self {
        self.precondition = Some(precondition);
        self
    }

    /// Adds a request header (sent on every attempt, after the driver's own headers).
    pub fn with_header(mut self, name: HeaderName, value: HeaderValue) -> Self {
        self.headers.push((name, value));
        self
    }

    /// Continues a feed read from the continuation token of the previous page (replacing any
    /// continuation set before).
    pub fn with_continuation(mut self, continuation: &str) -> Result<Self, CosmosError> {
        let value = HeaderValue::from_str(continuation).map_err(|_| {
            CosmosError::invalid_input("the continuation token is not a valid header value")
        })?;
        self.headers.retain(|(name, _)| name != h::CONTINUATION);
        Ok(self.with_header(h::CONTINUATION, value))
    }

    /// The continuation token set with `with_continuation`, if any.
    pub fn continuation(&self) -> Option<&str> {
        self.headers
            .iter()
            .find(|(name, _)| name == h::CONTINUATION)
            .and_then(|(_, value)| value.to_str().ok())
    }

    /// Sets the page size of a feed read.
    pub fn with_max_item_count(self, count: u32) -> Self {
        self.with_header(h::MAX_ITEM_COUNT, HeaderValue::from(count))
    }

    /// What the operation does.
    pub fn operation_type(&self) -> OperationType {
        self.operation_type
    }
    /// The resource type it addresses.
    pub fn resource_type(&self) -> ResourceType {
        self.target.resource_type()
    }
    /// The resource it addresses.
    pub fn target(&self) -> &OperationTarget {
        &self.target
    }
    /// The item, when the target is one item.
    pub fn item(&self) -> Option<&ItemReference> {
        match &self.target {
            OperationTarget::Item(i) => Some(i),
            _ => None,
        }
    }
    /// The container, when the target lives in one.
    pub fn container(&self) -> Option<&ContainerReference> {
        self.target.container()
    }
    /// The partition key, when set.
    pub fn partition_key(&self) -> Option<&PartitionKey> {
        self.partition_key.as_ref()
    }
    /// The body, when set.
    pub fn body(&self) -> Option<&Bytes> {
        self.body.as_ref()
    }
    /// The precondition, when set.
    pub fn precondition(&self) -> Option<&Precondition> {
        self.precondition.as_ref()
    }
    /// Headers added with `with_header`.
    pub fn extra_headers(&self) -> &[(HeaderName, HeaderValue)] {
        &self.headers
    }
    /// The partition key range the request is pinned to (`x-ms-documentdb-partitionkeyrangeid`:
    /// a cross-partition query page, a range's change-feed or read-feed page), if any.
    pub fn partition_key_range_id(&self) -> Option<&HeaderValue> {
        self.headers
            .iter()
            .find(|(n, _)| n == crate::protocol::header_names::PARTITION_KEY_RANGE_ID)
            .map(|(_, v)| v)
    }
    /// Whether the request asks the gateway for a query plan (no data is read).
    pub(crate) fn is_query_plan_request(&self) -> bool {
        self.headers
            .iter()
            .any(|(n, _)| n == crate::protocol::header_names::IS_QUERY_PLAN_REQUEST)
    }
    /// The HTTP method.
    pub fn method(&self) -> Method {
        self.operation_type.http_method().clone()
    }
    /// The percent-encoded request path.
    pub(crate) fn path(&self) -> &Bytes {
        &self.path
    }

    /// Checks the inputs before any request is sent; the error names what is wrong.
    pub fn validate(&self) -> Result<(), CosmosError> {
        let is_item_op = matches!(self.target, OperationTarget::Item(_))
            || (matches!(self.target, OperationTarget::Items(_))
                && !matches!(
                    self.operation_type,
                    OperationType::ReadFeed | OperationType::Query
                ));
        let names_a_range = self.operation_type == OperationType::Batch
            && self
                .headers
                .iter()
                .any(|(name, _)| name == h::PARTITION_KEY_RANGE_ID);
        if is_item_op && self.partition_key.is_none() && !names_a_range {
            return Err(CosmosError::invalid_input(format!(
                "{self} needs a partition key (call with_partition_key)"
            )));
        }
        if self.operation_type == OperationType::DeletePartitionKey && self.partition_key.is_none()
        {
            return Err(CosmosError::invalid_input(format!(
                "{self} needs a partition key (call with_partition_key)"
            )));
        }
        if let Some(p) = &self.precondition {
            p.header()?;
        }
        let needs_document = matches!(
            self.target,
            OperationTarget::Item(_) | OperationTarget::Items(_)
        ) && matches!(
            self.operation_type,
            OperationType::Create | OperationType::Upsert | OperationType::Replace
        );
        if needs_document {
            validate_document(self, self.body.as_deref())?;
        }
        if self.operation_type == OperationType::Batch && self.body.is_none() {
            return Err(CosmosError::invalid_input(format!(
                "{self} needs a body: the JSON array of its operations"
            )));
        }
        if self.operation_type == OperationType::Patch {
            let body = self.body.as_deref().ok_or_else(|| {
                CosmosError::invalid_input(format!(
                    "{self} needs a body of patch instructions (call with_body)"
                ))
            })?;
            serde_json::from_slice::<serde::de::IgnoredAny>(body).map_err(|e| {
                CosmosError::invalid_input(format!("the body of {self} is not JSON: {e}"))
            })?;
        }
        Ok(())
    }
}

/// A document body must be a JSON object with a valid string `id`.
fn validate_document(op: &CosmosOperation, body: Option<&[u8]>) -> Result<(), CosmosError> {
    #[derive(serde::Deserialize)]
    struct Doc<'a> {
        #[serde(borrow)]
        id: Option<std::borrow::Cow<'a, str>>,
    }
    let body = body.ok_or_else(|| {
        CosmosError::invalid_input(format!("{op} needs a JSON document body (call with_body)"))
    })?;
    let doc: Doc<'_> = serde_json::from_slice(body).map_err(|e| {
        CosmosError::invalid_input(format!("the body of {op} is not a JSON object: {e}"))
    })?;
    let id = doc.id.ok_or_else(|| {
        CosmosError::invalid_input(format!(
            "the document body of {op} has no string \"id\" property"
        ))
    })?;
    Ok(validate_id("item", &id)?)
}

impl fmt::Display for CosmosOperation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.operation_type {
            OperationType::Create => "create",
            OperationType::Read => "read",
            OperationType::Replace => "replace",
            OperationType::Upsert => "upsert",
            OperationType::Delete => "delete",
            OperationType::Patch => "patch",
            OperationType::ReadFeed => "read feed",
            OperationType::Query => "query",
            OperationType::Batch => "batch",
            OperationType::DeletePartitionKey => "delete partition key",
        };
        let path = std::str::from_utf8(&self.path).unwrap_or("?");
        write!(f, "{what} {path}")
    }
}

impl fmt::Debug for CosmosOperation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CosmosOperation")
            .field("operation_type", &self.operation_type)
            .field("target", &self.target)
            .field("partition_key", &self.partition_key)
            .field("body_len", &self.body.as_ref().map(|b| b.len()))
            .field("precondition", &self.precondition)
            .field("extra_headers", &self.headers.len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn container() -> ContainerReference {
        DatabaseReference::new("db")
            .unwrap()
            .container("c")
            .unwrap()
    }

    #[test]
    fn targets_map_to_paths_links_and_types() {
        let c = container();
        let cases = [
            (
                CosmosOperation::read_account(),
                "/",
                "",
                ResourceType::DatabaseAccount,
            ),
            (
                CosmosOperation::list_databases(),
                "/dbs",
                "",
                ResourceType::Database,
            ),
            (
                CosmosOperation::create_item(c.clone()),
                "/dbs/db/colls/c/docs",
                "dbs/db/colls/c",
                ResourceType::Document,
            ),
            (
                CosmosOperation::read_item(c.item("i").unwrap()),
                "/dbs/db/colls/c/docs/i",
                "dbs/db/colls/c/docs/i",
                ResourceType::Document,
            ),
            (
                CosmosOperation::read_partition_key_ranges(c.clone()),
                "/dbs/db/colls/c/pkranges",
                "dbs/db/colls/c",
                ResourceType::PartitionKeyRange,
            ),
            (
                CosmosOperation::delete_all_items_by_partition_key(c.clone()),
                "/dbs/db/colls/c/operations/partitionkeydelete",
                "dbs/db/colls/c",
                ResourceType::Container,
            ),
            (
                CosmosOperation::list_containers(c.database().clone()),
                "/dbs/db/colls",
                "dbs/db",
                ResourceType::Container,
            ),
            (
                CosmosOperation::create_container(
                    c.clone(),
                    PartitionKeyDefinition::new("/pk").unwrap(),
                ),
                "/dbs/db/colls",
                "dbs/db",
                ResourceType::Container,
            ),
        ];
        for (op, path, link, rt) in cases {
            assert_eq!(op.path().as_ref(), path.as_bytes());
            assert_eq!(op.target().signing_link(), link);
            assert_eq!(op.resource_type(), rt);
        }
    }

    #[test]
    fn delete_by_partition_key_is_a_post_that_needs_a_key() {
        let op = CosmosOperation::delete_all_items_by_partition_key(container());
        assert_eq!(op.method(), Method::POST);
        let e = op.validate().unwrap_err();
        assert!(e.message().contains("needs a partition key"), "{e}");
        assert!(op.with_partition_key("p").validate().is_ok());
    }

    #[test]
    fn preflight_names_the_problem() {
        let c = container();
        let item = c.item("i").unwrap();
        let cases: Vec<(CosmosOperation, &str)> = vec![
            (
                CosmosOperation::read_item(item.clone()),
                "needs a partition key",
            ),
            (
                CosmosOperation::create_item(c.clone()).with_partition_key("p"),
                "needs a JSON document body",
            ),
            (
                CosmosOperation::create_item(c.clone())
                    .with_partition_key("p")
                    .with_body("{nope"),
                "not a JSON object",
            ),
            (
                CosmosOperation::create_item(c.clone())
                    .with_partition_key("p")
                    .with_body("[1]"),
                "not a JSON object",
            ),
            (
                CosmosOperation::upsert_item(c.clone())
                    .with_partition_key("p")
                    .with_body(r#"{"x":1}"#),
                "no string \"id\"",
            ),
            (
                CosmosOperation::replace_item(item.clone())
                    .with_partition_key("p")
                    .with_body(r#"{"id":"a/b"}"#),
                "contains '/'",
            ),
            (
                CosmosOperation::patch_item(item.clone()).with_partition_key("p"),
                "patch instructions",
            ),
            (
                CosmosOperation::read_item(item.clone())
                    .with_partition_key("p")
                    .with_precondition(Precondition::IfMatch(String::new())),
                "empty ETag",
            ),
        ];
        for (op, needle) in cases {
            let err = op.validate().unwrap_err();
            assert!(err.is_invalid_input());
            assert!(err.message().contains(needle), "{op}: {}", err.message());
        }
        let ok = CosmosOperation::create_item(c.clone())
            .with_partition_key("p")
            .with_body(r#"{"id":"x","n":1}"#);
        assert!(ok.validate().is_ok());
        assert!(CosmosOperation::read_all_items(c).validate().is_ok());
    }

    #[test]
    fn create_container_body_carries_the_definition() {
        let op = CosmosOperation::create_container(
            container(),
            PartitionKeyDefinition::new("/pk").unwrap(),
        );
        let v: serde_json::Value = serde_json::from_slice(op.body().unwrap()).unwrap();
        assert_eq!(v["id"], "c");
        assert_eq!(v["partitionKey"]["paths"][0], "/pk");
    }
}

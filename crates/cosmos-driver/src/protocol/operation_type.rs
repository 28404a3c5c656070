//! What an operation does and to which kind of resource.

/// The kind of resource an operation addresses; also the resource type in the signature string.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ResourceType {
    /// `GET /`: the database account document.
    DatabaseAccount,
    /// `dbs`
    Database,
    /// `colls`
    Container,
    /// `docs`
    Document,
    /// `pkranges`
    PartitionKeyRange,
    /// `offers`: the throughput of a database or container.
    Offer,
    /// `sprocs`: a container's stored procedures.
    StoredProcedure,
    /// `triggers`: a container's pre- and post-triggers.
    Trigger,
    /// `udfs`: a container's user-defined functions.
    UserDefinedFunction,
    /// `users`: a database's users, who permissions are granted to.
    User,
    /// `permissions`: a user's permissions, each with a resource token.
    Permission,
    /// `conflicts`: a container's conflicts in a multi-write account.
    Conflict,
}

impl ResourceType {
    /// The resource type as the service names it in paths and in the authorization signature.
    pub const fn as_path_segment(self) -> &'static str {
        match self {
            ResourceType::DatabaseAccount => "",
            ResourceType::Database => "dbs",
            ResourceType::Container => "colls",
            ResourceType::Document => "docs",
            ResourceType::PartitionKeyRange => "pkranges",
            ResourceType::Offer => "offers",
            ResourceType::StoredProcedure => "sprocs",
            ResourceType::Trigger => "triggers",
            ResourceType::UserDefinedFunction => "udfs",
            ResourceType::User => "users",
            ResourceType::Permission => "permissions",
            ResourceType::Conflict => "conflicts",
        }
    }

    /// Whether operations on this resource are data-plane (items) rather than metadata.
    pub const fn is_data_plane(self) -> bool {
        matches!(self, ResourceType::Document)
    }
}

/// What an operation does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OperationType {
    /// Create a resource (`POST` to the feed).
    Create,
    /// Read one resource (`GET`).
    Read,
    /// Replace one resource (`PUT`).
    Replace,
    /// Create or replace (`POST` with `x-ms-documentdb-is-upsert: True`).
    Upsert,
    /// Delete one resource (`DELETE`).
    Delete,
    /// Partial update, carried out by the driver as Read-Modify-Write.
    Patch,
    /// Read a feed of resources (`GET` on the feed), page by page.
    ReadFeed,
    /// A SQL query (`POST` to the feed with a query body).
    Query,
    /// A batch of item operations in one request (`POST` to the item feed with
    /// `x-ms-cosmos-is-batch-request: True`): a transactional batch or one bulk batch.
    Batch,
    /// Delete every item of one partition key (`POST` to the container's
    /// `operations/partitionkeydelete` with the key in `x-ms-documentdb-partitionkey`).
    DeletePartitionKey,
}

impl OperationType {
    /// The HTTP method that carries the operation (PATCH is carried out by the driver as a read
    /// and a replace, but names its own method).
    pub fn http_method(self) -> &'static http::Method {
        static GET: http::Method = http::Method::GET;
        static POST: http::Method = http::Method::POST;
        static PUT: http::Method = http::Method::PUT;
        static DELETE: http::Method = http::Method::DELETE;
        static PATCH: http::Method = http::Method::PATCH;
        match self {
            OperationType::Read | OperationType::ReadFeed => &GET,
            OperationType::Create
            | OperationType::Upsert
            | OperationType::Query
            | OperationType::Batch
            | OperationType::DeletePartitionKey => &POST,
            OperationType::Replace => &PUT,
            OperationType::Delete => &DELETE,
            OperationType::Patch => &PATCH,
        }
    }

    /// Operations that change nothing on the service.
    pub const fn is_read_only(self) -> bool {
        matches!(
            self,
            OperationType::Read | OperationType::ReadFeed | OperationType::Query
        )
    }

    /// Operations that may be sent twice with the same effect as once.
    ///
    /// Replace and Delete are idempotent in effect on the service (a repeated Replace writes the same
    /// document; a repeated Delete answers 404). Create, Upsert, Patch and Batch are not.
    pub const fn is_idempotent(self) -> bool {
        matches!(
            self,
            OperationType::Read
                | OperationType::ReadFeed
                | OperationType::Query
                | OperationType::Replace
                | OperationType::Delete
        )
    }

    /// Whether the operation writes (the complement of [`OperationType::is_read_only`]).
    pub const fn is_write(self) -> bool {
        !self.is_read_only()
    }
}

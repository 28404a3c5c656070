//! What a request will do, as plain data: the resolved operation a resource-token decision is
//! made from (never from flags the client sets). Built by the request pipeline from the same
//! operation kind that picks the handler, and from the body for batches.

use serde_json::Value;

/// The kind of access an operation needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Action {
    /// Reads the account: any token may.
    ReadAccount,
    /// Reads what a client reads to route (a container's definition and partition key ranges,
    /// a query plan): any token whose resource is in that container (or above it) may.
    Route,
    /// Reads, feeds, queries, change feed.
    Read,
    /// Creates, replaces, deletes or patches.
    Write,
    /// Runs a stored procedure (which may write).
    Execute,
    /// Databases, containers, users, permissions and offers: the account key only.
    Administer,
}

/// The partition key values an operation touches.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Keys {
    /// It touches no items (a script, a container's feed of scripts, a database...).
    NoItems,
    /// Items of these values only (each a JSON array, as the header sends it).
    Listed(Vec<Value>),
    /// Items of any value (a cross-partition query, a request without a key).
    Every,
}

/// A request's resolved operation.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Intent {
    pub action: Action,
    /// The canonical link of the resource it acts on, as segments (`["dbs", "d", "colls", "c"]`,
    /// names rather than resource ids); a feed's target is the resource that holds it.
    pub target: Vec<String>,
    pub keys: Keys,
}

/// A resource-token decision.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Decision {
    Allow,
    /// Refused, and why (for tests and diagnostics; the client gets the service's words).
    Deny(&'static str),
}

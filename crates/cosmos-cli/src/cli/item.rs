//! `cosmos item` subcommands and their flags.

use clap::{Args, Subcommand};

use crate::args::transfer::{ExportArgs, ImportArgs};

/// Where an item lives.
#[derive(Args, Debug, Clone, PartialEq, Eq)]
pub struct ItemLocation {
    /// Database id.
    #[arg(long)]
    pub db: String,
    /// Container id.
    #[arg(long)]
    pub container: String,
    /// Partition key value as a string (for a single-path key).
    #[arg(long, visible_alias = "partition-key", conflicts_with = "pk_json")]
    pub pk: Option<String>,
    /// Partition key as JSON: a value (`42`, `true`, `"a"`) or an array for a hierarchical key.
    #[arg(long = "pk-json", value_name = "JSON")]
    pub pk_json: Option<String>,
}

/// The document of a write: inline JSON, `@file.json`, or `-` for standard input.
#[derive(Args, Debug, Clone, PartialEq, Eq)]
pub struct BodyArg {
    /// The document: JSON text, `@PATH` to read a file, or `-` to read standard input.
    #[arg(long)]
    pub body: String,
}

/// Item subcommands.
#[derive(Subcommand, Debug, Clone, PartialEq)]
pub enum ItemAction {
    /// Read one item.
    Get {
        /// Where the item lives.
        #[command(flatten)]
        at: ItemLocation,
        /// Item id.
        id: String,
    },
    /// Create an item (the partition key is taken from the body when not given).
    Create {
        /// Where the item goes.
        #[command(flatten)]
        at: ItemLocation,
        /// The document.
        #[command(flatten)]
        body: BodyArg,
    },
    /// Replace an item (its id given as for `get`, or taken from the body).
    Replace {
        /// Where the item lives.
        #[command(flatten)]
        at: ItemLocation,
        /// Item id; when given, the body's `id` must match it (a body without one takes it).
        id: Option<String>,
        /// The document (its `id` must match).
        #[command(flatten)]
        body: BodyArg,
        /// Only if the item's etag still matches.
        #[arg(long = "if-match", value_name = "ETAG")]
        if_match: Option<String>,
    },
    /// Create or replace an item.
    Upsert {
        /// Where the item goes.
        #[command(flatten)]
        at: ItemLocation,
        /// The document.
        #[command(flatten)]
        body: BodyArg,
    },
    /// Delete an item, or with `--all` every item of the partition key.
    Delete {
        /// Where the item lives.
        #[command(flatten)]
        at: ItemLocation,
        /// Item id (none with `--all`).
        #[arg(required_unless_present = "all")]
        id: Option<String>,
        /// Only if the item's etag still matches.
        #[arg(long = "if-match", value_name = "ETAG", conflicts_with = "all")]
        if_match: Option<String>,
        /// Delete every item of the partition key given by `--partition-key`/`--pk` (the
        /// service's delete-by-partition-key operation); without it nothing is deleted.
        #[arg(long, conflicts_with = "id")]
        all: bool,
    },
    /// Partially update an item: `--ops JSON`, or flags applied in the order given.
    Patch(PatchArgs),
    /// Run a query; cross-partition unless a partition key is given.
    Query(QueryArgs),
    /// Write many documents (JSON Lines or a JSON array, from a file or stdin) through the bulk
    /// executor; see `cosmos item import --help`.
    Import(ImportArgs),
    /// Write a container's items (or a query's results) as JSON Lines; resumable.
    Export(ExportArgs),
    /// List the items of a container (read feed).
    List {
        /// Database id.
        #[arg(long)]
        db: String,
        /// Container id.
        #[arg(long)]
        container: String,
        /// Stop after this many items.
        #[arg(long, default_value_t = 100)]
        max: u64,
    },
}

/// `cosmos item query` arguments.
#[derive(Args, Debug, Clone, PartialEq, Eq)]
pub struct QueryArgs {
    /// The container, and optionally the partition key that scopes the query.
    #[command(flatten)]
    pub at: ItemLocation,
    /// The query text, e.g. `SELECT * FROM c WHERE c.n > @lo`.
    pub query: String,
    /// `@name=JSON`: a query parameter (anything that is not JSON is a string); repeatable.
    #[arg(long = "param", value_name = "@NAME=JSON")]
    pub params: Vec<String>,
    /// Items per page.
    #[arg(long = "max-item-count", value_name = "N")]
    pub max_item_count: Option<u32>,
    /// Stop after this many pages and print the token that resumes the query on stderr.
    #[arg(long = "max-pages", value_name = "N")]
    pub max_pages: Option<u64>,
    /// Resume from a token printed by an earlier run.
    #[arg(long, value_name = "TOKEN")]
    pub continuation: Option<String>,
    /// One JSON document per line, printed as pages arrive.
    #[arg(long)]
    pub jsonl: bool,
}

/// `cosmos item patch` flags. Operation flags keep their command-line order.
#[derive(Args, Debug, Clone, PartialEq)]
pub struct PatchArgs {
    /// Where the item lives.
    #[command(flatten)]
    pub at: ItemLocation,
    /// Item id.
    pub id: String,
    /// The operations as JSON: `[{"op":"set","path":"/a","value":1}, ...]` (or `{"operations":[...]}`).
    #[arg(long, value_name = "JSON")]
    pub ops: Option<String>,
    /// `PATH=VALUE`: set a value (VALUE is JSON; anything that is not JSON is a string).
    #[arg(long, value_name = "PATH=VALUE")]
    pub set: Vec<String>,
    /// `PATH=N`: add N to a number.
    #[arg(long, value_name = "PATH=N")]
    pub incr: Vec<String>,
    /// `PATH=VALUE`: add a member or insert into an array (`/list/-` appends).
    #[arg(long, value_name = "PATH=VALUE")]
    pub add: Vec<String>,
    /// `PATH=VALUE`: overwrite a value that must exist.
    #[arg(long, value_name = "PATH=VALUE")]
    pub replace: Vec<String>,
    /// `PATH`: remove a value that must exist.
    #[arg(long, value_name = "PATH")]
    pub remove: Vec<String>,
    /// `FROM:TO`: move a value, e.g. `/a:/b`.
    #[arg(long = "move", value_name = "FROM:TO")]
    pub move_: Vec<String>,
    /// Read-Modify-Write attempts before giving up on conflicts (1-255).
    #[arg(long, default_value_t = 5)]
    pub max_attempts: u8,
}

//! `cosmos container` subcommands.

use clap::Subcommand;

/// Container subcommands.
#[derive(Subcommand, Debug, Clone, PartialEq, Eq)]
pub enum ContainerAction {
    /// Create a container.
    Create {
        /// Database id.
        #[arg(long)]
        db: String,
        /// Container id.
        id: String,
        /// Partition key path(s), e.g. `/pk`; repeat (or separate with commas) for a hierarchical key.
        #[arg(long = "partition-key", default_value = "/pk", value_delimiter = ',')]
        partition_key: Vec<String>,
    },
    /// Read a container.
    Read {
        /// Database id.
        #[arg(long)]
        db: String,
        /// Container id.
        id: String,
    },
    /// List the containers of a database.
    List {
        /// Database id.
        #[arg(long)]
        db: String,
    },
    /// Delete a container and its items.
    Delete {
        /// Database id.
        #[arg(long)]
        db: String,
        /// Container id.
        id: String,
    },
}

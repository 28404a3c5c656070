//! `cosmos db` subcommands.

use clap::Subcommand;

/// Database subcommands.
#[derive(Subcommand, Debug, Clone, PartialEq, Eq)]
pub enum DbAction {
    /// Create a database.
    Create {
        /// Database id.
        id: String,
    },
    /// Read a database.
    Read {
        /// Database id.
        id: String,
    },
    /// List databases.
    List,
    /// Delete a database and everything in it.
    Delete {
        /// Database id.
        id: String,
    },
}

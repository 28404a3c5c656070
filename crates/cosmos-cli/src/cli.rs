//! The command line: `cosmos emulator|bench|db|container|item ...`.
//!
//! The definitions of each command are in `cli/` (one file a command); this file holds the
//! top level only.

mod bench;
mod changefeed;
mod container;
mod db;
mod item;
mod scripts;

use clap::{Parser, Subcommand};

pub use bench::{BenchArgs, WorkloadKind};
pub use changefeed::{ChangefeedAction, LeaseTarget, ProcessArgs};
pub use container::ContainerAction;
pub use db::DbAction;
pub use item::{BodyArg, ItemAction, ItemLocation, PatchArgs, QueryArgs};
pub use scripts::{
    ExecuteArgs, NoDefinition, NoExtra, ScriptAction, ScriptAt, ScriptKind, ScriptSource,
    SprocAction, SprocExtra, SprocKind, TriggerAction, TriggerKind, TriggerKindArgs,
    TriggerOperationArg, TriggerTypeArg, UdfAction, UdfKind,
};

use crate::args::request_class::RequestClassArgs;
use crate::args::target::TargetArgs;

/// Azure Cosmos DB (NoSQL) from the command line: items, a local multi-region emulator, and a
/// tail-latency benchmark that shows what cross-region hedging does.
#[derive(Parser)]
#[command(
    name = "cosmos",
    bin_name = "cosmos",
    version,
    about,
    propagate_version = true,
    after_help = crate::exit_code::HELP
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Subcommand)]
pub enum Command {
    /// Run the multi-region emulator in the foreground (same flags as `cosmos-emulator`).
    Emulator(cosmos_emulator::EmulatorArgs),
    /// Measure tail latency with and without hedging (starts an emulator when no endpoint is given).
    Bench(Box<BenchArgs>),
    /// Databases: create, read, list, delete.
    Db {
        /// Which account.
        #[command(flatten)]
        target: TargetArgs,
        /// What to do.
        #[command(subcommand)]
        action: DbAction,
    },
    /// Containers: create, read, list, delete, throughput (and throughput bucket caps).
    Container {
        /// Which account.
        #[command(flatten)]
        target: TargetArgs,
        /// What to do.
        #[command(subcommand)]
        action: ContainerAction,
    },
    /// Items: get, create, replace, upsert, delete, patch, query, list, import, export.
    Item {
        /// Which account.
        #[command(flatten)]
        target: TargetArgs,
        /// The priority and throughput bucket of every request.
        #[command(flatten)]
        class: RequestClassArgs,
        /// What to do.
        #[command(subcommand)]
        action: ItemAction,
    },
    /// Stored procedures: create, read, replace, delete, list, execute.
    Sproc {
        /// Which account.
        #[command(flatten)]
        target: TargetArgs,
        /// What to do.
        #[command(subcommand)]
        action: SprocAction,
    },
    /// Pre- and post-triggers: create, read, replace, delete, list.
    Trigger {
        /// Which account.
        #[command(flatten)]
        target: TargetArgs,
        /// What to do.
        #[command(subcommand)]
        action: TriggerAction,
    },
    /// User-defined functions (called from queries as `udf.NAME(...)`): create, read, replace,
    /// delete, list.
    Udf {
        /// Which account.
        #[command(flatten)]
        target: TargetArgs,
        /// What to do.
        #[command(subcommand)]
        action: UdfAction,
    },
    /// The change feed processor: `process` runs one instance, `lag` prints each lease's lag.
    Changefeed {
        /// Which account.
        #[command(flatten)]
        target: TargetArgs,
        /// What to do.
        #[command(subcommand)]
        action: ChangefeedAction,
    },
    /// Print a shell completion script: `cosmos completions bash > /etc/bash_completion.d/cosmos`,
    /// `cosmos completions zsh > "${fpath[1]}/_cosmos"`, `cosmos completions fish >
    /// ~/.config/fish/completions/cosmos.fish`.
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

#[cfg(test)]
mod tests;

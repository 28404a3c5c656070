//! `cosmos sproc|trigger|udf`: one shape for the three script kinds. Each has create, read,
//! replace, delete and list; a kind adds what it truly has of its own: a trigger's type and
//! operation on create and replace (its definition), a stored procedure's `execute`.

use std::fmt::Debug;

use clap::{Args, FromArgMatches, Subcommand, ValueEnum};

use super::item::ItemLocation;
use crate::args::request_class::RequestClassArgs;

/// What differs between script kinds.
pub trait ScriptKind: Clone + Debug + PartialEq + Eq + Send + Sync + 'static {
    /// What create and replace take besides the source.
    type Definition: Args + FromArgMatches + Clone + Debug + PartialEq + Eq;
    /// The kind's own subcommands, after the common ones.
    type Extra: Subcommand + FromArgMatches + Clone + Debug + PartialEq + Eq;
    /// The help line of `create` (as clap shows a doc comment: no final period).
    const CREATE: &'static str;
    /// The help line of `read`.
    const READ: &'static str;
    /// The help line of `replace`.
    const REPLACE: &'static str;
    /// The help line of `delete`.
    const DELETE: &'static str;
    /// The help line of `list`.
    const LIST: &'static str;
}

/// The subcommands of one script kind.
#[derive(Subcommand, Debug, Clone, PartialEq, Eq)]
pub enum ScriptAction<K: ScriptKind> {
    /// Create a script (help: [`ScriptKind::CREATE`]).
    #[command(about = K::CREATE, long_about = None)]
    Create {
        /// Where it goes.
        #[command(flatten)]
        at: ScriptAt,
        /// Its source.
        #[command(flatten)]
        source: ScriptSource,
        /// The kind's own settings.
        #[command(flatten)]
        definition: K::Definition,
    },
    /// Read a script.
    #[command(about = K::READ, long_about = None)]
    Read {
        /// Where it is.
        #[command(flatten)]
        at: ScriptAt,
    },
    /// Replace a script.
    #[command(about = K::REPLACE, long_about = None)]
    Replace {
        /// Where it is.
        #[command(flatten)]
        at: ScriptAt,
        /// Its new source.
        #[command(flatten)]
        source: ScriptSource,
        /// The kind's own settings.
        #[command(flatten)]
        definition: K::Definition,
    },
    /// Delete a script.
    #[command(about = K::DELETE, long_about = None)]
    Delete {
        /// Where it is.
        #[command(flatten)]
        at: ScriptAt,
    },
    /// List a container's scripts of the kind.
    #[command(about = K::LIST, long_about = None)]
    List {
        /// Database id.
        #[arg(long)]
        db: String,
        /// Container id.
        #[arg(long)]
        container: String,
    },
    /// The kind's own subcommands.
    #[command(flatten)]
    Kind(K::Extra),
}

/// Nothing besides the source (stored procedures and user-defined functions).
#[derive(Args, Debug, Clone, PartialEq, Eq)]
pub struct NoDefinition {}

/// No subcommands of the kind's own.
#[derive(Subcommand, Debug, Clone, PartialEq, Eq)]
pub enum NoExtra {}

/// Stored procedures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SprocKind;

impl ScriptKind for SprocKind {
    type Definition = NoDefinition;
    type Extra = SprocExtra;
    const CREATE: &'static str = "Create a stored procedure";
    const READ: &'static str = "Read a stored procedure";
    const REPLACE: &'static str = "Replace a stored procedure's source";
    const DELETE: &'static str = "Delete a stored procedure";
    const LIST: &'static str = "List a container's stored procedures";
}

/// A stored procedure's own subcommand.
#[derive(Subcommand, Debug, Clone, PartialEq, Eq)]
pub enum SprocExtra {
    /// Execute a stored procedure in one partition and print what it answered.
    Execute(ExecuteArgs),
}

/// Pre- and post-triggers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TriggerKind;

impl ScriptKind for TriggerKind {
    type Definition = TriggerKindArgs;
    type Extra = NoExtra;
    const CREATE: &'static str = "Create a trigger";
    const READ: &'static str = "Read a trigger";
    const REPLACE: &'static str = "Replace a trigger";
    const DELETE: &'static str = "Delete a trigger";
    const LIST: &'static str = "List a container's triggers";
}

/// User-defined functions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UdfKind;

impl ScriptKind for UdfKind {
    type Definition = NoDefinition;
    type Extra = NoExtra;
    const CREATE: &'static str = "Create a user-defined function";
    const READ: &'static str = "Read a user-defined function";
    const REPLACE: &'static str = "Replace a user-defined function's source";
    const DELETE: &'static str = "Delete a user-defined function";
    const LIST: &'static str = "List a container's user-defined functions";
}

/// Stored procedure subcommands.
pub type SprocAction = ScriptAction<SprocKind>;
/// Trigger subcommands.
pub type TriggerAction = ScriptAction<TriggerKind>;
/// User-defined function subcommands.
pub type UdfAction = ScriptAction<UdfKind>;

/// Where a script lives: its container and id.
#[derive(Args, Debug, Clone, PartialEq, Eq)]
pub struct ScriptAt {
    /// Database id.
    #[arg(long)]
    pub db: String,
    /// Container id.
    #[arg(long)]
    pub container: String,
    /// Script id.
    pub id: String,
}

/// A script's JavaScript source.
#[derive(Args, Debug, Clone, PartialEq, Eq)]
pub struct ScriptSource {
    /// The JavaScript: the text, `@PATH` to read a file, or `-` to read standard input.
    #[arg(long, value_name = "JS")]
    pub body: String,
}

/// When a trigger runs.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum TriggerTypeArg {
    /// Before the write.
    Pre,
    /// After the write, inside its transaction.
    Post,
}

/// Around which writes a trigger may run.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum TriggerOperationArg {
    /// Every write.
    All,
    /// Creates.
    Create,
    /// Replaces.
    Replace,
    /// Deletes.
    Delete,
    /// Updates.
    Update,
}

/// A trigger's kind.
#[derive(Args, Debug, Clone, PartialEq, Eq)]
pub struct TriggerKindArgs {
    /// `pre` or `post`.
    #[arg(long = "type", value_enum)]
    pub trigger_type: TriggerTypeArg,
    /// Which writes it may run around.
    #[arg(long, value_enum, default_value = "all")]
    pub operation: TriggerOperationArg,
}

/// `cosmos sproc execute` arguments.
#[derive(Args, Debug, Clone, PartialEq, Eq)]
pub struct ExecuteArgs {
    /// The container and the partition key the procedure runs in.
    #[command(flatten)]
    pub at: ItemLocation,
    /// Stored procedure id.
    pub id: String,
    /// The arguments as a JSON array, e.g. `'[[{"id":"a"}], 5]'`.
    #[arg(long, value_name = "JSON", default_value = "[]")]
    pub params: String,
    /// Ask for the procedure's `console.log` output (printed on stderr as `{"script_log":...}`).
    #[arg(long)]
    pub log: bool,
    /// The priority and throughput bucket of the request.
    #[command(flatten)]
    pub class: RequestClassArgs,
}

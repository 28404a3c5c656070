//! The command line: `cosmos emulator|bench|db|container|item ...`.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::args::duration::parse_duration;
use crate::args::hedging::{parse_budget, parse_hedging, BudgetChoice, HedgingChoice};
use crate::args::target::TargetArgs;
use crate::args::transfer::{ExportArgs, ImportArgs, Priority};

/// Azure Cosmos DB (NoSQL) from the command line: items, a local multi-region emulator, and a
/// tail-latency benchmark that shows what cross-region hedging does.
#[derive(Parser)]
#[command(
    name = "cosmos",
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
    /// Containers: create, read, list, delete.
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
    /// Print a shell completion script: `cosmos completions bash > /etc/bash_completion.d/cosmos`,
    /// `cosmos completions zsh > "${fpath[1]}/_cosmos"`, `cosmos completions fish >
    /// ~/.config/fish/completions/cosmos.fish`.
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

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
    /// Replace an item.
    Replace {
        /// Where the item lives.
        #[command(flatten)]
        at: ItemLocation,
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
        /// With `--all`: request priority, sent as `x-ms-cosmos-priority-level`.
        #[arg(long, value_enum, requires = "all")]
        priority: Option<Priority>,
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
}

/// Stored procedure subcommands.
#[derive(Subcommand, Debug, Clone, PartialEq, Eq)]
pub enum SprocAction {
    /// Create a stored procedure.
    Create {
        /// Where it goes.
        #[command(flatten)]
        at: ScriptAt,
        /// Its source.
        #[command(flatten)]
        source: ScriptSource,
    },
    /// Read a stored procedure.
    Read {
        /// Where it is.
        #[command(flatten)]
        at: ScriptAt,
    },
    /// Replace a stored procedure's source.
    Replace {
        /// Where it is.
        #[command(flatten)]
        at: ScriptAt,
        /// Its new source.
        #[command(flatten)]
        source: ScriptSource,
    },
    /// Delete a stored procedure.
    Delete {
        /// Where it is.
        #[command(flatten)]
        at: ScriptAt,
    },
    /// List a container's stored procedures.
    List {
        /// Database id.
        #[arg(long)]
        db: String,
        /// Container id.
        #[arg(long)]
        container: String,
    },
    /// Execute a stored procedure in one partition and print what it answered.
    Execute(ExecuteArgs),
}

/// Trigger subcommands.
#[derive(Subcommand, Debug, Clone, PartialEq, Eq)]
pub enum TriggerAction {
    /// Create a trigger.
    Create {
        /// Where it goes.
        #[command(flatten)]
        at: ScriptAt,
        /// Its source.
        #[command(flatten)]
        source: ScriptSource,
        /// When and around what it runs.
        #[command(flatten)]
        kind: TriggerKindArgs,
    },
    /// Read a trigger.
    Read {
        /// Where it is.
        #[command(flatten)]
        at: ScriptAt,
    },
    /// Replace a trigger.
    Replace {
        /// Where it is.
        #[command(flatten)]
        at: ScriptAt,
        /// Its new source.
        #[command(flatten)]
        source: ScriptSource,
        /// When and around what it runs.
        #[command(flatten)]
        kind: TriggerKindArgs,
    },
    /// Delete a trigger.
    Delete {
        /// Where it is.
        #[command(flatten)]
        at: ScriptAt,
    },
    /// List a container's triggers.
    List {
        /// Database id.
        #[arg(long)]
        db: String,
        /// Container id.
        #[arg(long)]
        container: String,
    },
}

/// User-defined function subcommands.
#[derive(Subcommand, Debug, Clone, PartialEq, Eq)]
pub enum UdfAction {
    /// Create a user-defined function.
    Create {
        /// Where it goes.
        #[command(flatten)]
        at: ScriptAt,
        /// Its source.
        #[command(flatten)]
        source: ScriptSource,
    },
    /// Read a user-defined function.
    Read {
        /// Where it is.
        #[command(flatten)]
        at: ScriptAt,
    },
    /// Replace a user-defined function's source.
    Replace {
        /// Where it is.
        #[command(flatten)]
        at: ScriptAt,
        /// Its new source.
        #[command(flatten)]
        source: ScriptSource,
    },
    /// Delete a user-defined function.
    Delete {
        /// Where it is.
        #[command(flatten)]
        at: ScriptAt,
    },
    /// List a container's user-defined functions.
    List {
        /// Database id.
        #[arg(long)]
        db: String,
        /// Container id.
        #[arg(long)]
        container: String,
    },
}

/// Benchmark workloads.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkloadKind {
    /// Point reads of seeded items.
    Read,
    /// Every operation increments one shared counter item with PATCH.
    PatchCounter,
    /// 80% point reads, 10% upserts, 10% patches.
    Mixed,
    /// A single-partition query finding one seeded item by id.
    Query,
    /// A cross-partition `ORDER BY` with `TOP 10` over every partition.
    QueryCross,
    /// Top-k vector search: `--items` random embeddings of `--dimensions` numbers are seeded into a
    /// container with a vector embedding policy (cosine, float32) and a `quantizedFlat` index, then
    /// each operation runs `SELECT TOP k ... ORDER BY VectorDistance(...)` (k = `--top`) with a new
    /// random probe vector across every partition.
    Vector,
    /// One bulk run creating `--items` new items in a fresh container (items/s and RU per item).
    BulkInsert,
    /// Reads, queries, creates, replaces and PATCH increments while a schedule of faults plays
    /// (read-region outage, write failover, split, 429 storm, unanswered writes); then every write
    /// is read back and lost, phantom and double-applied writes are counted, and the 429 storm's
    /// requests per operation. Embedded emulator only; runs hedging off and at 50 ms unless
    /// `--hedging` is given.
    Chaos,
}

impl WorkloadKind {
    /// The name used in reports.
    pub fn name(self) -> &'static str {
        match self {
            WorkloadKind::Read => "read",
            WorkloadKind::PatchCounter => "patch-counter",
            WorkloadKind::Mixed => "mixed",
            WorkloadKind::Query => "query",
            WorkloadKind::QueryCross => "query-cross",
            WorkloadKind::Vector => "vector",
            WorkloadKind::BulkInsert => "bulk-insert",
            WorkloadKind::Chaos => "chaos",
        }
    }
}

fn parse_patch_strategy(s: &str) -> Result<cosmos_driver::PatchStrategy, String> {
    s.parse()
        .map_err(|e: cosmos_driver::options::UnknownPatchStrategy| e.to_string())
}

/// `cosmos bench` flags.
#[derive(Args, Debug, Clone)]
pub struct BenchArgs {
    /// The account to measure; without `--endpoint` an embedded emulator is started.
    #[command(flatten)]
    pub target: TargetArgs,
    /// Emulator latency profile (local, geo, slow-primary, slow-both, brownout, blackhole); only
    /// without `--endpoint`. The 10 s episode of brownout and blackhole is centred in each run.
    #[arg(long)]
    pub profile: Option<String>,
    /// What each operation does.
    #[arg(long, value_enum, default_value = "read")]
    pub workload: WorkloadKind,
    /// How `patch-counter` carries out each PATCH: `rmw` (the driver's read-modify-write loop),
    /// `native` (the service's PATCH verb) or `auto`; repeat the flag for one run per strategy
    /// (default: rmw).
    #[arg(long = "patch-strategy", value_name = "STRATEGY", value_parser = parse_patch_strategy)]
    pub patch_strategy: Vec<cosmos_driver::PatchStrategy>,
    /// `off`, `on`, a threshold such as `50ms`, or `adaptive` (p95 of the primary region's recent
    /// latencies within 5ms..100ms; `adaptive:p99`, `adaptive:p90:10ms..200ms` change that); repeat
    /// for several runs. Default: off and 50ms.
    #[arg(long, value_parser = parse_hedging)]
    pub hedging: Vec<HedgingChoice>,
    /// Bound hedging to this share of reads (a token bucket per driver, with a floor of 2 hedges
    /// per second), e.g. `10%`; `off` (the default) hedges every read whose threshold passes.
    #[arg(long, value_parser = parse_budget, default_value = "off")]
    pub hedge_budget: BudgetChoice,
    /// After consecutive hedge wins mark a partition unhealthy in a region, probe the region again
    /// after this long (default: the breaker's 60 s), e.g. `3s`.
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    pub hedge_win_probe_after: Option<Duration>,
    /// Operations started per second (open loop); 0 for closed loop. Default 500, 300 for the
    /// chaos workload.
    #[arg(long = "rate", value_name = "RATE")]
    pub rate_given: Option<u64>,
    /// Most operations in flight (the number of workers in closed loop).
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub concurrency: u32,
    /// Measured time per run, e.g. 20s.
    #[arg(long, value_parser = parse_duration, default_value = "20s", conflicts_with = "ops")]
    pub duration: Duration,
    /// Measured operations per run (instead of --duration).
    #[arg(long)]
    pub ops: Option<u64>,
    /// Unrecorded time before each run.
    #[arg(long, value_parser = parse_duration, default_value = "2s")]
    pub warmup: Duration,
    /// Write the runs as JSON here.
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,
    /// Write every run's latency histogram here as an HDR histogram interval log (one interval per
    /// run, tagged with its title), which HdrHistogram tools can read, merge and compare.
    #[arg(long, value_name = "PATH")]
    pub hdr: Option<PathBuf>,
    /// Exit 0 even when operations failed (by default a run with failed operations exits 1 after
    /// printing and writing its results).
    #[arg(long)]
    pub allow_errors: bool,
    /// Speak HTTP/2 to the account (ALPN over TLS, prior knowledge over plain HTTP, as to the
    /// embedded emulator) instead of HTTP/1.1.
    #[arg(long)]
    pub http2: bool,
    /// Draw the latency distribution of every run here (SVG).
    #[arg(long, value_name = "PATH")]
    pub svg: Option<PathBuf>,
    /// Database used (created when missing).
    #[arg(long, default_value = "cosmos-bench")]
    pub db: String,
    /// Container used (created when missing, partition key `/pk`).
    #[arg(long, default_value = "items")]
    pub container: String,
    /// Items seeded for the read, query and vector workloads; items created by `bulk-insert`.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub items: u64,
    /// Numbers in each embedding of the vector workload (the `quantizedFlat` index takes up to
    /// 4,096).
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub dimensions: u32,
    /// Results each vector search asks for (`TOP k`).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub top: u32,
    /// The embedded emulator throttles (429) each partition key range past its share of the
    /// container's RU/s (see `--throughput`).
    #[arg(long, conflicts_with = "endpoint")]
    pub enforce_throughput: bool,
    /// RU/s provisioned on the container `bulk-insert` creates (the service's default when absent).
    #[arg(long, value_name = "RU_PER_S", value_parser = clap::value_parser!(u32).range(400..=1_000_000))]
    pub throughput: Option<u32>,
    /// Use the database, container and items as they are: no creation, no seeding (with --endpoint).
    #[arg(long, requires = "endpoint")]
    pub skip_setup: bool,
}

impl BenchArgs {
    /// Operations started per second: `--rate`, or the workload's default (500; 300 for chaos).
    pub fn rate(&self) -> u64 {
        self.rate_given.unwrap_or(match self.workload {
            WorkloadKind::Chaos => 300,
            _ => 500,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args::patch_flags::{ordered_flags, PatchFlag};
    use clap::{CommandFactory, FromArgMatches};

    fn parse(args: &[&str]) -> Result<(Cli, clap::ArgMatches), clap::Error> {
        let matches = Cli::command()
            .try_get_matches_from(std::iter::once("cosmos").chain(args.iter().copied()))?;
        Ok((Cli::from_arg_matches(&matches)?, matches))
    }

    #[test]
    fn definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn patch_flags_keep_command_line_order() {
        let (_, m) = parse(&[
            "item",
            "patch",
            "--db",
            "d",
            "--container",
            "c",
            "--pk",
            "p",
            "id1",
            "--incr",
            "/n=2",
            "--set",
            "/a=1",
            "--remove",
            "/x",
            "--incr",
            "/m=1",
            "--move",
            "/a:/b",
        ])
        .unwrap();
        let (_, item) = m.subcommand().unwrap();
        let (_, patch) = item.subcommand().unwrap();
        let flags = ordered_flags(patch);
        let kinds: Vec<PatchFlag> = flags.iter().map(|(k, _)| *k).collect();
        assert_eq!(
            kinds,
            [
                PatchFlag::Incr,
                PatchFlag::Set,
                PatchFlag::Remove,
                PatchFlag::Incr,
                PatchFlag::Move
            ]
        );
        assert_eq!(flags[3].1, "/m=1");
    }

    #[test]
    fn target_flags_go_anywhere() {
        let (cli, _) = parse(&[
            "item",
            "get",
            "--endpoint",
            "http://127.0.0.1:8081/",
            "--db",
            "d",
            "--container",
            "c",
            "--pk",
            "p",
            "id1",
            "--key",
            "k",
            "--diagnostics",
            "--preferred-regions",
            "West US,East US",
        ])
        .unwrap();
        let Command::Item { target, action } = cli.command else {
            panic!("not an item command")
        };
        assert_eq!(target.endpoint.as_deref(), Some("http://127.0.0.1:8081/"));
        assert!(target.diagnostics);
        assert_eq!(target.preferred_regions, ["West US", "East US"]);
        assert!(matches!(action, ItemAction::Get { ref id, .. } if id == "id1"));
    }

    #[test]
    fn bench_defaults_and_choices() {
        let (cli, _) = parse(&["bench"]).unwrap();
        let Command::Bench(b) = cli.command else {
            panic!("not bench")
        };
        assert_eq!((b.rate(), b.concurrency, b.items), (500, 64, 1000));
        assert_eq!(
            (b.duration, b.warmup),
            (Duration::from_secs(20), Duration::from_secs(2))
        );
        assert!(b.hedging.is_empty() && b.ops.is_none() && b.profile.is_none());
        assert_eq!(b.workload, WorkloadKind::Read);
        let (cli, _) = parse(&[
            "bench",
            "--hedging",
            "off",
            "--hedging",
            "20ms",
            "--workload",
            "patch-counter",
            "--ops",
            "100",
        ])
        .unwrap();
        let Command::Bench(b) = cli.command else {
            panic!("not bench")
        };
        assert_eq!(
            b.hedging,
            [
                HedgingChoice::Off,
                HedgingChoice::Threshold(Duration::from_millis(20))
            ]
        );
        assert_eq!(b.workload, WorkloadKind::PatchCounter);
        assert_eq!(b.ops, Some(100));

        let (cli, _) = parse(&[
            "bench",
            "--workload",
            "bulk-insert",
            "--items",
            "100000",
            "--enforce-throughput",
            "--throughput",
            "10000",
        ])
        .unwrap();
        let Command::Bench(b) = cli.command else {
            panic!("not bench")
        };
        assert_eq!(b.workload, WorkloadKind::BulkInsert);
        assert_eq!(b.workload.name(), "bulk-insert");
        assert_eq!((b.items, b.throughput), (100_000, Some(10_000)));
        assert!(b.enforce_throughput);
        assert!(parse(&["bench", "--throughput", "100"]).is_err());

        let (cli, _) = parse(&[
            "bench",
            "--workload",
            "vector",
            "--items",
            "500",
            "--dimensions",
            "64",
            "--top",
            "5",
        ])
        .unwrap();
        let Command::Bench(b) = cli.command else {
            panic!("not bench")
        };
        assert_eq!(b.workload.name(), "vector");
        assert_eq!((b.items, b.dimensions, b.top), (500, 64, 5));
        let (cli, _) = parse(&["bench", "--workload", "vector"]).unwrap();
        let Command::Bench(b) = cli.command else {
            panic!("not bench")
        };
        assert_eq!((b.dimensions, b.top), (256, 10), "the defaults");
        for bad in [
            ["--dimensions", "0"],
            ["--dimensions", "4097"],
            ["--top", "0"],
            ["--top", "1001"],
        ] {
            assert!(
                parse(&["bench", "--workload", "vector", bad[0], bad[1]]).is_err(),
                "{bad:?}"
            );
        }
        assert!(parse(&[
            "bench",
            "--enforce-throughput",
            "--endpoint",
            "http://127.0.0.1:1"
        ])
        .is_err());
    }

    #[test]
    fn bad_values_are_refused_by_name() {
        for (args, needle) in [
            (&["bench", "--hedging", "maybe"][..], "--hedging"),
            (&["bench", "--duration", "20"][..], "unit"),
            (&["bench", "--concurrency", "0"][..], "concurrency"),
            (
                &["bench", "--duration", "5s", "--ops", "10"][..],
                "cannot be used with",
            ),
            (
                &[
                    "item",
                    "get",
                    "--db",
                    "d",
                    "--container",
                    "c",
                    "--pk",
                    "a",
                    "--pk-json",
                    "1",
                    "x",
                ][..],
                "cannot be used with",
            ),
        ] {
            let e = parse(args).err().expect("refused").to_string();
            assert!(e.contains(needle), "{args:?}: {e}");
        }
    }

    #[test]
    fn script_commands_parse() {
        let (cli, _) = parse(&[
            "trigger",
            "create",
            "--db",
            "d",
            "--container",
            "c",
            "stamp",
            "--body",
            "@t.js",
            "--type",
            "pre",
        ])
        .unwrap();
        let Command::Trigger {
            action: TriggerAction::Create { at, source, kind },
            ..
        } = cli.command
        else {
            panic!("not trigger create")
        };
        assert_eq!((at.id.as_str(), source.body.as_str()), ("stamp", "@t.js"));
        assert_eq!(
            (kind.trigger_type, kind.operation),
            (TriggerTypeArg::Pre, TriggerOperationArg::All)
        );
        let (cli, _) = parse(&[
            "sproc",
            "execute",
            "--db",
            "d",
            "--container",
            "c",
            "--pk",
            "p",
            "bulk",
            "--params",
            "[1]",
            "--log",
        ])
        .unwrap();
        let Command::Sproc {
            action: SprocAction::Execute(e),
            ..
        } = cli.command
        else {
            panic!("not sproc execute")
        };
        assert_eq!(
            (e.id.as_str(), e.params.as_str(), e.log),
            ("bulk", "[1]", true)
        );
        assert!(parse(&["udf", "list", "--db", "d", "--container", "c"]).is_ok());
        assert!(parse(&[
            "trigger",
            "create",
            "--db",
            "d",
            "--container",
            "c",
            "t",
            "--body",
            "x"
        ])
        .is_err());
    }

    #[test]
    fn emulator_takes_the_emulator_flags() {
        let (cli, _) = parse(&[
            "emulator",
            "--port",
            "9000",
            "--profile",
            "slow-primary",
            "--multi-write",
        ])
        .unwrap();
        let Command::Emulator(e) = cli.command else {
            panic!("not emulator")
        };
        assert_eq!((e.port, e.multi_write), (9000, true));
        assert_eq!(e.profile.as_deref(), Some("slow-primary"));
    }
}

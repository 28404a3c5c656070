//! The flags of `cosmos item import` and `cosmos item export`.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

/// How an import writes each document.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImportMode {
    /// Create: a document whose id exists in its partition is rejected (409).
    Create,
    /// Upsert: create or replace; running the same input again changes nothing.
    Upsert,
}

/// `cosmos item import` arguments.
#[derive(Args, Debug, Clone, PartialEq)]
#[command(after_help = IMPORT_HELP)]
pub struct ImportArgs {
    /// Database id.
    #[arg(long)]
    pub db: String,
    /// Container id.
    #[arg(long)]
    pub container: String,
    /// The input: a file of JSON Lines or one JSON array, or `-` for standard input.
    #[arg(default_value = "-", value_name = "FILE|-")]
    pub input: String,
    /// `create` rejects documents whose id exists (409); `upsert` creates or replaces.
    #[arg(long, value_enum, default_value = "create")]
    pub mode: ImportMode,
    /// Where refused documents go, one JSON line each with the line number and the reason
    /// (default: stderr).
    #[arg(long, value_name = "PATH")]
    pub rejects: Option<PathBuf>,
    /// Skip the first N documents of the input (to resume a stopped run; see below).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub skip: u64,
    /// Documents per bulk run; a few runs go at once (memory grows with it).
    #[arg(long, value_name = "N", default_value_t = 5000)]
    pub chunk: usize,
    /// No progress on stderr (the summary is still printed).
    #[arg(long)]
    pub quiet: bool,
}

/// Notes under `cosmos item import --help`.
pub const IMPORT_HELP: &str = "\
Each document's partition key is read from it, at the container's partition key paths. The
service's own properties (_rid, _self, _etag, _ts, _attachments, _lsn) are dropped. A document
that is not JSON, not an object, has no string id, has a partition key value of the wrong type,
or is larger than 2 MB is rejected before sending; one the service refuses is rejected with its
status. Rejects go to --rejects PATH (or stderr) as JSON lines with the line number; the rest go on.

The summary (stderr, one JSON line) counts documents read, written, rejected and skipped, and
gives `resume_skip`: the number of documents of the input that are finished.

Resuming: Ctrl-C stops reading, waits for the documents already sent, prints the summary and
exits 1. Run the same command again with `--skip <resume_skip>`: the documents before that point
are all finished and are not sent again; none after it was sent. With --mode upsert the run can
also simply be repeated from the start: writing the same document twice leaves one copy. (A run
stopped by an error instead may have written some documents past `resume_skip`; with --mode
create they come back as 409 conflicts in the rejects: none is ever stored twice.)

--priority low|high and --throughput-bucket N (of `cosmos item`) are sent on every request:
with low priority, when a partition runs short of throughput the service throttles the import's
requests first, so a background load can yield to an application's own traffic; a bucket the
container caps (`cosmos container throughput --bucket N=PERCENT`) keeps it within that share.

Exit status: 0 when every document was written; otherwise the class of the first rejected
document (3 when refused before sending, 5 for a conflict, 6 throttled...), or of the error that
stopped the run.";

/// `cosmos item export` arguments.
#[derive(Args, Debug, Clone, PartialEq)]
#[command(after_help = EXPORT_HELP)]
pub struct ExportArgs {
    /// Database id.
    #[arg(long)]
    pub db: String,
    /// Container id.
    #[arg(long)]
    pub container: String,
    /// The query whose results are exported (default: every item).
    #[arg(long, value_name = "SQL", default_value = "SELECT * FROM c")]
    pub query: String,
    /// Where the JSON Lines go (default: stdout).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Append to --out instead of replacing it (for a resumed export).
    #[arg(long, requires = "out")]
    pub append: bool,
    /// Resume from the continuation printed by a stopped run.
    #[arg(long, value_name = "TOKEN")]
    pub continuation: Option<String>,
    /// Stop after this many pages, printing the continuation that resumes the export.
    #[arg(long = "max-pages", value_name = "N")]
    pub max_pages: Option<u64>,
    /// Items per page.
    #[arg(long = "max-item-count", value_name = "N", default_value_t = 1000)]
    pub max_item_count: u32,
    /// Feed ranges read at once (1 to 64) when the query can be split by range; see below.
    #[arg(long, value_name = "N", default_value_t = 4)]
    pub parallel: usize,
    /// No progress on stderr (the summary is still printed).
    #[arg(long)]
    pub quiet: bool,
}

/// Notes under `cosmos item export --help`.
pub const EXPORT_HELP: &str = "\
One JSON document per line, written page by page as the pages arrive.

Parallel reading: the container's feed ranges (one per physical partition) are each read by their
own query, --parallel N of them at once; their pages are written as they arrive, so documents of
different ranges come interleaved, in no set order (within one range, in the order of its pages).
Memory holds at most 2 x N pages waiting to be written. A query that orders, groups, aggregates,
limits or de-duplicates (it mentions ORDER, GROUP, TOP, DISTINCT, OFFSET, LIMIT, COUNT, SUM, MIN,
MAX or AVG anywhere, even as a property name or in a string) is not split: the union of per-range
answers would be wrong, so it runs as one query, one page at a time, as the service orders it.

The summary (stderr, one JSON line) counts the items and pages. When the export stops before the
end (Ctrl-C, or --max-pages), the summary carries `continuation`: run the same command with
`--continuation TOKEN --out FILE --append` to go on from the last page written. For a parallel
export the token holds each unfinished range's own position, so every document is written exactly
once across the runs; it is bound to the --query it was printed for.";

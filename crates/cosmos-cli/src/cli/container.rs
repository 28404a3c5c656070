//! `cosmos container` subcommands.

use clap::Subcommand;

/// `--bucket ID=PERCENT`: a bucket id 1 to 5 and a percentage 1 to 100.
pub fn parse_bucket_cap(text: &str) -> Result<(u8, u8), String> {
    let bad = || {
        format!(
            "--bucket takes ID=PERCENT, a bucket 1 to 5 and a percentage 1 to 100, not {text:?}"
        )
    };
    let (id, percent) = text.split_once('=').ok_or_else(bad)?;
    let id = id.trim().parse::<u8>().ok().filter(|n| (1..=5).contains(n));
    let percent = percent
        .trim()
        .parse::<u8>()
        .ok()
        .filter(|n| (1..=100).contains(n));
    id.zip(percent).ok_or_else(bad)
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
    /// Show a container's own throughput and its throughput bucket caps; with `--bucket` or
    /// `--clear-buckets`, set the caps first (the throughput itself is kept).
    Throughput {
        /// Database id.
        #[arg(long)]
        db: String,
        /// Container id.
        id: String,
        /// `ID=PERCENT`: bucket ID (1 to 5) may use at most PERCENT (1 to 100) of the container's
        /// RU/s; repeat for each bucket. The caps given replace all the container's caps.
        #[arg(long = "bucket", value_name = "ID=PERCENT", value_parser = parse_bucket_cap, conflicts_with = "clear_buckets")]
        buckets: Vec<(u8, u8)>,
        /// Remove every bucket cap.
        #[arg(long = "clear-buckets")]
        clear_buckets: bool,
        /// Mark bucket ID, one of those given with `--bucket`, as the default: requests that name
        /// no bucket are counted in it.
        #[arg(long = "default-bucket", value_name = "ID", requires = "buckets")]
        default_bucket: Option<u8>,
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

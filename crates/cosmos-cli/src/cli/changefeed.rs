//! `cosmos changefeed` subcommands: run one change feed processor instance, or print each
//! lease's lag.

use std::time::Duration;

use clap::{Args, Subcommand};

use crate::args::duration::parse_duration;

/// Change feed subcommands.
#[derive(Subcommand, Debug, Clone, PartialEq, Eq)]
pub enum ChangefeedAction {
    /// Run one processor instance: every change it handles goes to stdout as one JSON line
    /// `{"lease","lsn","document"}`, lease events to stderr; SIGTERM or Ctrl-C stops it cleanly
    /// (the batch in flight finishes and is checkpointed, the leases are released).
    Process(ProcessArgs),
    /// Print each lease's lag (changes not handled yet) as JSON.
    Lag(LeaseTarget),
}

/// The monitored container, the lease container and the processor's name.
#[derive(Args, Debug, Clone, PartialEq, Eq)]
pub struct LeaseTarget {
    /// Database id (of both containers).
    #[arg(long)]
    pub db: String,
    /// The monitored container.
    #[arg(long)]
    pub container: String,
    /// The lease container (created with partition key /id when missing).
    #[arg(long)]
    pub leases: String,
    /// The processor's name: every instance of one processor gives the same.
    #[arg(long)]
    pub name: String,
}

/// `cosmos changefeed process`.
#[derive(Args, Debug, Clone, PartialEq, Eq)]
pub struct ProcessArgs {
    /// The containers and the processor's name.
    #[command(flatten)]
    pub target: LeaseTarget,
    /// This instance's name (unique among the running instances).
    #[arg(long)]
    pub instance: String,
    /// Where ranges without a checkpoint start: `beginning`, `now` or an RFC 3339 time.
    #[arg(long, default_value = "now")]
    pub from: String,
    /// The most changes of one batch.
    #[arg(long, default_value_t = 100)]
    pub max_items: u32,
    /// How often the instance renews its leases.
    #[arg(long, value_parser = parse_duration, default_value = "17s")]
    pub lease_renew: Duration,
    /// How often the instance looks for leases to take.
    #[arg(long, value_parser = parse_duration, default_value = "13s")]
    pub lease_acquire: Duration,
    /// How long a lease not renewed stays its owner's.
    #[arg(long, value_parser = parse_duration, default_value = "60s")]
    pub lease_expiration: Duration,
    /// How long a caught-up range waits before it is read again.
    #[arg(long, value_parser = parse_duration, default_value = "5s")]
    pub poll_delay: Duration,
    /// Also log every lease write (owner, etag before and after) to stderr.
    #[arg(long)]
    pub log_lease_writes: bool,
}

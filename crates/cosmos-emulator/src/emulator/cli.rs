//! Command-line flags of the emulator (shared by the `cosmos-emulator` binary and `cosmos emulator`).

use std::path::PathBuf;

use super::{Emulator, EmulatorBuilder, WELL_KNOWN_KEY};
use crate::exchange::SessionWait;
use crate::sql::run::QueryLimits;
use crate::store::ReplicationLag;

/// Flags for running the emulator.
#[derive(clap::Args, Clone)]
pub struct EmulatorArgs {
    /// Global endpoint port; region i listens on PORT+1+i.
    #[arg(long, default_value_t = 8081)]
    pub port: u16,
    /// Regions, comma-separated, in preference order; the first takes writes.
    #[arg(long, default_value = "East US,West US,North Europe")]
    pub regions: String,
    /// Every region takes writes.
    #[arg(long)]
    pub multi_write: bool,
    /// Latency profile: local, geo, slow-primary, slow-both, brownout, blackhole.
    #[arg(long)]
    pub profile: Option<String>,
    /// Fault rules file (JSON) installed at start.
    #[arg(long, value_name = "RULES.json")]
    pub faults: Option<PathBuf>,
    /// Account key (base64); defaults to the official emulator's well-known key.
    #[arg(long, env = "COSMOS_EMULATOR_KEY", hide_env_values = true)]
    pub key: Option<String>,
    /// Serve HTTPS with a self-signed certificate generated at start.
    #[arg(long)]
    pub tls: bool,
    /// Where to write the certificate's PEM (with --tls).
    #[arg(long, value_name = "PATH")]
    pub cert_out: Option<PathBuf>,
    /// Accept requests without checking their authorization.
    #[arg(long)]
    pub no_auth: bool,
    /// Also accept `type=aad` authorization headers carrying this token.
    #[arg(long, value_name = "TOKEN")]
    pub aad_token: Option<String>,
    /// Physical partitions (partition key ranges) per container, whatever its throughput.
    /// Without it, each container gets what the service would give it for its throughput (one
    /// per 6,000 RU/s begun; autoscale: one per 10,000 RU/s of its maximum).
    #[arg(long)]
    pub partitions: Option<usize>,
    /// Address to listen on (default 127.0.0.1). The admin API then also answers requests whose
    /// Host names this address (with 0.0.0.0: any address literal, never a DNS name).
    #[arg(long, value_name = "ADDR")]
    pub host: Option<std::net::IpAddr>,
    /// The host name clients reach the emulator by, put in the account's region endpoints instead
    /// of the listen address (e.g. the service name in a compose file, with --host 0.0.0.0).
    #[arg(long, value_name = "NAME", env = "COSMOS_EMULATOR_ADVERTISE_HOST")]
    pub advertise_host: Option<String>,
    /// Keep databases, containers, items, offers, scripts, users and permissions in this
    /// directory (created when missing) so they survive a restart; each write is answered once it
    /// is fsync'd there.
    #[arg(long, value_name = "PATH", env = "COSMOS_EMULATOR_DATA_DIR")]
    pub data_dir: Option<PathBuf>,
    /// With --data-dir: the log size past which it is folded into a new snapshot.
    #[arg(long, value_name = "BYTES", default_value_t = 64 << 20)]
    pub compact_log_bytes: u64,
    /// With --data-dir: start even when it is damaged (otherwise the start is refused, naming
    /// the damage). What comes before the first damage is loaded; the damaged files and those
    /// after them are moved into DATA_DIR/damaged-SECONDS/, never deleted, and what was not
    /// loaded is listed.
    #[arg(long, requires = "data_dir")]
    pub recover: bool,
    /// Also accept this token on the admin API (`Authorization: Bearer TOKEN`); the account key is
    /// always accepted there.
    #[arg(
        long,
        value_name = "TOKEN",
        env = "COSMOS_EMULATOR_ADMIN_TOKEN",
        hide_env_values = true
    )]
    pub admin_token: Option<String>,
    /// The most connections open at once across all endpoints; further ones get 503 and are closed.
    #[arg(long, default_value_t = crate::server::DEFAULT_MAX_CONNECTIONS)]
    pub max_connections: usize,
    /// How long a client may take to send a request body, in milliseconds; later it gets 408.
    #[arg(long, value_name = "MS", default_value_t = 30_000)]
    pub body_read_timeout_ms: u64,
    /// Replication lag: MS, uniform:MIN-MAX or lognormal:MEDIAN,SIGMA (milliseconds), for every region,
    /// or REGION=SPEC for one region. Repeatable.
    #[arg(long = "replication-lag-ms", value_name = "[REGION=]SPEC")]
    pub replication_lag: Vec<String>,
    /// Hold each partition key range to its share of the provisioned RU/s per second (429 with
    /// sub-status 3200 past it).
    #[arg(long)]
    pub enforce_throughput: bool,
    /// How often a container's throughput bucket settings may change, in seconds (a sooner change
    /// answers 429 with sub-status 3213).
    #[arg(long, value_name = "SECONDS", default_value_t = crate::store::throughput_buckets::DEFAULT_CHANGE_INTERVAL.as_secs())]
    pub bucket_change_interval: u64,
    /// Units of work a query page may use before it ends with a continuation (also while an
    /// ORDER BY, aggregate, GROUP BY or DISTINCT query is still reading its scope): one per
    /// evaluated expression and bound row, one per 64 bytes parsed, copied or built. Also the most
    /// one PATCH condition, or the conditions of one batch, may use.
    #[arg(long, value_name = "UNITS", default_value_t = QueryLimits::default().page_work)]
    pub query_page_work: u64,
    /// Time a query page may take before it ends with a continuation, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = QueryLimits::default().page_time.as_millis() as u64)]
    pub query_page_ms: u64,
    /// Bytes an ORDER BY, aggregate, GROUP BY or DISTINCT query may hold while its answer is
    /// built; past it the query answers 400.
    #[arg(long, value_name = "BYTES", default_value_t = QueryLimits::default().build_bytes)]
    pub query_build_bytes: usize,
    /// Bytes all queries may hold at once (answers kept between pages, answers being built);
    /// past it a page answers 429 until others end.
    #[arg(long, value_name = "BYTES", default_value_t = QueryLimits::default().memory_bytes)]
    pub query_memory_bytes: usize,
    /// How long an answer kept between pages, or a build waiting for its next page, may go unused
    /// before it is dropped, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = QueryLimits::default().state_idle.as_millis() as u64)]
    pub query_state_idle_ms: u64,
    /// How long a read whose session token is ahead of the serving region's replica waits for it
    /// before answering 404/1002, in milliseconds (the service's 5 s by default; 0 answers at once).
    #[arg(long, value_name = "MS", default_value_t = SessionWait::default().window.as_millis() as u64)]
    pub session_wait_ms: u64,
    /// Run scripts on threads of this process instead of a child process each (killed at the
    /// time limit). A script stuck in a native loop the script runtime cannot interrupt then
    /// keeps its thread until it ends on its own.
    #[arg(long)]
    pub scripts_in_process: bool,
    /// With one region, advertise that region's own port as its endpoint rather than the global
    /// endpoint (which one region gets by default, as Microsoft's emulator gives it).
    #[arg(long)]
    pub own_port_for_one_region: bool,
}

impl std::fmt::Debug for EmulatorArgs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmulatorArgs")
            .field("port", &self.port)
            .field("regions", &self.regions)
            .field("multi_write", &self.multi_write)
            .field("profile", &self.profile)
            .field("key", &self.key.as_ref().map(|_| "<redacted>"))
            .field("aad_token", &self.aad_token.as_ref().map(|_| "<redacted>"))
            .field(
                "admin_token",
                &self.admin_token.as_ref().map(|_| "<redacted>"),
            )
            .field("host", &self.host)
            .field("max_connections", &self.max_connections)
            .field("tls", &self.tls)
            .finish_non_exhaustive()
    }
}

impl EmulatorArgs {
    /// The builder these flags describe.
    pub fn builder(&self) -> Result<EmulatorBuilder, String> {
        let regions: Vec<String> = self
            .regions
            .split(',')
            .map(str::trim)
            .filter(|r| !r.is_empty())
            .map(str::to_owned)
            .collect();
        let mut builder = EmulatorBuilder::new()
            .regions(regions)
            .multi_write(self.multi_write)
            .key(
                self.key
                    .clone()
                    .unwrap_or_else(|| WELL_KNOWN_KEY.to_owned()),
            )
            .enforce_throughput(self.enforce_throughput)
            .bucket_change_interval(std::time::Duration::from_secs(self.bucket_change_interval))
            .no_auth(self.no_auth)
            .tls(self.tls)
            .port(self.port)
            .max_connections(self.max_connections)
            .body_read_timeout(std::time::Duration::from_millis(self.body_read_timeout_ms))
            .own_port_for_one_region(self.own_port_for_one_region)
            .query_limits(QueryLimits {
                page_work: self.query_page_work.max(1),
                page_time: std::time::Duration::from_millis(self.query_page_ms.max(1)),
                build_bytes: self.query_build_bytes,
                memory_bytes: self.query_memory_bytes,
                state_idle: std::time::Duration::from_millis(self.query_state_idle_ms),
            })
            .session_wait(SessionWait::within(std::time::Duration::from_millis(
                self.session_wait_ms,
            )));
        builder = match self.partitions {
            Some(count) => builder.partitions(count),
            None => builder.partitions_from_throughput(),
        };
        if let Some(host) = self.host {
            builder = builder.host(host);
        }
        if let Some(dir) = &self.data_dir {
            builder = builder
                .data_dir(dir)
                .compact_log_bytes(self.compact_log_bytes)
                .recover(self.recover);
        }
        if let Some(name) = &self.advertise_host {
            builder = builder.advertise_host(name);
        }
        if let Some(token) = &self.admin_token {
            builder = builder.admin_token(token);
        }
        if let Some(profile) = &self.profile {
            builder = builder.profile(profile);
        }
        if let Some(token) = &self.aad_token {
            builder = builder.aad_token(token);
        }
        if let Some(path) = &self.faults {
            let json =
                std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            builder = builder.fault_rules_json(json);
        }
        for spec in &self.replication_lag {
            builder = match spec.split_once('=') {
                Some((region, lag)) => {
                    builder.region_replication_lag(region.trim(), ReplicationLag::parse(lag)?)
                }
                None => builder.replication_lag(ReplicationLag::parse(spec)?),
            };
        }
        Ok(builder)
    }
}

/// Prints a line of the banner or of the stop to standard output. A reader that stopped reading
/// (a closed pipe) neither panics the emulator nor stops it: the line is dropped.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

/// How long a stop waits for the requests in flight before it drops them.
const SHUTDOWN_GRACE: std::time::Duration = std::time::Duration::from_secs(10);

/// Starts the emulator, prints its endpoints and serves until Ctrl-C or SIGTERM; then it stops
/// taking connections, lets the requests in flight finish (at most 10 s) and returns.
pub async fn run(args: EmulatorArgs) -> Result<(), String> {
    // Listening for the signals before the endpoints are printed: a SIGTERM sent as soon as they
    // show is a graceful stop, never the default kill.
    let signals = StopSignals::install()?;
    let emulator = with_script_worker(args.builder()?, &args)?
        .start()
        .await
        .map_err(|e| e.to_string())?;
    if let (Some(path), Some(pem)) = (&args.cert_out, emulator.tls_cert_pem()) {
        std::fs::write(path, pem)
            .map_err(|e| format!("cannot write the certificate to {}: {e}", path.display()))?;
    }
    print_endpoints(&emulator, &args);
    let signal = signals.wait().await?;
    say!("stopping ({signal}): finishing the requests in flight");
    if !emulator.drain(SHUTDOWN_GRACE).await {
        say!("stopped; requests still running after {SHUTDOWN_GRACE:?} were dropped");
    } else {
        say!("stopped");
    }
    Ok(())
}

/// `builder` with scripts in child processes of this program (unless `--scripts-in-process`),
/// which must have called [`serve_script_worker_if_asked`](crate::serve_script_worker_if_asked)
/// first in its `main`.
fn with_script_worker(
    builder: EmulatorBuilder,
    args: &EmulatorArgs,
) -> Result<EmulatorBuilder, String> {
    if crate::scripts::isolation::started_as_worker() {
        return Err(
            "this program was started as a script worker, but its main does not call \
             cosmos_emulator::serve_script_worker_if_asked"
                .into(),
        );
    }
    if args.scripts_in_process {
        return Ok(builder);
    }
    let program = std::env::current_exe()
        .map_err(|e| format!("cannot find this program to run scripts in: {e}"))?;
    Ok(builder.script_worker(program))
}

/// Ctrl-C (SIGINT) and, on Unix, SIGTERM, listened for from installation on.
struct StopSignals {
    #[cfg(unix)]
    interrupt: tokio::signal::unix::Signal,
    #[cfg(unix)]
    terminate: tokio::signal::unix::Signal,
}

impl StopSignals {
    fn install() -> Result<Self, String> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            Ok(Self {
                interrupt: signal(SignalKind::interrupt())
                    .map_err(|e| format!("cannot wait for Ctrl-C: {e}"))?,
                terminate: signal(SignalKind::terminate())
                    .map_err(|e| format!("cannot wait for SIGTERM: {e}"))?,
            })
        }
        #[cfg(not(unix))]
        {
            Ok(Self {})
        }
    }

    /// Waits for either; says which came.
    async fn wait(mut self) -> Result<&'static str, String> {
        #[cfg(unix)]
        {
            tokio::select! {
                _ = self.interrupt.recv() => Ok("interrupt"),
                _ = self.terminate.recv() => Ok("SIGTERM"),
            }
        }
        #[cfg(not(unix))]
        {
            tokio::signal::ctrl_c()
                .await
                .map(|()| "interrupt")
                .map_err(|e| format!("cannot wait for Ctrl-C: {e}"))
        }
    }
}

fn print_endpoints(emulator: &Emulator, args: &EmulatorArgs) {
    say!("Cosmos DB emulator listening");
    say!(
        "  global endpoint   {}  (write region: {})",
        emulator.endpoint(),
        emulator.write_region()
    );
    for region in emulator.regions() {
        say!(
            "  {:<17} {}",
            region,
            emulator.region_endpoint(region).unwrap_or("?")
        );
    }
    if args.key.is_none() && !args.no_auth {
        say!("  key               the official emulator's well-known key");
    }
    if args.no_auth {
        say!("  auth              OFF (--no-auth)");
    }
    if let Some(path) = &args.cert_out {
        say!("  certificate       {}", path.display());
    }
    if let Some(dir) = &args.data_dir {
        say!("  data directory    {}", dir.display());
    }
    say!(
        "  admin API         {}_emulator/faults, _emulator/counters, _emulator/failover",
        emulator.endpoint()
    );
    say!(
        "                    needs Authorization: Bearer <account key{}>",
        if args.admin_token.is_some() {
            " or admin token"
        } else {
            ""
        }
    );
    say!("  ready probe       GET /_emulator/ready on any endpoint, no credentials");
    say!("  explorer          /_explorer on the global endpoint, in a browser");
    say!("  connections       at most {}", args.max_connections);
    say!("Press Ctrl-C to stop.");
}

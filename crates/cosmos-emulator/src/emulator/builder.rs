//! Configuring and starting an emulator.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;

use super::handle::Emulator;
use super::StartError;
use crate::auth::{key_from_base64, AdminAccess, AuthPolicy};
use crate::exchange::{SessionWait, Shared};
use crate::faults::{FaultInjector, RegionOutages, RequestCounters};
use crate::server::tls;
use crate::server::{self, ConnectionCap, Port, DEFAULT_MAX_CONNECTIONS};
use crate::sql::run::QueryLimits;
use crate::sql::run::QueryState;
use crate::store::{Catalog, PartitionSizing, RegionInfo, ReplicationLag, Store, Topology};

/// The key the official Cosmos DB emulator publishes; SDKs' emulator settings use it.
pub const WELL_KNOWN_KEY: &str =
    "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw==";

/// Builds an [`Emulator`]. Defaults: regions East US, West US, North Europe; the first takes writes;
/// the well-known key; auth on; no latency profile or fault rules; 4 partitions per container; no
/// replication lag; plain HTTP on ephemeral loopback ports.
#[derive(Clone)]
pub struct EmulatorBuilder {
    regions: Vec<String>,
    write_regions: Option<Vec<String>>,
    multi_write: bool,
    key: String,
    profile: Option<String>,
    fault_rules: Option<Vec<u8>>,
    partitions: PartitionSizing,
    lag_all: ReplicationLag,
    lag_by_region: Vec<(String, ReplicationLag)>,
    aad_token: Option<String>,
    no_auth: bool,
    tls: bool,
    port: u16,
    host: IpAddr,
    advertise_host: Option<String>,
    data_dir: Option<std::path::PathBuf>,
    compact_log_bytes: u64,
    recover: bool,
    account_id: String,
    enforce_throughput: bool,
    bucket_change_interval: Duration,
    admin_token: Option<String>,
    max_connections: usize,
    body_read_timeout: Duration,
    query_limits: QueryLimits,
    session_wait: SessionWait,
    script_worker: Option<std::path::PathBuf>,
    own_port_for_one_region: bool,
}

/// How long a client may take to send a request body, unless configured otherwise.
pub(super) const DEFAULT_BODY_READ_TIMEOUT: Duration = Duration::from_secs(30);

/// How often partitions that went quiet drop replica-log entries and item versions no region needs.
const CLEANUP_PERIOD: Duration = Duration::from_secs(1);

impl std::fmt::Debug for EmulatorBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmulatorBuilder")
            .field("regions", &self.regions)
            .field("write_regions", &self.write_regions)
            .field("multi_write", &self.multi_write)
            .field("key", &"<redacted>")
            .field("profile", &self.profile)
            .field("partitions", &self.partitions)
            .field("aad_token", &self.aad_token.as_ref().map(|_| "<redacted>"))
            .field("no_auth", &self.no_auth)
            .field("tls", &self.tls)
            .field("port", &self.port)
            .field("host", &self.host)
            .field("advertise_host", &self.advertise_host)
            .field("data_dir", &self.data_dir)
            .field("recover", &self.recover)
            .field(
                "admin_token",
                &self.admin_token.as_ref().map(|_| "<redacted>"),
            )
            .field("max_connections", &self.max_connections)
            .field("query_limits", &self.query_limits)
            .field("session_wait", &self.session_wait)
            .finish_non_exhaustive()
    }
}

impl Default for EmulatorBuilder {
    fn default() -> Self {
        Self {
            regions: vec!["East US".into(), "West US".into(), "North Europe".into()],
            write_regions: None,
            multi_write: false,
            key: WELL_KNOWN_KEY.into(),
            profile: None,
            fault_rules: None,
            partitions: PartitionSizing::Fixed(4),
            lag_all: ReplicationLag::default(),
            lag_by_region: Vec::new(),
            aad_token: None,
            no_auth: false,
            tls: false,
            port: 0,
            host: IpAddr::V4(Ipv4Addr::LOCALHOST),
            advertise_host: None,
            data_dir: None,
            compact_log_bytes: crate::persist::DEFAULT_COMPACT_BYTES,
            recover: false,
            account_id: "cosmos-emulator".into(),
            enforce_throughput: false,
            bucket_change_interval: crate::store::throughput_buckets::DEFAULT_CHANGE_INTERVAL,
            admin_token: None,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            body_read_timeout: DEFAULT_BODY_READ_TIMEOUT,
            query_limits: QueryLimits::default(),
            session_wait: SessionWait::default(),
            script_worker: None,
            own_port_for_one_region: false,
        }
    }
}

impl EmulatorBuilder {
    /// A builder with the defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// The account's regions, in preference order (the first takes writes unless told otherwise).
    pub fn regions<I, S>(mut self, regions: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.regions = regions.into_iter().map(Into::into).collect();
        self
    }

    /// The regions that take writes (the first is the hub).
    pub fn write_regions<I, S>(mut self, regions: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.write_regions = Some(regions.into_iter().map(Into::into).collect());
        self
    }

    /// Every region takes writes (the account advertises multiple write locations).
    pub fn multi_write(mut self, on: bool) -> Self {
        self.multi_write = on;
        self
    }

    /// The account key (base64).
    pub fn key(mut self, key: impl Into<String>) -> Self {
        self.key = key.into();
        self
    }

    /// A named latency profile: "local", "geo", "slow-primary", "slow-both", "brownout", "blackhole".
    pub fn profile(mut self, name: impl Into<String>) -> Self {
        self.profile = Some(name.into());
        self
    }

    /// Fault rules in the `--faults` file format, installed at start.
    pub fn fault_rules_json(mut self, json: impl Into<Vec<u8>>) -> Self {
        self.fault_rules = Some(json.into());
        self
    }

    /// Holds each partition key range to its share of the provisioned RU/s per second; past it,
    /// requests answer 429 with sub-status 3200 and `x-ms-retry-after-ms`.
    pub fn enforce_throughput(mut self, on: bool) -> Self {
        self.enforce_throughput = on;
        self
    }

    /// How often a container's throughput bucket settings may change (10 minutes by default, as
    /// the service documents); a change sooner answers 429 with sub-status 3213.
    pub fn bucket_change_interval(mut self, interval: Duration) -> Self {
        self.bucket_change_interval = interval;
        self
    }

    /// Physical partitions (partition key ranges) per container, whatever its throughput.
    pub fn partitions(mut self, count: usize) -> Self {
        self.partitions = PartitionSizing::Fixed(count);
        self
    }

    /// Each new container gets the physical partitions the service would give it for its
    /// throughput (one per 6,000 RU/s begun, autoscale one per 10,000 RU/s of its maximum).
    pub fn partitions_from_throughput(mut self) -> Self {
        self.partitions = PartitionSizing::FromThroughput;
        self
    }

    /// The replication lag of every region (writes reach a region after its lag).
    pub fn replication_lag(mut self, lag: ReplicationLag) -> Self {
        self.lag_all = lag;
        self
    }

    /// The replication lag of one region (overrides [`Self::replication_lag`] for it).
    pub fn region_replication_lag(
        mut self,
        region: impl Into<String>,
        lag: ReplicationLag,
    ) -> Self {
        self.lag_by_region.push((region.into(), lag));
        self
    }

    /// Also accept `type=aad` authorization headers carrying exactly this token.
    pub fn aad_token(mut self, token: impl Into<String>) -> Self {
        self.aad_token = Some(token.into());
        self
    }

    /// Accept requests without checking their authorization (only when explicitly asked).
    pub fn no_auth(mut self, on: bool) -> Self {
        self.no_auth = on;
        self
    }

    /// Serve HTTPS with a self-signed certificate generated at start.
    pub fn tls(mut self, on: bool) -> Self {
        self.tls = on;
        self
    }

    /// The global port (region `i` listens on `port + 1 + i`); 0 = ephemeral ports everywhere.
    pub fn port(mut self, port: u16) -> Self {
        self.port = port;
        self
    }

    /// The address to listen on (default 127.0.0.1).
    pub fn host(mut self, host: IpAddr) -> Self {
        self.host = host;
        self
    }

    /// The host name (or address) put in the endpoints the account document lists and the global
    /// endpoint, instead of the listen address: what clients elsewhere (another container, another
    /// machine) reach the emulator by. The admin API accepts a `Host` naming it too.
    pub fn advertise_host(mut self, host: impl Into<String>) -> Self {
        self.advertise_host = Some(host.into());
        self
    }

    /// Keeps databases, containers, items, offers, scripts, users and permissions in `dir`
    /// (created when missing) so they survive a restart: what the directory holds is loaded at
    /// start, and each write is answered once it is on disk there.
    pub fn data_dir(mut self, dir: impl Into<std::path::PathBuf>) -> Self {
        self.data_dir = Some(dir.into());
        self
    }

    /// With [`EmulatorBuilder::data_dir`]: start even when the directory is damaged (a damaged
    /// record, snapshot or a missing file), which otherwise refuses the start. What comes before
    /// the first damage is loaded; the damaged files and those after them are moved into
    /// `damaged-<seconds>/` in the directory (never deleted), and what was not loaded is listed
    /// on standard error.
    pub fn recover(mut self, recover: bool) -> Self {
        self.recover = recover;
        self
    }

    /// The data directory's log size past which it is folded into a new snapshot (default 64 MiB).
    pub fn compact_log_bytes(mut self, bytes: u64) -> Self {
        self.compact_log_bytes = bytes;
        self
    }

    /// Also accept this token (as `Authorization: Bearer <token>`) on the admin API; the account key
    /// is always accepted there.
    pub fn admin_token(mut self, token: impl Into<String>) -> Self {
        self.admin_token = Some(token.into());
        self
    }

    /// The most connections open at once across every listener (default
    /// `DEFAULT_MAX_CONNECTIONS`); further ones are answered 503 and closed.
    pub fn max_connections(mut self, max: usize) -> Self {
        self.max_connections = max;
        self
    }

    /// How long a client may take to send a request body (default 30 s);
    /// later, the request is answered 408.
    pub fn body_read_timeout(mut self, timeout: Duration) -> Self {
        self.body_read_timeout = timeout;
        self
    }

    /// What one page of a query may use (default [`QueryLimits::default`]): a page ends with a
    /// continuation past its work or time budget, also while a query that must see every row is
    /// still reading its scope (a row that alone needs more is refused, as is a PATCH condition);
    /// such a query is refused past its memory budget, and all queries together hold at most
    /// [`QueryLimits::memory_bytes`].
    pub fn query_limits(mut self, limits: QueryLimits) -> Self {
        self.query_limits = limits;
        self
    }

    /// How long a read whose session token is ahead of the serving region's replica waits for it
    /// before answering 404/1002 (default [`SessionWait::default`], the service's 5 s;
    /// [`SessionWait::OFF`] answers at once, what tests of a client's own 1002 handling want).
    pub fn session_wait(mut self, wait: SessionWait) -> Self {
        self.session_wait = wait;
        self
    }

    /// Runs every script (a stored procedure's or trigger's execution, a query request's UDFs) in
    /// a child process of `program`, killed at the script's time limit, so that nothing a script
    /// does outlives its request. `program`'s `main` must call
    /// [`serve_script_worker_if_asked`](crate::serve_script_worker_if_asked) first (the
    /// `cosmos-emulator` and `cosmos` binaries do). Without it (the default), scripts run on
    /// threads of this process: stopped at their time limit by the runtime and by bounds on the
    /// built-ins that loop natively, but a script stuck in a native loop the runtime cannot
    /// interrupt is left running (counted; new scripts are refused while two are).
    pub fn script_worker(mut self, program: impl Into<std::path::PathBuf>) -> Self {
        self.script_worker = Some(program.into());
        self
    }

    /// With one region, the account advertises the global endpoint as that region's endpoint
    /// (as Microsoft's emulator does; SDK tests that inject faults by region URL depend on it)
    /// unless this is set: then it advertises the region's own port. The region's port listens
    /// either way; with several regions each always has its own.
    pub fn own_port_for_one_region(mut self, on: bool) -> Self {
        self.own_port_for_one_region = on;
        self
    }

    /// Binds every listener and starts serving.
    pub async fn start(self) -> Result<Emulator, StartError> {
        let fail = |m: String| StartError(m);
        if self.regions.is_empty() {
            return Err(fail("at least one region is needed".into()));
        }
        let auth = if self.no_auth {
            AuthPolicy::disabled()
        } else {
            AuthPolicy::new(
                key_from_base64(&self.key).map_err(fail)?,
                self.aad_token.clone(),
            )
        };
        let (global, region_listeners) = self.bind_listeners().await?;
        let identity = if self.tls {
            Some(tls::generate().map_err(fail)?)
        } else {
            None
        };
        let scheme = if self.tls { "https" } else { "http" };
        let url_host = self.url_host()?;
        let url = |l: &TcpListener| -> Result<String, StartError> {
            let port = l
                .local_addr()
                .map_err(|e| StartError(format!("cannot read the bound address: {e}")))?
                .port();
            Ok(format!("{scheme}://{url_host}:{port}/"))
        };
        let at_global = self.regions.len() == 1 && !self.own_port_for_one_region;
        let mut regions = Vec::new();
        for (name, listener) in self.regions.iter().zip(&region_listeners) {
            regions.push(RegionInfo {
                name: name.clone(),
                endpoint: url(if at_global { &global } else { listener })?,
            });
        }
        let topology = self.topology(regions)?;
        let lags = self.lags(&topology)?;
        let faults = self.fault_injector()?;
        let store = Store {
            topology,
            catalog: Catalog::default(),
            lags: std::sync::RwLock::new(lags),
            offers: Default::default(),
            ru_meter: self.enforce_throughput.then(Default::default),
            bucket_change_interval: self.bucket_change_interval,
            partition_sizing: self.partitions,
            users: Default::default(),
        };
        let scripts = crate::scripts::Scripts::new(match &self.script_worker {
            Some(program) => {
                crate::scripts::isolation::Isolation::Process(Arc::new(program.clone()))
            }
            None => crate::scripts::isolation::Isolation::Thread,
        });
        let data = self.open_data_dir(&store, &scripts, &auth)?;
        let shared = Arc::new(Shared {
            store,
            auth,
            admin: AdminAccess::new(&self.key, self.admin_token.as_deref(), self.host)
                .also_host(self.advertise_host.as_deref()),
            body_read_timeout: self.body_read_timeout,
            query_limits: self.query_limits,
            queries: QueryState::new(self.query_limits.memory_bytes, self.query_limits.state_idle),
            evaluations: tokio::sync::Semaphore::new(evaluation_slots()),
            session_wait: self.session_wait,
            faults,
            outages: RegionOutages::new(&self.regions),
            counters: RequestCounters::with_regions(&self.regions),
            account_id: self.account_id.clone(),
            global_endpoint: url(&global)?,
            scripts,
            data,
            account_switches: Default::default(),
        });
        let acceptor = identity.as_ref().map(|i| i.acceptor.clone());
        let (stop, stopped) = tokio::sync::watch::channel(false);
        let mut tasks = self.serve(global, region_listeners, &shared, acceptor, stopped);
        let listeners = tasks.len();
        tasks.push(tokio::spawn(clean_up_periodically(shared.clone())));
        Ok(Emulator::new(
            shared,
            listeners,
            tasks,
            stop,
            self.regions.clone(),
            self.key.clone(),
            identity.map(|i| i.cert_pem),
        ))
    }

    /// Binds the global endpoint and one listener per region (on the ports after the global one
    /// when a port is given, else on ports the system picks).
    async fn bind_listeners(&self) -> Result<(TcpListener, Vec<TcpListener>), StartError> {
        let global = bind(self.host, self.port).await?;
        let mut region_listeners = Vec::new();
        for i in 0..self.regions.len() {
            let port = if self.port == 0 {
                0
            } else {
                self.port.saturating_add(1 + i as u16)
            };
            region_listeners.push(bind(self.host, port).await?);
        }
        Ok((global, region_listeners))
    }

    /// The host the endpoints' URLs name.
    fn url_host(&self) -> Result<String, StartError> {
        Ok(match &self.advertise_host {
            Some(name) => advertised(name).map_err(StartError)?,
            None if self.host.is_unspecified() => "127.0.0.1".to_owned(),
            None => match self.host {
                IpAddr::V6(v6) => format!("[{v6}]"),
                v4 => v4.to_string(),
            },
        })
    }

    /// The fault injector with the profile and the rules given at start.
    fn fault_injector(&self) -> Result<FaultInjector, StartError> {
        let faults = FaultInjector::new();
        // Always installed (default `local`) so `PUT /_emulator/profile` knows the regions.
        let profile = self.profile.as_deref().unwrap_or("local");
        faults
            .set_profile(profile, &self.regions)
            .map_err(StartError)?;
        if let Some(rules) = &self.fault_rules {
            faults
                .load_json(rules)
                .map_err(|e| StartError(format!("the fault rules are invalid: {e}")))?;
        }
        Ok(faults)
    }

    /// The data directory (`--data-dir`), opened and loaded into `store` and `scripts`.
    fn open_data_dir(
        &self,
        store: &Store,
        scripts: &crate::scripts::Scripts,
        auth: &AuthPolicy,
    ) -> Result<Option<Arc<crate::persist::DataDir>>, StartError> {
        let Some(dir) = &self.data_dir else {
            return Ok(None);
        };
        let (data, report) = crate::persist::DataDir::open(
            dir,
            store,
            scripts,
            &|id| auth.resource_token(id),
            self.compact_log_bytes,
            self.recover,
        )
        .map_err(|e| StartError(format!("the data directory {}: {e}", dir.display())))?;
        for message in &report.messages {
            eprintln!("cosmos-emulator: {message}");
        }
        Ok(Some(data))
    }

    /// Starts serving on every listener, under one connection cap, until `stopped` turns true.
    fn serve(
        &self,
        global: TcpListener,
        region_listeners: Vec<TcpListener>,
        shared: &Arc<Shared>,
        acceptor: Option<tokio_rustls::TlsAcceptor>,
        stopped: tokio::sync::watch::Receiver<bool>,
    ) -> Vec<tokio::task::JoinHandle<()>> {
        let cap = Arc::new(ConnectionCap::new(self.max_connections));
        let mut tasks = vec![server::spawn(
            global,
            shared.clone(),
            Port::Global,
            acceptor.clone(),
            cap.clone(),
            stopped.clone(),
        )];
        for (i, listener) in region_listeners.into_iter().enumerate() {
            tasks.push(server::spawn(
                listener,
                shared.clone(),
                Port::Region(i),
                acceptor.clone(),
                cap.clone(),
                stopped.clone(),
            ));
        }
        tasks
    }

    fn topology(&self, regions: Vec<RegionInfo>) -> Result<Topology, StartError> {
        let probe = Topology::new(regions.clone(), vec![0], false);
        for (i, r) in regions.iter().enumerate() {
            if probe.index_of(&r.name) != Some(i) {
                return Err(StartError(format!(
                    "the region {:?} is listed twice",
                    r.name
                )));
            }
        }
        let writes: Vec<usize> = if self.multi_write {
            let mut order: Vec<usize> = Vec::new();
            for name in self.write_regions.iter().flatten() {
                order.push(
                    probe
                        .index_of(name)
                        .ok_or_else(|| StartError(format!("unknown write region {name:?}")))?,
                );
            }
            let rest: Vec<usize> = (0..regions.len()).filter(|i| !order.contains(i)).collect();
            order.extend(rest);
            order
        } else {
            match &self.write_regions {
                None => vec![0],
                Some(names) if names.is_empty() => {
                    return Err(StartError("the write region list is empty".into()))
                }
                Some(names) => names
                    .iter()
                    .map(|n| {
                        probe
                            .index_of(n)
                            .ok_or_else(|| StartError(format!("unknown write region {n:?}")))
                    })
                    .collect::<Result<_, _>>()?,
            }
        };
        Ok(Topology::new(regions, writes, self.multi_write))
    }

    fn lags(&self, topology: &Topology) -> Result<Vec<ReplicationLag>, StartError> {
        let mut lags = vec![self.lag_all.clone(); topology.regions().len()];
        for (name, lag) in &self.lag_by_region {
            let i = topology.index_of(name).ok_or_else(|| {
                StartError(format!("replication lag given for unknown region {name:?}"))
            })?;
            lags[i] = lag.clone();
        }
        Ok(lags)
    }
}

/// Requests evaluating queries, conditions or large bodies served at once: twice the cores (at
/// least 4), so they use the machine without crowding out the I/O threads.
fn evaluation_slots() -> usize {
    (std::thread::available_parallelism().map_or(2, |n| n.get()) * 2).max(4)
}

/// Drops query state no page has used for the idle time, cleans up every partition and deletes
/// expired items each [`CLEANUP_PERIOD`] (commits clean up their own partition too), on the
/// blocking pool: the sweep reads every item of a container with a time to live, which must not
/// hold up the I/O threads.
async fn clean_up_periodically(shared: Arc<Shared>) {
    let mut ticks = tokio::time::interval(CLEANUP_PERIOD);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        let now = tokio::time::Instant::now();
        let shared = shared.clone();
        let _ = tokio::task::spawn_blocking(move || {
            shared.queries.sweep(std::time::Instant::now());
            shared.store.clean_up(now);
            shared
                .store
                .expire_items(crate::protocol::ids::unix_seconds());
        })
        .await;
    }
}

/// The advertised host as it goes into a URL: a DNS name or an IPv4 address as given, an IPv6
/// address in brackets; anything else (a port, a path, spaces) is refused.
fn advertised(name: &str) -> Result<String, String> {
    let name = name.trim();
    if let Ok(IpAddr::V6(v6)) = name
        .trim_start_matches('[')
        .trim_end_matches(']')
        .parse::<IpAddr>()
    {
        return Ok(format!("[{v6}]"));
    }
    let valid = !name.is_empty()
        && name.len() <= 253
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.' || b == b'_');
    if valid {
        Ok(name.to_owned())
    } else {
        Err(format!(
            "the advertised host {:?} is not a host name or address (no port, scheme or path)",
            name.chars().take(64).collect::<String>()
        ))
    }
}

async fn bind(host: IpAddr, port: u16) -> Result<TcpListener, StartError> {
    TcpListener::bind(SocketAddr::new(host, port))
        .await
        .map_err(|e| StartError(format!("cannot listen on {host}:{port}: {e}")))
}

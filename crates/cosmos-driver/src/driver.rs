//! `CosmosDriver`: built once per account, shared across tasks, runs operations.

use std::sync::{Arc, Weak};

use crate::error::CosmosError;
use crate::hedging::HedgingEnv;
use crate::operation::CosmosOperation;
use crate::operations::{self, OperationKind, Pager};
use crate::options::{ClientLayer, DriverOptions, OperationOptions, RegionChange};
use crate::patch::execute_patch;
use crate::pipeline::{DriverCore, RetryLimits};
use crate::protocol::{Endpoint, Region};
use crate::response::CosmosResponse;
use crate::routing::{AccountCache, AccountProperties, EndpointHealth, PartitionBreaker};
use crate::session::SessionContainer;
use crate::transport::{HttpClient, Transport};

/// A driver for one Cosmos DB account. Cheap to clone; clones share connections, account metadata,
/// endpoint health, the partition circuit breaker and session tokens.
#[derive(Clone, Debug)]
pub struct CosmosDriver {
    core: Arc<DriverCore>,
}

impl CosmosDriver {
    /// Connects to the account: validates the options, reads the account metadata from the
    /// endpoint, and starts the background metadata refresh. The hedging environment variables
    /// are read now, once.
    pub async fn new(options: DriverOptions) -> Result<Self, CosmosError> {
        Self::with_hedging_env(options, HedgingEnv::from_process_env()).await
    }

    /// Connects to the account a connection string names
    /// (`AccountEndpoint=...;AccountKey=...;`, see [`DriverOptions::from_connection_string`]),
    /// with the default options otherwise.
    pub async fn from_connection_string(connection_string: &str) -> Result<Self, CosmosError> {
        Self::new(DriverOptions::from_connection_string(connection_string)?).await
    }

    /// Like [`CosmosDriver::new`], with the hedging environment given rather than read from the
    /// process (tests, or applications that configure it another way).
    pub async fn with_hedging_env(
        options: DriverOptions,
        hedging_env: HedgingEnv,
    ) -> Result<Self, CosmosError> {
        let endpoint = Endpoint::parse(options.endpoint(), options.allow_insecure_http())?;
        let pool = options.connection_pool();
        let client = HttpClient::new(
            pool.max_idle_per_host,
            pool.idle_timeout,
            pool.connect_timeout,
            pool.http_version.offers_h2_over_tls(),
            pool.http_version.h2_prior_knowledge(),
            options.extra_trusted_cert_pem(),
        )?;
        let token_scope = format!("https://{}/.default", endpoint.host());
        let transport = Transport::new(
            client,
            options.credential().clone(),
            token_scope,
            options.effective_request_timeout(),
            options.max_response_bytes(),
        );
        let regional = options
            .regional_endpoints()
            .iter()
            .map(|e| Endpoint::parse(e, options.allow_insecure_http()))
            .collect::<Result<Vec<_>, _>>()?;
        let account = AccountCache::load(
            &transport,
            endpoint,
            &regional,
            options.allow_insecure_http(),
        )
        .await?;
        warn_unknown_regions(
            &account.snapshot().properties,
            options.preferred_regions(),
            RegionList::Preferred,
        );
        let core = Arc::new(DriverCore {
            client_layer: ClientLayer::new(options.operation_defaults().clone()),
            health: EndpointHealth::new(options.endpoint_unavailable_for()),
            breaker: PartitionBreaker::new(options.partition_breaker()),
            sessions: SessionContainer::new(),
            limits: RetryLimits::from_options(&options.retry_options()),
            containers: Default::default(),
            latencies: Default::default(),
            native_patch: Default::default(),
            conditional_writes: Default::default(),
            hedge_budget: options.hedge_budget().map(crate::hedging::HedgeBudget::new),
            #[cfg(feature = "otel")]
            telemetry: options.telemetry(),
            hedging_env,
            transport,
            account,
            options,
        });
        spawn_refresh(
            Arc::downgrade(&core),
            core.options.account_refresh_interval(),
        );
        Ok(Self { core })
    }

    /// Runs one operation. Inputs are checked before any request is sent; PATCH is carried out as
    /// read-modify-write; a feed operation answers with the one page its continuation names (see
    /// [`CosmosDriver::pages`] for the whole feed).
    pub async fn execute(
        &self,
        operation: CosmosOperation,
        options: &OperationOptions,
    ) -> Result<CosmosResponse, CosmosError> {
        if OperationKind::of(&operation) != OperationKind::ReadModifyWrite {
            return operations::run(&self.core, operation, options).await;
        }
        operation.validate()?;
        // Boxed: the read-modify-write future holds two whole operations, and keeping it inline
        // would make every operation's future (and every move of it) that much larger.
        Box::pin(execute_patch(&self.core, operation, options)).await
    }

    /// The pages of a feed operation (read feed of items, databases, containers or partition key
    /// ranges), fetched one request per [`Pager::next_page`]. An operation that is not a feed is
    /// refused by the first `next_page`.
    pub fn pages(&self, operation: CosmosOperation, options: OperationOptions) -> Pager {
        Pager::new(self.core.clone(), operation, options)
    }

    /// The options the driver was built from (the regions as given then: see
    /// [`CosmosDriver::preferred_regions`] for the ones in force now).
    pub fn options(&self) -> &DriverOptions {
        &self.core.options
    }

    /// Replaces the preferred regions (most preferred first; empty: the account's order) for the
    /// operations that start from now on, on this driver and every clone of it. An operation
    /// already under way keeps the regions it started with, its retries and hedge included. A
    /// region the account does not have is skipped, with a warning, as at construction.
    pub fn set_preferred_regions<I, R>(&self, regions: I)
    where
        I: IntoIterator<Item = R>,
        R: Into<Region>,
    {
        let regions: Vec<Region> = regions.into_iter().map(Into::into).collect();
        let account = self.core.account.snapshot();
        warn_unknown_regions(&account.properties, &regions, RegionList::Preferred);
        self.core
            .client_layer
            .change(RegionChange::Preferred(regions));
    }

    /// Replaces the client's excluded regions (empty: none) for the operations that start from
    /// now on; an operation that names its own excluded regions uses its own list, and one already
    /// under way keeps the list it started with. A region the account does not have is named in a
    /// warning.
    pub fn set_excluded_regions<I, R>(&self, regions: I)
    where
        I: IntoIterator<Item = R>,
        R: Into<Region>,
    {
        let regions: Vec<Region> = regions.into_iter().map(Into::into).collect();
        let account = self.core.account.snapshot();
        warn_unknown_regions(&account.properties, &regions, RegionList::Excluded);
        self.core
            .client_layer
            .change(RegionChange::Excluded(regions));
    }

    /// The preferred regions the next operation starts with (as given, unknown ones included).
    pub fn preferred_regions(&self) -> Vec<Region> {
        self.core
            .client_layer
            .snapshot()
            .application_preferred_regions
            .clone()
            .unwrap_or_default()
    }

    /// The client's excluded regions the next operation starts with.
    pub fn excluded_regions(&self) -> Vec<Region> {
        self.core
            .client_layer
            .snapshot()
            .excluded_regions
            .clone()
            .unwrap_or_default()
    }

    /// The account metadata as the driver currently knows it.
    pub fn account(&self) -> AccountProperties {
        self.core.account.snapshot().properties.clone()
    }

    /// The account's read regions, in the account's order.
    pub fn read_regions(&self) -> Vec<Region> {
        self.core
            .account
            .snapshot()
            .properties
            .read_regions
            .iter()
            .map(|r| r.region.clone())
            .collect()
    }

    /// The current write (hub) region.
    pub fn write_region(&self) -> Region {
        self.core.account.snapshot().properties.hub().region.clone()
    }

    /// Re-reads the account metadata now.
    pub async fn refresh_account(&self) -> AccountProperties {
        let seen = self.core.account.snapshot().generation;
        self.core
            .account
            .refresh(&self.core.transport, seen)
            .await
            .properties
            .clone()
    }

    /// The partition circuit breaker (for inspection).
    pub fn partition_breaker(&self) -> &PartitionBreaker {
        &self.core.breaker
    }

    /// The endpoint health marks (for inspection).
    pub fn endpoint_health(&self) -> &EndpointHealth {
        &self.core.health
    }

    /// The session tokens the driver tracks.
    pub fn sessions(&self) -> &SessionContainer {
        &self.core.sessions
    }
}

impl CosmosDriver {
    /// The shared internals: the typed handles hand them to the compound operations, and seam
    /// tests drive the pipeline below the dispatcher.
    pub(crate) fn core(&self) -> &Arc<DriverCore> {
        &self.core
    }
}

/// Which region list a warning is about.
#[derive(Clone, Copy, Debug)]
enum RegionList {
    Preferred,
    Excluded,
}

/// Names the regions of `regions` that `account` does not have, in one warning (the one rule for
/// the lists given at construction and the ones set later).
fn warn_unknown_regions(account: &AccountProperties, regions: &[Region], list: RegionList) {
    let unknown: Vec<&str> = account
        .unknown_regions(regions)
        .iter()
        .map(|r| r.as_str())
        .collect();
    if unknown.is_empty() {
        return;
    }
    match list {
        RegionList::Preferred => tracing::warn!(
            name: "unknown_preferred_regions",
            target: "cosmos.regions",
            regions = ?unknown,
            "preferred regions that the account does not have are skipped"
        ),
        RegionList::Excluded => tracing::warn!(
            name: "unknown_excluded_regions",
            target: "cosmos.regions",
            regions = ?unknown,
            "excluded regions that the account does not have exclude nothing"
        ),
    }
}

/// Re-reads the account metadata every `interval` while the driver lives.
fn spawn_refresh(core: Weak<DriverCore>, interval: std::time::Duration) {
    if interval.is_zero() {
        return;
    }
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(interval).await;
            let Some(core) = core.upgrade() else { break };
            let seen = core.account.snapshot().generation;
            core.account.refresh(&core.transport, seen).await;
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is_send_sync_clone<T: Send + Sync + Clone>() {}
    fn is_send<T: Send>(_: &T) {}

    #[test]
    fn regions_the_account_lacks_are_named_in_one_warning_per_list() {
        use crate::event_capture::capture_paused;
        let account = AccountProperties::parse(
            br#"{"readableLocations": [
                {"name": "East US", "databaseAccountEndpoint": "https://a-eastus.example/"},
                {"name": "West US", "databaseAccountEndpoint": "https://a-westus.example/"}
            ]}"#,
            &Endpoint::parse("https://a.example/", false).unwrap(),
            false,
        )
        .unwrap();
        let regions = |names: &[&str]| names.iter().map(Region::new).collect::<Vec<_>>();
        // (list, regions, expected event, expected named regions)
        let table: &[(RegionList, &[&str], Option<&str>, &str)] = &[
            (RegionList::Preferred, &["westus", "East US"], None, ""),
            (RegionList::Preferred, &[], None, ""),
            (
                RegionList::Preferred,
                &["West US", "Mars", "Moon"],
                Some("unknown_preferred_regions"),
                r#"["Mars", "Moon"]"#,
            ),
            (
                RegionList::Excluded,
                &["Mars", "East US"],
                Some("unknown_excluded_regions"),
                r#"["Mars"]"#,
            ),
        ];
        for (list, names, event, named) in table {
            let ((), events) = capture_paused("cosmos.regions", || async {
                warn_unknown_regions(&account, &regions(names), *list)
            });
            match event {
                None => assert!(events.names().is_empty(), "{names:?}"),
                Some(event) => {
                    assert_eq!(events.names(), [*event], "{names:?}");
                    assert_eq!(events.get(event).field("regions"), Some(*named));
                }
            }
        }
    }

    #[test]
    fn the_driver_and_its_futures_can_move_across_tasks() {
        is_send_sync_clone::<CosmosDriver>();
        fn check(driver: &CosmosDriver, options: &OperationOptions) {
            let item = crate::protocol::DatabaseReference::new("d")
                .unwrap()
                .container("c")
                .unwrap()
                .item("i")
                .unwrap();
            let fut = driver.execute(
                CosmosOperation::read_item(item).with_partition_key("p"),
                options,
            );
            is_send(&fut);
        }
        let _ = check;
    }
}

//! Client-level options: how to reach and authorize against one account, and the defaults of every
//! operation run through the driver.

use std::num::NonZeroU32;
use std::time::Duration;

use super::operation_options::OperationOptions;
use crate::auth::Credential;
use crate::hedging::AvailabilityStrategy;
use crate::protocol::{ConsistencyLevel, Region};
use crate::routing::BreakerConfig;
use crate::transport::ConnectionPoolOptions;

/// The per-attempt timeout when none is configured.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(65);

/// Everything a driver is built from.
#[derive(Clone, Debug)]
pub struct DriverOptions {
    endpoint: String,
    credential: Credential,
    request_timeout: Option<Duration>,
    connection_pool: ConnectionPoolOptions,
    extra_trusted_cert_pem: Option<Vec<u8>>,
    allow_insecure_http: bool,
    account_refresh_interval: Duration,
    endpoint_unavailable_for: Duration,
    partition_breaker: BreakerConfig,
    defaults: OperationOptions,
}

impl DriverOptions {
    /// Options for the account at `endpoint` (`https://{account}.documents.azure.com:443/`).
    pub fn new(endpoint: impl Into<String>, credential: Credential) -> Self {
        Self {
            endpoint: endpoint.into(),
            credential,
            request_timeout: None,
            connection_pool: ConnectionPoolOptions::default(),
            extra_trusted_cert_pem: None,
            allow_insecure_http: false,
            account_refresh_interval: Duration::from_secs(300),
            endpoint_unavailable_for: Duration::from_secs(60),
            partition_breaker: BreakerConfig::default(),
            defaults: OperationOptions::default(),
        }
    }

    /// Preferred regions, most preferred first (filtered by what the account has).
    pub fn with_preferred_regions<I, R>(mut self, regions: I) -> Self
    where
        I: IntoIterator<Item = R>,
        R: Into<Region>,
    {
        self.defaults.application_preferred_regions =
            Some(regions.into_iter().map(Into::into).collect());
        self
    }
    /// Timeout of one HTTP attempt.
    pub fn with_request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = Some(timeout);
        self
    }
    /// The client-level availability strategy (hedging).
    pub fn with_availability_strategy(mut self, strategy: AvailabilityStrategy) -> Self {
        self.defaults.availability_strategy = Some(strategy);
        self
    }
    /// The client-level hedging master switch.
    pub fn with_hedging_enabled(mut self, enabled: bool) -> Self {
        self.defaults.hedging_enabled = Some(enabled);
        self
    }
    /// The client-level consecutive alternate-region wins before a partition is marked unhealthy
    /// in its primary region (an operation's own value wins; default 5, or
    /// `AZURE_COSMOS_CONSECUTIVE_HEDGE_WIN_THRESHOLD`).
    pub fn with_consecutive_hedge_win_threshold(mut self, threshold: NonZeroU32) -> Self {
        self.defaults.consecutive_hedge_win_threshold = Some(threshold);
        self
    }
    /// Connection pool settings.
    pub fn with_connection_pool(mut self, pool: ConnectionPoolOptions) -> Self {
        self.connection_pool = pool;
        self
    }
    /// The consistency level requested on every operation that sets none.
    pub fn with_default_consistency(mut self, level: ConsistencyLevel) -> Self {
        self.defaults.consistency_level = Some(level);
        self
    }
    /// An extra PEM certificate to trust (an emulator's self-signed certificate).
    pub fn with_extra_trusted_cert_pem(mut self, pem: impl Into<Vec<u8>>) -> Self {
        self.extra_trusted_cert_pem = Some(pem.into());
        self
    }
    /// Allows plain http to non-loopback hosts (never for production accounts).
    pub fn with_allow_insecure_http(mut self, allow: bool) -> Self {
        self.allow_insecure_http = allow;
        self
    }
    /// How often account metadata is re-read in the background.
    pub fn with_account_refresh_interval(mut self, interval: Duration) -> Self {
        self.account_refresh_interval = interval;
        self
    }
    /// How long an endpoint stays marked unavailable after a failure.
    pub fn with_endpoint_unavailable_for(mut self, ttl: Duration) -> Self {
        self.endpoint_unavailable_for = ttl;
        self
    }
    /// How long the partition circuit breaker keeps a partition marked unhealthy in a region (after
    /// consecutive failures there, or consecutive alternate-region hedge wins over it) before
    /// probing it: when the period ends, reads of the partition go to that region again; a
    /// successful answer there clears the mark, while another failure or an alternate win over it
    /// marks it again at once. Default 60 s.
    pub fn with_partition_unhealthy_for(mut self, period: Duration) -> Self {
        self.partition_breaker.unhealthy_for = period;
        self
    }
    /// Client-level defaults of every operation option (replaces earlier `with_*` defaults).
    pub fn with_operation_defaults(mut self, defaults: OperationOptions) -> Self {
        self.defaults = defaults;
        self
    }

    /// The account endpoint as given.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }
    /// The credential.
    pub fn credential(&self) -> &Credential {
        &self.credential
    }
    /// The configured per-attempt timeout, if any.
    pub fn request_timeout(&self) -> Option<Duration> {
        self.request_timeout
    }
    /// The per-attempt timeout in force.
    pub fn effective_request_timeout(&self) -> Duration {
        self.request_timeout
            .filter(|t| !t.is_zero())
            .unwrap_or(DEFAULT_REQUEST_TIMEOUT)
    }
    /// The preferred regions.
    pub fn preferred_regions(&self) -> &[Region] {
        self.defaults
            .application_preferred_regions
            .as_deref()
            .unwrap_or(&[])
    }
    /// The client-level availability strategy.
    pub fn availability_strategy(&self) -> Option<AvailabilityStrategy> {
        self.defaults.availability_strategy
    }
    /// The client-level hedging switch.
    pub fn hedging_enabled(&self) -> Option<bool> {
        self.defaults.hedging_enabled
    }
    /// The client-level hedge-win threshold, if any.
    pub fn consecutive_hedge_win_threshold(&self) -> Option<NonZeroU32> {
        self.defaults.consecutive_hedge_win_threshold
    }
    /// Connection pool settings.
    pub fn connection_pool(&self) -> ConnectionPoolOptions {
        self.connection_pool
    }
    /// The client-level default consistency.
    pub fn default_consistency(&self) -> Option<ConsistencyLevel> {
        self.defaults.consistency_level
    }
    /// The extra trusted certificate, if any.
    pub fn extra_trusted_cert_pem(&self) -> Option<&[u8]> {
        self.extra_trusted_cert_pem.as_deref()
    }
    /// Whether plain http to non-loopback hosts is allowed.
    pub fn allow_insecure_http(&self) -> bool {
        self.allow_insecure_http
    }
    /// The background account refresh interval.
    pub fn account_refresh_interval(&self) -> Duration {
        self.account_refresh_interval
    }
    /// How long an endpoint stays marked unavailable.
    pub fn endpoint_unavailable_for(&self) -> Duration {
        self.endpoint_unavailable_for
    }
    /// The partition circuit breaker's settings.
    pub fn partition_breaker(&self) -> BreakerConfig {
        self.partition_breaker
    }
    /// The client-level operation defaults.
    pub fn operation_defaults(&self) -> &OperationOptions {
        &self.defaults
    }
}

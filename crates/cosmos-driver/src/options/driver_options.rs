//! Client-level options: how to reach and authorize against one account, and the defaults of every
//! operation run through the driver.

use std::num::NonZeroU32;
use std::time::Duration;

use super::connection_pool::ConnectionPoolOptions;
use super::operation_options::OperationOptions;
use super::retry_options::{
    RetryOptions, DEFAULT_MAX_RESPONSE_BYTES, DEFAULT_READ_ATTEMPT_TIMEOUT,
};
use crate::auth::Credential;
use crate::error::CosmosError;
use crate::hedging::{AvailabilityStrategy, HedgeBudgetConfig};
use crate::protocol::{ConsistencyLevel, Region};
use crate::routing::BreakerConfig;

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
    hedge_budget: Option<HedgeBudgetConfig>,
    retry: RetryOptions,
    read_attempt_timeout: Option<Duration>,
    max_response_bytes: usize,
    regional_endpoints: Vec<String>,
    #[cfg(feature = "otel")]
    telemetry: Option<std::sync::Arc<crate::diagnostics::otel::Telemetry>>,
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
            hedge_budget: None,
            retry: RetryOptions::default(),
            read_attempt_timeout: None,
            max_response_bytes: DEFAULT_MAX_RESPONSE_BYTES,
            regional_endpoints: Vec::new(),
            #[cfg(feature = "otel")]
            telemetry: None,
        }
    }

    /// Options for the account a connection string names, signed with its key:
    /// `AccountEndpoint=https://{account}.documents.azure.com:443/;AccountKey={key};` (read as
    /// the official SDKs read it: names in any case and order, the trailing `;` optional, other
    /// names ignored). The error never repeats the key.
    pub fn from_connection_string(connection_string: &str) -> Result<Self, CosmosError> {
        let parsed = super::connection_string::parse(connection_string)?;
        let credential = Credential::master_key(&parsed.account_key)?;
        Ok(Self::new(parsed.endpoint, credential))
    }

    /// Bounds hedging with a budget (a token bucket of the driver, see
    /// [`HedgeBudgetConfig`]): a read whose threshold passes when the budget is spent
    /// waits on its primary alone, and its `HedgeDiagnostics` say so. Without it (the default)
    /// every read whose threshold passes is hedged.
    pub fn with_hedge_budget(mut self, budget: HedgeBudgetConfig) -> Self {
        self.hedge_budget = Some(budget);
        self
    }

    /// The retry budget of every operation (default [`RetryOptions::default`]).
    pub fn with_retry_options(mut self, retry: RetryOptions) -> Self {
        self.retry = retry;
        self
    }

    /// The retry budget.
    pub fn retry_options(&self) -> RetryOptions {
        self.retry
    }

    /// The timeout of one read attempt (default [`DEFAULT_READ_ATTEMPT_TIMEOUT`], never longer than
    /// the request timeout): a read whose region stops answering gives up on that attempt, marks the
    /// region for later requests and tries the next region. Writes keep the request timeout (by
    /// default the service's 65 s), since a write retried elsewhere could apply twice.
    pub fn with_read_attempt_timeout(mut self, timeout: Duration) -> Self {
        self.read_attempt_timeout = Some(timeout);
        self
    }

    /// The per-attempt timeout of reads in force.
    pub fn effective_read_attempt_timeout(&self) -> Duration {
        self.read_attempt_timeout
            .filter(|t| !t.is_zero())
            .unwrap_or(DEFAULT_READ_ATTEMPT_TIMEOUT)
            .min(self.effective_request_timeout())
    }

    /// The largest response body accepted (default [`DEFAULT_MAX_RESPONSE_BYTES`]); a larger one
    /// ends the operation with an error that says so.
    pub fn with_max_response_bytes(mut self, bytes: usize) -> Self {
        self.max_response_bytes = bytes.max(1);
        self
    }

    /// The largest response body accepted.
    pub fn max_response_bytes(&self) -> usize {
        self.max_response_bytes
    }

    /// Regional endpoints of the account (`https://{account}-{region}.documents.azure.com:443/`),
    /// tried in order when the global endpoint cannot be read at start; the first that answers
    /// gives the account metadata. Usually the preferred regions' endpoints.
    pub fn with_regional_endpoints<I, S>(mut self, endpoints: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.regional_endpoints = endpoints.into_iter().map(Into::into).collect();
        self
    }

    /// The regional endpoints tried when the global endpoint cannot be read.
    pub fn regional_endpoints(&self) -> &[String] {
        &self.regional_endpoints
    }

    /// The hedge budget, if any.
    pub fn hedge_budget(&self) -> Option<HedgeBudgetConfig> {
        self.hedge_budget
    }

    /// Where the driver's OpenTelemetry metrics and spans go (feature `otel`); by default the
    /// global meter and tracer providers.
    #[cfg(feature = "otel")]
    pub fn with_telemetry(mut self, telemetry: crate::diagnostics::otel::Telemetry) -> Self {
        self.telemetry = Some(std::sync::Arc::new(telemetry));
        self
    }

    /// The telemetry the driver records to (feature `otel`).
    #[cfg(feature = "otel")]
    pub fn telemetry(&self) -> std::sync::Arc<crate::diagnostics::otel::Telemetry> {
        self.telemetry
            .clone()
            .unwrap_or_else(|| std::sync::Arc::new(crate::diagnostics::otel::Telemetry::global()))
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

    /// How long the partition circuit breaker keeps a partition marked unhealthy in a region after
    /// consecutive alternate-region hedge wins over it, before reads probe it again (by default as
    /// long as [`Self::with_partition_unhealthy_for`]). A slow region's probe is hedged, so a short
    /// period (a few seconds) brings reads back soon after the region recovers.
    pub fn with_hedge_win_unhealthy_for(mut self, period: Duration) -> Self {
        self.partition_breaker.hedge_win_unhealthy_for = Some(period);
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

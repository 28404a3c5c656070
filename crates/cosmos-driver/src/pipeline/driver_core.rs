//! The shared internals of one driver: everything an operation needs, built once.

use super::retry::RetryLimits;
use crate::hedging::{HedgeBudget, HedgingEnv, RegionLatencies};
use crate::options::{ClientLayer, DriverOptions};
use crate::routing::{AccountCache, ContainerMetadata, EndpointHealth, PartitionBreaker};
use crate::session::SessionContainer;
use crate::transport::Transport;

/// One driver's state, shared (behind an `Arc`) by every clone of the driver and every operation.
#[derive(Debug)]
pub(crate) struct DriverCore {
    /// The options the driver was built from (the client layer of every operation's options).
    pub options: DriverOptions,
    /// The client layer of every operation's options as it stands now (the regions may change
    /// while the driver runs); an operation resolves over the snapshot it takes when it starts.
    pub client_layer: ClientLayer,
    /// The hedging environment variables, read once at build.
    pub hedging_env: HedgingEnv,
    /// Sends attempts.
    pub transport: Transport,
    /// Account metadata.
    pub account: AccountCache,
    /// Endpoint health marks.
    pub health: EndpointHealth,
    /// The partition circuit breaker.
    pub breaker: PartitionBreaker,
    /// Session tokens per container.
    pub sessions: SessionContainer,
    /// The retry budget.
    pub limits: RetryLimits,
    /// What is known of each container's metadata (partition key paths).
    pub containers: ContainerMetadata,
    /// Recent latencies of each primary region, for adaptive hedge thresholds.
    pub latencies: RegionLatencies,
    /// Whether the account serves the PATCH verb (`PatchStrategy::Auto`).
    pub native_patch: super::NativePatchSupport,
    /// The conditional Replaces of running PATCH calls, to tell their lost answers apart.
    pub conditional_writes: super::ConditionalWrites,
    /// The hedge budget, when the options set one.
    pub hedge_budget: Option<HedgeBudget>,
    /// Where metrics and spans go.
    #[cfg(feature = "otel")]
    pub telemetry: std::sync::Arc<crate::diagnostics::otel::Telemetry>,
}

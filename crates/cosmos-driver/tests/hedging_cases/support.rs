//! Shared setup of the hedging tests: an emulator, a driver with preferred regions and a hedging
//! strategy, one container with one item, and readable summaries of what happened.

use std::time::Duration;

use cosmos_driver::hedging::{AvailabilityStrategy, HedgeThreshold, HedgingStrategy};
use cosmos_driver::protocol::Endpoint;
use cosmos_driver::{
    AttemptReason, ContainerReference, CosmosDriver, DiagnosticsContext, DriverOptions,
};
use cosmos_emulator::faults::{FaultRule, OpKind, Reaction};
use cosmos_emulator::{Emulator, EmulatorBuilder};

use crate::common;

pub const EAST: &str = "East US";
pub const WEST: &str = "West US";
pub const NORTH: &str = "North Europe";

/// An emulator, a driver for it and container `db/c` holding item `a` (partition key `p`).
pub struct Setup {
    pub emu: Emulator,
    pub driver: CosmosDriver,
    pub c: ContainerReference,
}

impl Setup {
    /// Starts `builder`, builds a driver from the default options adjusted by `options`, and seeds
    /// the container.
    pub async fn start(
        builder: EmulatorBuilder,
        options: impl FnOnce(DriverOptions) -> DriverOptions,
    ) -> Setup {
        let emu = common::start(builder).await;
        let driver = common::driver(options(common::options(&emu))).await;
        let c = common::container(&driver, "db", "c").await;
        common::create_item(&driver, &c, "a", "p", 1).await;
        Setup { emu, driver, c }
    }

    /// Three regions (East US takes writes), reads preferring them in that order, hedging after
    /// `threshold_ms`.
    pub async fn three_regions(threshold_ms: u64) -> Setup {
        Setup::start(EmulatorBuilder::new(), |o| {
            o.with_preferred_regions([EAST, WEST, NORTH])
                .with_availability_strategy(hedging(threshold_ms))
        })
        .await
    }

    /// Two regions (East US takes writes), reads preferring East then West, hedging after
    /// `threshold_ms`: the alternate has no region beyond it, so it retries in place where the
    /// read without hedging would in its last region.
    pub async fn two_regions(threshold_ms: u64) -> Setup {
        Setup::start(EmulatorBuilder::new().regions([EAST, WEST]), |o| {
            o.with_preferred_regions([EAST, WEST])
                .with_availability_strategy(hedging(threshold_ms))
        })
        .await
    }

    /// Reads of `region` so far.
    pub fn reads(&self, region: &str) -> u64 {
        self.emu.counters().get(region, OpKind::Read)
    }

    /// The endpoint the driver uses for `region`.
    pub fn endpoint(&self, region: &str) -> Endpoint {
        let account = self.driver.account();
        let found = account
            .read_regions
            .iter()
            .find(|r| r.region.as_str() == region);
        found
            .map(|r| r.endpoint.clone())
            .expect("the account has the region")
    }

    /// Whether the driver holds `region`'s endpoint unavailable for reads now.
    pub fn marked_unavailable(&self, region: &str) -> bool {
        let now = tokio::time::Instant::now();
        self.driver.endpoint_health().is_unavailable(
            &self.endpoint(region),
            cosmos_driver::AccessScope::Read,
            now,
        )
    }
}

/// Hedging after `ms` milliseconds.
pub fn hedging(ms: u64) -> AvailabilityStrategy {
    AvailabilityStrategy::Hedging(HedgingStrategy::new(
        HedgeThreshold::new(Duration::from_millis(ms)).expect("non-zero"),
    ))
}

/// Reads in `region` wait `ms` before they are served.
pub fn slow_reads(region: &str, ms: u64) -> FaultRule {
    FaultRule::new(Reaction::delay_ms(ms))
        .in_regions([region])
        .for_ops([OpKind::Read])
}

/// Reads in `region` get `reaction`.
pub fn reads_in(region: &str, reaction: Reaction) -> FaultRule {
    FaultRule::new(reaction)
        .in_regions([region])
        .for_ops([OpKind::Read])
}

/// One attempt as `(region, reason, outcome)`, the outcome being the status code or why none came.
pub type Row = (String, AttemptReason, String);

/// The attempts of an operation, in the order they were sent.
pub fn rows(d: &DiagnosticsContext) -> Vec<Row> {
    d.requests()
        .iter()
        .map(|r| {
            let outcome = match (r.status(), r.failure()) {
                (Some(s), _) if s.sub_status != 0 => format!("{}/{}", s.status, s.sub_status),
                (Some(s), _) => s.status.to_string(),
                (None, Some(why)) => why.to_string(),
                (None, None) => "?".to_string(),
            };
            (
                r.region().map(|g| g.to_string()).unwrap_or_default(),
                r.reason(),
                outcome,
            )
        })
        .collect()
}

/// A row.
pub fn row(region: &str, reason: AttemptReason, outcome: &str) -> Row {
    (region.to_string(), reason, outcome.to_string())
}

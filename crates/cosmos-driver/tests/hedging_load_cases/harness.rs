//! One differential run: a layout, a kind of read, a fault schedule; the read once unhedged and
//! once hedged, each on a fresh emulator; what each sent, how long it took, what it answered.

use std::time::{Duration, Instant};

use cosmos_driver::change_feed::{ChangeFeedStart, FeedScope};
use cosmos_driver::hedging::{AvailabilityStrategy, HedgeThreshold, HedgingStrategy};
use cosmos_driver::query::{Query, QueryScope};
use cosmos_driver::{
    ContainerClient, ContainerReference, CosmosDriver, CosmosError, CosmosOperation,
    OperationOptions, PartitionKey,
};
use cosmos_emulator::faults::{FaultRule, OpKind, OutageMode, Reaction};
use cosmos_emulator::{Emulator, EmulatorBuilder};
use futures::TryStreamExt;
use serde_json::Value;

use crate::common;

pub const EAST: &str = "East US";
pub const WEST: &str = "West US";
pub const NORTH: &str = "North Europe";
/// The read prefers West US (the primary), then North Europe (the alternate); East US is the hub.
pub const PREFERRED: [&str; 3] = [WEST, NORTH, EAST];
pub const THRESHOLD: Duration = Duration::from_millis(40);
/// What a busy 2-core machine may add to a run's time beyond the bound.
pub const ALLOWANCE: Duration = Duration::from_millis(750);
/// Items `i0`..`i7`, partition keys `p0`..`p3`, over two partition key ranges.
const ITEMS: usize = 8;

/// The kinds of read the driver hedges.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    PointRead,
    /// A query within one partition key: pages sent with the key.
    QueryPage,
    /// A query over every range: plan, range listing, one page per range (pinned to its id).
    CrossPartitionQuery,
    /// The change feed of the whole container: one page per range (pinned to its id).
    ChangeFeedPage,
    ReadMany,
    /// A read of the container's properties.
    MetadataRead,
}

pub const KINDS: [Kind; 6] = [
    Kind::PointRead,
    Kind::QueryPage,
    Kind::CrossPartitionQuery,
    Kind::ChangeFeedPage,
    Kind::ReadMany,
    Kind::MetadataRead,
];

impl Kind {
    /// The emulator's operation kinds this read sends.
    pub fn ops(self) -> Vec<OpKind> {
        match self {
            Kind::PointRead => vec![OpKind::Read],
            Kind::QueryPage | Kind::CrossPartitionQuery => vec![OpKind::Query],
            Kind::ChangeFeedPage => vec![OpKind::ReadFeed],
            // One range holds one item of the set (a point read), the other several (a query).
            Kind::ReadMany => vec![OpKind::Read, OpKind::Query],
            Kind::MetadataRead => vec![OpKind::Metadata],
        }
    }
}

/// Where a fault rule fires and what it does: the read's requests in `regions` (empty:
/// everywhere) get `reaction`, only the first `first` of them when set.
#[derive(Clone, Debug)]
pub struct Spec {
    pub regions: Vec<&'static str>,
    pub reaction: Reaction,
    pub first: Option<u64>,
}

/// One fault a region or the account can show.
#[derive(Clone, Debug)]
pub enum Fault {
    /// Fault rules, the first matching one firing.
    Rules(Vec<Spec>),
    /// Range `0` splits after the driver has learnt the ranges: requests naming it are refused
    /// 410/1002 in every region.
    Split,
    /// Every region refuses connections.
    AllRefuse,
    /// Range `0` splits, and the rules fire too.
    SplitAnd(Vec<Spec>),
}

impl Fault {
    pub fn everywhere(reaction: Reaction) -> Fault {
        Fault::Rules(vec![Spec {
            regions: Vec::new(),
            reaction,
            first: None,
        }])
    }

    pub fn in_region(region: &'static str, reaction: Reaction) -> Fault {
        Fault::in_regions(&[region], reaction)
    }

    pub fn in_regions(regions: &[&'static str], reaction: Reaction) -> Fault {
        Fault::Rules(vec![Spec {
            regions: regions.to_vec(),
            reaction,
            first: None,
        }])
    }

    /// The first `n` of the read's requests, wherever sent, get `reaction`.
    pub fn first(n: u64, reaction: Reaction) -> Fault {
        Fault::Rules(vec![Spec {
            regions: Vec::new(),
            reaction,
            first: Some(n),
        }])
    }
}

/// What one run of the read did.
#[derive(Debug)]
pub struct Run {
    /// Requests the emulator saw during the read, every region and kind (range listings and
    /// account reads included).
    pub requests: u64,
    /// The same requests by region and kind, for the message when an invariant breaks (read
    /// only through `Debug`).
    #[allow(dead_code)]
    pub by_region: serde_json::Value,
    pub elapsed: Duration,
    /// The ids the read returned, in order, or the status (or kind) it failed with.
    pub outcome: Result<Vec<String>, String>,
}

fn driver_options(emu: &Emulator, hedged: bool) -> cosmos_driver::DriverOptions {
    let strategy = if hedged {
        AvailabilityStrategy::Hedging(HedgingStrategy::new(
            HedgeThreshold::new(THRESHOLD).expect("non-zero"),
        ))
    } else {
        AvailabilityStrategy::Disabled
    };
    common::options(emu)
        .with_preferred_regions(PREFERRED)
        .with_availability_strategy(strategy)
        // Short enough that a stalled region costs a test run a second, not the default 5 s.
        .with_read_attempt_timeout(Duration::from_millis(600))
        .with_request_timeout(Duration::from_millis(1200))
}

async fn seed(driver: &CosmosDriver) -> ContainerReference {
    let c = common::container(driver, "db", "c").await;
    for i in 0..ITEMS {
        common::create_item(
            driver,
            &c,
            &format!("i{i}"),
            &format!("p{}", i % 4),
            i as i64,
        )
        .await;
    }
    c
}

fn ids(docs: Vec<Value>) -> Vec<String> {
    docs.iter()
        .map(|d| d["id"].as_str().unwrap_or("?").to_owned())
        .collect()
}

fn failure(e: &CosmosError) -> String {
    match e.cosmos_status() {
        Some(s) => format!("{}/{}", s.status, s.sub_status),
        None => format!("{:?}", e.kind()),
    }
}

/// Runs `kind` once.
pub async fn read(
    kind: Kind,
    driver: &CosmosDriver,
    client: &ContainerClient,
    c: &ContainerReference,
) -> Result<Vec<String>, CosmosError> {
    read_with(kind, driver, client, c, &OperationOptions::new()).await
}

/// Runs `kind` once, the driver's operations with `o` (`client` carries its own options).
async fn read_with(
    kind: Kind,
    driver: &CosmosDriver,
    client: &ContainerClient,
    c: &ContainerReference,
    o: &OperationOptions,
) -> Result<Vec<String>, CosmosError> {
    match kind {
        Kind::PointRead => {
            let r = driver.execute(common::read(c, "i0", "p0"), o).await?;
            Ok(ids(vec![r.json::<Value>()?]))
        }
        Kind::QueryPage => {
            let q = Query::new("SELECT c.id FROM c ORDER BY c.id");
            let scope = QueryScope::PartitionKey(PartitionKey::from("p1"));
            let docs: Vec<Value> = client.query_items(q, scope).try_collect().await?;
            Ok(ids(docs))
        }
        Kind::CrossPartitionQuery => {
            let q = Query::new("SELECT c.id FROM c ORDER BY c.id");
            let docs: Vec<Value> = client
                .query_items(q, QueryScope::CrossPartition)
                .try_collect()
                .await?;
            Ok(ids(docs))
        }
        Kind::ChangeFeedPage => {
            let mut feed =
                client.change_feed::<Value>(ChangeFeedStart::Beginning, FeedScope::Container);
            let mut all = Vec::new();
            // Every range once: a page per range until the feed is caught up.
            for _ in 0..8 {
                let page = feed.next_page().await?;
                let caught_up = page.is_caught_up();
                all.extend(ids(page.into_items()));
                if caught_up {
                    break;
                }
            }
            all.sort();
            Ok(all)
        }
        Kind::ReadMany => {
            let wanted: Vec<(PartitionKey, String)> = (0..ITEMS)
                .step_by(2)
                .map(|i| (PartitionKey::from(format!("p{}", i % 4)), format!("i{i}")))
                .collect();
            let r = client.read_many::<Value>(&wanted).await?;
            Ok(ids(r.into_items()))
        }
        Kind::MetadataRead => {
            let r = driver
                .execute(CosmosOperation::read_container(c.clone()), o)
                .await?;
            Ok(ids(vec![r.json::<Value>()?]))
        }
    }
}

fn install(emu: &Emulator, kind: Kind, fault: &Fault) -> Vec<cosmos_emulator::faults::FaultGuard> {
    match fault {
        Fault::SplitAnd(specs) => {
            emu.split("db", "c", "0").expect("range 0 splits");
            install(emu, kind, &Fault::Rules(specs.clone()))
        }
        Fault::Rules(specs) => specs
            .iter()
            .map(|spec| {
                let mut rule = FaultRule::new(spec.reaction.clone()).for_ops(kind.ops());
                if !spec.regions.is_empty() {
                    rule = rule.in_regions(spec.regions.iter().copied());
                }
                if let Some(n) = spec.first {
                    rule = rule.first(n);
                }
                emu.faults().add(rule)
            })
            .collect(),
        Fault::Split => {
            emu.split("db", "c", "0").expect("range 0 splits");
            Vec::new()
        }
        Fault::AllRefuse => {
            for region in [EAST, WEST, NORTH] {
                emu.outages()
                    .start(region, OutageMode::Refuse)
                    .expect("the region exists");
            }
            Vec::new()
        }
    }
}

/// A fresh emulator, a driver (hedged or not) and the seeded container.
async fn setup(hedged: bool) -> (Emulator, CosmosDriver, ContainerReference) {
    let emu = common::start(
        EmulatorBuilder::new()
            .regions([EAST, WEST, NORTH])
            .partitions(2),
    )
    .await;
    let driver = common::driver(driver_options(&emu, hedged)).await;
    let c = seed(&driver).await;
    (emu, driver, c)
}

/// Warms what every later read reuses (container metadata, the range map), as an application's
/// earlier reads would have: the fault meets a read in the middle of an application's life. The
/// warm-up read is never hedged: an alternate it sent and then dropped (its primary answered
/// first) may still reach the emulator after the counters are reset, and would be counted as a
/// request of the measured read.
async fn warm_up(kind: Kind, driver: &CosmosDriver, c: &ContainerReference) {
    let options =
        OperationOptions::new().with_availability_strategy(AvailabilityStrategy::Disabled);
    let client = driver.container("db", "c").with_options(options.clone());
    read_with(kind, driver, &client, c, &options)
        .await
        .expect("the read succeeds before any fault");
}

/// The requests per region (hub, primary, alternate) a warm-up read of `kind` sends on a hedged
/// driver while `fault` holds.
pub async fn warm_up_requests(kind: Kind, fault: &Fault) -> [u64; 3] {
    let (emu, driver, c) = setup(true).await;
    let _guards = install(&emu, kind, fault);
    emu.counters().reset();
    warm_up(kind, &driver, &c).await;
    [EAST, WEST, NORTH].map(|r| emu.counters().region_total(r))
}

/// One run of `kind` under `fault`, hedged or not, on a fresh emulator.
pub async fn run(kind: Kind, fault: &Fault, hedged: bool) -> Run {
    let (emu, driver, c) = setup(hedged).await;
    let client = driver.container("db", "c");
    warm_up(kind, &driver, &c).await;
    let _guards = install(&emu, kind, fault);
    emu.counters().reset();
    let started = Instant::now();
    let outcome = read(kind, &driver, &client, &c).await;
    let elapsed = started.elapsed();
    let requests = [EAST, WEST, NORTH]
        .iter()
        .map(|r| emu.counters().region_total(r))
        .sum();
    Run {
        requests,
        by_region: emu.counters().snapshot(),
        elapsed,
        outcome: outcome.map_err(|e| failure(&e)),
    }
}

/// Both runs of (`kind`, `fault`) and the three invariants; the message names what broke.
pub async fn check(kind: Kind, fault: Fault) -> (Run, Run) {
    let off = run(kind, &fault, false).await;
    let on = run(kind, &fault, true).await;
    let what = format!("{kind:?} under {fault:?}: without hedging {off:?}, with hedging {on:?}");
    assert!(
        on.requests <= 2 * off.requests + 1,
        "hedging multiplied the load: {what}"
    );
    assert!(
        on.elapsed <= off.elapsed + THRESHOLD + ALLOWANCE,
        "hedging took longer than the threshold allows: {what}"
    );
    if let Ok(result) = &off.outcome {
        assert_eq!(
            on.outcome.as_ref(),
            Ok(result),
            "a read that succeeds without hedging must succeed with it, the same: {what}"
        );
    }
    (off, on)
}

//! Production routing of a hedged read: eligibility and the alternate as `hedge_plan::plan` computes
//! them over a real operation context (§5.1: the applicable *preferred* regions), and a pinned leg
//! that stays in its region across an account refresh (§14.4).

use std::sync::Arc;
use std::time::Duration;

use cosmos_emulator::faults::{FaultRule, OpKind, Reaction};
use cosmos_emulator::{Emulator, EmulatorBuilder};
use tokio::time::Instant;

use super::context::OperationContext;
use super::hedge_plan;
use super::leg::{run_leg, LegParams};
use super::retry_state::RetryState;
use crate::auth::Credential;
use crate::diagnostics::{into_recorder, sink, ActivityId};
use crate::driver::CosmosDriver;
use crate::hedging::{AlternateRouting, AvailabilityStrategy, HedgeThreshold, HedgingStrategy};
use crate::operation::CosmosOperation;
use crate::options::EffectiveOptions;
use crate::options::{DriverOptions, OperationOptions};
use crate::protocol::Region;
use crate::protocol::{DatabaseReference, PartitionKeyDefinition};
use crate::routing::AccountSnapshot;

const EAST: &str = "East US";
const WEST: &str = "West US";
const NORTH: &str = "North Europe";

async fn driver(emu: &Emulator, preferred: &[&str]) -> CosmosDriver {
    let hedging = AvailabilityStrategy::Hedging(HedgingStrategy::new(
        HedgeThreshold::new(Duration::from_millis(100)).unwrap(),
    ));
    let options = DriverOptions::new(emu.endpoint(), Credential::master_key(emu.key()).unwrap())
        .with_preferred_regions(preferred.iter().copied())
        .with_availability_strategy(hedging);
    CosmosDriver::new(options).await.unwrap()
}

fn read_a() -> CosmosOperation {
    let item = DatabaseReference::new("db")
        .unwrap()
        .container("c")
        .unwrap()
        .item("a")
        .unwrap();
    CosmosOperation::read_item(item).with_partition_key("p")
}

fn context<'a>(
    driver: &'a CosmosDriver,
    op: &'a CosmosOperation,
    o: &'a OperationOptions,
) -> OperationContext<'a> {
    let core = driver.core();
    let effective = EffectiveOptions::resolve(
        o,
        core.options.operation_defaults(),
        core.options.request_timeout(),
    );
    OperationContext::new(core, op, effective, Instant::now()).unwrap()
}

#[tokio::test]
async fn the_hedge_needs_two_applicable_preferred_regions_and_goes_to_the_second() {
    // The account has East US, West US and North Europe.
    let emu = EmulatorBuilder::new().start().await.unwrap();
    // (preferred, excluded, expected (primary, alternate, applicable preferred) or no hedge)
    type Row<'a> = (
        &'a [&'a str],
        &'a [&'a str],
        Option<(&'a str, &'a str, usize)>,
    );
    let table: &[Row] = &[
        // One preferred region: the account's other regions never make the read eligible.
        (&[EAST], &[], None),
        (&[NORTH], &[], None),
        // A preferred region the account lacks does not count.
        (&["Mars", WEST], &[], None),
        // Excluding one of two preferred regions leaves one.
        (&[NORTH, EAST], &[EAST], None),
        (&[EAST, NORTH, WEST], &[NORTH, WEST], None),
        // The alternate is the second applicable preferred region, not the account's next one.
        (&[EAST, NORTH], &[], Some((EAST, NORTH, 2))),
        (&[WEST, NORTH], &[], Some((WEST, NORTH, 2))),
        (&[EAST, WEST, NORTH], &[], Some((EAST, WEST, 3))),
        (&[EAST, WEST, NORTH], &[WEST], Some((EAST, NORTH, 2))),
        (&["Mars", NORTH, EAST], &[], Some((NORTH, EAST, 2))),
    ];
    for (preferred, excluded, want) in table {
        let driver = driver(&emu, preferred).await;
        let op = read_a();
        let o = OperationOptions::new().with_excluded_regions(excluded.iter().copied());
        let ctx = context(&driver, &op, &o);
        let got = hedge_plan::plan(&ctx).map(|p| {
            (
                p.primary.region.to_string(),
                p.alternate.region.to_string(),
                p.applicable_regions,
            )
        });
        let want = want.map(|(p, a, n)| (p.to_string(), a.to_string(), n));
        assert_eq!(got, want, "preferred {preferred:?}, excluded {excluded:?}");
    }
}

#[tokio::test]
async fn a_pinned_leg_stays_in_its_region_across_an_account_refresh() {
    let emu = EmulatorBuilder::new().start().await.unwrap();
    let driver = driver(&emu, &[EAST, NORTH, WEST]).await;
    let o = OperationOptions::new();
    let db = DatabaseReference::new("db").unwrap();
    driver
        .execute(CosmosOperation::create_database(db.clone()), &o)
        .await
        .unwrap();
    let pk = PartitionKeyDefinition::new("/pk").unwrap();
    let c = db.container("c").unwrap();
    driver
        .execute(CosmosOperation::create_container(c, pk), &o)
        .await
        .unwrap();
    // Reads in East US, the hub, are refused with 403/3: a leg pinned there (so it may reach the
    // hub) refreshes the account metadata and follows the hub, which is still East US.
    let _refused = emu.faults().add(
        FaultRule::new(Reaction::respond(403, 3))
            .in_regions([EAST])
            .for_ops([OpKind::Read]),
    );

    let op = read_a();
    let mut ctx = context(&driver, &op, &o);
    // The operation started from a snapshot that did not have North Europe yet: the account
    // gains it by the refresh.
    let north = Region::new(NORTH);
    let mut properties = ctx.account.properties.clone();
    properties.read_regions.retain(|r| r.region != north);
    properties.write_regions.retain(|r| r.region != north);
    ctx.account = Arc::new(AccountSnapshot {
        properties,
        generation: ctx.account.generation,
    });
    let east = ctx
        .account
        .properties
        .read_regions
        .iter()
        .find(|r| r.region.as_str() == EAST)
        .unwrap();
    let pinned = AlternateRouting::pinned(
        east,
        ctx.options.excluded_regions,
        ctx.account.properties.all_regions(),
    );
    assert!(!pinned.excluded_regions.contains(&north));

    let diagnostics = sink(ActivityId::new(), ctx.started);
    let params = LegParams::hedge_alternate(
        &pinned.excluded_regions,
        false,
        None,
        RetryState::default(),
        &diagnostics,
    );
    let leg = run_leg(&ctx, params).await;
    let regions: Vec<String> = into_recorder(diagnostics)
        .rows()
        .iter()
        .map(|r| r.region().map(|r| r.to_string()).unwrap_or_default())
        .collect();
    assert!(
        regions.len() >= 2,
        "the leg retried after a refresh: {regions:?}"
    );
    assert!(
        regions.iter().all(|r| r == EAST),
        "the pinned leg left its region: {regions:?}"
    );
    assert_eq!(emu.counters().get(NORTH, OpKind::Read), 0);
    assert_eq!(
        leg.region.map(|r| r.region.to_string()).as_deref(),
        Some(EAST)
    );
}

/// The plan under account metadata whose kill switch reads `switch`: whether it hedges, and the
/// reasons of the `cosmos.hedge.disabled_for_operation` events it emitted.
fn plan_under_kill_switch(
    driver: &CosmosDriver,
    o: &OperationOptions,
    switch: Option<bool>,
) -> (bool, Vec<String>) {
    let op = read_a();
    let mut ctx = context(driver, &op, o);
    let mut properties = ctx.account.properties.clone();
    properties.disable_cross_regional_hedging = switch;
    ctx.account = Arc::new(AccountSnapshot {
        properties,
        generation: ctx.account.generation,
    });
    let (hedged, events) = crate::event_capture::capture_paused("cosmos.hedge", || async {
        hedge_plan::plan(&ctx).is_some()
    });
    let reasons = events
        .all("cosmos.hedge.disabled_for_operation")
        .iter()
        .map(|e| e.field("reason").unwrap_or_default().to_owned())
        .collect();
    (hedged, reasons)
}

#[test]
fn the_account_kill_switch_turns_the_plan_off_and_the_event_names_it() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (emu, driver) = runtime.block_on(async {
        let emu = EmulatorBuilder::new().start().await.unwrap();
        // The client has its own strategy (100 ms).
        let driver = driver(&emu, &[EAST, WEST]).await;
        (emu, driver)
    });
    let explicit =
        OperationOptions::new().with_availability_strategy(AvailabilityStrategy::Hedging(
            HedgingStrategy::new(HedgeThreshold::new(Duration::from_millis(50)).unwrap()),
        ));
    let on = OperationOptions::new().with_hedging_enabled(true);
    let none: Vec<String> = Vec::new();
    for (what, o) in [
        ("client strategy", OperationOptions::new()),
        ("operation strategy", explicit),
        ("operation switch on", on),
    ] {
        assert_eq!(
            plan_under_kill_switch(&driver, &o, Some(true)),
            (false, vec!["account_kill_switch".to_owned()]),
            "{what}"
        );
        for lifted in [Some(false), None] {
            assert_eq!(
                plan_under_kill_switch(&driver, &o, lifted),
                (true, none.clone()),
                "{what}, {lifted:?}"
            );
        }
    }
    runtime.block_on(async move {
        drop(driver);
        drop(emu);
    });
}

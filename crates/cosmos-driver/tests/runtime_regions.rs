//! Preferred and excluded regions changed on a running driver, over real HTTP against the embedded
//! multi-region emulator: the next operations follow the new lists (plain routing and the hedge's
//! alternate alike), while an operation already under way keeps the plan it started with.

use std::time::Duration;

use cosmos_driver::hedging::{AvailabilityStrategy, HedgeThreshold, HedgingStrategy};
use cosmos_driver::{CosmosDriver, OperationOptions, Region};
use cosmos_emulator::faults::{DelaySpec, FaultRule, OpKind, Reaction};
use cosmos_emulator::EmulatorBuilder;

use crate::common;

const EAST: &str = "East US";
const WEST: &str = "West US";
const NORTH: &str = "North Europe";

/// Where one read went: the regions of its attempts.
async fn read_regions(driver: &CosmosDriver, c: &cosmos_driver::ContainerReference) -> Vec<String> {
    let r = driver
        .execute(common::read(c, "a", "p"), &OperationOptions::new())
        .await
        .expect("the read is answered");
    common::regions_of(r.diagnostics())
}

fn slow_reads(region: &str, ms: u64) -> FaultRule {
    FaultRule::new(Reaction::delay_ms(ms))
        .in_regions([region])
        .for_ops([OpKind::Read])
}

fn names(regions: &[Region]) -> Vec<&str> {
    regions.iter().map(Region::as_str).collect()
}

/// One read in East US waits 600 ms, then answers 503: the read moves on to the next region of
/// its plan, after the test has changed the driver's regions.
fn slow_then_unavailable_once() -> FaultRule {
    FaultRule::new(Reaction::Respond {
        status: 503,
        sub_status: 0,
        retry_after_ms: None,
        delay: DelaySpec::Fixed { ms: 600.0 },
    })
    .in_regions([EAST])
    .for_ops([OpKind::Read])
    .first(1)
}

/// A driver (hedging off: the held read must not send a second leg elsewhere) over three regions
/// with `a/p` stored, and the one read that is in flight in East US when its regions change.
async fn setup(
    emu: &cosmos_emulator::Emulator,
) -> (CosmosDriver, cosmos_driver::ContainerReference) {
    let driver = common::driver(
        common::options(emu)
            .with_preferred_regions([EAST, WEST, NORTH])
            .with_hedging_enabled(false),
    )
    .await;
    let c = common::container(&driver, "db", "c").await;
    common::create_item(&driver, &c, "a", "p", 1).await;
    assert_eq!(read_regions(&driver, &c).await, [EAST]);
    (driver, c)
}

/// Waits until the held read has reached East US (the rule fired), at most 5 s.
async fn held_in_east(fault: &cosmos_emulator::faults::FaultGuard) {
    for _ in 0..500 {
        if fault.hits() > 0 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the read never reached East US");
}

fn spawn_read(
    driver: &CosmosDriver,
    c: &cosmos_driver::ContainerReference,
) -> tokio::task::JoinHandle<Vec<String>> {
    let (driver, c) = (driver.clone(), c.clone());
    tokio::spawn(async move { read_regions(&driver, &c).await })
}

#[tokio::test]
async fn new_preferred_regions_route_the_next_reads_while_a_read_in_flight_keeps_its_plan() {
    let emu = common::start(EmulatorBuilder::new()).await;
    let (driver, c) = setup(&emu).await;
    let fault = emu.faults().add(slow_then_unavailable_once());
    let in_flight = spawn_read(&driver, &c);
    // The read is held in East US when the preference changes.
    held_in_east(&fault).await;
    driver.set_preferred_regions([NORTH, EAST, WEST]);
    assert_eq!(names(&driver.preferred_regions()), [NORTH, EAST, WEST]);
    assert_eq!(
        names(driver.options().preferred_regions()),
        [EAST, WEST, NORTH],
        "the options stay what the driver was built from"
    );
    assert_eq!(read_regions(&driver, &c).await, [NORTH], "the next read");
    assert_eq!(
        in_flight.await.unwrap(),
        [EAST, WEST],
        "the read under way retried in the next region of the plan it started with"
    );
    assert_eq!(read_regions(&driver, &c).await, [NORTH]);

    driver.set_preferred_regions(Vec::<Region>::new());
    assert_eq!(
        read_regions(&driver, &c).await,
        [EAST],
        "no preference: the account's order"
    );
}

#[tokio::test]
async fn new_excluded_regions_apply_to_the_next_reads_and_an_operation_list_still_wins() {
    let emu = common::start(EmulatorBuilder::new()).await;
    let (driver, c) = setup(&emu).await;
    let fault = emu.faults().add(slow_then_unavailable_once());
    let in_flight = spawn_read(&driver, &c);
    held_in_east(&fault).await;
    driver.set_excluded_regions([EAST, WEST]);
    assert_eq!(names(&driver.excluded_regions()), [EAST, WEST]);
    assert_eq!(read_regions(&driver, &c).await, [NORTH], "the next read");
    assert_eq!(
        in_flight.await.unwrap(),
        [EAST, WEST],
        "the read under way kept the exclusions it started with (none)"
    );

    // An operation's own excluded regions replace the client's, as at construction.
    let own = OperationOptions::new().with_excluded_regions([NORTH]);
    let r = driver
        .execute(common::read(&c, "a", "p"), &own)
        .await
        .unwrap();
    assert_eq!(common::regions_of(r.diagnostics()), [EAST]);

    driver.set_excluded_regions([EAST]);
    assert_eq!(read_regions(&driver, &c).await, [WEST]);
    driver.set_excluded_regions(Vec::<Region>::new());
    assert_eq!(read_regions(&driver, &c).await, [EAST]);
}

#[tokio::test]
async fn the_hedge_alternate_follows_the_new_preferred_regions() {
    let emu = common::start(EmulatorBuilder::new()).await;
    let threshold = HedgeThreshold::new(Duration::from_millis(150)).unwrap();
    let driver = common::driver(
        common::options(&emu)
            .with_preferred_regions([EAST, WEST, NORTH])
            .with_availability_strategy(AvailabilityStrategy::Hedging(HedgingStrategy::new(
                threshold,
            ))),
    )
    .await;
    let c = common::container(&driver, "db", "c").await;
    common::create_item(&driver, &c, "a", "p", 1).await;
    let _slow = emu.faults().add(slow_reads(EAST, 1_500));
    let alternate = |r: &cosmos_driver::CosmosResponse| {
        r.diagnostics()
            .hedge()
            .and_then(|h| h.alternate_region().map(|r| r.as_str().to_owned()))
    };
    let r = driver
        .execute(common::read(&c, "a", "p"), &OperationOptions::new())
        .await
        .unwrap();
    assert_eq!(alternate(&r).as_deref(), Some(WEST));

    driver.set_preferred_regions([EAST, NORTH, WEST]);
    let r = driver
        .execute(common::read(&c, "a", "p"), &OperationOptions::new())
        .await
        .unwrap();
    assert_eq!(alternate(&r).as_deref(), Some(NORTH));
    assert_eq!(
        r.diagnostics().hedge().unwrap().primary_region().as_str(),
        EAST
    );
}

//! The hedging seam: two legs raced on one stack frame by `crate::hedging::race_hedged`, against
//! the embedded emulator. This pins the shape the hedging integration relies on (borrowed legs, a
//! shared diagnostics sink, a pinned alternate built after the threshold); the integration itself
//! lives at the dispatch point in `execute.rs`.

use std::time::Duration;

use cosmos_emulator::faults::{FaultRule, OpKind, Reaction};
use cosmos_emulator::EmulatorBuilder;
use tokio::time::Instant;

use super::context::OperationContext;
use super::leg::{run_leg, LegParams};
use super::leg_result::LegResult;
use super::retry::{location_effects, LocationEffects};
use super::retry_state::RetryState;
use crate::auth::Credential;
use crate::diagnostics::{into_recorder, sink, ActivityId, AttemptReason};
use crate::driver::CosmosDriver;
use crate::hedging::{
    race_hedged, select_alternate, AlternateRouting, HedgeTerminalState, HedgeThreshold,
    HubRegionLatch, RaceSetup,
};
use crate::operation::CosmosOperation;
use crate::options::EffectiveOptions;
use crate::options::{DriverOptions, OperationOptions};
use crate::protocol::{DatabaseReference, PartitionKeyDefinition};

#[tokio::test]
async fn two_legs_race_on_one_stack_frame() {
    let emu = EmulatorBuilder::new().start().await.unwrap();
    let options = DriverOptions::new(emu.endpoint(), Credential::master_key(emu.key()).unwrap())
        .with_preferred_regions(["East US", "West US", "North Europe"]);
    let driver = CosmosDriver::new(options).await.unwrap();
    let o = OperationOptions::new();
    let db = DatabaseReference::new("db").unwrap();
    driver
        .execute(CosmosOperation::create_database(db.clone()), &o)
        .await
        .unwrap();
    let c = db.container("c").unwrap();
    let pk = PartitionKeyDefinition::new("/pk").unwrap();
    driver
        .execute(CosmosOperation::create_container(c.clone(), pk), &o)
        .await
        .unwrap();
    let doc = serde_json::json!({"id": "a", "pk": "p"});
    driver
        .execute(
            CosmosOperation::create_item(c.clone())
                .with_partition_key("p")
                .with_json_body(&doc)
                .unwrap(),
            &o,
        )
        .await
        .unwrap();
    let _slow = emu.faults().add(
        FaultRule::new(Reaction::delay_ms(2_000))
            .in_regions(["East US"])
            .for_ops([OpKind::Read]),
    );

    let op = CosmosOperation::read_item(c.item("a").unwrap()).with_partition_key("p");
    let core = driver.core();
    let effective = EffectiveOptions::resolve(
        &o,
        core.options.operation_defaults(),
        core.options.request_timeout(),
    );
    let ctx = OperationContext::new(core, &op, effective, Instant::now()).unwrap();
    let diagnostics = sink(ActivityId::new(), ctx.started);
    let candidates = ctx.start_candidates();
    let primary = ctx.applicable_regions(&candidates).next().unwrap();
    let alternate = select_alternate(
        &primary.region,
        &primary.endpoint,
        ctx.applicable_regions(&candidates),
    )
    .unwrap();
    let latch = HubRegionLatch::new();
    let setup = RaceSetup {
        threshold: HedgeThreshold::new(Duration::from_millis(100)).unwrap(),
        deadline: ctx.deadline,
        primary_region: &primary.region,
        alternate_region: &alternate.region,
        applicable_regions: candidates.len(),
        hub_latch: Some(&latch),
    };
    let primary_leg = run_leg(
        &ctx,
        LegParams {
            hub_latch: Some(&latch),
            ..LegParams::plain(&ctx, &diagnostics)
        },
    );
    let race = race_hedged(setup, primary_leg, || async {
        let pinned = AlternateRouting::pinned(
            alternate,
            ctx.options.excluded_regions,
            ctx.account.properties.all_regions(),
        );
        let params = LegParams::hedge_alternate(
            &pinned.excluded_regions,
            false,
            Some(&latch),
            RetryState::default(),
            &diagnostics,
        );
        run_leg(&ctx, params).await
    })
    .await;

    assert_eq!(race.terminal_state, HedgeTerminalState::AlternateWon);
    let (_, winner) = race.output.unwrap();
    assert!(pinned_leg_location_effects(&ctx, &winner).partition_success);
    assert_eq!(winner.region.as_ref().unwrap().region.as_str(), "West US");
    let response = LegResult::finish(
        winner.end,
        into_recorder(diagnostics),
        Some(race.diagnostics),
    )
    .unwrap();
    let d = response.diagnostics();
    let rows: Vec<(String, AttemptReason, Option<&str>)> = d
        .requests()
        .iter()
        .map(|r| (r.region().unwrap().to_string(), r.reason(), r.failure()))
        .collect();
    assert_eq!(
        rows,
        [
            (
                "East US".to_string(),
                AttemptReason::FirstAttempt,
                Some("cancelled")
            ),
            ("West US".to_string(), AttemptReason::Hedge, None),
        ],
        "the loser's in-flight attempt is recorded as cancelled"
    );
    assert!(d.hedge().unwrap().was_hedge());
    assert_eq!(
        emu.counters().get("North Europe", OpKind::Read),
        0,
        "the alternate stays pinned"
    );
}

/// Every operation's future embeds a leg's, and every move of it copies the whole size: the leg
/// and the in-flight send stay small (measured, with headroom; a regression shows up here).
#[tokio::test]
async fn leg_futures_stay_small() {
    let emu = EmulatorBuilder::new().start().await.unwrap();
    let driver = CosmosDriver::new(DriverOptions::new(
        emu.endpoint(),
        Credential::master_key(emu.key()).unwrap(),
    ))
    .await
    .unwrap();
    let o = OperationOptions::new();
    let item = DatabaseReference::new("db")
        .unwrap()
        .container("c")
        .unwrap()
        .item("a")
        .unwrap();
    let op = CosmosOperation::read_item(item).with_partition_key("p");
    let core = driver.core();
    let effective = EffectiveOptions::resolve(
        &o,
        core.options.operation_defaults(),
        core.options.request_timeout(),
    );
    let ctx = OperationContext::new(core, &op, effective, Instant::now()).unwrap();
    let diagnostics = sink(ActivityId::new(), ctx.started);
    let leg = run_leg(&ctx, LegParams::plain(&ctx, &diagnostics));
    assert!(
        std::mem::size_of_val(&leg) <= 2048,
        "run_leg future: {} bytes",
        std::mem::size_of_val(&leg)
    );
    let account = core.account.snapshot();
    let request = crate::pipeline::attempt::build_attempt(
        &ctx,
        &account.properties.hub().endpoint,
        false,
        false,
    );
    let send = core.transport.send(&request, None, ctx.attempt_timeout());
    assert!(
        std::mem::size_of_val(&send) <= 512,
        "send future: {} bytes",
        std::mem::size_of_val(&send)
    );
}

/// The location effects of a pinned leg's last answer, recomputed for inspection (the leg has
/// already applied them to the shared routing state).
fn pinned_leg_location_effects(ctx: &OperationContext<'_>, leg: &LegResult) -> LocationEffects {
    match leg.cosmos_status() {
        Some(status) => location_effects(
            &ctx.facts(true, ctx.account.properties.multi_write),
            &crate::pipeline::attempt_outcome::AttemptOutcome::Response {
                status,
                retry_after: None,
            },
        ),
        None => LocationEffects::default(),
    }
}

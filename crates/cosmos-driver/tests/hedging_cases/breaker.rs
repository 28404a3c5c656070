//! Hedging and the partition circuit breaker: alternate wins count against the primary region, a
//! primary answer clears the count, enough wins move the partition's reads away from the primary.

use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::Duration;

use cosmos_driver::hedging::{HedgeTerminalState, HedgingEnv};
use cosmos_driver::{AttemptReason, CosmosDriver, OperationOptions, Region};
use cosmos_emulator::faults::Reaction;
use cosmos_emulator::EmulatorBuilder;
use tokio::time::Instant;

use super::support::{hedging, reads_in, row, rows, slow_reads, Setup, EAST, WEST};
use crate::common;

/// The container link and the partition key range id of item `a`, learned from a read.
async fn partition_of(s: &Setup) -> (Arc<str>, String) {
    let r = s
        .driver
        .execute(common::read(&s.c, "a", "p"), &OperationOptions::new())
        .await
        .unwrap();
    let range = r
        .partition_key_range_id()
        .expect("the emulator names the partition key range")
        .to_string();
    (Arc::from(s.c.link()), range)
}

#[tokio::test]
async fn hedging_with_ppcb_existing_failures() {
    let s = Setup::three_regions(150).await;
    let (link, range) = partition_of(&s).await;
    let breaker = s.driver.partition_breaker();
    let east = Region::new(EAST);
    for _ in 0..4 {
        assert!(
            !breaker.record_failure(&link, &range, &east, Instant::now()),
            "below the failure threshold"
        );
    }

    let slow = s.emu.faults().add(slow_reads(EAST, 1_500));
    let r = s
        .driver
        .execute(common::read(&s.c, "a", "p"), &OperationOptions::new())
        .await
        .unwrap();
    let h = r
        .diagnostics()
        .hedge()
        .expect("the partition's failures do not stop hedging");
    assert_eq!(h.terminal_state(), HedgeTerminalState::AlternateWon);
    assert_eq!(
        breaker.consecutive_hedge_wins(&link, &range, &east),
        1,
        "the alternate win is counted"
    );
    assert!(
        !breaker.is_unhealthy(&link, &range, &east, Instant::now()),
        "failures and hedge wins count apart"
    );
    drop(slow);

    // One more failure trips the breaker on its own count, hedging or not.
    let _down = s
        .emu
        .faults()
        .add(reads_in(EAST, Reaction::respond(503, 0)).first(1));
    let r = s
        .driver
        .execute(common::read(&s.c, "a", "p"), &OperationOptions::new())
        .await
        .unwrap();
    assert_eq!(
        rows(r.diagnostics()).first(),
        Some(&row(EAST, AttemptReason::FirstAttempt, "503"))
    );
    assert!(breaker.is_unhealthy(&link, &range, &east, Instant::now()));
}

#[tokio::test]
async fn hedging_failback_to_primary() {
    let s = Setup::three_regions(150).await;
    let (link, range) = partition_of(&s).await;
    let east = Region::new(EAST);
    let slow = s.emu.faults().add(slow_reads(EAST, 1_000).first(3));
    for n in 1..=3 {
        let r = s
            .driver
            .execute(common::read(&s.c, "a", "p"), &OperationOptions::new())
            .await
            .unwrap();
        assert!(
            r.diagnostics().hedge().unwrap().was_hedge(),
            "read {n} is hedged while East is slow"
        );
        assert_eq!(
            s.driver
                .partition_breaker()
                .consecutive_hedge_wins(&link, &range, &east),
            n
        );
    }
    assert_eq!(slow.hits(), 3);
    // East is fast again: a quick final answer from it, even a 404, clears the count.
    let missing = s
        .driver
        .execute(common::read(&s.c, "missing", "p"), &OperationOptions::new())
        .await
        .unwrap_err();
    assert!(missing.is_not_found());
    assert_eq!(
        missing.diagnostics().hedge().unwrap().terminal_state(),
        HedgeTerminalState::PrimaryWonPreThreshold
    );
    assert_eq!(
        s.driver
            .partition_breaker()
            .consecutive_hedge_wins(&link, &range, &east),
        0,
        "a 404 from the primary resets"
    );
    for n in 1..=2 {
        let _slow_again = s.emu.faults().add(slow_reads(EAST, 1_000).first(1));
        let r = s
            .driver
            .execute(common::read(&s.c, "a", "p"), &OperationOptions::new())
            .await
            .unwrap();
        assert!(r.diagnostics().hedge().unwrap().was_hedge());
        assert_eq!(
            s.driver
                .partition_breaker()
                .consecutive_hedge_wins(&link, &range, &east),
            n
        );
    }
    // Reads now complete in East: reads complete there before the threshold, and the count starts over.
    for _ in 0..2 {
        let started = Instant::now();
        let r = s
            .driver
            .execute(common::read(&s.c, "a", "p"), &OperationOptions::new())
            .await
            .unwrap();
        assert!(started.elapsed() < Duration::from_millis(500));
        let h = r.diagnostics().hedge().unwrap();
        assert_eq!(
            h.terminal_state(),
            HedgeTerminalState::PrimaryWonPreThreshold
        );
        assert_eq!(h.response_region().map(|r| r.as_str()), Some(EAST));
        assert_eq!(
            rows(r.diagnostics()),
            [row(EAST, AttemptReason::FirstAttempt, "200")]
        );
    }
    assert_eq!(
        s.driver
            .partition_breaker()
            .consecutive_hedge_wins(&link, &range, &east),
        0
    );
    assert!(!s
        .driver
        .partition_breaker()
        .is_unhealthy(&link, &range, &east, Instant::now()));
}

#[tokio::test]
async fn hedging_alternate_wins_trip_ppcb() {
    // The threshold from the option, then from the environment.
    let configurations: [(u32, Option<NonZeroU32>, HedgingEnv); 2] = [
        (3, NonZeroU32::new(3), HedgingEnv::default()),
        (
            2,
            None,
            HedgingEnv::from_lookup(|k| {
                (k == "AZURE_COSMOS_CONSECUTIVE_HEDGE_WIN_THRESHOLD").then(|| "2".into())
            }),
        ),
    ];
    for (wins, option, env) in configurations {
        let emu = common::start(EmulatorBuilder::new().regions([EAST, WEST])).await;
        let mut options = common::options(&emu)
            .with_preferred_regions([EAST, WEST])
            .with_availability_strategy(hedging(100));
        if let Some(n) = option {
            options = options.with_consecutive_hedge_win_threshold(n);
        }
        let driver = CosmosDriver::with_hedging_env(options, env).await.unwrap();
        let c = common::container(&driver, "db", "c").await;
        common::create_item(&driver, &c, "a", "p", 1).await;
        let s = Setup { emu, driver, c };
        let (link, range) = partition_of(&s).await;
        let east = Region::new(EAST);
        let breaker = s.driver.partition_breaker();
        let _slow = s.emu.faults().add(slow_reads(EAST, 800));

        for n in 1..=wins {
            let r = s
                .driver
                .execute(common::read(&s.c, "a", "p"), &OperationOptions::new())
                .await
                .unwrap();
            assert!(r.diagnostics().hedge().unwrap().was_hedge());
            assert_eq!(
                breaker.is_unhealthy(&link, &range, &east, Instant::now()),
                n == wins,
                "after win {n} of {wins}"
            );
        }

        // The partition is unhealthy in East: reads go straight to West, without a race.
        let east_reads = s.reads(EAST);
        for _ in 0..2 {
            let started = Instant::now();
            let r = s
                .driver
                .execute(common::read(&s.c, "a", "p"), &OperationOptions::new())
                .await
                .unwrap();
            assert!(started.elapsed() < Duration::from_millis(500));
            assert!(
                r.diagnostics().hedge().is_none(),
                "no usable alternate: the read is not hedged"
            );
            assert_eq!(
                rows(r.diagnostics()),
                [row(WEST, AttemptReason::FirstAttempt, "200")]
            );
        }
        assert_eq!(
            s.reads(EAST),
            east_reads,
            "East is left alone until the breaker probes it"
        );
    }
}

#[tokio::test]
async fn operation_hedge_win_threshold_wins_over_client_and_environment() {
    let emu = common::start(EmulatorBuilder::new().regions([EAST, WEST])).await;
    let options = common::options(&emu)
        .with_preferred_regions([EAST, WEST])
        .with_availability_strategy(hedging(100))
        .with_consecutive_hedge_win_threshold(NonZeroU32::new(4).unwrap());
    let env = HedgingEnv::from_lookup(|k| {
        (k == "AZURE_COSMOS_CONSECUTIVE_HEDGE_WIN_THRESHOLD").then(|| "3".into())
    });
    let driver = CosmosDriver::with_hedging_env(options, env).await.unwrap();
    let c = common::container(&driver, "db", "c").await;
    common::create_item(&driver, &c, "a", "p", 1).await;
    let s = Setup { emu, driver, c };
    let (link, range) = partition_of(&s).await;
    let east = Region::new(EAST);
    let breaker = s.driver.partition_breaker();
    let _slow = s.emu.faults().add(slow_reads(EAST, 800));

    let two =
        OperationOptions::new().with_consecutive_hedge_win_threshold(NonZeroU32::new(2).unwrap());
    for n in 1..=2 {
        let r = s
            .driver
            .execute(common::read(&s.c, "a", "p"), &two)
            .await
            .unwrap();
        assert!(r.diagnostics().hedge().unwrap().was_hedge());
        assert_eq!(
            breaker.is_unhealthy(&link, &range, &east, Instant::now()),
            n == 2,
            "after win {n}: the operation's threshold of 2 is in force"
        );
    }
}

#[tokio::test]
async fn alternate_wins_trip_the_breaker_until_a_probe_of_the_primary_answers_in_time() {
    let period = Duration::from_millis(500);
    let emu = common::start(EmulatorBuilder::new().regions([EAST, WEST])).await;
    let options = common::options(&emu)
        .with_preferred_regions([EAST, WEST])
        .with_availability_strategy(hedging(100))
        .with_consecutive_hedge_win_threshold(NonZeroU32::new(2).unwrap())
        .with_partition_unhealthy_for(period);
    let driver = CosmosDriver::new(options).await.unwrap();
    let c = common::container(&driver, "db", "c").await;
    common::create_item(&driver, &c, "a", "p", 1).await;
    let s = Setup { emu, driver, c };
    let (link, range) = partition_of(&s).await;
    let east = Region::new(EAST);
    let breaker = s.driver.partition_breaker();
    let none = OperationOptions::new();
    let read = || s.driver.execute(common::read(&s.c, "a", "p"), &none);
    let unhealthy = || breaker.is_unhealthy(&link, &range, &east, Instant::now());
    let slow = s.emu.faults().add(slow_reads(EAST, 1_000));

    // Two alternate wins in a row mark the partition unhealthy in East.
    for n in 1..=2 {
        let r = read().await.unwrap();
        let h = r.diagnostics().hedge().unwrap();
        assert_eq!(h.terminal_state(), HedgeTerminalState::AlternateWon);
        assert_eq!(unhealthy(), n == 2, "after win {n}");
    }
    let tripped = Instant::now();

    // Within the unhealthy period reads go straight to West: no race, East is left alone.
    let east_reads = s.reads(EAST);
    let r = read().await.unwrap();
    assert!(
        tripped.elapsed() < period,
        "the read ended within the unhealthy period ({:?})",
        tripped.elapsed()
    );
    assert!(r.diagnostics().hedge().is_none(), "not hedged");
    assert_eq!(
        rows(r.diagnostics()),
        [row(WEST, AttemptReason::FirstAttempt, "200")]
    );
    assert_eq!(s.reads(EAST), east_reads, "East is not asked");

    // The period over, East is probed: the read races from East again. East is still slow, the
    // alternate beats the probe, and that one win marks the partition unhealthy again at once.
    tokio::time::sleep_until(tripped + period + Duration::from_millis(50)).await;
    assert!(!unhealthy(), "probing");
    let r = read().await.unwrap();
    let h = r.diagnostics().hedge().unwrap();
    assert_eq!(h.primary_region().as_str(), EAST, "the probe went to East");
    assert_eq!(h.terminal_state(), HedgeTerminalState::AlternateWon);
    assert!(unhealthy(), "a probe the alternate beat marks East again");
    let retripped = Instant::now();
    let r = read().await.unwrap();
    assert!(retripped.elapsed() < period);
    assert_eq!(
        rows(r.diagnostics()),
        [row(WEST, AttemptReason::FirstAttempt, "200")]
    );

    // East is fast again: the next probe answers before the threshold and reads stay in East.
    drop(slow);
    tokio::time::sleep_until(retripped + period + Duration::from_millis(50)).await;
    for _ in 0..2 {
        let r = read().await.unwrap();
        let h = r.diagnostics().hedge().expect("hedging is back");
        assert_eq!(
            h.terminal_state(),
            HedgeTerminalState::PrimaryWonPreThreshold
        );
        assert_eq!(
            rows(r.diagnostics()),
            [row(EAST, AttemptReason::FirstAttempt, "200")]
        );
    }
    assert!(!unhealthy());
    assert_eq!(breaker.consecutive_hedge_wins(&link, &range, &east), 0);
    assert!(
        !breaker.is_active(),
        "the probe's answer cleared the partition"
    );
}

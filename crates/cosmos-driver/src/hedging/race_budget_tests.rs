//! The race with a hedge budget, under paused time with fake attempts: a spent budget keeps the
//! alternate from being built, and the diagnostics say so.

use std::sync::atomic::{AtomicUsize, Ordering};

use super::*;
use crate::hedging::HedgeBudgetConfig;

#[derive(Debug, Clone, PartialEq)]
struct Fake(Option<CosmosStatus>);

impl HedgeLegOutput for Fake {
    fn status(&self) -> Option<CosmosStatus> {
        self.0
    }
    fn partition_key_range_id(&self) -> Option<&str> {
        None
    }
    fn observed_session_unavailable(&self) -> bool {
        false
    }
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

async fn answer(after: Duration, status: u16, sub: u32) -> Fake {
    sleep(after).await;
    Fake(Some(CosmosStatus::new(status, sub)))
}

/// A budget holding `tokens` tokens that never earns more.
fn budget(tokens: u32) -> HedgeBudget {
    let b = HedgeBudget::new(HedgeBudgetConfig::new(0.0, 0, tokens.max(1)).unwrap());
    if tokens == 0 {
        assert!(b.try_acquire(Instant::now()));
    }
    b
}

/// (tokens, primary answer after ms and its status, alternate answer after ms,
///  terminal state, alternates built, elapsed ms, budget denied?)
type BudgetCase = (u32, u64, u16, u64, HedgeTerminalState, usize, u64, bool);

#[tokio::test(start_paused = true)]
async fn budget_table() {
    use HedgeTerminalState as S;
    let cases: &[BudgetCase] = &[
        // A token: the alternate is sent at the threshold and wins.
        (1, 500, 200, 20, S::AlternateWon, 1, 70, false),
        // No token: the primary runs alone and its answer is returned.
        (0, 500, 200, 20, S::BudgetDenied, 0, 500, true),
        // No token, but the primary answers before the threshold: the budget is never asked.
        (0, 10, 200, 20, S::PrimaryWonPreThreshold, 0, 10, false),
        // No token and the primary fails in a way another region may not: its error is returned.
        (0, 300, 404, 20, S::BudgetDenied, 0, 300, true),
        // No token and the primary ends transient (a 503): the alternate goes then, as a
        // failover, not a speculation.
        (0, 300, 503, 20, S::AlternateWon, 1, 320, true),
    ];
    let (east, west) = (Region::new("East US"), Region::new("West US"));
    for &(tokens, p_after, p_status, a_after, want, built, elapsed, denied) in cases {
        let b = budget(tokens);
        let setup = RaceSetup {
            threshold: HedgeThreshold::new(ms(50)).unwrap(),
            deadline: None,
            primary_region: &east,
            alternate_region: &west,
            applicable_regions: 2,
            hub_latch: None,
        };
        let alternates = AtomicUsize::new(0);
        let start = Instant::now();
        let race = race_hedged_within(setup, Some(&b), answer(ms(p_after), p_status, 0), || {
            alternates.fetch_add(1, Ordering::SeqCst);
            answer(ms(a_after), 200, 0)
        })
        .await;
        let case = format!("{tokens} tokens, primary {p_status} after {p_after} ms");
        assert_eq!(race.terminal_state, want, "{case}");
        assert_eq!(race.diagnostics.terminal_state(), want, "{case}");
        assert_eq!(alternates.load(Ordering::SeqCst), built, "{case}");
        assert_eq!(start.elapsed(), ms(elapsed), "{case}");
        assert_eq!(race.diagnostics.budget_denied(), denied, "{case}");
        if want == S::BudgetDenied {
            assert_eq!(race.diagnostics.alternate_region(), None, "{case}");
            assert_eq!(race.diagnostics.response_region(), Some(&east), "{case}");
            assert!(!race.diagnostics.was_hedge(), "{case}");
        }
    }
}

#[tokio::test(start_paused = true)]
async fn a_deadline_while_the_primary_runs_alone_cancels_it() {
    let (east, west) = (Region::new("East US"), Region::new("West US"));
    let b = budget(0);
    let setup = RaceSetup {
        threshold: HedgeThreshold::new(ms(50)).unwrap(),
        deadline: Some(Instant::now() + ms(200)),
        primary_region: &east,
        alternate_region: &west,
        applicable_regions: 2,
        hub_latch: None,
    };
    let race = race_hedged_within(setup, Some(&b), answer(ms(5_000), 200, 0), || {
        answer(ms(1), 200, 0)
    })
    .await;
    assert_eq!(
        race.terminal_state,
        HedgeTerminalState::DeadlineExceededPreThreshold
    );
    assert!(race.output.is_none());
    assert!(race.diagnostics.budget_denied());
    assert!(race.deadline_exceeded());
}

#[tokio::test(start_paused = true)]
async fn tokens_are_taken_only_by_alternates_sent() {
    let (east, west) = (Region::new("East US"), Region::new("West US"));
    let b = budget(2);
    let mut states = Vec::new();
    for _ in 0..3 {
        let setup = RaceSetup {
            threshold: HedgeThreshold::new(ms(50)).unwrap(),
            deadline: None,
            primary_region: &east,
            alternate_region: &west,
            applicable_regions: 2,
            hub_latch: None,
        };
        // A quick primary never needs a token.
        let quick = race_hedged_within(setup, Some(&b), answer(ms(5), 200, 0), || {
            answer(ms(1), 200, 0)
        })
        .await;
        assert_eq!(
            quick.terminal_state,
            HedgeTerminalState::PrimaryWonPreThreshold
        );
        let slow = race_hedged_within(setup, Some(&b), answer(ms(400), 200, 0), || {
            answer(ms(20), 200, 0)
        })
        .await;
        states.push(slow.terminal_state);
    }
    assert_eq!(
        states,
        [
            HedgeTerminalState::AlternateWon,
            HedgeTerminalState::AlternateWon,
            HedgeTerminalState::BudgetDenied
        ]
    );
}

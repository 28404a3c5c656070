//! A rule as it lives inside the injector: its definition plus the atomics that count and switch it.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};

use rand::Rng;

use super::{FaultRule, RequestFacts, RuleId, RuleSnapshot};

/// An installed rule. Evaluating it touches only atomics, so many connections can share it.
#[derive(Debug)]
pub(crate) struct InstalledRule {
    id: RuleId,
    rule: FaultRule,
    enabled: AtomicBool,
    /// Requests that met the request-shape checks (counted only when `after` needs it).
    matches: AtomicU64,
    /// Requests the rule fired on.
    hits: AtomicU64,
}

impl InstalledRule {
    pub(crate) fn new(id: RuleId, rule: FaultRule) -> Self {
        let enabled = AtomicBool::new(rule.condition.enabled);
        InstalledRule {
            id,
            rule,
            enabled,
            matches: AtomicU64::new(0),
            hits: AtomicU64::new(0),
        }
    }

    pub(crate) fn id(&self) -> RuleId {
        self.id
    }

    pub(crate) fn rule(&self) -> &FaultRule {
        &self.rule
    }

    pub(crate) fn hits(&self) -> u64 {
        self.hits.load(Relaxed)
    }

    pub(crate) fn set_enabled(&self, on: bool) {
        self.enabled.store(on, Relaxed);
    }

    /// Decide whether the rule fires on this request, and count the hit when it does. The checks
    /// run in the order documented on [`super::Condition`].
    pub(crate) fn fires<R: Rng + ?Sized>(&self, facts: &RequestFacts<'_>, rng: &mut R) -> bool {
        let condition = &self.rule.condition;
        if !self.enabled.load(Relaxed) || !condition.matches_request(facts) {
            return false;
        }
        if condition.after > 0 && self.matches.fetch_add(1, Relaxed) < condition.after {
            return false;
        }
        if condition.probability < 1.0 || condition.probability.is_nan() {
            // A NaN probability compares false, so it never fires.
            let draw: f64 = rng.random();
            if draw.partial_cmp(&condition.probability) != Some(std::cmp::Ordering::Less) {
                return false;
            }
        }
        match condition.first {
            None => {
                self.hits.fetch_add(1, Relaxed);
                true
            }
            Some(limit) => self
                .hits
                .fetch_update(Relaxed, Relaxed, |h| (h < limit).then_some(h + 1))
                .is_ok(),
        }
    }

    pub(crate) fn snapshot(&self) -> RuleSnapshot {
        let mut rule = self.rule.clone();
        rule.condition.enabled = self.enabled.load(Relaxed);
        RuleSnapshot {
            id: self.id,
            rule,
            hits: self.hits(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::faults::{OpKind, Reaction};
    use rand::rngs::SmallRng;
    use rand::SeedableRng;

    const FACTS: RequestFacts<'static> = RequestFacts {
        region: "East US",
        op: OpKind::Read,
        path: "/dbs/d",
        headers: None,
    };

    fn fire_pattern(rule: FaultRule, n: usize) -> Vec<bool> {
        let installed = InstalledRule::new(RuleId(1), rule);
        let mut rng = SmallRng::seed_from_u64(3);
        (0..n).map(|_| installed.fires(&FACTS, &mut rng)).collect()
    }

    #[test]
    fn first_n_fires_n_times_then_stops() {
        let pattern = fire_pattern(FaultRule::new(Reaction::Close).first(3), 6);
        assert_eq!(pattern, [true, true, true, false, false, false]);
    }

    #[test]
    fn after_n_lets_n_through_then_fires() {
        let pattern = fire_pattern(FaultRule::new(Reaction::Close).after(2), 5);
        assert_eq!(pattern, [false, false, true, true, true]);
    }

    #[test]
    fn after_and_first_combine_into_a_window() {
        let pattern = fire_pattern(FaultRule::new(Reaction::Close).after(1).first(2), 5);
        assert_eq!(pattern, [false, true, true, false, false]);
    }

    #[test]
    fn disabled_rule_never_fires_and_can_be_switched_on() {
        let installed =
            InstalledRule::new(RuleId(1), FaultRule::new(Reaction::Close).enabled(false));
        let mut rng = SmallRng::seed_from_u64(3);
        assert!(!installed.fires(&FACTS, &mut rng));
        installed.set_enabled(true);
        assert!(installed.fires(&FACTS, &mut rng));
        assert_eq!(installed.hits(), 1);
        assert!(installed.snapshot().rule.condition.enabled);
    }

    #[test]
    fn non_matching_requests_do_not_count_towards_after() {
        let installed = InstalledRule::new(
            RuleId(1),
            FaultRule::new(Reaction::Close)
                .in_regions(["West US"])
                .after(1),
        );
        let mut rng = SmallRng::seed_from_u64(3);
        let west = RequestFacts {
            region: "West US",
            ..FACTS
        };
        assert!(!installed.fires(&FACTS, &mut rng));
        assert!(!installed.fires(&FACTS, &mut rng));
        assert!(
            !installed.fires(&west, &mut rng),
            "first matching request is let through"
        );
        assert!(installed.fires(&west, &mut rng));
    }

    #[test]
    fn probability_fires_about_that_share() {
        let pattern = fire_pattern(
            FaultRule::new(Reaction::Close).with_probability(0.3),
            20_000,
        );
        let fired = pattern.iter().filter(|f| **f).count();
        assert!((5_400..=6_600).contains(&fired), "fired {fired} of 20000");
    }

    #[test]
    fn probability_zero_never_fires_and_one_always_does() {
        assert!(
            fire_pattern(FaultRule::new(Reaction::Close).with_probability(0.0), 1000)
                .iter()
                .all(|f| !f)
        );
        assert!(
            fire_pattern(FaultRule::new(Reaction::Close).with_probability(1.0), 1000)
                .iter()
                .all(|f| *f)
        );
    }

    #[test]
    fn nan_probability_set_by_hand_never_fires() {
        let mut rule = FaultRule::new(Reaction::Close);
        rule.condition.probability = f64::NAN;
        assert!(fire_pattern(rule, 100).iter().all(|f| !f));
    }

    #[test]
    fn hits_count_only_firings() {
        let installed = InstalledRule::new(RuleId(9), FaultRule::new(Reaction::Close).first(2));
        let mut rng = SmallRng::seed_from_u64(3);
        for _ in 0..5 {
            installed.fires(&FACTS, &mut rng);
        }
        let snapshot = installed.snapshot();
        assert_eq!((snapshot.id, snapshot.hits), (RuleId(9), 2));
    }

    #[test]
    fn first_n_holds_under_concurrency() {
        let installed = std::sync::Arc::new(InstalledRule::new(
            RuleId(1),
            FaultRule::new(Reaction::Close).first(100),
        ));
        let threads: Vec<_> = (0..4)
            .map(|seed| {
                let rule = installed.clone();
                std::thread::spawn(move || {
                    let mut rng = SmallRng::seed_from_u64(seed);
                    (0..1000).filter(|_| rule.fires(&FACTS, &mut rng)).count()
                })
            })
            .collect();
        let fired: usize = threads.into_iter().map(|t| t.join().unwrap()).sum();
        assert_eq!(fired, 100);
        assert_eq!(installed.hits(), 100);
    }
}

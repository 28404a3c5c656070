//! Tests of the injector: layers, first match, guards, profiles and runtime changes.

use std::time::Duration;

use rand::rngs::SmallRng;
use rand::SeedableRng;

use super::*;

fn regions() -> Vec<String> {
    vec!["East US".into(), "West US".into(), "North Europe".into()]
}

fn facts(region: &str, op: OpKind) -> RequestFacts<'_> {
    RequestFacts {
        region,
        op,
        path: "/dbs/db/colls/c/docs/a",
        headers: None,
    }
}

fn rng() -> SmallRng {
    SmallRng::seed_from_u64(11)
}

#[test]
fn no_rules_serves_at_once() {
    let injector = FaultInjector::new();
    assert_eq!(
        injector.evaluate(&facts("East US", OpKind::Read)),
        Verdict::SERVE
    );
    assert_eq!(injector.profile_name(), "local");
}

#[test]
fn first_matching_rule_wins() {
    let injector = FaultInjector::new();
    let _west = injector.add(FaultRule::new(Reaction::respond(500, 1)).in_regions(["West US"]));
    let _reads = injector.add(FaultRule::new(Reaction::respond(503, 0)).for_ops([OpKind::Read]));
    let _all = injector.add(FaultRule::new(Reaction::respond(429, 3200)));
    let status = |region: &str, op| match injector.evaluate(&facts(region, op)).reaction {
        Reaction::Respond { status, .. } => status,
        other => panic!("unexpected {other:?}"),
    };
    assert_eq!(status("West US", OpKind::Read), 500);
    assert_eq!(status("East US", OpKind::Read), 503);
    assert_eq!(status("East US", OpKind::Create), 429);
    let hits: Vec<u64> = injector.rules().iter().map(|r| r.hits).collect();
    assert_eq!(hits, [1, 1, 1]);
}

#[test]
fn a_rule_that_does_not_fire_passes_to_the_next() {
    let injector = FaultInjector::new();
    let once = injector.add(FaultRule::new(Reaction::Close).first(1));
    let never = injector.add(FaultRule::new(Reaction::Close).with_probability(0.0));
    let fallback = injector.add(FaultRule::new(Reaction::Stall));
    let mut rng = rng();
    let actions: Vec<Reaction> = (0..3)
        .map(|_| {
            injector
                .evaluate_with(&facts("East US", OpKind::Read), &mut rng)
                .reaction
        })
        .collect();
    assert_eq!(actions, [Reaction::Close, Reaction::Stall, Reaction::Stall]);
    assert_eq!((once.hits(), never.hits(), fallback.hits()), (1, 0, 2));
}

#[test]
fn delay_rule_delays_then_serves() {
    let injector = FaultInjector::new();
    let _guard = injector.add(FaultRule::new(Reaction::delay_ms(150)));
    let verdict = injector.evaluate(&facts("East US", OpKind::Read));
    assert_eq!(
        verdict,
        Verdict {
            delay: Duration::from_millis(150),
            reaction: Reaction::SERVE
        }
    );
}

#[test]
fn respond_carries_its_delay_and_retry_after() {
    let injector = FaultInjector::new();
    let rule = FaultRule::new(Reaction::Respond {
        status: 429,
        sub_status: 3200,
        retry_after_ms: Some(25),
        delay: DelaySpec::Fixed { ms: 10.0 },
    });
    let _guard = injector.add(rule);
    let verdict = injector.evaluate(&facts("East US", OpKind::Create));
    assert_eq!(verdict.delay, Duration::from_millis(10));
    assert_eq!(
        verdict.reaction,
        Reaction::Respond {
            status: 429,
            sub_status: 3200,
            retry_after_ms: Some(25),
            delay: DelaySpec::ZERO,
        }
    );
}

#[test]
fn guard_removes_its_rule_on_drop_and_keep_leaves_it() {
    let injector = FaultInjector::new();
    let guard = injector.add(FaultRule::new(Reaction::Close));
    let id = guard.id();
    assert_eq!(
        injector.evaluate(&facts("A", OpKind::Read)).reaction,
        Reaction::Close
    );
    assert_eq!(guard.hits(), 1);
    drop(guard);
    assert!(injector.rules().is_empty());
    assert!(!injector.remove(id));
    assert_eq!(injector.evaluate(&facts("A", OpKind::Read)), Verdict::SERVE);

    let kept = injector.add(FaultRule::new(Reaction::Stall)).keep();
    assert_eq!(
        injector.rules().iter().map(|r| r.id).collect::<Vec<_>>(),
        [kept]
    );
}

#[test]
fn guard_outliving_the_injector_drops_quietly() {
    let injector = FaultInjector::new();
    let guard = injector.add(FaultRule::new(Reaction::Close));
    drop(injector);
    assert_eq!(guard.hits(), 0);
    drop(guard);
}

#[test]
fn guard_toggles_its_rule() {
    let injector = FaultInjector::new();
    let guard = injector.add(FaultRule::new(Reaction::Close));
    guard.set_enabled(false);
    assert_eq!(injector.evaluate(&facts("A", OpKind::Read)), Verdict::SERVE);
    assert!(!injector.rules()[0].rule.condition.enabled);
    guard.set_enabled(true);
    assert_eq!(
        injector.evaluate(&facts("A", OpKind::Read)).reaction,
        Reaction::Close
    );
}

#[test]
fn persistent_rules_are_listed_removed_and_cleared() {
    let injector = FaultInjector::new();
    let a = injector.add_persistent(FaultRule::new(Reaction::Close).named("a"));
    let b = injector.add_persistent(FaultRule::new(Reaction::Stall).named("b"));
    assert_ne!(a, b);
    let names: Vec<String> = injector.rules().into_iter().map(|r| r.rule.name).collect();
    assert_eq!(names, ["a", "b"]);
    assert!(injector.set_enabled(b, false));
    assert!(!injector.set_enabled(RuleId(999), false));
    assert!(injector.remove(a));
    assert!(!injector.remove(a));
    assert_eq!(injector.rules().len(), 1);
    injector.clear();
    assert!(injector.rules().is_empty());
}

#[test]
fn ids_are_not_reused() {
    let injector = FaultInjector::new();
    let first = injector.add(FaultRule::new(Reaction::Close)).id();
    let second = injector.add(FaultRule::new(Reaction::Close)).id();
    assert!(second > first);
}

#[test]
fn clones_share_rules() {
    let injector = FaultInjector::new();
    let clone = injector.clone();
    let _guard = injector.add(FaultRule::new(Reaction::Close));
    assert_eq!(
        clone.evaluate(&facts("A", OpKind::Read)).reaction,
        Reaction::Close
    );
}

#[test]
fn geo_profile_delays_data_plane_only() {
    let injector = FaultInjector::new();
    injector.set_profile("geo", &regions()).unwrap();
    let mut rng = rng();
    for _ in 0..200 {
        let east = injector
            .evaluate_with(&facts("East US", OpKind::Read), &mut rng)
            .delay;
        let west = injector
            .evaluate_with(&facts("West US", OpKind::Query), &mut rng)
            .delay;
        let north = injector
            .evaluate_with(&facts("North Europe", OpKind::Upsert), &mut rng)
            .delay;
        assert!(
            (Duration::from_millis(1)..=Duration::from_millis(3)).contains(&east),
            "{east:?}"
        );
        assert!(
            (Duration::from_millis(18)..=Duration::from_millis(22)).contains(&west),
            "{west:?}"
        );
        assert!(
            (Duration::from_millis(36)..=Duration::from_millis(44)).contains(&north),
            "{north:?}"
        );
        assert_eq!(
            injector.evaluate_with(&facts("West US", OpKind::Metadata), &mut rng),
            Verdict::SERVE
        );
    }
    assert_eq!(injector.profile_rules()[0].hits, 200);
}

#[test]
fn profile_delay_adds_to_user_rules() {
    let injector = FaultInjector::new();
    injector.set_profile("geo", &regions()).unwrap();
    let _slow = injector.add(FaultRule::new(Reaction::delay_ms(100)));
    let _fail = injector.add(FaultRule::new(Reaction::respond(503, 0)));
    let delay = injector.evaluate(&facts("West US", OpKind::Read)).delay;
    assert!(
        (Duration::from_millis(118)..=Duration::from_millis(122)).contains(&delay),
        "{delay:?}"
    );
    drop(_slow);
    let verdict = injector.evaluate(&facts("West US", OpKind::Read));
    assert!(verdict.delay >= Duration::from_millis(18));
    assert_eq!(verdict.reaction, Reaction::respond(503, 0));
}

/// The delays `n` reads in `region` get.
fn read_delays(
    injector: &FaultInjector,
    region: &str,
    n: usize,
    rng: &mut SmallRng,
) -> Vec<Duration> {
    (0..n)
        .map(|_| {
            injector
                .evaluate_with(&facts(region, OpKind::Read), rng)
                .delay
        })
        .collect()
}

/// How many of `delays` are profile spikes (800 ms or more).
fn spikes(delays: &[Duration]) -> usize {
    delays
        .iter()
        .filter(|d| **d >= Duration::from_millis(800))
        .count()
}

#[test]
fn slow_primary_spikes_about_three_percent_of_the_first_region() {
    let injector = FaultInjector::new();
    injector.set_profile("slow-primary", &regions()).unwrap();
    let mut rng = rng();
    let east = read_delays(&injector, "East US", 20_000, &mut rng);
    let longest = east.iter().max().copied().unwrap_or_default();
    assert!(longest <= Duration::from_millis(1503), "{longest:?}");
    let east_spikes = spikes(&east);
    assert!(
        (400..=800).contains(&east_spikes),
        "{east_spikes} spikes of 20000"
    );
    assert_eq!(
        spikes(&read_delays(&injector, "West US", 20_000, &mut rng)),
        0
    );
}

#[test]
fn slow_both_spikes_the_second_region_too() {
    let injector = FaultInjector::new();
    injector.set_profile("slow-both", &regions()).unwrap();
    let mut rng = rng();
    let west_spikes = spikes(&read_delays(&injector, "West US", 20_000, &mut rng));
    assert!((400..=800).contains(&west_spikes), "{west_spikes}");
    assert_eq!(
        spikes(&read_delays(&injector, "North Europe", 5_000, &mut rng)),
        0
    );
}

#[test]
fn profiles_switch_and_unknown_names_are_refused() {
    let injector = FaultInjector::new();
    assert!(
        injector.switch_profile("geo").is_err(),
        "no regions known yet"
    );
    injector.set_profile("geo", &regions()).unwrap();
    let err = injector.set_profile("warp", &regions()).unwrap_err();
    assert!(err.contains("local, geo, slow-primary, slow-both"), "{err}");
    assert_eq!(
        injector.profile_name(),
        "geo",
        "a failed switch keeps the old profile"
    );
    injector.switch_profile("local").unwrap();
    assert_eq!(injector.profile_name(), "local");
    assert_eq!(injector.profile_regions(), regions());
    assert_eq!(
        injector.evaluate(&facts("North Europe", OpKind::Read)),
        Verdict::SERVE
    );
}

#[test]
fn load_json_adds_all_rules_or_none() {
    let injector = FaultInjector::new();
    let ids = injector
        .load_json(
            br#"{"rules":[{"reaction":"close","regions":["West US"]},{"reaction":"stall"}]}"#,
        )
        .unwrap();
    assert_eq!(ids.len(), 2);
    assert_eq!(
        injector.evaluate(&facts("West US", OpKind::Read)).reaction,
        Reaction::Close
    );
    assert_eq!(
        injector.evaluate(&facts("East US", OpKind::Read)).reaction,
        Reaction::Stall
    );
    let err = injector
        .load_json(br#"[{"reaction":"close"},{"reaction":"explode"}]"#)
        .unwrap_err();
    assert!(err.starts_with("[1].reaction"), "{err}");
    assert_eq!(
        injector.rules().len(),
        2,
        "nothing added from the bad document"
    );
}

#[test]
fn concurrent_evaluation_and_changes_do_not_deadlock_or_lose_hits() {
    let injector = FaultInjector::new();
    let counted = injector.add(FaultRule::new(Reaction::delay_ms(0)).in_regions(["East US"]));
    let workers: Vec<_> = (0..3)
        .map(|_| {
            let injector = injector.clone();
            std::thread::spawn(move || {
                for _ in 0..20_000 {
                    injector.evaluate(&facts("East US", OpKind::Read));
                }
            })
        })
        .collect();
    for _ in 0..200 {
        let guard = injector.add(FaultRule::new(Reaction::Close).in_regions(["West US"]));
        drop(guard);
    }
    for worker in workers {
        worker.join().unwrap();
    }
    assert_eq!(counted.hits(), 60_000);
}

//! Named latency profiles: preset delay rules per region.
//!
//! | name           | rules                                                                        |
//! |----------------|------------------------------------------------------------------------------|
//! | `local`        | none                                                                         |
//! | `geo`          | per region, in account order: 1st 2 ms ± 1, 2nd 20 ms ± 2, 3rd 40 ms ± 4,    |
//! |                | every further region 60 ms ± 6 (uniform)                                     |
//! | `slow-primary` | `geo`, plus 3% of the first region's requests wait a further 800–1500 ms     |
//! | `slow-both`    | `slow-primary`, plus the same 3% spike in the second region                  |
//! | `brownout`     | `geo`, plus every request to the first region waits a further 150–250 ms     |
//! |                | from 10 s to 20 s on the profile's clock, then the region recovers           |
//! | `blackhole`    | `geo`, plus every request to the first region hangs (stall) from 10 s to     |
//! |                | 20 s on the profile's clock, then the region recovers                        |
//!
//! The profile's clock starts when the profile is installed, and can be set again
//! ([`super::FaultInjector::restart_profile_clock`]): a benchmark sets it so that the 10 s episode
//! falls in the middle of each run. Outside its window an episode rule does nothing.
//!
//! Profile rules apply to data-plane operations only (items: read, create, replace, upsert, delete,
//! patch, query, read-feed), never to [`OpKind::Metadata`] (account, database, container and
//! partition-key-range requests). Clients read metadata while they set up and cache it, so delaying
//! it would only skew a benchmark's warm-up, not show how a slow region hurts item traffic.
//!
//! Profile rules form their own layer, in front of the user's rules, and they stack: every
//! matching profile rule adds its delay (a spike adds to the region's `geo` delay). A profile rule
//! whose reaction is not a delay (the `blackhole` stall) decides the request's action, after the
//! delays of the profile rules before it.

use std::time::Duration;

use super::{DelaySpec, FaultRule, OpKind, Reaction};

/// The names [`profile_rules`] knows.
pub const PROFILE_NAMES: [&str; 6] = [
    "local",
    "geo",
    "slow-primary",
    "slow-both",
    "brownout",
    "blackhole",
];

/// When the episode of `brownout` and `blackhole` starts on the profile's clock.
pub const EPISODE_START: Duration = Duration::from_secs(10);
/// How long the episode lasts.
pub const EPISODE_LENGTH: Duration = Duration::from_secs(10);
/// Extra delay range of every request to the first region during a `brownout`, in milliseconds.
const BROWNOUT_MS: (f64, f64) = (150.0, 250.0);

/// A span of time on the profile's clock, `from` included, `until` excluded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ActiveWindow {
    /// When the rule starts to apply.
    pub from: Duration,
    /// When it stops applying.
    pub until: Duration,
}

impl ActiveWindow {
    /// Whether `elapsed` on the profile's clock falls in the window.
    pub fn contains(&self, elapsed: Duration) -> bool {
        self.from <= elapsed && elapsed < self.until
    }
}

/// A profile rule and, for an episode, the window in which it applies (`None`: always).
#[derive(Clone, Debug, PartialEq)]
pub struct ProfileRule {
    /// The rule.
    pub rule: FaultRule,
    /// When it applies on the profile's clock.
    pub active: Option<ActiveWindow>,
}

/// The episode window of `brownout` and `blackhole`.
pub const EPISODE: ActiveWindow = ActiveWindow {
    from: EPISODE_START,
    until: Duration::from_secs(EPISODE_START.as_secs() + EPISODE_LENGTH.as_secs()),
};

/// Share of a slow region's requests that get a spike.
const SPIKE_PROBABILITY: f64 = 0.03;
/// Spike length range, in milliseconds.
const SPIKE_MS: (f64, f64) = (800.0, 1500.0);

/// The rules of profile `name` for these regions (account order: first = primary). Unknown name ->
/// `Err` listing the known names.
pub fn profile_rules(name: &str, regions: &[String]) -> Result<Vec<FaultRule>, String> {
    Ok(profile_layer(name, regions)?
        .into_iter()
        .map(|r| r.rule)
        .collect())
}

/// The rules of profile `name` for these regions with the windows in which they apply. Unknown
/// name -> `Err` listing the known names.
pub fn profile_layer(name: &str, regions: &[String]) -> Result<Vec<ProfileRule>, String> {
    let always = |rule| ProfileRule { rule, active: None };
    let episode = |rule| ProfileRule {
        rule,
        active: Some(EPISODE),
    };
    let (spikes, episode_rule) = match name {
        "local" => return Ok(Vec::new()),
        "geo" => (0, None),
        "slow-primary" => (1, None),
        "slow-both" => (2, None),
        "brownout" => (0, regions.first().map(|r| brownout_rule(r))),
        "blackhole" => (0, regions.first().map(|r| blackhole_rule(r))),
        _ => {
            return Err(format!(
                "unknown latency profile {name:?} (known: {})",
                PROFILE_NAMES.join(", ")
            ))
        }
    };
    let mut rules: Vec<ProfileRule> = regions
        .iter()
        .enumerate()
        .map(|(position, region)| always(geo_rule(position, region)))
        .collect();
    rules.extend(
        regions
            .iter()
            .take(spikes)
            .map(|region| always(spike_rule(region))),
    );
    rules.extend(episode_rule.map(episode));
    Ok(rules)
}

/// Centre and spread, in milliseconds, of the `geo` delay of the region at this position.
pub fn geo_delay_ms(position: usize) -> (f64, f64) {
    match position {
        0 => (2.0, 1.0),
        1 => (20.0, 2.0),
        2 => (40.0, 4.0),
        _ => (60.0, 6.0),
    }
}

fn data_plane_ops() -> impl Iterator<Item = OpKind> {
    OpKind::ALL.into_iter().filter(|op| op.is_data_plane())
}

fn geo_rule(position: usize, region: &str) -> FaultRule {
    let (centre, spread) = geo_delay_ms(position);
    let delay = DelaySpec::Uniform {
        min_ms: centre - spread,
        max_ms: centre + spread,
    };
    FaultRule::new(Reaction::Delay(delay))
        .named(format!("geo {region}"))
        .in_regions([region])
        .for_ops(data_plane_ops())
}

fn spike_rule(region: &str) -> FaultRule {
    let delay = DelaySpec::Uniform {
        min_ms: SPIKE_MS.0,
        max_ms: SPIKE_MS.1,
    };
    FaultRule::new(Reaction::Delay(delay))
        .named(format!("spike {region}"))
        .in_regions([region])
        .for_ops(data_plane_ops())
        .with_probability(SPIKE_PROBABILITY)
}

fn brownout_rule(region: &str) -> FaultRule {
    let delay = DelaySpec::Uniform {
        min_ms: BROWNOUT_MS.0,
        max_ms: BROWNOUT_MS.1,
    };
    FaultRule::new(Reaction::Delay(delay))
        .named(format!("brownout {region}"))
        .in_regions([region])
        .for_ops(data_plane_ops())
}

fn blackhole_rule(region: &str) -> FaultRule {
    FaultRule::new(Reaction::Stall)
        .named(format!("blackhole {region}"))
        .in_regions([region])
        .for_ops(data_plane_ops())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn regions(n: usize) -> Vec<String> {
        [
            "East US",
            "West US",
            "North Europe",
            "Japan East",
            "Brazil South",
        ]
        .iter()
        .take(n)
        .map(|s| s.to_string())
        .collect()
    }

    fn names(rules: &[FaultRule]) -> Vec<&str> {
        rules.iter().map(|r| r.name.as_str()).collect()
    }

    #[test]
    fn local_has_no_rules() {
        assert!(profile_rules("local", &regions(3)).unwrap().is_empty());
    }

    #[test]
    fn geo_delays_by_position() {
        let rules = profile_rules("geo", &regions(5)).unwrap();
        assert_eq!(
            names(&rules),
            [
                "geo East US",
                "geo West US",
                "geo North Europe",
                "geo Japan East",
                "geo Brazil South"
            ]
        );
        let ranges: Vec<(f64, f64)> = rules
            .iter()
            .map(|r| match r.reaction {
                Reaction::Delay(DelaySpec::Uniform { min_ms, max_ms }) => (min_ms, max_ms),
                ref other => panic!("unexpected reaction {other:?}"),
            })
            .collect();
        assert_eq!(
            ranges,
            [
                (1.0, 3.0),
                (18.0, 22.0),
                (36.0, 44.0),
                (54.0, 66.0),
                (54.0, 66.0)
            ]
        );
        for rule in &rules {
            assert_eq!(rule.condition.probability, 1.0);
            assert!(!rule.condition.ops.contains(&OpKind::Metadata));
            assert_eq!(rule.condition.ops.len(), OpKind::COUNT - 1);
        }
    }

    #[test]
    fn slow_profiles_add_spikes_to_the_first_regions() {
        let primary = profile_rules("slow-primary", &regions(3)).unwrap();
        assert_eq!(
            names(&primary),
            [
                "geo East US",
                "geo West US",
                "geo North Europe",
                "spike East US"
            ]
        );
        let both = profile_rules("slow-both", &regions(3)).unwrap();
        assert_eq!(
            names(&both),
            [
                "geo East US",
                "geo West US",
                "geo North Europe",
                "spike East US",
                "spike West US"
            ]
        );
        let spike = &both[4];
        assert_eq!(spike.condition.probability, 0.03);
        assert_eq!(
            spike.reaction,
            Reaction::Delay(DelaySpec::Uniform {
                min_ms: 800.0,
                max_ms: 1500.0
            })
        );
        assert_eq!(spike.condition.regions, ["West US"]);
    }

    #[test]
    fn slow_both_with_one_region_has_one_spike() {
        let rules = profile_rules("slow-both", &regions(1)).unwrap();
        assert_eq!(names(&rules), ["geo East US", "spike East US"]);
    }

    #[test]
    fn unknown_profile_lists_known_names() {
        let err = profile_rules("fast", &regions(2)).unwrap_err();
        assert!(
            err.contains("\"fast\"")
                && err.contains("local, geo, slow-primary, slow-both, brownout, blackhole"),
            "{err}"
        );
    }

    #[test]
    fn episodes_hit_the_first_region_only_in_their_window() {
        // (profile, the episode rule's name, its reaction)
        let cases = [
            (
                "brownout",
                "brownout East US",
                Reaction::Delay(DelaySpec::Uniform {
                    min_ms: 150.0,
                    max_ms: 250.0,
                }),
            ),
            ("blackhole", "blackhole East US", Reaction::Stall),
        ];
        for (profile, name, reaction) in cases {
            let layer = profile_layer(profile, &regions(3)).unwrap();
            let names: Vec<&str> = layer.iter().map(|r| r.rule.name.as_str()).collect();
            assert_eq!(
                names,
                ["geo East US", "geo West US", "geo North Europe", name],
                "{profile}"
            );
            assert!(layer[..3].iter().all(|r| r.active.is_none()), "{profile}");
            let episode = &layer[3];
            assert_eq!(episode.rule.reaction, reaction, "{profile}");
            assert_eq!(episode.rule.condition.regions, ["East US"], "{profile}");
            assert_eq!(episode.rule.condition.probability, 1.0, "{profile}");
            assert!(!episode.rule.condition.ops.contains(&OpKind::Metadata));
            assert_eq!(episode.active, Some(EPISODE), "{profile}");
        }
        assert!(profile_layer("brownout", &[]).unwrap().is_empty());
    }

    #[test]
    fn episode_window_table() {
        // (seconds on the profile's clock, inside?)
        let cases = [
            (0.0, false),
            (9.999, false),
            (10.0, true),
            (15.0, true),
            (19.999, true),
            (20.0, false),
            (60.0, false),
        ];
        for (secs, inside) in cases {
            assert_eq!(
                EPISODE.contains(Duration::from_secs_f64(secs)),
                inside,
                "{secs} s"
            );
        }
    }

    /// Through the injector: the first region is slowed (brownout) or stalled (blackhole) only
    /// inside the episode window of the profile's clock; the others keep their `geo` delay.
    #[test]
    fn the_injector_plays_episodes_on_the_profile_clock() {
        use crate::faults::{FaultInjector, RequestFacts};
        use rand::rngs::SmallRng;
        use rand::SeedableRng;
        use tokio::time::Instant;

        let facts = |region| RequestFacts {
            region,
            op: OpKind::Read,
            path: "/dbs/d/colls/c/docs/a",
            headers: None,
        };
        let mut rng = SmallRng::seed_from_u64(7);
        let injector = FaultInjector::new();
        let zero = Instant::now();
        for profile in ["brownout", "blackhole"] {
            injector.set_profile(profile, &regions(2)).unwrap();
            injector.restart_profile_clock(zero);
            // (seconds on the clock, region, expected reaction, delay range in ms)
            let cases = [
                (5.0, "East US", Reaction::SERVE, (1, 3)),
                (5.0, "West US", Reaction::SERVE, (18, 22)),
                (12.0, "West US", Reaction::SERVE, (18, 22)),
                (21.0, "East US", Reaction::SERVE, (1, 3)),
            ];
            for (secs, region, reaction, (lo, hi)) in cases {
                let now = zero + Duration::from_secs_f64(secs);
                let v = injector.evaluate_at(&facts(region), &mut rng, now);
                assert_eq!(v.reaction, reaction, "{profile} {region} at {secs} s");
                let ms = v.delay.as_secs_f64() * 1e3;
                assert!(
                    (lo as f64..=hi as f64).contains(&ms),
                    "{profile} {region} at {secs} s: {ms} ms"
                );
            }
            let during =
                injector.evaluate_at(&facts("East US"), &mut rng, zero + Duration::from_secs(12));
            match profile {
                "brownout" => {
                    assert_eq!(during.reaction, Reaction::SERVE);
                    let ms = during.delay.as_secs_f64() * 1e3;
                    assert!((151.0..=253.0).contains(&ms), "brownout delay {ms} ms");
                }
                _ => assert_eq!(during.reaction, Reaction::Stall),
            }
        }
        // A clock set in the future: the episode has not started yet.
        injector.restart_profile_clock(zero + Duration::from_secs(60));
        let v = injector.evaluate_at(&facts("East US"), &mut rng, zero + Duration::from_secs(12));
        assert_eq!(v.reaction, Reaction::SERVE);
    }
}

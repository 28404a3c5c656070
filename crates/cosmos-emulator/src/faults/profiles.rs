//! Named latency profiles: preset delay rules per region.
//!
//! | name           | rules                                                                        |
//! |----------------|------------------------------------------------------------------------------|
//! | `local`        | none                                                                         |
//! | `geo`          | per region, in account order: 1st 2 ms ± 1, 2nd 20 ms ± 2, 3rd 40 ms ± 4,    |
//! |                | every further region 60 ms ± 6 (uniform)                                     |
//! | `slow-primary` | `geo`, plus 3% of the first region's requests wait a further 800–1500 ms     |
//! | `slow-both`    | `slow-primary`, plus the same 3% spike in the second region                  |
//!
//! Profile rules apply to data-plane operations only (items: read, create, replace, upsert, delete,
//! patch, query, read-feed), never to [`OpKind::Metadata`] (account, database, container and
//! partition-key-range requests). Clients read metadata while they set up and cache it, so delaying
//! it would only skew a benchmark's warm-up, not show how a slow region hurts item traffic.
//!
//! Profile rules form their own layer, in front of the user's rules, and they stack: every
//! matching profile rule adds its delay (a spike adds to the region's `geo` delay).

use super::{DelaySpec, FaultRule, OpKind, Reaction};

/// The names [`profile_rules`] knows.
pub const PROFILE_NAMES: [&str; 4] = ["local", "geo", "slow-primary", "slow-both"];

/// Share of a slow region's requests that get a spike.
const SPIKE_PROBABILITY: f64 = 0.03;
/// Spike length range, in milliseconds.
const SPIKE_MS: (f64, f64) = (800.0, 1500.0);

/// The rules of profile `name` for these regions (account order: first = primary). Unknown name ->
/// `Err` listing the known names.
pub fn profile_rules(name: &str, regions: &[String]) -> Result<Vec<FaultRule>, String> {
    let spikes = match name {
        "local" => return Ok(Vec::new()),
        "geo" => 0,
        "slow-primary" => 1,
        "slow-both" => 2,
        _ => {
            return Err(format!(
                "unknown latency profile {name:?} (known: {})",
                PROFILE_NAMES.join(", ")
            ))
        }
    };
    let mut rules: Vec<FaultRule> = regions
        .iter()
        .enumerate()
        .map(|(position, region)| geo_rule(position, region))
        .collect();
    rules.extend(regions.iter().take(spikes).map(|region| spike_rule(region)));
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
            err.contains("\"fast\"") && err.contains("local, geo, slow-primary, slow-both"),
            "{err}"
        );
    }
}

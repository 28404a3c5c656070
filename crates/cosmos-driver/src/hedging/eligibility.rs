//! Whether an operation is hedged, and where its alternate attempt goes.
//!
//! Both questions are answered over plain data after the user's excluded regions have been applied;
//! the pipeline turns the answers into its own routing types.

use super::strategy::HedgingStrategy;
use crate::protocol::{OperationType, Region, ResourceType};
use crate::routing::RegionalEndpoint;

/// The operations hedging covers in this phase, as (resource type, operation type) pairs. Widening
/// hedging to another operation is a change to this list and nothing else. Phase 2 (spec §16):
/// each query page request and each page of a document feed (read feed, change feed) is hedged
/// like a point read (the winning page carries its region's continuation and session token), and
/// so are metadata reads: the account, databases and
/// containers (one or a feed page), partition key ranges and throughput offers (read, feed, or the
/// offer query). Metadata writes (create, replace, delete) are writes and never hedged.
///
/// Metadata reads take the first final answer, as point reads do, rather than waiting for both
/// regions to compare `_etag`s: databases, containers, ranges and offers are account-wide
/// metadata, and a view that is behind corrects itself through the service's own signals (a
/// partition key range map older than a split gets 410/1002 on its next use, which re-reads it).
pub(crate) const PHASE_ALLOWED_OPERATIONS: &[(ResourceType, OperationType)] = &[
    (ResourceType::Document, OperationType::Read),
    (ResourceType::Document, OperationType::Query),
    (ResourceType::Document, OperationType::ReadFeed),
    (ResourceType::DatabaseAccount, OperationType::Read),
    (ResourceType::Database, OperationType::Read),
    (ResourceType::Database, OperationType::ReadFeed),
    (ResourceType::Container, OperationType::Read),
    (ResourceType::Container, OperationType::ReadFeed),
    (ResourceType::PartitionKeyRange, OperationType::ReadFeed),
    (ResourceType::Offer, OperationType::Read),
    (ResourceType::Offer, OperationType::ReadFeed),
    (ResourceType::Offer, OperationType::Query),
];

/// What [`should_hedge`] looks at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct HedgeEligibility {
    /// The resolved strategy ([`super::resolve_strategy`]); `None` when hedging is off.
    pub strategy: Option<HedgingStrategy>,
    /// Whether the application configured a non-empty preferred-region list (client or operation).
    pub preferred_regions_configured: bool,
    /// What the operation addresses.
    pub resource_type: ResourceType,
    /// What the operation does.
    pub operation_type: OperationType,
    /// How many read regions remain applicable after the excluded regions are removed.
    pub applicable_read_regions: usize,
}

/// Why an operation is not hedged: the first row of the decision matrix that matched.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum NoHedge {
    /// Row 1: no strategy resolved, or `Disabled`.
    NoStrategy,
    /// Row 2: the application did not configure preferred regions.
    NoPreferredRegions,
    /// Row 3: the resource type is outside this phase's set.
    ResourceTypeNotInPhase,
    /// Row 4: the operation writes; writes are never hedged.
    Write,
    /// Row 3, operation guard: a read this phase does not hedge (a feed read).
    OperationNotInPhase,
    /// Row 5: fewer than two applicable read regions.
    FewerThanTwoRegions,
}

/// The hedging decision for one operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum HedgeDecision {
    /// Row 6: hedge with this strategy.
    Hedge(HedgingStrategy),
    /// Do not hedge, for this reason.
    Skip(NoHedge),
}

/// The decision matrix, rows in order, first match wins.
pub(crate) fn should_hedge(e: &HedgeEligibility) -> HedgeDecision {
    let Some(strategy) = e.strategy else {
        return HedgeDecision::Skip(NoHedge::NoStrategy);
    };
    if !e.preferred_regions_configured {
        return HedgeDecision::Skip(NoHedge::NoPreferredRegions);
    }
    if !PHASE_ALLOWED_OPERATIONS
        .iter()
        .any(|(r, _)| *r == e.resource_type)
    {
        return HedgeDecision::Skip(NoHedge::ResourceTypeNotInPhase);
    }
    if e.operation_type.is_write() {
        return HedgeDecision::Skip(NoHedge::Write);
    }
    if !PHASE_ALLOWED_OPERATIONS.contains(&(e.resource_type, e.operation_type)) {
        return HedgeDecision::Skip(NoHedge::OperationNotInPhase);
    }
    if e.applicable_read_regions < 2 {
        return HedgeDecision::Skip(NoHedge::FewerThanTwoRegions);
    }
    HedgeDecision::Hedge(strategy)
}

/// A region with its endpoint: the plain implementation of [`RegionalEndpoint`] (tests).
#[cfg(test)]
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RegionEndpoint<E> {
    /// The region.
    pub region: Region,
    /// Its endpoint.
    pub endpoint: E,
}

#[cfg(test)]
impl<E: PartialEq + Clone> RegionalEndpoint for RegionEndpoint<E> {
    type Endpoint = E;
    fn region(&self) -> &Region {
        &self.region
    }
    fn endpoint(&self) -> &E {
        &self.endpoint
    }
}

/// Where the alternate attempt goes and how it is pinned there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct AlternateRouting<E> {
    /// The alternate region.
    pub region: Region,
    /// The endpoint serving it.
    pub endpoint: E,
    /// Regions the alternate attempt and all its retries must not use: the user's excluded regions
    /// and every other known region. This is what keeps the alternate's retries local.
    pub excluded_regions: Vec<Region>,
}

/// The alternate for a hedged read, or `None` when there is none. Allocates nothing, so it can run
/// before the race; the alternate is pinned ([`AlternateRouting::pinned`]) only once it is built.
///
/// The alternate is the second applicable read region (the first entry after the head of
/// `applicable`) that differs from the primary in **both** region and endpoint: a regional endpoint
/// and an alias of it can reach the same replicas under different names, and hedging to them would
/// buy nothing. Later entries are tried in order when an earlier one aliases the primary.
pub(crate) fn select_alternate<'a, T: RegionalEndpoint + 'a>(
    primary_region: &Region,
    primary_endpoint: &T::Endpoint,
    applicable: impl IntoIterator<Item = &'a T>,
) -> Option<&'a T> {
    applicable
        .into_iter()
        .skip(1)
        .find(|c| c.region() != primary_region && c.endpoint() != primary_endpoint)
}

impl<E: Clone> AlternateRouting<E> {
    /// Pins the alternate to its region by excluding `user_excluded ∪ (known_regions \ alternate)`.
    ///
    /// `known_regions` must hold every region routing could pick (the account's read and write
    /// regions). Call it when the alternate is built, after the threshold: the excluded list is
    /// the race's first allocation.
    pub(crate) fn pinned<'r, T: RegionalEndpoint<Endpoint = E>>(
        alternate: &T,
        user_excluded: &'r [Region],
        known_regions: impl IntoIterator<Item = &'r Region>,
    ) -> Self {
        let region = alternate.region().clone();
        let mut excluded: Vec<Region> = Vec::new();
        for r in user_excluded.iter().chain(known_regions) {
            if *r != region && !excluded.contains(r) {
                excluded.push(r.clone());
            }
        }
        AlternateRouting {
            region,
            endpoint: alternate.endpoint().clone(),
            excluded_regions: excluded,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hedging::strategy::HedgeThreshold;
    use std::time::Duration;

    fn strategy() -> HedgingStrategy {
        HedgingStrategy::new(HedgeThreshold::new(Duration::from_millis(100)).unwrap())
    }

    fn read(applicable: usize) -> HedgeEligibility {
        HedgeEligibility {
            strategy: Some(strategy()),
            preferred_regions_configured: true,
            resource_type: ResourceType::Document,
            operation_type: OperationType::Read,
            applicable_read_regions: applicable,
        }
    }

    fn regions(names: &[&str]) -> Vec<Region> {
        names.iter().map(Region::new).collect()
    }

    fn eps(pairs: &[(&str, &str)]) -> Vec<RegionEndpoint<String>> {
        pairs
            .iter()
            .map(|(r, e)| RegionEndpoint {
                region: Region::new(r),
                endpoint: e.to_string(),
            })
            .collect()
    }

    /// The applicable list after removing `excluded` from `preferred`, as routing computes it.
    fn applicable_after(preferred: &[&str], excluded: &[&str]) -> usize {
        let ex = regions(excluded);
        regions(preferred)
            .iter()
            .filter(|r| !ex.contains(r))
            .count()
    }

    #[test]
    fn decision_matrix_in_order() {
        use HedgeDecision::*;
        use NoHedge::*;
        let base = read(2);
        let table: Vec<(HedgeEligibility, HedgeDecision)> = vec![
            (base, Hedge(strategy())),
            // Row 1 wins over every other failing row.
            (
                HedgeEligibility {
                    strategy: None,
                    preferred_regions_configured: false,
                    applicable_read_regions: 0,
                    ..base
                },
                Skip(NoStrategy),
            ),
            // Row 2 wins over rows 3-5.
            (
                HedgeEligibility {
                    preferred_regions_configured: false,
                    operation_type: OperationType::Create,
                    ..base
                },
                Skip(NoPreferredRegions),
            ),
            // Every resource type is in the phase-2 set: a metadata write reaches row 4.
            (
                HedgeEligibility {
                    resource_type: ResourceType::Container,
                    operation_type: OperationType::Replace,
                    ..base
                },
                Skip(Write),
            ),
            (
                HedgeEligibility {
                    resource_type: ResourceType::Offer,
                    operation_type: OperationType::Replace,
                    ..base
                },
                Skip(Write),
            ),
            // Row 4 wins over row 5.
            (
                HedgeEligibility {
                    operation_type: OperationType::Upsert,
                    applicable_read_regions: 1,
                    ..base
                },
                Skip(Write),
            ),
            (
                HedgeEligibility {
                    operation_type: OperationType::Query,
                    ..base
                },
                Hedge(strategy()),
            ),
            (
                HedgeEligibility {
                    operation_type: OperationType::ReadFeed,
                    ..base
                },
                Hedge(strategy()),
            ),
            (
                HedgeEligibility {
                    applicable_read_regions: 1,
                    ..base
                },
                Skip(FewerThanTwoRegions),
            ),
            (
                HedgeEligibility {
                    applicable_read_regions: 0,
                    ..base
                },
                Skip(FewerThanTwoRegions),
            ),
            (
                HedgeEligibility {
                    applicable_read_regions: 5,
                    ..base
                },
                Hedge(strategy()),
            ),
        ];
        for (i, (input, want)) in table.into_iter().enumerate() {
            assert_eq!(should_hedge(&input), want, "row {i}: {input:?}");
        }
    }

    #[test]
    fn should_hedge_read_multi_region() {
        let n = applicable_after(&["East US", "West US"], &[]);
        assert_eq!(should_hedge(&read(n)), HedgeDecision::Hedge(strategy()));
    }

    #[test]
    fn should_hedge_read_single_region() {
        let n = applicable_after(&["East US"], &[]);
        assert_eq!(
            should_hedge(&read(n)),
            HedgeDecision::Skip(NoHedge::FewerThanTwoRegions)
        );
    }

    #[test]
    fn should_hedge_excluded_to_one_region() {
        let n = applicable_after(
            &["East US", "West US", "North Europe"],
            &["west us", "North Europe"],
        );
        assert_eq!(n, 1);
        assert_eq!(
            should_hedge(&read(n)),
            HedgeDecision::Skip(NoHedge::FewerThanTwoRegions)
        );
    }

    #[test]
    fn should_hedge_no_preferred_regions() {
        let e = HedgeEligibility {
            preferred_regions_configured: false,
            ..read(3)
        };
        assert_eq!(
            should_hedge(&e),
            HedgeDecision::Skip(NoHedge::NoPreferredRegions)
        );
    }

    #[test]
    fn should_hedge_write_never() {
        use OperationType::*;
        for op in [Create, Replace, Upsert, Delete, Patch] {
            for regions in [2, 3, 10] {
                let e = HedgeEligibility {
                    operation_type: op,
                    ..read(regions)
                };
                assert_eq!(
                    should_hedge(&e),
                    HedgeDecision::Skip(NoHedge::Write),
                    "{op:?}"
                );
            }
        }
    }

    #[test]
    fn metadata_reads_hedge_and_metadata_writes_never() {
        use HedgeDecision::*;
        use OperationType::*;
        use ResourceType::*;
        let rows = [
            (DatabaseAccount, Read, Hedge(strategy())),
            (Database, Read, Hedge(strategy())),
            (Database, ReadFeed, Hedge(strategy())),
            (Container, Read, Hedge(strategy())),
            (Container, ReadFeed, Hedge(strategy())),
            (PartitionKeyRange, ReadFeed, Hedge(strategy())),
            (Offer, Read, Hedge(strategy())),
            (Offer, ReadFeed, Hedge(strategy())),
            (Offer, Query, Hedge(strategy())),
            (Database, Create, Skip(NoHedge::Write)),
            (Database, Delete, Skip(NoHedge::Write)),
            (Container, Create, Skip(NoHedge::Write)),
            (Container, Replace, Skip(NoHedge::Write)),
            (Offer, Replace, Skip(NoHedge::Write)),
            // Reads this phase leaves alone.
            (Container, Query, Skip(NoHedge::OperationNotInPhase)),
            (PartitionKeyRange, Read, Skip(NoHedge::OperationNotInPhase)),
        ];
        for (rt, op, want) in rows {
            let e = HedgeEligibility {
                resource_type: rt,
                operation_type: op,
                ..read(3)
            };
            assert_eq!(should_hedge(&e), want, "{rt:?} {op:?}");
            let single = HedgeEligibility {
                applicable_read_regions: 1,
                ..e
            };
            assert_ne!(should_hedge(&single), Hedge(strategy()), "{rt:?} {op:?}");
        }
    }

    #[test]
    fn should_hedge_disabled_override() {
        use crate::hedging::{resolve_strategy, AvailabilityStrategy, HedgingEnv, HedgingLayers};
        let client = HedgingLayers {
            client_strategy: Some(AvailabilityStrategy::Hedging(strategy())),
            ..Default::default()
        };
        let op = HedgingLayers {
            operation_strategy: Some(AvailabilityStrategy::Disabled),
            ..client
        };
        let env = HedgingEnv::default();
        let with = |layers: &HedgingLayers| HedgeEligibility {
            strategy: resolve_strategy(&env, layers, None).strategy(),
            ..read(2)
        };
        assert_eq!(
            should_hedge(&with(&client)),
            HedgeDecision::Hedge(strategy())
        );
        assert_eq!(
            should_hedge(&with(&op)),
            HedgeDecision::Skip(NoHedge::NoStrategy)
        );
    }

    #[test]
    fn phase_two_hedges_only_reads() {
        for (rt, op) in PHASE_ALLOWED_OPERATIONS {
            assert!(op.is_read_only(), "{rt:?} {op:?}");
        }
        assert!(PHASE_ALLOWED_OPERATIONS.contains(&(ResourceType::Document, OperationType::Read)));
        assert!(PHASE_ALLOWED_OPERATIONS.contains(&(ResourceType::Document, OperationType::Query)));
        assert!(
            PHASE_ALLOWED_OPERATIONS.contains(&(ResourceType::Document, OperationType::ReadFeed))
        );
    }

    type Ep = RegionEndpoint<String>;

    /// The alternate, pinned, as the pipeline computes it.
    fn pin(
        primary: (&str, &str),
        applicable: &[Ep],
        known: &[Region],
        user: &[Region],
    ) -> Option<AlternateRouting<String>> {
        let alt = select_alternate(&Region::new(primary.0), &primary.1.to_string(), applicable)?;
        Some(AlternateRouting::pinned(alt, user, known))
    }

    #[test]
    fn alternate_is_the_second_applicable_region() {
        let applicable = eps(&[("A", "https://a"), ("B", "https://b"), ("C", "https://c")]);
        let alt = pin(
            ("A", "https://a"),
            &applicable,
            &regions(&["A", "B", "C"]),
            &[],
        )
        .unwrap();
        assert_eq!(alt.region, Region::new("B"));
        assert_eq!(alt.endpoint, "https://b");
        assert_eq!(alt.excluded_regions, regions(&["A", "C"]));
    }

    #[test]
    fn alternate_region_pin_excludes_primary() {
        let applicable = eps(&[("East US", "https://e"), ("West US", "https://w")]);
        let alt = pin(
            ("East US", "https://e"),
            &applicable,
            &regions(&["East US", "West US"]),
            &[],
        )
        .unwrap();
        assert!(alt.excluded_regions.contains(&Region::new("East US")));
        assert!(!alt.excluded_regions.contains(&Region::new("West US")));
    }

    #[test]
    fn alternate_region_pin_unions_user_excludes() {
        // Account regions A, B, C, X; user excluded X; applicable after exclusion: A, B, C.
        let account = regions(&["A", "B", "C", "X"]);
        let applicable = eps(&[("A", "a"), ("B", "b"), ("C", "c")]);
        let alt = pin(("A", "a"), &applicable, &account, &regions(&["X"])).unwrap();
        assert_eq!(alt.region, Region::new("B"));
        // {X} ∪ (all \ {B}) = {X, A, C}, each once.
        assert_eq!(alt.excluded_regions, regions(&["X", "A", "C"]));
    }

    #[test]
    fn alternate_must_differ_in_region_and_endpoint() {
        // B is an alias of A's endpoint: skipped; C is distinct.
        let applicable = eps(&[("A", "https://a"), ("B", "https://a"), ("C", "https://c")]);
        let alt = pin(
            ("A", "https://a"),
            &applicable,
            &regions(&["A", "B", "C"]),
            &[],
        )
        .unwrap();
        assert_eq!(alt.region, Region::new("C"));
        assert_eq!(alt.excluded_regions, regions(&["A", "B"]));
        // A second spelling of the primary region with another endpoint: skipped too.
        let applicable = eps(&[("East US", "https://e1"), ("eastus", "https://e2")]);
        assert_eq!(pin(("East US", "https://e1"), &applicable, &[], &[]), None);
        // The only other entry aliases the primary: no alternate.
        let applicable = eps(&[("A", "https://a"), ("B", "https://a")]);
        assert_eq!(pin(("A", "https://a"), &applicable, &[], &[]), None);
    }

    #[test]
    fn no_alternate_with_one_region() {
        assert_eq!(
            pin(("A", "a"), &eps(&[("A", "a")]), &regions(&["A"]), &[]),
            None
        );
        assert_eq!(pin(("A", "a"), &[], &[], &[]), None);
    }

    #[test]
    fn the_user_exclusions_never_pin_out_the_alternate() {
        let applicable = eps(&[("A", "a"), ("B", "b")]);
        let alt = pin(
            ("A", "a"),
            &applicable,
            &regions(&["A", "B"]),
            &regions(&["b"]),
        )
        .unwrap();
        assert!(!alt.excluded_regions.contains(&Region::new("B")));
    }
}

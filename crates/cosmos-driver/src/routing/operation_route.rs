//! Where one operation may go: the region list it draws from (reads: read regions; writes: the hub,
//! or every write region on a multi-write account) and its candidates in routing order, after the
//! excluded regions, with unavailable endpoints and (for reads) regions where the partition is
//! marked unhealthy moved last.

use std::sync::Arc;

use tokio::time::Instant;

use super::account::{AccountProperties, RegionEndpoint};
use super::endpoint_health::{AccessScope, EndpointHealth};
use super::partition_breaker::PartitionBreaker;
use super::region_order::{order_regions, Candidates};
use crate::protocol::Region;

/// What routing needs to know of one operation.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RouteQuery<'a> {
    /// Whether the operation reads.
    pub is_read: bool,
    /// The caller's preferred regions.
    pub preferred: &'a [Region],
    /// The container (the breaker keeps its marks per container).
    pub container: Option<&'a Arc<str>>,
    /// The partition key range the operation names, or its partition key was last seen in.
    pub learned_range: Option<&'a Arc<str>>,
    /// The operation carries a partition key (its range may be any of the container's).
    pub partition_keyed: bool,
    /// Regions that already failed this operation (a status from its partition, which marks no
    /// endpoint): its later rounds try them last.
    pub failed_here: &'a [Region],
}

/// The regions an operation may use from `account`.
pub(crate) fn region_list(account: &AccountProperties, is_read: bool) -> &[RegionEndpoint] {
    if is_read {
        &account.read_regions
    } else if account.multi_write {
        &account.write_regions
    } else {
        &account.write_regions[..1]
    }
}

/// The candidate regions of `query` from `account`, after `excluded`, in the order to try them.
pub(crate) fn route_candidates(
    account: &AccountProperties,
    query: RouteQuery<'_>,
    excluded: &[Region],
    health: &EndpointHealth,
    breaker: &PartitionBreaker,
) -> Candidates {
    let scope = if query.is_read {
        AccessScope::Read
    } else {
        AccessScope::Write
    };
    let list = region_list(account, query.is_read);
    let preferred = if query.is_read || account.multi_write {
        query.preferred
    } else {
        &[]
    };
    let range = query.learned_range.filter(|_| query.is_read);
    // A keyed read whose range is not known yet while the breaker tracks partitions assumes the
    // worst: its partition may be one marked unhealthy. A read that names its range is judged by
    // that range alone, and one with neither a key nor a range (metadata, a whole-container feed)
    // is no single partition's: the breaker says nothing about it.
    let unknown_range =
        query.is_read && query.partition_keyed && range.is_none() && breaker.is_active();
    // Nothing marked anywhere (the common case): no clock read, no lookups.
    if !health.any_marked() && range.is_none() && !unknown_range && query.failed_here.is_empty() {
        return order_regions(list, preferred, excluded, |_, _| false);
    }
    let now = Instant::now();
    order_regions(list, preferred, excluded, |_, r| {
        query.failed_here.contains(&r.region)
            || health.is_unavailable(&r.endpoint, scope, now)
            || match (range, query.container) {
                (Some(range), Some(c)) => breaker.is_unhealthy(c, range, &r.region, now),
                (None, Some(c)) if unknown_range => breaker.any_unhealthy(c, &r.region, now),
                _ => false,
            }
    })
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::protocol::{ConsistencyLevel, Endpoint};
    use crate::routing::BreakerConfig;

    fn region(name: &str) -> RegionEndpoint {
        let host = name.to_lowercase().replace(' ', "-");
        RegionEndpoint {
            region: Region::new(name),
            endpoint: Endpoint::parse(&format!("https://{host}.example/"), false).unwrap(),
        }
    }

    fn account(multi_write: bool) -> AccountProperties {
        AccountProperties {
            write_regions: vec![region("East US"), region("West US")],
            read_regions: vec![region("East US"), region("West US"), region("North EU")],
            multi_write,
            default_consistency: ConsistencyLevel::Session,
            disable_cross_regional_hedging: None,
        }
    }

    fn names(list: &[RegionEndpoint], c: &Candidates) -> Vec<String> {
        c.iter()
            .map(|i| list[i].region.as_str().to_owned())
            .collect()
    }

    #[test]
    fn region_lists_by_operation_and_account() {
        let table = [
            // (multi-write, is_read, regions)
            (false, true, vec!["East US", "West US", "North EU"]),
            (false, false, vec!["East US"]),
            (true, true, vec!["East US", "West US", "North EU"]),
            (true, false, vec!["East US", "West US"]),
        ];
        for (multi_write, is_read, expected) in table {
            let a = account(multi_write);
            let got: Vec<_> = region_list(&a, is_read)
                .iter()
                .map(|r| r.region.as_str())
                .collect();
            assert_eq!(got, expected, "multi_write={multi_write} is_read={is_read}");
        }
    }

    #[test]
    fn candidates_follow_preference_exclusion_and_health() {
        let a = account(false);
        let health = EndpointHealth::new(Duration::from_secs(60));
        let breaker = PartitionBreaker::new(BreakerConfig::default());
        let west = [Region::new("West US")];
        fn read(preferred: &[Region]) -> RouteQuery<'_> {
            RouteQuery {
                is_read: true,
                preferred,
                container: None,
                learned_range: None,
                partition_keyed: true,
                failed_here: &[],
            }
        }
        let preferred = &[Region::new("North EU")][..];
        let c = route_candidates(&a, read(preferred), &[], &health, &breaker);
        assert_eq!(
            names(&a.read_regions, &c),
            ["North EU", "East US", "West US"]
        );
        let c = route_candidates(&a, read(preferred), &west, &health, &breaker);
        assert_eq!(names(&a.read_regions, &c), ["North EU", "East US"]);

        health.mark_unavailable(
            &a.read_regions[2].endpoint,
            AccessScope::Read,
            Instant::now(),
        );
        let c = route_candidates(&a, read(preferred), &[], &health, &breaker);
        assert_eq!(
            names(&a.read_regions, &c),
            ["East US", "West US", "North EU"],
            "an unavailable endpoint goes last"
        );

        let write = RouteQuery {
            is_read: false,
            ..read(preferred)
        };
        let c = route_candidates(&a, write, &[], &health, &breaker);
        assert_eq!(
            names(region_list(&a, false), &c),
            ["East US"],
            "single-write: the hub only, preferences ignored"
        );
    }

    #[test]
    fn an_unhealthy_partition_moves_only_the_reads_that_may_be_its() {
        let a = account(false);
        let health = EndpointHealth::new(Duration::from_secs(60));
        let breaker = PartitionBreaker::new(BreakerConfig::default());
        let container: Arc<str> = Arc::from("dbs/d/colls/c");
        let east = Region::new("East US");
        let one = std::num::NonZeroU32::new(1).unwrap();
        assert!(breaker.record_consecutive_hedge_win(&container, "1", &east, one, Instant::now()));
        let (r1, r2): (Arc<str>, Arc<str>) = (Arc::from("1"), Arc::from("2"));
        let read = |learned_range, partition_keyed| RouteQuery {
            is_read: true,
            preferred: &[],
            container: Some(&container),
            learned_range,
            partition_keyed,
            failed_here: &[],
        };
        // (what the read is, its query, East first?)
        let rows = [
            ("names the unhealthy range", read(Some(&r1), false), false),
            ("names another range", read(Some(&r2), false), true),
            (
                "keyed, in the unhealthy range",
                read(Some(&r1), true),
                false,
            ),
            (
                "keyed, range not known yet: assumes the worst",
                read(None, true),
                false,
            ),
            (
                "no key and no range (metadata, whole feed)",
                read(None, false),
                true,
            ),
        ];
        for (name, query, east_first) in rows {
            let c = route_candidates(&a, query, &[], &health, &breaker);
            assert_eq!(
                names(&a.read_regions, &c)[0] == "East US",
                east_first,
                "{name}: {:?}",
                names(&a.read_regions, &c)
            );
        }
    }
}

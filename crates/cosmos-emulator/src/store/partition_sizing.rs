//! How many physical partitions (partition key ranges) a new container starts with.
//!
//! The service sizes them from the throughput the container is created with: manual throughput
//! gets one partition per 6,000 RU/s begun (400 RU/s: one, 12,000: two, 30,000: five), autoscale
//! one per 10,000 RU/s of its maximum begun; a container sharing its database's throughput is
//! sized from the database's. A fixed count overrides that (tests that want many ranges).

use super::Throughput;

/// RU/s of manual throughput per initial physical partition.
pub(super) const MANUAL_RU_PER_PARTITION: u64 = 6_000;
/// RU/s of an autoscale maximum per initial physical partition.
pub(super) const AUTOSCALE_RU_PER_PARTITION: u64 = 10_000;
/// Most partitions a container starts with.
pub(super) const MAX_PARTITIONS: usize = 1024;

/// How new containers are partitioned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PartitionSizing {
    /// Every container gets this many partitions, whatever its throughput.
    Fixed(usize),
    /// As the service does, from the container's (or its database's) throughput.
    FromThroughput,
}

impl PartitionSizing {
    /// The partitions of a container created with `throughput` (its own, or its database's
    /// when it shares it).
    pub(crate) fn partitions(self, throughput: Throughput) -> usize {
        let count = match self {
            PartitionSizing::Fixed(n) => n,
            PartitionSizing::FromThroughput => {
                let (ru, per) = match throughput {
                    Throughput::Manual(ru) => (ru, MANUAL_RU_PER_PARTITION),
                    Throughput::Autoscale { max, .. } => (max, AUTOSCALE_RU_PER_PARTITION),
                };
                usize::try_from(ru.div_ceil(per)).unwrap_or(MAX_PARTITIONS)
            }
        };
        count.clamp(1, MAX_PARTITIONS)
    }
}

/// RU/s one range holds once a container exists: raising its throughput past this many per range
/// splits them.
pub(crate) const RAISED_RU_PER_RANGE: u64 = 10_000;

/// Whether a container of `ranges` ranges splits them when its throughput is raised to a ceiling
/// of `ru` RU/s: each range over its share ([`RAISED_RU_PER_RANGE`]) splits in two, round after
/// round, until they hold it (at most [`MAX_PARTITIONS`] ranges).
pub(crate) fn must_split(ranges: usize, ru: u64) -> bool {
    ranges < MAX_PARTITIONS
        && u64::try_from(ranges).is_ok_and(|r| r.saturating_mul(RAISED_RU_PER_RANGE) < ru)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_raise_splits_while_the_ranges_hold_less_than_it() {
        let table = [
            (1, 400, false),
            (1, 10_000, false),
            (1, 10_001, true),
            (1, 30_000, true),
            (2, 20_000, false),
            (2, 30_000, true),
            (4, 30_000, false),
            (5, 50_000, false),
            (0, 1, true),
            (MAX_PARTITIONS, u64::MAX, false),
            (MAX_PARTITIONS - 1, u64::MAX, true),
        ];
        for (ranges, ru, expected) in table {
            assert_eq!(
                must_split(ranges, ru),
                expected,
                "{ranges} ranges, {ru} RU/s"
            );
        }
    }

    #[test]
    fn sized_as_the_service_sizes() {
        let sized = PartitionSizing::FromThroughput;
        let cases = [
            (Throughput::Manual(400), 1),
            (Throughput::Manual(6_000), 1),
            (Throughput::Manual(6_001), 2),
            (Throughput::Manual(11_000), 2),
            (Throughput::Manual(12_000), 2),
            (Throughput::Manual(30_000), 5),
            (
                Throughput::Autoscale {
                    max: 1_000,
                    increment_percent: 0,
                },
                1,
            ),
            (
                Throughput::Autoscale {
                    max: 10_000,
                    increment_percent: 0,
                },
                1,
            ),
            (
                Throughput::Autoscale {
                    max: 20_001,
                    increment_percent: 0,
                },
                3,
            ),
            (Throughput::Manual(u64::MAX), MAX_PARTITIONS),
        ];
        for (throughput, expected) in cases {
            assert_eq!(sized.partitions(throughput), expected, "{throughput:?}");
        }
    }

    #[test]
    fn fixed_overrides_throughput() {
        assert_eq!(
            PartitionSizing::Fixed(4).partitions(Throughput::Manual(400)),
            4
        );
        assert_eq!(
            PartitionSizing::Fixed(0).partitions(Throughput::Manual(400)),
            1
        );
        assert_eq!(
            PartitionSizing::Fixed(5000).partitions(Throughput::Manual(400)),
            MAX_PARTITIONS
        );
    }
}

//! What becomes of a lease when the container's partition key ranges change: a pure decision
//! over the lease's range and the current ranges, and the child's continuation cut from the
//! parent's.
//!
//! A lease whose range now spans two or more partition key ranges (a split) is replaced by one
//! lease per part, each continuing from the parent's checkpoint (the service keeps a partition's
//! log sequence across a split, so the parent's position is a position in each child). A lease
//! whose range is now part of one larger range (a merge) is kept: it reads its part of the merged
//! range. Ranges that do not cover the lease (a stale listing) leave it alone until they do.

use crate::change_feed::{ContinuationData, FeedRange, RangePosition, MAX_FEED_RANGES};
use crate::error::CosmosError;
use crate::routing::TargetRange;

/// What to do with one lease.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum RangeChange {
    /// The lease reads one range (all of it, or its part of a merged one).
    Keep,
    /// Replace the lease by these children: (partition key range id, the part of the lease's
    /// range it covers), in key order.
    Split(Vec<(String, FeedRange)>),
    /// The listing does not cover the lease's range: read the ranges again later.
    NotCovered,
}

/// The decision for a lease of `lease` given the container's current `ranges` (leaves, any
/// order).
pub(crate) fn range_change(lease: &FeedRange, ranges: &[TargetRange]) -> RangeChange {
    let mut parts: Vec<(String, FeedRange)> = ranges
        .iter()
        .filter_map(|t| {
            FeedRange::new(t.min.clone(), t.max.clone())
                .ok()?
                .intersect(lease)
                .map(|p| (t.id.clone(), p))
        })
        .collect();
    parts.sort_by(|a, b| a.1.min().cmp(b.1.min()));
    let covered = parts.first().map(|p| p.1.min()) == Some(lease.min())
        && parts.last().map(|p| p.1.max()) == Some(lease.max())
        && parts.windows(2).all(|w| w[0].1.max() == w[1].1.min());
    match parts.len() {
        _ if !covered => RangeChange::NotCovered,
        1 => RangeChange::Keep,
        _ => RangeChange::Split(parts),
    }
}

/// The continuation a child lease of `child` starts from: the parent's positions cut to the
/// child's span. `None` when the parent had none (the child starts where the processor starts).
pub(crate) fn child_continuation(
    parent: Option<&str>,
    child: &FeedRange,
) -> Result<Option<String>, CosmosError> {
    let Some(token) = parent else {
        return Ok(None);
    };
    let data = ContinuationData::decode(token, MAX_FEED_RANGES)?;
    let ranges: Vec<RangePosition> = data
        .ranges
        .iter()
        .filter_map(|r| {
            let part = FeedRange::new(r.min.clone(), r.max.clone())
                .ok()?
                .intersect(child)?;
            Some(RangePosition {
                min: part.min().to_owned(),
                max: part.max().to_owned(),
                etag: r.etag.clone(),
            })
        })
        .collect();
    let span_ok = ranges.iter().map(|r| r.min.as_str()).min() == Some(child.min())
        && ranges.iter().map(|r| r.max.as_str()).max() == Some(child.max());
    if !span_ok {
        return Err(CosmosError::invalid_input(
            "the parent lease's continuation does not cover the child's range",
        ));
    }
    let cut = ContinuationData::new(
        data.container,
        data.all_versions,
        data.partition_key,
        data.start,
        ranges,
    );
    Ok(Some(cut.encode()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::change_feed::UnreadStart;

    fn t(id: &str, min: &str, max: &str) -> TargetRange {
        TargetRange {
            id: id.into(),
            min: min.into(),
            max: max.into(),
        }
    }

    fn r(min: &str, max: &str) -> FeedRange {
        FeedRange::new(min, max).unwrap()
    }

    #[test]
    fn the_decision_table() {
        let table: Vec<(FeedRange, Vec<TargetRange>, RangeChange)> = vec![
            // Unchanged.
            (
                r("", "80"),
                vec![t("0", "", "80"), t("1", "80", "FF")],
                RangeChange::Keep,
            ),
            // Split in two: one child each, in key order whatever the listing's order.
            (
                r("", "80"),
                vec![t("1", "80", "FF"), t("3", "40", "80"), t("2", "", "40")],
                RangeChange::Split(vec![("2".into(), r("", "40")), ("3".into(), r("40", "80"))]),
            ),
            // Split in three.
            (
                r("40", "FF"),
                vec![t("4", "40", "60"), t("5", "60", "A0"), t("6", "A0", "FF")],
                RangeChange::Split(vec![
                    ("4".into(), r("40", "60")),
                    ("5".into(), r("60", "A0")),
                    ("6".into(), r("A0", "FF")),
                ]),
            ),
            // Merged into a bigger range: the lease reads its part.
            (r("", "40"), vec![t("7", "", "FF")], RangeChange::Keep),
            // A stale or partial listing: wait.
            (r("", "80"), vec![t("2", "", "40")], RangeChange::NotCovered),
            (
                r("", "80"),
                vec![t("2", "", "30"), t("3", "40", "80")],
                RangeChange::NotCovered,
            ),
            (r("", "80"), vec![], RangeChange::NotCovered),
        ];
        for (lease, ranges, want) in table {
            assert_eq!(
                range_change(&lease, &ranges),
                want,
                "{lease:?} over {ranges:?}"
            );
        }
    }

    fn token(ranges: &[(&str, &str, Option<&str>)]) -> String {
        ContinuationData::new(
            "dbs/d/colls/c".into(),
            false,
            None,
            UnreadStart::Beginning,
            ranges
                .iter()
                .map(|(a, b, e)| RangePosition {
                    min: (*a).into(),
                    max: (*b).into(),
                    etag: e.map(str::to_owned),
                })
                .collect(),
        )
        .encode()
    }

    #[test]
    fn a_child_continues_from_the_parents_position() {
        let parent = token(&[("", "80", Some("\"41\""))]);
        let child = child_continuation(Some(&parent), &r("40", "80"))
            .unwrap()
            .unwrap();
        assert_eq!(child, token(&[("40", "80", Some("\"41\""))]));
        // A parent the reader had already cut keeps each part's own position.
        let parent = token(&[("", "40", Some("\"50\"")), ("40", "80", Some("\"41\""))]);
        let child = child_continuation(Some(&parent), &r("", "40"))
            .unwrap()
            .unwrap();
        assert_eq!(child, token(&[("", "40", Some("\"50\""))]));
        // No checkpoint yet: none for the child either.
        assert_eq!(child_continuation(None, &r("", "40")).unwrap(), None);
        // A continuation of another span is refused, as is garbage.
        let other = token(&[("80", "FF", Some("\"1\""))]);
        assert!(child_continuation(Some(&other), &r("", "40")).is_err());
        assert!(child_continuation(Some("!!"), &r("", "40")).is_err());
    }
}

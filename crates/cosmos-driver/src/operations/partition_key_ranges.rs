//! A container's partition key ranges, as every fan-out reads them (queries, the change feed, read
//! many, bulk, feed ranges): the driver's kept reading, or the whole listing read again through
//! the one paging loop ([`super::pager::read_whole`]) and kept for the next operation.

use std::sync::Arc;

use serde::Deserialize;

use super::pager::read_whole;
use crate::error::CosmosError;
use crate::operation::CosmosOperation;
use crate::options::OperationOptions;
use crate::pipeline::DriverCore;
use crate::protocol::ContainerReference;
use crate::routing::{RangeParents, TargetRange};

#[derive(Deserialize)]
struct ListedRange {
    id: String,
    #[serde(rename = "minInclusive")]
    min: String,
    #[serde(rename = "maxExclusive")]
    max: String,
    /// The ranges it was born of (a split's or merge's), oldest first.
    #[serde(default)]
    parents: Vec<String>,
}

/// The ranges of `container` in key order: the driver's last reading unless `refresh` (or none
/// is kept), else a fresh listing (with the routing, strategy, deadline and consistency of
/// `options`, the operation it serves), kept until a request finds a range gone.
pub(crate) async fn partition_key_ranges(
    core: &DriverCore,
    container: &ContainerReference,
    refresh: bool,
    options: &OperationOptions,
) -> Result<Vec<TargetRange>, CosmosError> {
    let link = container.link();
    if !refresh {
        if let Some(kept) = core.containers.partition_key_ranges(link) {
            return Ok(kept.to_vec());
        }
    }
    let listing = CosmosOperation::read_partition_key_ranges(container.clone());
    let listed: Vec<ListedRange> = read_whole(core, listing, &options.for_metadata()).await?;
    let parents: RangeParents = listed
        .iter()
        .filter(|r| !r.parents.is_empty())
        .map(|r| {
            let ids: Arc<[Arc<str>]> = r.parents.iter().map(|p| Arc::from(p.as_str())).collect();
            (Arc::from(r.id.as_str()), ids)
        })
        .collect();
    core.containers.remember_range_parents(link, parents);
    let ranges = leaves(
        listed
            .into_iter()
            .map(|r| TargetRange {
                id: r.id,
                min: r.min,
                max: r.max,
            })
            .collect(),
    );
    core.containers
        .remember_partition_key_ranges(link, Arc::from(ranges.clone()));
    Ok(ranges)
}

/// The ranges a listing's reading targets, in key order, covering its key space once: a listing
/// can show a split parent beside its children. A parent is replaced by its children only when
/// they cover all of it; while only some are listed (a listing caught mid-split), the parent is
/// kept and those children are dropped, so no part of the key space is lost or read twice (a
/// request to the retired parent answers "gone" and the operation re-plans).
fn leaves(mut listed: Vec<TargetRange>) -> Vec<TargetRange> {
    listed.sort_by(|a, b| a.min.cmp(&b.min).then_with(|| b.max.cmp(&a.max)));
    listed.dedup_by(|a, b| a.min == b.min && a.max == b.max);
    if listed.windows(2).all(|w| w[0].max <= w[1].min) {
        // No range overlaps another: the usual listing, with no split in sight.
        return listed;
    }
    let inside = |outer: &TargetRange, r: &TargetRange| {
        r.min >= outer.min && r.max <= outer.max && (r.min != outer.min || r.max != outer.max)
    };
    // Which ranges the ranges strictly inside them cover from end to end.
    let covered: Vec<bool> = listed
        .iter()
        .map(|outer| {
            let parts: Vec<&TargetRange> = listed.iter().filter(|r| inside(outer, r)).collect();
            !parts.is_empty() && tiles(outer, &parts)
        })
        .collect();
    let uncovered: Vec<&TargetRange> = listed
        .iter()
        .zip(&covered)
        .filter(|(_, c)| !**c)
        .map(|(r, _)| r)
        .collect();
    listed
        .iter()
        .zip(&covered)
        .filter(|(r, c)| !**c && !uncovered.iter().any(|o| inside(o, r)))
        .map(|(r, _)| r.clone())
        .collect()
}

/// Whether chains of `parts` (ranges inside `outer`) reach from `outer`'s start to its end.
fn tiles(outer: &TargetRange, parts: &[&TargetRange]) -> bool {
    let mut reached: Vec<&str> = vec![outer.min.as_str()];
    let mut i = 0;
    while let Some(at) = reached.get(i).copied() {
        if at == outer.max {
            return true;
        }
        for p in parts.iter().filter(|p| p.min == at) {
            if !reached.contains(&p.max.as_str()) {
                reached.push(p.max.as_str());
            }
        }
        i += 1;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(id: &str, min: &str, max: &str) -> TargetRange {
        TargetRange {
            id: id.into(),
            min: min.into(),
            max: max.into(),
        }
    }

    #[test]
    fn a_listing_keeps_its_leaves_in_key_order() {
        let table: Vec<(Vec<TargetRange>, Vec<&str>)> = vec![
            (vec![], vec![]),
            (vec![r("1", "80", "FF"), r("0", "", "80")], vec!["0", "1"]),
            // The parent listed beside its children.
            (
                vec![r("0", "", "FF"), r("1", "", "80"), r("2", "80", "FF")],
                vec!["1", "2"],
            ),
            // Only one child listed yet: the parent stays, the lone child goes.
            (vec![r("0", "", "FF"), r("1", "", "80")], vec!["0"]),
            (vec![r("2", "80", "FF"), r("0", "", "FF")], vec!["0"]),
            // Two generations: the first child split again, the second child not listed.
            (
                vec![
                    r("0", "", "FF"),
                    r("1", "", "80"),
                    r("3", "", "40"),
                    r("4", "40", "80"),
                ],
                vec!["0"],
            ),
            // Two generations, all listed: the grandchildren and the second child.
            (
                vec![
                    r("0", "", "FF"),
                    r("1", "", "80"),
                    r("2", "80", "FF"),
                    r("3", "", "40"),
                    r("4", "40", "80"),
                ],
                vec!["3", "4", "2"],
            ),
            // A split child whose own children are only half listed: it stays, with its sibling.
            (
                vec![r("1", "", "80"), r("2", "80", "FF"), r("3", "", "40")],
                vec!["1", "2"],
            ),
            // The same range listed twice counts once.
            (
                vec![r("0", "", "80"), r("0", "", "80"), r("1", "80", "FF")],
                vec!["0", "1"],
            ),
        ];
        for (listed, want) in table {
            let got: Vec<String> = leaves(listed.clone()).into_iter().map(|r| r.id).collect();
            assert_eq!(got, want, "{listed:?}");
        }
    }
}

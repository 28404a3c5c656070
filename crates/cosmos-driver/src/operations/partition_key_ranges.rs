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
use crate::routing::TargetRange;

#[derive(Deserialize)]
struct ListedRange {
    id: String,
    #[serde(rename = "minInclusive")]
    min: String,
    #[serde(rename = "maxExclusive")]
    max: String,
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

/// The leaves of a listing, in key order: a listing can show a split parent beside its
/// children; the parent (a range that strictly contains another) is dropped.
fn leaves(mut listed: Vec<TargetRange>) -> Vec<TargetRange> {
    listed.sort_by(|a, b| a.min.cmp(&b.min));
    let all = listed.clone();
    listed.retain(|r| {
        !all.iter().any(|o| {
            o.id != r.id && o.min >= r.min && o.max <= r.max && (o.min != r.min || o.max != r.max)
        })
    });
    listed
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
        let table: [(Vec<TargetRange>, Vec<&str>); 3] = [
            (vec![], vec![]),
            (vec![r("1", "80", "FF"), r("0", "", "80")], vec!["0", "1"]),
            // The parent listed beside its children.
            (
                vec![r("0", "", "FF"), r("1", "", "80"), r("2", "80", "FF")],
                vec!["1", "2"],
            ),
        ];
        for (listed, want) in table {
            let got: Vec<String> = leaves(listed.clone()).into_iter().map(|r| r.id).collect();
            assert_eq!(got, want, "{listed:?}");
        }
    }
}

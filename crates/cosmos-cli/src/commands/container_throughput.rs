//! `cosmos container throughput`: a container's own throughput and its throughput bucket caps;
//! `--bucket ID=PERCENT` (repeated, with `--default-bucket ID` marking one as the default) or
//! `--clear-buckets` sets the caps first.

use cosmos_driver::resources::ThroughputBucketLimit;
use cosmos_driver::{CosmosDriver, ThroughputResponse};
use serde_json::{json, Value};

use super::printing::{print, success};
use super::CommandError;
use crate::args::target::TargetArgs;

/// What is printed: the throughput (manual RU/s or the autoscale maximum), whether it is
/// autoscale, and the bucket caps as the offer spells them.
pub fn summary(id: &str, answer: &ThroughputResponse) -> Value {
    let throughput = answer.throughput();
    let buckets: Vec<Value> = answer
        .throughput_buckets()
        .iter()
        .map(|b| {
            let mut v =
                json!({"id": b.id(), "maxThroughputPercentage": b.max_throughput_percentage()});
            if b.is_default() {
                v["isDefaultBucket"] = Value::Bool(true);
            }
            v
        })
        .collect();
    json!({
        "id": id,
        "throughput": throughput
            .manual_throughput()
            .or(throughput.autoscale_max_throughput()),
        "autoscale": throughput.autoscale_max_throughput().is_some(),
        "throughputBuckets": buckets,
    })
}

/// The caps a command line asks for.
pub struct Caps<'a> {
    /// `--bucket ID=PERCENT`, in order.
    pub buckets: &'a [(u8, u8)],
    /// `--default-bucket ID`.
    pub default: Option<u8>,
    /// `--clear-buckets`.
    pub clear: bool,
}

/// The limits `buckets` and `default` name: each bucket once, the default one of them.
pub fn limits(
    buckets: &[(u8, u8)],
    default: Option<u8>,
) -> Result<Vec<ThroughputBucketLimit>, CommandError> {
    let mut limits = Vec::with_capacity(buckets.len());
    for &(bucket, percent) in buckets {
        if limits
            .iter()
            .any(|l: &ThroughputBucketLimit| l.id() == bucket)
        {
            return Err(CommandError::Input(format!(
                "--bucket names bucket {bucket} more than once"
            )));
        }
        let limit = ThroughputBucketLimit::new(bucket, percent)?;
        limits.push(if default == Some(bucket) {
            limit.as_default()
        } else {
            limit
        });
    }
    if let Some(id) = default.filter(|id| !limits.iter().any(|l| l.id() == *id)) {
        return Err(CommandError::Input(format!(
            "--default-bucket {id} names no bucket given with --bucket"
        )));
    }
    Ok(limits)
}

/// Reads (and with buckets or `clear`, first sets) the container's bucket caps.
pub async fn run(
    driver: &CosmosDriver,
    target: &TargetArgs,
    (db, id): (&str, &str),
    caps: Caps<'_>,
) -> Result<(), CommandError> {
    let limits = limits(caps.buckets, caps.default)?;
    let container = driver.container(db, id);
    let answer = if caps.clear || !limits.is_empty() {
        container.replace_throughput_buckets(limits).await?
    } else {
        container.read_throughput().await?
    };
    print(&success(
        summary(id, &answer),
        answer.response(),
        target.diagnostics,
    ));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_bucket_is_one_of_those_given() {
        type Row<'a> = (&'a [(u8, u8)], Option<u8>, Result<Vec<(u8, bool)>, &'a str>);
        let table: &[Row] = &[
            (&[], None, Ok(vec![])),
            (&[(1, 20)], None, Ok(vec![(1, false)])),
            (
                &[(1, 20), (2, 50)],
                Some(2),
                Ok(vec![(1, false), (2, true)]),
            ),
            (&[(1, 20)], Some(3), Err("--default-bucket 3")),
            (&[], Some(1), Err("--default-bucket 1")),
            (&[(1, 20), (1, 30)], None, Err("more than once")),
        ];
        for (buckets, default, want) in table {
            let got = limits(buckets, *default).map(|l| {
                l.iter()
                    .map(|b| (b.id(), b.is_default()))
                    .collect::<Vec<_>>()
            });
            match (got, want) {
                (Ok(got), Ok(want)) => assert_eq!(&got, want, "{buckets:?} {default:?}"),
                (Err(CommandError::Input(e)), Err(part)) => {
                    assert!(e.contains(part), "{e}")
                }
                (got, want) => panic!("{buckets:?} {default:?}: {got:?} vs {want:?}"),
            }
        }
    }
}

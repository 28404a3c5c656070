//! `cosmos container throughput`: a container's own throughput and its throughput bucket caps;
//! `--bucket ID=PERCENT` (repeated) or `--clear-buckets` sets the caps first.

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
        .map(|b| json!({"id": b.id(), "maxThroughputPercentage": b.max_throughput_percentage()}))
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

/// Reads (and with `buckets` or `clear`, first sets) the container's bucket caps.
pub async fn run(
    driver: &CosmosDriver,
    target: &TargetArgs,
    (db, id): (&str, &str),
    buckets: &[(u8, u8)],
    clear: bool,
) -> Result<(), CommandError> {
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
        limits.push(ThroughputBucketLimit::new(bucket, percent)?);
    }
    let container = driver.container(db, id);
    let answer = if clear || !limits.is_empty() {
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

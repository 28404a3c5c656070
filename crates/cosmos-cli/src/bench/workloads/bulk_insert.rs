//! The `bulk-insert` workload: one bulk run creating `--items` new items (the benchmark's item
//! bodies) in a container made for the run, measured as items per second and RU per item. The
//! container is deleted afterwards.

use std::collections::BTreeMap;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use cosmos_driver::bulk::{BulkOperation, BulkOptions};
use cosmos_driver::{CosmosDriver, CosmosOperation, OperationOptions, PartitionKeyDefinition};
use http::{HeaderName, HeaderValue};

use super::setup::describe;
use crate::bench::items::{item_body, item_id, PARTITION_KEY_PATH};
use crate::bench::report::{BulkReport, HedgeReport, LatencyReport, RuReport};
use crate::bench::{RunLabels, RunReport};

/// What one bulk-insert run is asked to do.
#[derive(Clone, Debug)]
pub struct BulkInsertRun {
    /// Items to create.
    pub items: u64,
    /// RU/s provisioned on the run's container (the service's default when `None`).
    pub throughput: Option<u32>,
    /// Whether the embedded emulator enforces the container's RU/s.
    pub enforce_throughput: bool,
}

const OFFER_THROUGHPUT: HeaderName = HeaderName::from_static("x-ms-offer-throughput");

/// Creates a container named after `base`, bulk-inserts the items into it, deletes it, and
/// reports the run.
pub async fn bulk_insert(
    driver: &CosmosDriver,
    database: &str,
    base: &str,
    labels: RunLabels,
    run: &BulkInsertRun,
) -> Result<RunReport, String> {
    let nonce = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() % 1_000_000_000);
    let name = format!("{base}-bulk-{nonce}");
    let reference = cosmos_driver::DatabaseReference::new(database)
        .and_then(|d| d.container(&name))
        .map_err(|e| format!("bad database or container id: {e}"))?;
    let pk = PartitionKeyDefinition::new(PARTITION_KEY_PATH).map_err(|e| e.to_string())?;
    let mut create = CosmosOperation::create_container(reference.clone(), pk);
    if let Some(ru) = run.throughput {
        create = create.with_header(OFFER_THROUGHPUT, HeaderValue::from(ru));
    }
    let options = OperationOptions::default();
    driver
        .execute(create, &options)
        .await
        .map_err(|e| format!("cannot create container {name}: {}", describe(&e)))?;

    let mut refused = 0u64;
    let operations = (0..run.items).filter_map(|i| {
        let op = BulkOperation::create(item_id(i), &item_body(i));
        refused += u64::from(op.is_err());
        op.ok()
    });
    let started = Instant::now();
    let answer = driver
        .container(database, &name)
        .bulk_with(BulkOptions::new().with_content_response(false))
        .run_iter(operations)
        .await;
    let elapsed = started.elapsed().as_secs_f64();
    let _ = driver
        .execute(CosmosOperation::delete_container(reference), &options)
        .await;
    let response = answer.map_err(|e| format!("the bulk run failed: {}", describe(&e)))?;

    let mut created = 0u64;
    let mut errors_by_status: BTreeMap<String, u64> = BTreeMap::new();
    for result in response.results() {
        match result {
            Ok(r) if r.status.status == 201 => created += 1,
            Ok(r) => {
                *errors_by_status
                    .entry(format!("{}/{}", r.status.status, r.status.sub_status))
                    .or_default() += 1
            }
            Err(e) => {
                let key = match (e.status(), e.sub_status()) {
                    (Some(s), sub) => format!("{s}/{}", sub.unwrap_or(0)),
                    _ => "no_response".into(),
                };
                *errors_by_status.entry(key).or_default() += 1;
            }
        }
    }
    if refused > 0 {
        errors_by_status.insert("refused".into(), refused);
    }
    let stats = response.stats();
    let items_per_second = if elapsed > 0.0 {
        created as f64 / elapsed
    } else {
        0.0
    };
    let ru_per_item = if run.items == 0 {
        0.0
    } else {
        stats.request_charge / run.items as f64
    };
    let round = |v: f64| (v * 1000.0).round() / 1000.0;
    let zero = LatencyReport {
        p50: 0.0,
        p90: 0.0,
        p99: 0.0,
        p999: 0.0,
        max: 0.0,
    };
    Ok(RunReport {
        workload: labels.workload,
        profile: labels.profile,
        hedging: labels.hedging,
        rate: labels.rate,
        concurrency: labels.concurrency,
        ops: run.items,
        errors: run.items - created,
        errors_by_status,
        duration_s: round(elapsed),
        throughput_ops_s: round(items_per_second),
        latency_ms: zero,
        latency_percentiles_ms: Vec::new(),
        hedge: HedgeReport {
            hedged_ops: 0,
            alternate_won: 0,
            extra_requests_fraction: 0.0,
            primary_over_threshold_fraction: 0.0,
            budget_denied_ops: 0,
        },
        ru: RuReport {
            caller_visible: round(stats.request_charge),
            total: round(stats.request_charge),
        },
        patch: None,
        region_reads_per_second: None,
        chaos: None,
        vector: None,
        priority: None,
        bulk: Some(BulkReport {
            items: run.items,
            created,
            items_per_second: round(items_per_second),
            ru_per_item: round(ru_per_item),
            ru_total: round(stats.request_charge),
            batches: stats.batches as u64,
            throttled: stats.throttled as u64,
            range_refreshes: stats.range_refreshes as u64,
            container_throughput: run.throughput,
            enforce_throughput: run.enforce_throughput,
        }),
    })
}

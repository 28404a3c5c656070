//! The chaos workload: point reads, queries, creates, replaces and PATCH increments on a few
//! counters, each write's reported outcome recorded in the ledger for the read-back.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

use cosmos_driver::options::DEFAULT_PATCH_MAX_ATTEMPTS;
use cosmos_driver::patch::PatchInstructions;
use cosmos_driver::query::{Query, QueryOptions, QueryScope};
use cosmos_driver::{
    ContainerClient, ContainerReference, CosmosDriver, CosmosError, CosmosOperation,
    CosmosResponse, OperationOptions,
};
use futures::TryStreamExt;
use serde_json::{json, Value};
use tokio::time::Instant;

use super::op_report::{report_err, report_ok};
use super::setup::{describe, SeededItems};
use crate::bench::chaos::is_ambiguous;
use crate::bench::chaos::ledger::{Ledger, ReplaceRecord, WriteOutcome};
use crate::bench::items::{item_for, item_id};
use crate::bench::workload::{OpReport, Workload};

/// What operation `seq` does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChaosOp {
    /// A point read of a seeded item.
    Read,
    /// A single-partition query for an item this run created (a seeded one before any exists).
    Query,
    /// A create of a new item.
    Create,
    /// A replace of one of the replace targets with a new version.
    Replace,
    /// A PATCH incrementing one of the counters by one.
    Patch,
}

use ChaosOp::{Create, Patch, Query as Q, Read, Replace};
/// Of every 20 operations: 7 reads, 2 queries, 4 creates, 3 replaces and 4 patches.
const MIX: [ChaosOp; 20] = [
    Read, Create, Read, Replace, Patch, Read, Create, Q, Read, Patch, Replace, Create, Read, Patch,
    Read, Replace, Create, Patch, Read, Q,
];

/// What operation `seq` of the mix does.
pub fn chaos_op(seq: u64) -> ChaosOp {
    MIX[(seq % MIX.len() as u64) as usize]
}

/// Replace targets and counters of a run.
pub const REPLACE_TARGETS: usize = 50;
/// Counters incremented by PATCH.
pub const COUNTERS: usize = 8;

/// The ids a run writes, unique to the run (`tag`), each its own partition key.
#[derive(Clone, Debug)]
pub struct ChaosIds {
    tag: String,
    /// Items replaced again and again, each replace writing a new version `v`.
    pub replace_targets: Vec<String>,
    /// Items whose `n` PATCH increments.
    pub counters: Vec<String>,
}

impl ChaosIds {
    /// The ids of a run tagged `tag`.
    pub fn new(tag: &str) -> Self {
        ChaosIds {
            tag: tag.to_owned(),
            replace_targets: (0..REPLACE_TARGETS)
                .map(|k| format!("chaos-{tag}-r-{k}"))
                .collect(),
            counters: (0..COUNTERS)
                .map(|k| format!("chaos-{tag}-n-{k}"))
                .collect(),
        }
    }

    /// The id operation `seq` creates.
    pub fn created(&self, seq: u64) -> String {
        format!("chaos-{}-c-{seq}", self.tag)
    }
}

/// Writes the replace targets (version 0) and the counters (0) before the run.
pub async fn prepare(
    driver: &CosmosDriver,
    container: &ContainerReference,
    ids: &ChaosIds,
) -> Result<(), String> {
    let docs = ids
        .replace_targets
        .iter()
        .map(|id| json!({"id": id, "pk": id, "v": 0}))
        .chain(
            ids.counters
                .iter()
                .map(|id| json!({"id": id, "pk": id, "n": 0})),
        );
    for doc in docs {
        let id = doc["id"].as_str().unwrap_or_default().to_owned();
        let op = CosmosOperation::upsert_item(container.clone())
            .with_partition_key(id.as_str())
            .with_json_body(&doc)
            .map_err(|e| describe(&e))?;
        driver
            .execute(op, &OperationOptions::default())
            .await
            .map_err(|e| format!("cannot write {id}: {}", describe(&e)))?;
    }
    Ok(())
}

/// The chaos mix through one driver.
pub struct ChaosWorkload {
    driver: CosmosDriver,
    container: ContainerReference,
    client: ContainerClient,
    items: SeededItems,
    ids: ChaosIds,
    ledger: Arc<Ledger>,
    zero: Instant,
    next_version: AtomicU64,
    started: Arc<AtomicU64>,
    patch_body: Vec<u8>,
    options: OperationOptions,
    slow_after: Duration,
}

/// A short name for an error: `409/0`, or its kind when there was no answer.
fn error_label(e: &CosmosError) -> String {
    match (e.status(), e.sub_status()) {
        (Some(s), sub) => format!("{s}/{}", sub.unwrap_or(0)),
        (None, _) => format!("{:?}", e.kind()),
    }
}

impl ChaosWorkload {
    /// The mix over `items` (reads) and `ids` (writes); times are recorded from `zero`.
    pub fn new(
        driver: CosmosDriver,
        container: ContainerReference,
        items: SeededItems,
        ids: ChaosIds,
        ledger: Arc<Ledger>,
        zero: Instant,
        slow_after: Duration,
    ) -> Result<Self, String> {
        let patch_body = serde_json::to_vec(&PatchInstructions::new().increment("/n", 1))
            .map_err(|e| format!("cannot encode the patch: {e}"))?;
        let client = driver.container(container.database().id(), container.id());
        Ok(Self {
            driver,
            container,
            client,
            items,
            ids,
            ledger,
            zero,
            next_version: AtomicU64::new(0),
            started: Arc::new(AtomicU64::new(0)),
            patch_body,
            options: OperationOptions::default()
                .with_patch_max_attempts(DEFAULT_PATCH_MAX_ATTEMPTS),
            slow_after,
        })
    }

    /// The count of operations started (warm-up included), shared: one added as each starts.
    pub fn started(&self) -> Arc<AtomicU64> {
        self.started.clone()
    }

    fn since_zero(&self) -> Duration {
        Instant::now().saturating_duration_since(self.zero)
    }

    /// The outcome of a write, with the error counted.
    fn outcome(&self, what: &str, result: &Result<CosmosResponse, CosmosError>) -> WriteOutcome {
        match result {
            Ok(_) => WriteOutcome::Acknowledged,
            Err(e) => {
                self.ledger.error(format!("{what} {}", error_label(e)));
                if is_ambiguous(e) {
                    WriteOutcome::Ambiguous
                } else {
                    WriteOutcome::Failed
                }
            }
        }
    }

    fn report(&self, result: &Result<CosmosResponse, CosmosError>, patch: bool) -> OpReport {
        let limit = patch.then_some(DEFAULT_PATCH_MAX_ATTEMPTS);
        match result {
            Ok(r) => report_ok(r, self.slow_after, limit),
            Err(e) => report_err(e, self.slow_after, limit),
        }
    }

    async fn read(&self, seq: u64) -> OpReport {
        let (item, pk) = self.items.get(item_for(seq, self.items.len()));
        let op = CosmosOperation::read_item(item.clone()).with_partition_key(pk.clone());
        let result = self.driver.execute(op, &OperationOptions::default()).await;
        self.ledger.read(result.is_ok());
        if let Err(e) = &result {
            self.ledger.error(format!("read {}", error_label(e)));
        }
        self.report(&result, false)
    }

    async fn query(&self, seq: u64) -> OpReport {
        let id = self
            .ledger
            .acknowledged_id(seq)
            .unwrap_or_else(|| item_id(item_for(seq, self.items.len())));
        let query = match Query::new("SELECT * FROM c WHERE c.id = @id").with_parameter("@id", &id)
        {
            Ok(q) => q,
            Err(e) => return report_err(&e, self.slow_after, None),
        };
        let pages = self
            .client
            .query_items_with::<Value>(
                query,
                QueryScope::PartitionKey(id.as_str().into()),
                QueryOptions::new(),
            )
            .into_pages();
        let result: Result<Vec<_>, CosmosError> = pages.try_collect().await;
        self.ledger.read(result.is_ok());
        match result {
            Ok(_) => OpReport::ok(),
            Err(e) => {
                self.ledger.error(format!("query {}", error_label(&e)));
                report_err(&e, self.slow_after, None)
            }
        }
    }

    async fn create(&self, seq: u64) -> OpReport {
        let id = self.ids.created(seq);
        let op = match CosmosOperation::create_item(self.container.clone())
            .with_partition_key(id.as_str())
            .with_json_body(&json!({"id": id, "pk": id, "seq": seq}))
        {
            Ok(op) => op,
            Err(e) => return report_err(&e, self.slow_after, None),
        };
        let result = self.driver.execute(op, &self.options).await;
        let outcome = self.outcome("create", &result);
        self.ledger.create(id, outcome, self.since_zero());
        self.report(&result, false)
    }

    async fn replace(&self, seq: u64) -> OpReport {
        let target = (seq / MIX.len() as u64 * 3 + seq % 7) as usize % REPLACE_TARGETS;
        let id = &self.ids.replace_targets[target];
        let version = self.next_version.fetch_add(1, Relaxed) + 1;
        let item = match self.container.item(id) {
            Ok(item) => item,
            Err(e) => return report_err(&e.into(), self.slow_after, None),
        };
        let op = match CosmosOperation::replace_item(item)
            .with_partition_key(id.as_str())
            .with_json_body(&json!({"id": id, "pk": id, "v": version}))
        {
            Ok(op) => op,
            Err(e) => return report_err(&e, self.slow_after, None),
        };
        let started = self.since_zero();
        let result = self.driver.execute(op, &self.options).await;
        let outcome = self.outcome("replace", &result);
        self.ledger.replace(ReplaceRecord {
            target,
            version,
            started,
            finished: self.since_zero(),
            outcome,
        });
        self.report(&result, false)
    }

    async fn patch(&self, seq: u64) -> OpReport {
        let counter = (seq / MIX.len() as u64) as usize % COUNTERS;
        let id = &self.ids.counters[counter];
        let item = match self.container.item(id) {
            Ok(item) => item,
            Err(e) => return report_err(&e.into(), self.slow_after, None),
        };
        let op = CosmosOperation::patch_item(item)
            .with_partition_key(id.as_str())
            .with_body(self.patch_body.clone());
        let result = self.driver.execute(op, &self.options).await;
        let outcome = self.outcome("patch", &result);
        self.ledger.increment(counter, outcome, self.since_zero());
        self.report(&result, true)
    }
}

impl Workload for ChaosWorkload {
    async fn run_op(&self, seq: u64) -> OpReport {
        self.started.fetch_add(1, Relaxed);
        match chaos_op(seq) {
            Read => self.read(seq).await,
            Q => self.query(seq).await,
            Create => self.create(seq).await,
            Replace => self.replace(seq).await,
            Patch => self.patch(seq).await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn twenty_ops_hold_the_mix() {
        let ops: Vec<ChaosOp> = (40..60).map(chaos_op).collect();
        let count = |op| ops.iter().filter(|o| **o == op).count();
        assert_eq!(
            [
                count(Read),
                count(Q),
                count(Create),
                count(Replace),
                count(Patch)
            ],
            [7, 2, 4, 3, 4]
        );
    }

    #[test]
    fn ids_are_unique_per_run_and_operation() {
        let ids = ChaosIds::new("t1");
        assert_eq!(ids.replace_targets.len(), REPLACE_TARGETS);
        assert_eq!(ids.counters.len(), COUNTERS);
        assert_eq!(ids.created(7), "chaos-t1-c-7");
        assert_ne!(ChaosIds::new("t2").created(7), ids.created(7));
        let mut all: Vec<&String> = ids.replace_targets.iter().chain(&ids.counters).collect();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), REPLACE_TARGETS + COUNTERS);
    }
}

//! After the run, with every fault lifted: reads back each created item, each replace target and
//! each counter through the driver.

use std::time::Duration;

use cosmos_driver::{ContainerReference, CosmosDriver, CosmosOperation, OperationOptions};
use futures::StreamExt;
use serde_json::Value;

use super::ledger::LedgerSnapshot;
use super::verdict::{Presence, ReadBack};

/// Reads in flight at once.
const CONCURRENCY: usize = 32;
/// Attempts per item before it counts as unreadable (404 ends at once).
const ATTEMPTS: u32 = 5;
const PAUSE: Duration = Duration::from_millis(200);

/// The item `id` (partition key equal to its id): `Ok(None)` when absent, `Err` when unreadable.
async fn read_doc(
    driver: &CosmosDriver,
    container: &ContainerReference,
    id: &str,
) -> Result<Option<Value>, ()> {
    let item = container.item(id).map_err(|_| ())?;
    for attempt in 1..=ATTEMPTS {
        let op = CosmosOperation::read_item(item.clone()).with_partition_key(id);
        match driver.execute(op, &OperationOptions::default()).await {
            Ok(r) => return r.json::<Value>().map(Some).map_err(|_| ()),
            Err(e) if e.is_not_found() => return Ok(None),
            Err(_) if attempt < ATTEMPTS => tokio::time::sleep(PAUSE).await,
            Err(_) => {}
        }
    }
    Err(())
}

async fn read_all(
    driver: &CosmosDriver,
    container: &ContainerReference,
    ids: Vec<String>,
) -> Vec<Result<Option<Value>, ()>> {
    futures::stream::iter(ids)
        .map(|id| async move { read_doc(driver, container, &id).await })
        .buffered(CONCURRENCY)
        .collect()
        .await
}

/// Reads back everything `ledger` wrote, plus the replace targets and counters (by id).
pub async fn read_back(
    driver: &CosmosDriver,
    container: &ContainerReference,
    ledger: &LedgerSnapshot,
    replace_targets: &[String],
    counters: &[String],
) -> ReadBack {
    let created: Vec<String> = ledger.creates.iter().map(|c| c.id.clone()).collect();
    let creates = read_all(driver, container, created)
        .await
        .into_iter()
        .map(|r| match r {
            Ok(Some(_)) => Presence::Present,
            Ok(None) => Presence::Absent,
            Err(()) => Presence::Unknown,
        })
        .collect();
    let field = |r: Result<Option<Value>, ()>, name: &str| -> Option<Value> {
        r.ok().flatten().and_then(|doc| doc.get(name).cloned())
    };
    let replace_versions = read_all(driver, container, replace_targets.to_vec())
        .await
        .into_iter()
        .map(|r| field(r, "v").and_then(|v| v.as_u64()))
        .collect();
    let counters = read_all(driver, container, counters.to_vec())
        .await
        .into_iter()
        .map(|r| field(r, "n").and_then(|v| v.as_i64()))
        .collect();
    ReadBack {
        creates,
        replace_versions,
        counters,
    }
}

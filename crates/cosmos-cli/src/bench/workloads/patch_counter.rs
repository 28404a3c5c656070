//! Every operation increments one shared counter item with PATCH, carried out as the chosen
//! `PatchStrategy` says: with the driver's Read-Modify-Write loop concurrent operations conflict
//! and retry on 412; with the service's PATCH verb each is one request.

use std::time::Duration;

use cosmos_driver::options::DEFAULT_PATCH_MAX_ATTEMPTS;
use cosmos_driver::patch::PatchInstructions;
use cosmos_driver::{
    CosmosDriver, CosmosOperation, ItemReference, OperationOptions, PartitionKey, PatchStrategy,
};

use super::op_report::{report_err, report_ok};
use crate::bench::workload::{OpReport, Workload};

/// Increments `/n` of the counter item by one per operation.
pub struct PatchCounterWorkload {
    driver: CosmosDriver,
    counter: ItemReference,
    pk: PartitionKey,
    body: Vec<u8>,
    options: OperationOptions,
    slow_after: Duration,
}

impl PatchCounterWorkload {
    /// Increments `counter` through `driver`, each PATCH carried out as `strategy` says.
    pub fn new(
        driver: CosmosDriver,
        counter: ItemReference,
        pk: PartitionKey,
        slow_after: Duration,
        strategy: PatchStrategy,
    ) -> Result<Self, String> {
        let instructions = PatchInstructions::new().increment("/n", 1);
        let body = serde_json::to_vec(&instructions)
            .map_err(|e| format!("cannot encode the patch: {e}"))?;
        let options = OperationOptions::default()
            .with_patch_max_attempts(DEFAULT_PATCH_MAX_ATTEMPTS)
            .with_patch_strategy(strategy);
        Ok(Self {
            driver,
            counter,
            pk,
            body,
            options,
            slow_after,
        })
    }
}

impl Workload for PatchCounterWorkload {
    async fn run_op(&self, _seq: u64) -> OpReport {
        let op = CosmosOperation::patch_item(self.counter.clone())
            .with_partition_key(self.pk.clone())
            .with_body(self.body.clone());
        match self.driver.execute(op, &self.options).await {
            Ok(r) => report_ok(&r, self.slow_after, Some(DEFAULT_PATCH_MAX_ATTEMPTS)),
            Err(e) => report_err(&e, self.slow_after, Some(DEFAULT_PATCH_MAX_ATTEMPTS)),
        }
    }
}

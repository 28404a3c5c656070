//! A mix over the seeded items: of every ten operations, eight point reads, one upsert and one
//! PATCH increment.

use std::time::Duration;

use cosmos_driver::options::DEFAULT_PATCH_MAX_ATTEMPTS;
use cosmos_driver::patch::PatchInstructions;
use cosmos_driver::{CosmosDriver, CosmosOperation, OperationOptions};

use super::op_report::{report_err, report_ok};
use super::setup::SeededItems;
use crate::bench::items::{item_body, item_for};
use crate::bench::workload::{OpReport, Workload};

/// What operation `seq` of the mix does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MixedOp {
    /// A point read.
    Read,
    /// An upsert of the seeded document.
    Upsert,
    /// A PATCH incrementing `/n`.
    Patch,
}

/// Eight reads, one upsert and one patch in every ten consecutive operations.
pub fn mixed_op(seq: u64) -> MixedOp {
    match seq % 10 {
        3 => MixedOp::Upsert,
        7 => MixedOp::Patch,
        _ => MixedOp::Read,
    }
}

/// Reads, upserts and patches the seeded items.
pub struct MixedWorkload {
    driver: CosmosDriver,
    items: SeededItems,
    patch_body: Vec<u8>,
    options: OperationOptions,
    slow_after: Duration,
}

impl MixedWorkload {
    /// The mix over `items` through `driver`.
    pub fn new(
        driver: CosmosDriver,
        items: SeededItems,
        slow_after: Duration,
    ) -> Result<Self, String> {
        let patch_body = serde_json::to_vec(&PatchInstructions::new().increment("/n", 1))
            .map_err(|e| format!("cannot encode the patch: {e}"))?;
        let options =
            OperationOptions::default().with_patch_max_attempts(DEFAULT_PATCH_MAX_ATTEMPTS);
        Ok(Self {
            driver,
            items,
            patch_body,
            options,
            slow_after,
        })
    }
}

impl Workload for MixedWorkload {
    async fn run_op(&self, seq: u64) -> OpReport {
        let index = item_for(seq, self.items.len());
        let (item, pk) = self.items.get(index);
        let kind = mixed_op(seq);
        let op = match kind {
            MixedOp::Read => {
                Ok(CosmosOperation::read_item(item.clone()).with_partition_key(pk.clone()))
            }
            MixedOp::Upsert => CosmosOperation::upsert_item(item.container().clone())
                .with_partition_key(pk.clone())
                .with_json_body(&item_body(index)),
            MixedOp::Patch => Ok(CosmosOperation::patch_item(item.clone())
                .with_partition_key(pk.clone())
                .with_body(self.patch_body.clone())),
        };
        let op = match op {
            Ok(op) => op,
            Err(e) => return report_err(&e, self.slow_after, None),
        };
        let patch = (kind == MixedOp::Patch).then_some(DEFAULT_PATCH_MAX_ATTEMPTS);
        match self.driver.execute(op, &self.options).await {
            Ok(r) => report_ok(&r, self.slow_after, patch),
            Err(e) => report_err(&e, self.slow_after, patch),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ten_ops_hold_eight_reads_one_upsert_one_patch() {
        let ops: Vec<MixedOp> = (100..110).map(mixed_op).collect();
        assert_eq!(ops.iter().filter(|o| **o == MixedOp::Read).count(), 8);
        assert_eq!(ops.iter().filter(|o| **o == MixedOp::Upsert).count(), 1);
        assert_eq!(ops.iter().filter(|o| **o == MixedOp::Patch).count(), 1);
    }
}

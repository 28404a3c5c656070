//! Point reads of the seeded items.

use std::time::Duration;

use cosmos_driver::{CosmosDriver, CosmosOperation, OperationOptions};

use super::op_report::{report_err, report_ok};
use super::setup::SeededItems;
use crate::bench::items::item_for;
use crate::bench::workload::{OpReport, Workload};

/// Reads item `item_for(seq)` for operation `seq`.
pub struct ReadWorkload {
    driver: CosmosDriver,
    items: SeededItems,
    options: OperationOptions,
    slow_after: Duration,
}

impl ReadWorkload {
    /// Reads `items` through `driver`; a first attempt slower than `slow_after` counts as over the
    /// hedge threshold.
    pub fn new(driver: CosmosDriver, items: SeededItems, slow_after: Duration) -> Self {
        Self {
            driver,
            items,
            options: OperationOptions::default(),
            slow_after,
        }
    }
}

impl Workload for ReadWorkload {
    async fn run_op(&self, seq: u64) -> OpReport {
        let (item, pk) = self.items.get(item_for(seq, self.items.len()));
        let op = CosmosOperation::read_item(item.clone()).with_partition_key(pk.clone());
        match self.driver.execute(op, &self.options).await {
            Ok(r) => report_ok(&r, self.slow_after, None),
            Err(e) => report_err(&e, self.slow_after, None),
        }
    }
}

//! Account-level switches the admin API sets and the account document (`GET /`) carries.

use std::sync::RwLock;

/// The switches of the emulated account; unset ones are left out of the account document.
#[derive(Debug, Default)]
pub(crate) struct AccountSwitches {
    per_partition_failover: RwLock<Option<bool>>,
}

impl AccountSwitches {
    /// `enablePerPartitionFailoverBehavior`, if set.
    pub(crate) fn per_partition_failover(&self) -> Option<bool> {
        match self.per_partition_failover.read() {
            Ok(g) => *g,
            Err(poisoned) => *poisoned.into_inner(),
        }
    }

    /// Sets (or, with `None`, unsets) `enablePerPartitionFailoverBehavior`.
    pub(crate) fn set_per_partition_failover(&self, value: Option<bool>) {
        match self.per_partition_failover.write() {
            Ok(mut g) => *g = value,
            Err(poisoned) => *poisoned.into_inner() = value,
        }
    }
}

//! Account-level switches the admin API sets and the account document (`GET /`) carries.

use std::sync::RwLock;

/// The switches' values; `None` leaves a switch out of the account document.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SwitchValues {
    /// `disableCrossRegionalHedging`: the operator's kill switch for cross-region hedging. The
    /// service carries `false` unless it is turned on, so that is the default here.
    pub disable_cross_regional_hedging: Option<bool>,
    /// `enablePerPartitionFailoverBehavior`: per-partition automatic failover. Left out by default.
    pub per_partition_failover: Option<bool>,
}

impl Default for SwitchValues {
    fn default() -> Self {
        Self {
            disable_cross_regional_hedging: Some(false),
            per_partition_failover: None,
        }
    }
}

/// One admin update: each field `Some(value)` replaces that switch (`Some(None)` leaves it out of
/// the document); `None` keeps it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct SwitchUpdate {
    pub disable_cross_regional_hedging: Option<Option<bool>>,
    pub per_partition_failover: Option<Option<bool>>,
}

impl SwitchValues {
    /// These values with `update` applied.
    pub(crate) fn updated(self, update: SwitchUpdate) -> Self {
        Self {
            disable_cross_regional_hedging: update
                .disable_cross_regional_hedging
                .unwrap_or(self.disable_cross_regional_hedging),
            per_partition_failover: update
                .per_partition_failover
                .unwrap_or(self.per_partition_failover),
        }
    }
}

/// The switches of the emulated account.
#[derive(Debug, Default)]
pub(crate) struct AccountSwitches {
    values: RwLock<SwitchValues>,
}

impl AccountSwitches {
    /// The switches as they stand.
    pub(crate) fn get(&self) -> SwitchValues {
        match self.values.read() {
            Ok(g) => *g,
            Err(poisoned) => *poisoned.into_inner(),
        }
    }

    /// Applies `update` in one step; answers the values it leaves.
    pub(crate) fn apply(&self, update: SwitchUpdate) -> SwitchValues {
        let mut g = match self.values.write() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        *g = g.updated(update);
        *g
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_update_replaces_only_the_switches_it_names() {
        let start = SwitchValues::default();
        let table: &[(SwitchUpdate, SwitchValues)] = &[
            (SwitchUpdate::default(), start),
            (
                SwitchUpdate {
                    disable_cross_regional_hedging: Some(Some(true)),
                    ..Default::default()
                },
                SwitchValues {
                    disable_cross_regional_hedging: Some(true),
                    per_partition_failover: None,
                },
            ),
            (
                SwitchUpdate {
                    disable_cross_regional_hedging: Some(None),
                    per_partition_failover: Some(Some(false)),
                },
                SwitchValues {
                    disable_cross_regional_hedging: None,
                    per_partition_failover: Some(false),
                },
            ),
        ];
        for (i, (update, want)) in table.iter().enumerate() {
            assert_eq!(start.updated(*update), *want, "row {i}");
        }
    }
}

//! The hub-region latch shared by both attempts of a hedged read.
//!
//! After a `404/1002` (the replica has not caught up with the session token) on a single-write
//! account, later attempts of the operation carry `x-ms-cosmos-hub-region-processing-only: True`.
//! Each attempt keeps that fact in its own retry state; while two attempts race, the fact one of them
//! learns must reach the other at once, or the other pays the same discovery round trip again.
//!
//! [`HubRegionLatch`] lives on the stack of the operation that runs the race; both attempts borrow
//! it. The `Arc<AtomicBool>` that carries the fact is created only once the alternate attempt is
//! launched, and only for data-plane reads on single-write accounts, so a read that finishes before
//! the threshold allocates nothing for it. The latch only turns on, never off.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use crate::protocol::{OperationType, ResourceType};

/// Whether a hedged operation shares a hub-region latch between its attempts: data-plane reads on
/// single-write accounts (multi-write accounts recover from 1002 otherwise and never send the
/// header).
pub(crate) const fn hub_latch_eligible(
    resource_type: ResourceType,
    operation_type: OperationType,
    multiple_write_locations: bool,
) -> bool {
    resource_type.is_data_plane() && operation_type.is_read_only() && !multiple_write_locations
}

/// Whether a `404/1002` turns the hub-region latch on: a data-plane operation on a single-write
/// account, the first 1002 of the operation, latch not already on.
pub(crate) const fn hub_latch_triggers(
    is_data_plane: bool,
    multiple_write_locations: bool,
    session_token_retry_count: u32,
    already_latched: bool,
) -> bool {
    is_data_plane && !multiple_write_locations && session_token_retry_count == 0 && !already_latched
}

/// The hub-region latch of one hedged operation. See the module documentation.
#[derive(Debug, Default)]
pub(crate) struct HubRegionLatch {
    /// Set when an attempt latched before the shared flag existed; copied into it on install.
    early: AtomicBool,
    shared: OnceLock<Arc<AtomicBool>>,
}

impl HubRegionLatch {
    /// An empty latch; allocates nothing.
    pub(crate) const fn new() -> Self {
        Self {
            early: AtomicBool::new(false),
            shared: OnceLock::new(),
        }
    }

    /// Creates the shared flag (once), carrying over a latch set before it existed. The race calls
    /// this when it launches the alternate attempt of an eligible operation.
    pub(crate) fn install(&self) -> &Arc<AtomicBool> {
        let shared = self
            .shared
            .get_or_init(|| Arc::new(AtomicBool::new(self.early.load(Ordering::Acquire))));
        // A publish between the load above and the initialisation landed only in `early`.
        if self.early.load(Ordering::Acquire) {
            shared.store(true, Ordering::Release);
        }
        shared
    }

    /// The shared flag, once installed.
    #[cfg(test)]
    pub(crate) fn shared(&self) -> Option<&Arc<AtomicBool>> {
        self.shared.get()
    }

    /// An attempt saw the 1002 that latches: tell the other attempt.
    pub(crate) fn publish(&self) {
        self.early.store(true, Ordering::Release);
        if let Some(shared) = self.shared.get() {
            shared.store(true, Ordering::Release);
        }
    }

    /// Whether any attempt of the operation has latched.
    pub(crate) fn is_set(&self) -> bool {
        self.early.load(Ordering::Acquire)
            || self.shared.get().is_some_and(|s| s.load(Ordering::Acquire))
    }
}

/// Turns an attempt's own latch on after a triggering 1002 and tells the other attempt, if any.
pub(crate) fn latch_session_unavailable(per_attempt: &mut bool, shared: Option<&HubRegionLatch>) {
    *per_attempt = true;
    if let Some(latch) = shared {
        latch.publish();
    }
}

/// Whether the next attempt carries the hub-region header: its own latch or the shared one.
pub(crate) fn emit_hub_region_header(per_attempt: bool, shared: Option<&HubRegionLatch>) -> bool {
    per_attempt || shared.is_some_and(HubRegionLatch::is_set)
}

/// After both attempts ended transient: when either saw a triggering 1002, the operation's own
/// retry state latches too, so its next attempt carries the header without a new discovery.
/// Idempotent; a no-op when nothing was observed.
pub(crate) fn propagate_hedge_session_unavailable(
    per_operation: &mut bool,
    shared: Option<&HubRegionLatch>,
    observed_session_unavailable: bool,
) {
    if observed_session_unavailable {
        latch_session_unavailable(per_operation, shared);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eligibility_table() {
        use OperationType::*;
        use ResourceType::*;
        let table = [
            (Document, Read, false, true),
            (Document, Read, true, false),
            (Document, Query, false, true),
            (Document, Create, false, false),
            (Container, Read, false, false),
            (Database, Read, false, false),
        ];
        for (rt, op, mm, want) in table {
            assert_eq!(
                hub_latch_eligible(rt, op, mm),
                want,
                "{rt:?} {op:?} mm={mm}"
            );
        }
    }

    #[test]
    fn trigger_needs_all_four_conditions() {
        assert!(hub_latch_triggers(true, false, 0, false));
        assert!(!hub_latch_triggers(false, false, 0, false));
        assert!(!hub_latch_triggers(true, true, 0, false));
        assert!(!hub_latch_triggers(true, false, 1, false));
        assert!(!hub_latch_triggers(true, false, 0, true));
    }

    #[test]
    fn new_latch_allocates_nothing_and_is_off() {
        let latch = HubRegionLatch::new();
        assert!(latch.shared().is_none());
        assert!(!latch.is_set());
        assert!(!emit_hub_region_header(false, Some(&latch)));
        assert!(emit_hub_region_header(true, None));
    }

    #[test]
    fn install_carries_an_earlier_latch_over() {
        let latch = HubRegionLatch::new();
        latch.publish();
        assert!(latch.install().load(Ordering::Acquire));
    }

    #[test]
    fn install_is_idempotent() {
        let latch = HubRegionLatch::new();
        let a = Arc::clone(latch.install());
        let b = Arc::clone(latch.install());
        assert!(Arc::ptr_eq(&a, &b));
        assert!(!a.load(Ordering::Acquire));
    }

    #[test]
    fn shared_hub_region_latch_propagates_first_1002_across_hedges() {
        let latch = HubRegionLatch::new();
        let shared = Arc::clone(latch.install());
        let (mut primary, alternate) = (false, false);
        // The primary sees its first 1002 on a single-write data-plane read.
        assert!(hub_latch_triggers(true, false, 0, primary));
        latch_session_unavailable(&mut primary, Some(&latch));
        assert!(primary, "the primary's own latch is on");
        assert!(shared.load(Ordering::Acquire), "the shared flag is on");
        // The alternate never saw a 1002, yet its next attempt carries the header.
        assert!(!alternate);
        assert!(emit_hub_region_header(alternate, Some(&latch)));
    }

    #[test]
    fn shared_hub_region_latch_no_1002_emits_no_header() {
        let installed = HubRegionLatch::new();
        installed.install();
        for latch in [None, Some(&HubRegionLatch::new()), Some(&installed)] {
            assert!(!emit_hub_region_header(false, latch));
        }
    }

    #[test]
    fn both_transient_fan_in() {
        let latch = HubRegionLatch::new();
        latch.install();
        let mut parent = false;
        propagate_hedge_session_unavailable(&mut parent, Some(&latch), false);
        assert!(
            !parent && !latch.is_set(),
            "nothing observed, nothing latched"
        );
        propagate_hedge_session_unavailable(&mut parent, Some(&latch), true);
        assert!(parent && latch.is_set());
        propagate_hedge_session_unavailable(&mut parent, Some(&latch), true);
        assert!(parent && latch.is_set(), "idempotent");
        let mut no_shared = false;
        propagate_hedge_session_unavailable(&mut no_shared, None, true);
        assert!(no_shared);
    }
}

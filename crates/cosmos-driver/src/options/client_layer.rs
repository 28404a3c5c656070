//! The client layer of every operation's options as it stands now: built from
//! `DriverOptions::operation_defaults`, with the preferred and excluded regions replaceable on a
//! running driver.
//!
//! An operation takes one snapshot (an `Arc`) when it starts and resolves its options over it, so
//! its region plan stays what it was when it started (its retries and its hedge included); a change
//! swaps in a new snapshot that only the operations started after it see.

use std::sync::{Arc, RwLock};

use super::OperationOptions;
use crate::protocol::Region;

/// One change to the client layer's regions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum RegionChange {
    /// The preferred regions, most preferred first (empty: the account's order).
    Preferred(Vec<Region>),
    /// The regions no operation is sent to unless it names its own list (empty: none).
    Excluded(Vec<Region>),
}

/// The client layer with `change` applied; everything else stays. An empty list is stored as unset.
pub(crate) fn apply(layer: &OperationOptions, change: RegionChange) -> OperationOptions {
    let non_empty = |list: Vec<Region>| (!list.is_empty()).then_some(list);
    let mut next = layer.clone();
    match change {
        RegionChange::Preferred(list) => next.application_preferred_regions = non_empty(list),
        RegionChange::Excluded(list) => next.excluded_regions = non_empty(list),
    }
    next
}

/// The client layer of one driver; readers take a cheap snapshot.
#[derive(Debug)]
pub(crate) struct ClientLayer {
    current: RwLock<Arc<OperationOptions>>,
}

impl ClientLayer {
    /// Starts from the options the driver was built with.
    pub(crate) fn new(defaults: OperationOptions) -> Self {
        Self {
            current: RwLock::new(Arc::new(defaults)),
        }
    }

    /// The layer as it stands now.
    pub(crate) fn snapshot(&self) -> Arc<OperationOptions> {
        match self.current.read() {
            Ok(g) => g.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// Applies `change` (changes made at the same time are applied one after the other, none lost).
    pub(crate) fn change(&self, change: RegionChange) {
        let mut guard = match self.current.write() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        let next = apply(&guard, change);
        *guard = Arc::new(next);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::EffectiveOptions;

    fn r(list: &[&str]) -> Vec<Region> {
        list.iter().map(Region::new).collect()
    }

    fn names(list: &[Region]) -> Vec<String> {
        list.iter().map(|r| r.as_str().to_owned()).collect()
    }

    #[test]
    fn the_regions_an_operation_resolves_after_a_change() {
        // (client preferred, client excluded, change, operation preferred, operation excluded,
        //  resolved preferred, resolved excluded)
        type Row<'a> = (
            &'a [&'a str],
            &'a [&'a str],
            RegionChange,
            Option<&'a [&'a str]>,
            Option<&'a [&'a str]>,
            &'a [&'a str],
            &'a [&'a str],
        );
        let table: Vec<Row> = vec![
            (
                &["A", "B"],
                &[],
                RegionChange::Preferred(r(&["B", "A"])),
                None,
                None,
                &["B", "A"],
                &[],
            ),
            (
                &["A", "B"],
                &["C"],
                RegionChange::Preferred(vec![]),
                None,
                None,
                &[],
                &["C"],
            ),
            (
                &["A", "B"],
                &[],
                RegionChange::Excluded(r(&["A"])),
                None,
                None,
                &["A", "B"],
                &["A"],
            ),
            (
                &[],
                &["A"],
                RegionChange::Excluded(vec![]),
                None,
                None,
                &[],
                &[],
            ),
            // An operation's own lists still replace the client's.
            (
                &["A", "B"],
                &[],
                RegionChange::Preferred(r(&["B"])),
                Some(&["C"]),
                Some(&["B"]),
                &["C"],
                &["B"],
            ),
        ];
        for (i, (pref, excl, change, op_pref, op_excl, want_pref, want_excl)) in
            table.into_iter().enumerate()
        {
            let mut client = OperationOptions::new();
            if !pref.is_empty() {
                client = client.with_application_preferred_regions(pref.iter().copied());
            }
            if !excl.is_empty() {
                client = client.with_excluded_regions(excl.iter().copied());
            }
            let layer = ClientLayer::new(client);
            layer.change(change);
            let mut op = OperationOptions::new();
            if let Some(p) = op_pref {
                op = op.with_application_preferred_regions(p.iter().copied());
            }
            if let Some(e) = op_excl {
                op = op.with_excluded_regions(e.iter().copied());
            }
            let snapshot = layer.snapshot();
            let e = EffectiveOptions::resolve(&op, &snapshot, None);
            assert_eq!(
                names(e.preferred_regions),
                r(want_pref)
                    .iter()
                    .map(|r| r.as_str().to_owned())
                    .collect::<Vec<_>>(),
                "row {i}"
            );
            assert_eq!(names(e.excluded_regions), names(&r(want_excl)), "row {i}");
        }
    }

    #[test]
    fn a_snapshot_taken_before_a_change_keeps_the_old_regions() {
        let layer = ClientLayer::new(
            OperationOptions::new()
                .with_application_preferred_regions(["A", "B"])
                .with_end_to_end_timeout(std::time::Duration::from_secs(3)),
        );
        let started = layer.snapshot();
        layer.change(RegionChange::Preferred(r(&["B", "A"])));
        layer.change(RegionChange::Excluded(r(&["A"])));
        let next = layer.snapshot();
        assert_eq!(
            names(started.application_preferred_regions.as_deref().unwrap()),
            ["A", "B"]
        );
        assert_eq!(started.excluded_regions, None);
        assert_eq!(
            names(next.application_preferred_regions.as_deref().unwrap()),
            ["B", "A"]
        );
        assert_eq!(names(next.excluded_regions.as_deref().unwrap()), ["A"]);
        assert_eq!(
            next.end_to_end_timeout,
            Some(std::time::Duration::from_secs(3)),
            "the rest of the layer stays"
        );
    }
}

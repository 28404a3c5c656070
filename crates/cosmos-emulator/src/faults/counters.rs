//! Requests seen, per region and operation kind.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, RwLock};

use serde_json::{Map, Value};

use super::region::same_region;
use super::OpKind;

/// Requests seen, per region and [`OpKind`]. Cheap to clone (Arc inside).
///
/// Regions are kept in the order they were first seen (or given to
/// [`RequestCounters::with_regions`]); names compare ignoring case and spaces, so
/// `get("eastus", ..)` reads the counts recorded for `"East US"`. Recording takes a read lock on a
/// short list and one relaxed atomic add; only the first request of a new region takes the write
/// lock.
#[derive(Clone, Default)]
pub struct RequestCounters {
    regions: Arc<RwLock<Vec<Arc<RegionCounts>>>>,
    /// The longest `x-ms-session-token` header a request carried, in bytes.
    longest_session_token: Arc<AtomicU64>,
}

#[derive(Debug)]
struct RegionCounts {
    name: String,
    counts: [AtomicU64; OpKind::COUNT],
}

impl RegionCounts {
    fn new(name: &str) -> Self {
        RegionCounts {
            name: name.to_owned(),
            counts: std::array::from_fn(|_| AtomicU64::new(0)),
        }
    }

    fn total(&self) -> u64 {
        self.counts.iter().map(|c| c.load(Relaxed)).sum()
    }
}

impl RequestCounters {
    /// Counters with these regions listed up front (in this order), all at zero.
    pub fn with_regions(regions: &[String]) -> Self {
        let counters = Self::default();
        for region in regions {
            counters.region(region);
        }
        counters
    }

    fn find(&self, region: &str) -> Option<Arc<RegionCounts>> {
        let regions = self.regions.read().unwrap_or_else(|p| p.into_inner());
        regions
            .iter()
            .find(|r| same_region(&r.name, region))
            .cloned()
    }

    fn region(&self, region: &str) -> Arc<RegionCounts> {
        if let Some(found) = self.find(region) {
            return found;
        }
        let mut regions = self.regions.write().unwrap_or_else(|p| p.into_inner());
        if let Some(found) = regions.iter().find(|r| same_region(&r.name, region)) {
            return found.clone();
        }
        let created = Arc::new(RegionCounts::new(region));
        regions.push(created.clone());
        created
    }

    /// Count one request.
    pub fn record(&self, region: &str, op: OpKind) {
        {
            let regions = self.regions.read().unwrap_or_else(|p| p.into_inner());
            if let Some(found) = regions.iter().find(|r| same_region(&r.name, region)) {
                found.counts[op.index()].fetch_add(1, Relaxed);
                return;
            }
        }
        self.region(region).counts[op.index()].fetch_add(1, Relaxed);
    }

    /// Notes the length of a request's `x-ms-session-token` header.
    pub fn note_session_token(&self, bytes: usize) {
        self.longest_session_token
            .fetch_max(u64::try_from(bytes).unwrap_or(u64::MAX), Relaxed);
    }

    /// The longest `x-ms-session-token` header a request carried since the start (or the last
    /// [`RequestCounters::reset`]), in bytes: what a client's session tokens cost on the wire.
    pub fn longest_session_token_bytes(&self) -> u64 {
        self.longest_session_token.load(Relaxed)
    }

    /// Requests of this kind seen by this region.
    pub fn get(&self, region: &str, op: OpKind) -> u64 {
        self.find(region)
            .map_or(0, |r| r.counts[op.index()].load(Relaxed))
    }

    /// Requests of every kind seen by this region.
    pub fn region_total(&self, region: &str) -> u64 {
        self.find(region).map_or(0, |r| r.total())
    }

    /// All counts as JSON: `{"East US":{"read":3,"create":0,...},...}`, every kind listed.
    pub fn snapshot(&self) -> Value {
        let regions = self.regions.read().unwrap_or_else(|p| p.into_inner());
        let mut out = Map::new();
        for region in regions.iter() {
            let kinds: Map<String, Value> = OpKind::ALL
                .iter()
                .map(|op| {
                    (
                        op.as_str().to_owned(),
                        Value::from(region.counts[op.index()].load(Relaxed)),
                    )
                })
                .collect();
            out.insert(region.name.clone(), Value::Object(kinds));
        }
        Value::Object(out)
    }

    /// Set every count to zero (regions stay listed).
    pub fn reset(&self) {
        self.longest_session_token.store(0, Relaxed);
        let regions = self.regions.read().unwrap_or_else(|p| p.into_inner());
        for region in regions.iter() {
            for count in &region.counts {
                count.store(0, Relaxed);
            }
        }
    }
}

impl std::fmt::Debug for RequestCounters {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RequestCounters({})", self.snapshot())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn records_per_region_and_kind() {
        let counters = RequestCounters::default();
        counters.record("East US", OpKind::Read);
        counters.record("East US", OpKind::Read);
        counters.record("East US", OpKind::Create);
        counters.record("West US", OpKind::Read);
        assert_eq!(counters.get("East US", OpKind::Read), 2);
        assert_eq!(counters.get("East US", OpKind::Create), 1);
        assert_eq!(counters.get("East US", OpKind::Query), 0);
        assert_eq!(counters.get("West US", OpKind::Read), 1);
        assert_eq!(counters.get("North Europe", OpKind::Read), 0);
        assert_eq!(counters.region_total("East US"), 3);
        assert_eq!(counters.region_total("Nowhere"), 0);
    }

    #[test]
    fn region_names_compare_loosely() {
        let counters = RequestCounters::default();
        counters.record("East US", OpKind::Patch);
        counters.record("eastus", OpKind::Patch);
        assert_eq!(counters.get("EAST US", OpKind::Patch), 2);
        assert_eq!(counters.snapshot().as_object().unwrap().len(), 1);
    }

    #[test]
    fn snapshot_lists_every_kind_in_region_order() {
        let counters = RequestCounters::with_regions(&["West US".into(), "East US".into()]);
        counters.record("East US", OpKind::ReadFeed);
        let snapshot = counters.snapshot();
        let regions: Vec<&String> = snapshot.as_object().unwrap().keys().collect();
        assert_eq!(regions, ["West US", "East US"]);
        assert_eq!(
            snapshot["East US"],
            json!({"read":0,"create":0,"replace":0,"upsert":0,"delete":0,"patch":0,"query":0,"read-feed":1,"metadata":0})
        );
        assert_eq!(snapshot["West US"]["read-feed"], 0);
    }

    #[test]
    fn reset_zeroes_but_keeps_regions() {
        let counters = RequestCounters::default();
        counters.record("East US", OpKind::Read);
        let clone = counters.clone();
        clone.reset();
        assert_eq!(counters.get("East US", OpKind::Read), 0);
        assert!(counters.snapshot().get("East US").is_some());
        counters.record("East US", OpKind::Read);
        assert_eq!(clone.get("East US", OpKind::Read), 1);
    }

    #[test]
    fn concurrent_records_are_all_counted() {
        let counters = RequestCounters::default();
        let threads: Vec<_> = (0..4)
            .map(|i| {
                let counters = counters.clone();
                std::thread::spawn(move || {
                    let region = if i % 2 == 0 { "East US" } else { "West US" };
                    for _ in 0..10_000 {
                        counters.record(region, OpKind::Read);
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        assert_eq!(counters.get("East US", OpKind::Read), 20_000);
        assert_eq!(counters.get("West US", OpKind::Read), 20_000);
    }
}

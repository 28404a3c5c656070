//! Regions, their endpoints, and which of them take writes (changed by failover).

use std::sync::RwLock;

/// One region of the account.
#[derive(Clone, Debug)]
pub(crate) struct RegionInfo {
    pub name: String,
    /// The region's own endpoint URL (with the scheme actually served), e.g. `http://127.0.0.1:8082/`.
    pub endpoint: String,
}

/// The account's regions and write configuration.
#[derive(Debug)]
pub(crate) struct Topology {
    regions: Vec<RegionInfo>,
    multi_write: bool,
    /// Indexes of the regions that take writes; the first is the hub.
    write_regions: RwLock<Vec<usize>>,
}

impl Topology {
    /// `write_regions` are indexes into `regions`, hub first; must not be empty.
    pub(crate) fn new(
        regions: Vec<RegionInfo>,
        write_regions: Vec<usize>,
        multi_write: bool,
    ) -> Self {
        Self {
            regions,
            multi_write,
            write_regions: RwLock::new(write_regions),
        }
    }

    pub(crate) fn regions(&self) -> &[RegionInfo] {
        &self.regions
    }

    pub(crate) fn multi_write(&self) -> bool {
        self.multi_write
    }

    /// The index of the region called `name` (case-insensitive, spaces ignored).
    pub(crate) fn index_of(&self, name: &str) -> Option<usize> {
        let wanted = normalize(name);
        self.regions
            .iter()
            .position(|r| normalize(&r.name) == wanted)
    }

    /// Indexes of the write regions, hub first.
    pub(crate) fn write_regions(&self) -> Vec<usize> {
        self.write_regions
            .read()
            .map(|w| w.clone())
            .unwrap_or_default()
    }

    /// The hub (first write) region.
    pub(crate) fn hub(&self) -> usize {
        self.write_regions
            .read()
            .ok()
            .and_then(|w| w.first().copied())
            .unwrap_or(0)
    }

    /// Whether region `index` takes writes.
    pub(crate) fn can_write(&self, index: usize) -> bool {
        self.write_regions
            .read()
            .map(|w| w.contains(&index))
            .unwrap_or(false)
    }

    /// Regions in the order the account document lists them: write regions first.
    pub(crate) fn ordered(&self) -> Vec<usize> {
        let writes = self.write_regions();
        let mut order = writes.clone();
        order.extend((0..self.regions.len()).filter(|i| !writes.contains(i)));
        order
    }

    /// Makes `name` the (hub) write region. Single-write accounts move writes there; multi-write
    /// accounts make it the hub. Returns its index.
    pub(crate) fn failover(&self, name: &str) -> Result<usize, String> {
        let index = self.index_of(name).ok_or_else(|| {
            let known: Vec<&str> = self.regions.iter().map(|r| r.name.as_str()).collect();
            format!(
                "unknown region {name:?}; the account's regions are {}",
                known.join(", ")
            )
        })?;
        let mut writes = self
            .write_regions
            .write()
            .map_err(|_| "the topology lock was poisoned".to_owned())?;
        if self.multi_write {
            writes.retain(|i| *i != index);
            writes.insert(0, index);
        } else {
            *writes = vec![index];
        }
        Ok(index)
    }
}

fn normalize(name: &str) -> String {
    name.chars()
        .filter(|c| !c.is_whitespace())
        .flat_map(char::to_lowercase)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn topo(multi: bool) -> Topology {
        let regions = ["East US", "West US", "North Europe"]
            .iter()
            .map(|n| RegionInfo {
                name: (*n).into(),
                endpoint: String::new(),
            })
            .collect();
        let writes = if multi { vec![0, 1, 2] } else { vec![0] };
        Topology::new(regions, writes, multi)
    }

    #[test]
    fn failover_moves_the_single_write_region() {
        let t = topo(false);
        assert!(t.can_write(0) && !t.can_write(1));
        assert_eq!(t.failover("westus").unwrap(), 1);
        assert!(!t.can_write(0) && t.can_write(1));
        assert_eq!(t.ordered(), vec![1, 0, 2]);
        assert!(t.failover("Mars").unwrap_err().contains("East US"));
    }

    #[test]
    fn failover_in_multi_write_changes_the_hub_only() {
        let t = topo(true);
        t.failover("North Europe").unwrap();
        assert_eq!(t.hub(), 2);
        assert!(t.can_write(0) && t.can_write(1) && t.can_write(2));
    }
}

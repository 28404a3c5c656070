//! Region outages: a whole region stops serving, apart from (and before) any fault rule.
//!
//! An outage is switched on and off at run time (admin API `PUT /_emulator/outages`, or
//! [`RegionOutages::start`] from the embedding program) and has one of two modes:
//!
//! - [`OutageMode::Refuse`]: the region's own port resets every new connection as soon as it is
//!   accepted and drops every open one (requests in flight get no answer); nothing is executed.
//!   The kernel completes the TCP handshake before the reset, so a client may already have written
//!   its request when it learns the connection is gone.
//! - [`OutageMode::Close`]: connections are accepted, but every request is answered by closing its
//!   connection, without executing it.
//!
//! Requests on the global port are served by the write (hub) region; while that region is out,
//! they are closed unanswered too (as if the account's DNS name pointed at a dead region), except
//! the admin API, which keeps working so a test can end the outage.

use std::sync::{Arc, RwLock};

use serde::{Deserialize, Serialize};
use tokio::sync::watch;

use super::same_region;

/// How a region in outage treats connections.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OutageMode {
    /// Reset new connections at once and drop open ones.
    Refuse,
    /// Accept connections, close each one on its first request without executing it.
    Close,
}

/// Which regions are out, shared by every listener and connection. Cheap to clone.
#[derive(Clone, Debug)]
pub struct RegionOutages {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    regions: Vec<String>,
    modes: RwLock<Vec<Option<OutageMode>>>,
    /// Bumped on every change, so open connections learn that their region went out.
    changes: watch::Sender<u64>,
}

impl RegionOutages {
    /// No outage, for the account's regions (in topology order).
    pub fn new(regions: &[String]) -> Self {
        RegionOutages {
            inner: Arc::new(Inner {
                regions: regions.to_vec(),
                modes: RwLock::new(vec![None; regions.len()]),
                changes: watch::Sender::new(0),
            }),
        }
    }

    fn index(&self, region: &str) -> Result<usize, String> {
        self.inner
            .regions
            .iter()
            .position(|r| same_region(r, region))
            .ok_or_else(|| {
                format!(
                    "unknown region {} (the account's regions: {})",
                    super::quote::quoted(region),
                    self.inner.regions.join(", ")
                )
            })
    }

    fn set(&self, index: usize, mode: Option<OutageMode>) -> bool {
        let changed = {
            let mut modes = self
                .inner
                .modes
                .write()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            let before = modes[index];
            modes[index] = mode;
            before != mode
        };
        if changed {
            self.inner.changes.send_modify(|n| *n += 1);
        }
        changed
    }

    /// Puts `region` (case and spaces ignored) out in `mode`, replacing an outage already there.
    pub fn start(&self, region: &str, mode: OutageMode) -> Result<(), String> {
        let i = self.index(region)?;
        self.set(i, Some(mode));
        Ok(())
    }

    /// Ends the outage of `region`; `Ok(false)` when it was not out.
    pub fn end(&self, region: &str) -> Result<bool, String> {
        let i = self.index(region)?;
        Ok(self.set(i, None))
    }

    /// Ends every outage; returns how many there were.
    pub fn end_all(&self) -> usize {
        (0..self.inner.regions.len())
            .filter(|&i| self.set(i, None))
            .count()
    }

    /// The outage mode of the region at `index` in topology order (`None`: serving).
    pub fn mode_at(&self, index: usize) -> Option<OutageMode> {
        self.inner
            .modes
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .get(index)
            .copied()
            .flatten()
    }

    /// The regions out now, in topology order, with their modes.
    pub fn list(&self) -> Vec<(String, OutageMode)> {
        (0..self.inner.regions.len())
            .filter_map(|i| self.mode_at(i).map(|m| (self.inner.regions[i].clone(), m)))
            .collect()
    }

    /// Resolves once the region at `index` is in [`OutageMode::Refuse`] (at once if it is now);
    /// an open connection of that region races its serving against this.
    pub async fn refused(&self, index: usize) {
        let mut changes = self.inner.changes.subscribe();
        loop {
            if self.mode_at(index) == Some(OutageMode::Refuse) {
                return;
            }
            if changes.changed().await.is_err() {
                return std::future::pending().await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn regions() -> Vec<String> {
        vec!["East US".into(), "West US".into(), "North Europe".into()]
    }

    #[test]
    fn start_end_and_list() {
        let o = RegionOutages::new(&regions());
        assert!(o.list().is_empty());
        o.start("westus", OutageMode::Refuse).unwrap();
        o.start("North Europe", OutageMode::Close).unwrap();
        assert_eq!(o.mode_at(0), None);
        assert_eq!(o.mode_at(1), Some(OutageMode::Refuse));
        assert_eq!(o.mode_at(2), Some(OutageMode::Close));
        assert_eq!(o.mode_at(9), None);
        assert_eq!(
            o.list(),
            vec![
                ("West US".to_owned(), OutageMode::Refuse),
                ("North Europe".to_owned(), OutageMode::Close)
            ]
        );
        o.start("West US", OutageMode::Close).unwrap();
        assert_eq!(o.mode_at(1), Some(OutageMode::Close));
        assert_eq!(o.end("West US"), Ok(true));
        assert_eq!(o.end("West US"), Ok(false));
        assert_eq!(o.end_all(), 1);
        assert!(o.list().is_empty());
    }

    #[test]
    fn unknown_regions_are_named() {
        let o = RegionOutages::new(&regions());
        let e = o.start("Mars", OutageMode::Refuse).unwrap_err();
        assert!(
            e.contains("\"Mars\"") && e.contains("East US, West US"),
            "{e}"
        );
        assert!(o.end("Mars").is_err());
    }

    #[tokio::test(start_paused = true)]
    async fn refused_resolves_when_the_region_goes_out() {
        let o = RegionOutages::new(&regions());
        let waiter = tokio::spawn({
            let o = o.clone();
            async move { o.refused(1).await }
        });
        tokio::task::yield_now().await;
        o.start("East US", OutageMode::Refuse).unwrap();
        o.start("West US", OutageMode::Close).unwrap();
        tokio::task::yield_now().await;
        assert!(!waiter.is_finished(), "close mode keeps connections open");
        o.start("West US", OutageMode::Refuse).unwrap();
        tokio::time::timeout(std::time::Duration::from_secs(1), waiter)
            .await
            .expect("the waiter resolves")
            .unwrap();
    }
}

//! A running emulator: endpoints, key, fault controls, counters, failover, shutdown.

use std::sync::Arc;

use tokio::task::JoinHandle;

use crate::exchange::Shared;
use crate::faults::{FaultInjector, RegionOutages, RequestCounters};

/// A running emulator. Dropping it (or [`Emulator::shutdown`]) stops every listener and drops every
/// open connection.
pub struct Emulator {
    shared: Arc<Shared>,
    /// The listeners' tasks; the rest of `tasks` are background chores.
    listeners: usize,
    tasks: Vec<JoinHandle<()>>,
    stop: tokio::sync::watch::Sender<bool>,
    regions: Vec<String>,
    key: String,
    cert_pem: Option<String>,
}

impl std::fmt::Debug for Emulator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Emulator")
            .field("endpoint", &self.endpoint())
            .field("regions", &self.regions)
            .field("key", &"<redacted>")
            .field("tls", &self.cert_pem.is_some())
            .finish()
    }
}

impl Emulator {
    pub(crate) fn new(
        shared: Arc<Shared>,
        listeners: usize,
        tasks: Vec<JoinHandle<()>>,
        stop: tokio::sync::watch::Sender<bool>,
        regions: Vec<String>,
        key: String,
        cert_pem: Option<String>,
    ) -> Self {
        Self {
            shared,
            listeners,
            tasks,
            stop,
            regions,
            key,
            cert_pem,
        }
    }

    /// The global endpoint URL, e.g. `http://127.0.0.1:8081/` (served as the current write region).
    pub fn endpoint(&self) -> &str {
        &self.shared.global_endpoint
    }

    /// The endpoint of region `name` (case and spaces ignored), if the account has it.
    pub fn region_endpoint(&self, name: &str) -> Option<&str> {
        let topology = &self.shared.store.topology;
        topology
            .index_of(name)
            .and_then(|i| topology.regions().get(i))
            .map(|r| r.endpoint.as_str())
    }

    /// The regions, in the order they were configured.
    pub fn regions(&self) -> &[String] {
        &self.regions
    }

    /// The current write (hub) region.
    pub fn write_region(&self) -> String {
        let topology = &self.shared.store.topology;
        topology
            .regions()
            .get(topology.hub())
            .map(|r| r.name.clone())
            .unwrap_or_default()
    }

    /// The account key (base64) clients sign with.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// Fault rules and latency profiles, changeable while the emulator runs.
    pub fn faults(&self) -> &FaultInjector {
        &self.shared.faults
    }

    /// Region outages (refuse or close every connection to a region), switchable while the
    /// emulator runs; see [`RegionOutages`].
    pub fn outages(&self) -> &RegionOutages {
        &self.shared.outages
    }

    /// Requests seen per region and operation kind.
    pub fn counters(&self) -> &RequestCounters {
        &self.shared.counters
    }

    /// The memory queries hold now (answers kept between pages, answers being built, pages
    /// building), the most they ever held at once, and the cap (`QueryLimits::memory_bytes`).
    pub fn query_memory(&self) -> crate::sql::run::QueryMemoryStats {
        self.shared.queries.memory.stats()
    }

    /// Answers kept between pages and builds waiting for their next page.
    pub fn query_state_entries(&self) -> (usize, usize) {
        let queries = &self.shared.queries;
        (queries.results.len(), queries.builds.len())
    }

    /// The self-signed certificate (PEM) when serving HTTPS.
    pub fn tls_cert_pem(&self) -> Option<&str> {
        self.cert_pem.as_deref()
    }

    /// The account document as `GET /` would answer it now.
    pub fn account_document(&self) -> serde_json::Value {
        crate::handlers::account_document(&self.shared)
    }

    /// Moves the write (hub) region to `region`; the old one answers 403/3 to writes afterwards
    /// (in single-write accounts).
    pub fn failover(&self, region: &str) -> Result<(), String> {
        self.shared.store.failover(region).map(|_| ())
    }

    /// Splits partition key range `range` of container `container` in database `db` into two
    /// children, as `POST /_emulator/split` does.
    pub fn split(&self, db: &str, container: &str, range: &str) -> Result<(), String> {
        let database = self
            .shared
            .store
            .catalog
            .owner_database(db)
            .map_err(|e| e.message)?;
        database
            .split_container(container, range)
            .map(|_| ())
            .map_err(|e| e.message)
    }

    /// Stops gracefully: every listener closes at once, each connection finishes the request it
    /// is serving (its answer is sent) and closes; after `grace` what is still running is dropped.
    /// Returns whether everything finished within `grace`.
    pub async fn drain(mut self, grace: std::time::Duration) -> bool {
        let _ = self.stop.send(true);
        let listeners: Vec<_> = self
            .tasks
            .drain(..self.listeners.min(self.tasks.len()))
            .collect();
        let finished = tokio::time::timeout(grace, async {
            for task in listeners {
                let _ = task.await;
            }
        })
        .await
        .is_ok();
        if let Some(data) = &self.shared.data {
            data.close();
        }
        self.shutdown().await;
        finished
    }

    /// Stops every listener and connection and waits until they are gone.
    pub async fn shutdown(mut self) {
        let tasks = std::mem::take(&mut self.tasks);
        for task in &tasks {
            task.abort();
        }
        for task in tasks {
            let _ = task.await;
        }
    }
}

impl Drop for Emulator {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
        if let Some(data) = &self.shared.data {
            // Everything answered is on disk already; this ends the writer thread.
            data.close();
        }
    }
}

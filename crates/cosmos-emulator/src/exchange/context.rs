//! State shared by every connection, and the per-request context handlers receive.

use bytes::Bytes;
use http::{HeaderMap, Method};
use tokio::time::Instant;

use std::sync::Arc;
use std::time::Duration;

use crate::auth::{AdminAccess, AuthPolicy};
use crate::faults::{FaultInjector, RegionOutages, RequestCounters};
use crate::store::Store;

/// Everything the listeners share.
pub(crate) struct Shared {
    pub store: Store,
    pub auth: AuthPolicy,
    /// Who may use the admin API.
    pub admin: AdminAccess,
    /// How long a client may take to send a request body once its headers are in.
    pub body_read_timeout: Duration,
    /// What one page of a query may use.
    pub query_limits: crate::sql::run::QueryLimits,
    /// Answers of ORDER BY and whole-result queries kept between their pages, answers still being
    /// built, and the memory they hold.
    pub queries: crate::sql::run::QueryState,
    /// Requests that evaluate queries, conditions or large bodies run on the blocking pool, at
    /// most this many at once (others wait their turn without holding a thread).
    pub evaluations: tokio::sync::Semaphore,
    /// How long a read waits for a lagging replica before it answers 404/1002.
    pub session_wait: super::SessionWait,
    pub faults: FaultInjector,
    /// Regions taken down as a whole (before any fault rule).
    pub outages: RegionOutages,
    pub counters: RequestCounters,
    /// The account's id in the account document.
    pub account_id: String,
    /// The global endpoint URL.
    pub global_endpoint: String,
    /// Every container's stored procedures, triggers and user-defined functions.
    pub scripts: crate::scripts::Scripts,
    /// The data directory writes are kept in (`--data-dir`), if any.
    pub data: Option<Arc<crate::persist::DataDir>>,
    /// Account-level switches the admin API sets (`/_emulator/account`).
    pub account_switches: super::AccountSwitches,
}

/// One request as handlers see it.
pub(crate) struct RequestCtx<'a> {
    pub shared: &'a Shared,
    pub method: &'a Method,
    pub headers: &'a HeaderMap,
    pub body: Bytes,
    /// The region whose replica serves the request.
    pub region: usize,
    pub now: Instant,
}

impl RequestCtx<'_> {
    /// A header's text, if present and valid UTF-8 (partition keys may carry non-ASCII text).
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        header_text(self.headers, name)
    }

    /// The serving region's name.
    pub(crate) fn region_name(&self) -> &str {
        self.shared
            .store
            .topology
            .regions()
            .get(self.region)
            .map(|r| r.name.as_str())
            .unwrap_or("")
    }
}

/// A header's value as UTF-8 text, if present and valid.
pub(crate) fn header_text<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers
        .get(name)
        .and_then(|v| std::str::from_utf8(v.as_bytes()).ok())
}

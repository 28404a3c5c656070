//! Endpoint health: one lock-free table of "unavailable until" marks shared by every operation.
//!
//! A fixed table of atomic slots, keyed by the endpoint's hash, open addressing. Marking and reading
//! never lock and never allocate. Marks expire on their own; an expired mark reads as healthy.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::time::Instant;

use crate::protocol::Endpoint;

/// How many endpoints the table holds (accounts have far fewer regions).
const SLOTS: usize = 64;

/// Which kind of request found the endpoint unavailable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AccessScope {
    /// Reads.
    Read,
    /// Writes.
    Write,
}

#[derive(Default)]
struct Slot {
    key: AtomicU64,
    /// Milliseconds since the store's epoch plus one until which the endpoint is unavailable for
    /// reads (0: no mark).
    read_until: AtomicU64,
    write_until: AtomicU64,
}

/// The shared health marks of every endpoint of an account.
pub struct EndpointHealth {
    /// Set by the first mark ever made; while clear, every endpoint is healthy without a lookup.
    marked: std::sync::atomic::AtomicBool,
    slots: Box<[Slot]>,
    epoch: Instant,
    ttl: Duration,
}

impl EndpointHealth {
    /// A store whose marks last `ttl`.
    pub fn new(ttl: Duration) -> Self {
        Self {
            marked: std::sync::atomic::AtomicBool::new(false),
            slots: (0..SLOTS).map(|_| Slot::default()).collect(),
            epoch: Instant::now(),
            ttl,
        }
    }

    /// Whether any endpoint was ever marked (marks may have expired since).
    pub fn any_marked(&self) -> bool {
        self.marked.load(Ordering::Acquire)
    }

    fn stamp(&self, at: Instant) -> u64 {
        at.saturating_duration_since(self.epoch).as_millis() as u64 + 1
    }

    fn find(&self, key: u64) -> Option<&Slot> {
        let start = (key as usize) % SLOTS;
        for n in 0..SLOTS {
            let slot = &self.slots[(start + n) % SLOTS];
            match slot.key.load(Ordering::Acquire) {
                k if k == key => return Some(slot),
                0 => return None,
                _ => {}
            }
        }
        None
    }

    fn find_or_claim(&self, key: u64) -> Option<&Slot> {
        let start = (key as usize) % SLOTS;
        for n in 0..SLOTS {
            let slot = &self.slots[(start + n) % SLOTS];
            match slot
                .key
                .compare_exchange(0, key, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return Some(slot),
                Err(k) if k == key => return Some(slot),
                Err(_) => {}
            }
        }
        None
    }

    /// Marks `endpoint` unavailable for `scope` from `now` for the store's time-to-live.
    pub fn mark_unavailable(&self, endpoint: &Endpoint, scope: AccessScope, now: Instant) {
        let Some(slot) = self.find_or_claim(endpoint.health_key()) else {
            tracing::warn!(endpoint = %endpoint, "the endpoint health table is full; mark dropped");
            return;
        };
        let until = self.stamp(now + self.ttl);
        let cell = match scope {
            AccessScope::Read => &slot.read_until,
            AccessScope::Write => &slot.write_until,
        };
        cell.fetch_max(until, Ordering::AcqRel);
        self.marked.store(true, Ordering::Release);
        tracing::debug!(endpoint = %endpoint, ?scope, ttl = ?self.ttl, "endpoint marked unavailable");
    }

    /// Whether `endpoint` carries an unexpired mark for `scope` at `now`.
    pub fn is_unavailable(&self, endpoint: &Endpoint, scope: AccessScope, now: Instant) -> bool {
        if !self.any_marked() {
            return false;
        }
        let Some(slot) = self.find(endpoint.health_key()) else {
            return false;
        };
        let until = match scope {
            AccessScope::Read => slot.read_until.load(Ordering::Acquire),
            AccessScope::Write => slot.write_until.load(Ordering::Acquire),
        };
        until > self.stamp(now)
    }

    /// Clears `endpoint`'s marks (it answered successfully).
    pub fn mark_available(&self, endpoint: &Endpoint, scope: AccessScope) {
        if let Some(slot) = self.find(endpoint.health_key()) {
            match scope {
                AccessScope::Read => slot.read_until.store(0, Ordering::Release),
                AccessScope::Write => slot.write_until.store(0, Ordering::Release),
            }
        }
    }
}

impl std::fmt::Debug for EndpointHealth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EndpointHealth")
            .field("ttl", &self.ttl)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn ep(n: usize) -> Endpoint {
        Endpoint::parse(&format!("https://r{n}.example/"), false).unwrap()
    }

    #[tokio::test(start_paused = true)]
    async fn marks_expire_after_their_ttl() {
        let h = EndpointHealth::new(Duration::from_secs(60));
        let e = ep(1);
        let now = Instant::now();
        assert!(!h.is_unavailable(&e, AccessScope::Read, now));
        assert!(!h.any_marked());
        h.mark_unavailable(&e, AccessScope::Read, now);
        assert!(h.is_unavailable(&e, AccessScope::Read, now));
        assert!(
            !h.is_unavailable(&e, AccessScope::Write, now),
            "scopes are separate"
        );
        assert!(!h.is_unavailable(&ep(2), AccessScope::Read, now));
        tokio::time::advance(Duration::from_secs(59)).await;
        assert!(h.is_unavailable(&e, AccessScope::Read, Instant::now()));
        tokio::time::advance(Duration::from_secs(2)).await;
        assert!(!h.is_unavailable(&e, AccessScope::Read, Instant::now()));
    }

    #[tokio::test(start_paused = true)]
    async fn success_clears_a_mark() {
        let h = EndpointHealth::new(Duration::from_secs(60));
        let now = Instant::now();
        h.mark_unavailable(&ep(1), AccessScope::Write, now);
        h.mark_available(&ep(1), AccessScope::Write);
        assert!(!h.is_unavailable(&ep(1), AccessScope::Write, now));
    }

    #[test]
    fn concurrent_marks_from_many_threads() {
        let h = Arc::new(EndpointHealth::new(Duration::from_secs(60)));
        let now = Instant::now();
        let threads: Vec<_> = (0..8)
            .map(|t| {
                let h = h.clone();
                std::thread::spawn(move || {
                    for n in 0..20 {
                        h.mark_unavailable(
                            &ep(n),
                            if t % 2 == 0 {
                                AccessScope::Read
                            } else {
                                AccessScope::Write
                            },
                            now,
                        );
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        for n in 0..20 {
            assert!(h.is_unavailable(&ep(n), AccessScope::Read, now));
            assert!(h.is_unavailable(&ep(n), AccessScope::Write, now));
        }
        assert!(!h.is_unavailable(&ep(99), AccessScope::Read, now));
    }
}

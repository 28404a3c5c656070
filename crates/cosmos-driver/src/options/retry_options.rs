//! How hard the driver retries: the budget of one operation's retries, its timeouts, and the size
//! of a response it accepts.

use std::time::Duration;

/// The end-to-end timeout of an operation that sets none (and whose driver sets none): long enough
/// for a write-region failover (writes refused with 403/3 are retried about once a second) and for
/// one write attempt at the service's own 65 s timeout, short enough that no operation runs for the
/// 30+ minutes the retry budget alone would allow.
pub const DEFAULT_END_TO_END_TIMEOUT: Duration = Duration::from_secs(120);

/// The per-attempt timeout of reads that set none: a read whose region stops answering gives up on
/// that attempt after this long, marks the region, and tries the next one.
pub const DEFAULT_READ_ATTEMPT_TIMEOUT: Duration = Duration::from_secs(5);

/// The largest response body accepted when none is configured. The service caps a page of results
/// at 4 MB and an item at 2 MB (a transactional batch answer holds at most 100 of them in 4 MB of
/// request), so 32 MB is far above any valid answer while still bounding memory.
pub const DEFAULT_MAX_RESPONSE_BYTES: usize = 32 * 1024 * 1024;

/// The retry budget of every operation of a driver ([`crate::DriverOptions::with_retry_options`]).
/// The defaults are the driver's long-standing values, plus the write-forbidden wait.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetryOptions {
    /// Retries in place after 429 (throttled). Default 9.
    pub max_throttle_retries: u8,
    /// Total time spent waiting on 429s before giving up. Default 30 s.
    pub max_throttle_wait: Duration,
    /// Moves to another region (after a failure there). Default 8.
    pub max_failovers: u8,
    /// Retries in the same region after a transient failure when no other region may be used.
    /// Default 2.
    pub max_local_retries: u8,
    /// Retries in place after a partition split, merge or migration (410/1002, 1007, 1008) or a
    /// stale name cache (410/1000). Default 5.
    pub max_partition_moved_retries: u8,
    /// Retries of a write refused with 403/3 (the write region is moving): each re-reads the
    /// account and waits [`Self::write_forbidden_delay`] first (the first one does not wait). The
    /// operation's end-to-end deadline ends them sooner. Default 120 (about two minutes).
    pub max_write_forbidden_retries: u16,
    /// The wait between retries of a write refused with 403/3. Default 1 s.
    pub write_forbidden_delay: Duration,
    /// Attempts of one operation in all, whatever their cause (403/3 retries not counted).
    /// Default 32.
    pub max_attempts: u16,
}

impl Default for RetryOptions {
    fn default() -> Self {
        Self {
            max_throttle_retries: 9,
            max_throttle_wait: Duration::from_secs(30),
            max_failovers: 8,
            max_local_retries: 2,
            max_partition_moved_retries: 5,
            max_write_forbidden_retries: 120,
            write_forbidden_delay: Duration::from_secs(1),
            max_attempts: 32,
        }
    }
}

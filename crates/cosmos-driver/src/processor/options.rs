//! The processor's options: where it starts, the batch size, and the lease intervals (the .NET
//! processor's defaults: renew every 17 s, acquire every 13 s, a lease expires after 60 s, a
//! caught-up range is polled again after 5 s).

use std::time::{Duration, SystemTime};

use crate::error::CosmosError;

/// Where a processor starts reading a range that has no checkpoint yet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ProcessorStart {
    /// From the first change the container holds.
    Beginning,
    /// Only changes made after the range is first read.
    #[default]
    Now,
    /// Changes committed at or after this time.
    PointInTime(SystemTime),
}

/// How a change feed processor works. `ProcessorOptions::default()` has the .NET defaults.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcessorOptions {
    /// Where ranges without a checkpoint start.
    pub start: ProcessorStart,
    /// The most changes one handler call gets (1 to 10,000).
    pub max_items: u32,
    /// How often an instance writes the leases it owns to keep them.
    pub renew_interval: Duration,
    /// How often an instance looks for leases to take (expired ones, or to balance).
    pub acquire_interval: Duration,
    /// How long a lease not written by its owner stays its owner's.
    pub expiration_interval: Duration,
    /// How long a range that has nothing new waits before it is read again.
    pub poll_delay: Duration,
    /// The first wait before a failed handler call is retried; it doubles up to
    /// [`ProcessorOptions::retry_max_delay`].
    pub retry_delay: Duration,
    /// The longest wait between retries of a failed handler call, page read or checkpoint.
    pub retry_max_delay: Duration,
}

impl Default for ProcessorOptions {
    fn default() -> Self {
        ProcessorOptions {
            start: ProcessorStart::Now,
            max_items: 100,
            renew_interval: Duration::from_secs(17),
            acquire_interval: Duration::from_secs(13),
            expiration_interval: Duration::from_secs(60),
            poll_delay: Duration::from_secs(5),
            retry_delay: Duration::from_millis(200),
            retry_max_delay: Duration::from_secs(10),
        }
    }
}

/// The most changes one handler call may be given.
pub const MAX_BATCH_ITEMS: u32 = 10_000;

impl ProcessorOptions {
    /// The .NET defaults, starting `Now` with batches of at most 100 changes.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets where ranges without a checkpoint start.
    pub fn with_start(mut self, start: ProcessorStart) -> Self {
        self.start = start;
        self
    }

    /// Sets the most changes of one handler call.
    pub fn with_max_items(mut self, n: u32) -> Self {
        self.max_items = n;
        self
    }

    /// Sets the renew, acquire and expiration intervals.
    pub fn with_lease_intervals(
        mut self,
        renew: Duration,
        acquire: Duration,
        expiration: Duration,
    ) -> Self {
        self.renew_interval = renew;
        self.acquire_interval = acquire;
        self.expiration_interval = expiration;
        self
    }

    /// Sets the delay before a caught-up range is read again.
    pub fn with_poll_delay(mut self, delay: Duration) -> Self {
        self.poll_delay = delay;
        self
    }

    /// Checks the options: every interval above zero, a lease renewed well within its
    /// expiration, a batch size within bounds.
    pub fn validate(&self) -> Result<(), CosmosError> {
        let bad = |why: &str| {
            Err(CosmosError::invalid_input(format!(
                "processor options: {why}"
            )))
        };
        if self.max_items == 0 || self.max_items > MAX_BATCH_ITEMS {
            return bad(&format!("max_items must be 1 to {MAX_BATCH_ITEMS}"));
        }
        let intervals = [
            self.renew_interval,
            self.acquire_interval,
            self.expiration_interval,
            self.poll_delay,
            self.retry_delay,
            self.retry_max_delay,
        ];
        if intervals.iter().any(|d| d.is_zero()) {
            return bad("every interval must be above zero");
        }
        if self.renew_interval >= self.expiration_interval {
            return bad("the renew interval must be shorter than the expiration interval");
        }
        if self.retry_delay > self.retry_max_delay {
            return bad("the retry delay must not exceed the longest retry delay");
        }
        Ok(())
    }

    /// The wait before retry `attempt` (1 for the first): the retry delay doubled per attempt,
    /// at most the longest retry delay.
    pub(crate) fn backoff(&self, attempt: u32) -> Duration {
        let factor = 1u32 << attempt.saturating_sub(1).min(16);
        self.retry_delay
            .saturating_mul(factor)
            .min(self.retry_max_delay)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_dotnet_ones_and_bad_options_are_refused() {
        let o = ProcessorOptions::default();
        assert_eq!(o.renew_interval, Duration::from_secs(17));
        assert_eq!(o.acquire_interval, Duration::from_secs(13));
        assert_eq!(o.expiration_interval, Duration::from_secs(60));
        assert_eq!(o.poll_delay, Duration::from_secs(5));
        assert!(o.validate().is_ok());
        let table: Vec<(ProcessorOptions, &str)> = vec![
            (o.clone().with_max_items(0), "max_items"),
            (o.clone().with_max_items(MAX_BATCH_ITEMS + 1), "max_items"),
            (o.clone().with_poll_delay(Duration::ZERO), "above zero"),
            (
                o.clone().with_lease_intervals(
                    Duration::from_secs(60),
                    Duration::from_secs(1),
                    Duration::from_secs(60),
                ),
                "shorter",
            ),
        ];
        for (opts, why) in table {
            let err = opts.validate().unwrap_err();
            assert!(err.message().contains(why), "{why}: {}", err.message());
        }
    }

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        let o = ProcessorOptions::default();
        let waits: Vec<u64> = [1, 2, 3, 7, 100]
            .iter()
            .map(|&a| o.backoff(a).as_millis() as u64)
            .collect();
        assert_eq!(waits, vec![200, 400, 800, 10_000, 10_000]);
    }
}

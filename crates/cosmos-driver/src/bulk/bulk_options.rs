//! How a bulk run behaves: congestion bounds per range, how many operations it holds at once, how
//! often a throttled operation is tried again, and whether results keep item bodies. (How often a
//! run reads the ranges again after a split is the one re-plan budget of every compound
//! operation, not an option.)

/// Options of a bulk run. The defaults suit most loads.
#[derive(Clone, Debug, PartialEq)]
pub struct BulkOptions {
    pub(crate) min_in_flight: usize,
    pub(crate) max_in_flight: usize,
    pub(crate) max_in_flight_total: usize,
    pub(crate) max_pending: usize,
    pub(crate) max_throttle_rounds: u32,
    pub(crate) content_response: bool,
}

impl Default for BulkOptions {
    fn default() -> Self {
        BulkOptions {
            min_in_flight: 1,
            max_in_flight: 16,
            max_in_flight_total: 128,
            max_pending: 10_000,
            max_throttle_rounds: 30,
            content_response: true,
        }
    }
}

impl BulkOptions {
    /// The defaults: 1 to 16 batches in flight per range and at most 128 in all (each holds a
    /// connection: a container with thousands of ranges does not open thousands of connections),
    /// at most 10,000 operations held at once,
    /// 30 rounds of throttling per operation, item bodies kept. Operations of a range found gone
    /// (a split) are routed anew after the ranges are read again; the run reads them again at most
    /// as often as any compound operation re-plans (64 times, waiting a little longer each time),
    /// then such operations finish with the service's answer.
    pub fn new() -> Self {
        Self::default()
    }

    /// Batches in flight per partition key range: the limit starts at `min` (at least 1), grows by
    /// one after a window of successes and halves on a throttled batch, never past `max`.
    pub fn with_in_flight_per_range(mut self, min: usize, max: usize) -> Self {
        self.min_in_flight = min.max(1);
        self.max_in_flight = max.max(self.min_in_flight);
        self
    }

    /// At most `count` batches (at least 1) in flight over all ranges together.
    pub fn with_max_in_flight(mut self, count: usize) -> Self {
        self.max_in_flight_total = count.max(1);
        self
    }

    /// At most `count` operations (at least 100) are taken from the input and not yet finished at
    /// any time; the input is read no faster than that.
    pub fn with_max_pending_operations(mut self, count: usize) -> Self {
        self.max_pending = count.max(100);
        self
    }

    /// An operation throttled (429) in more than `rounds` batches finishes with the 429.
    pub fn with_max_throttle_rounds(mut self, rounds: u32) -> Self {
        self.max_throttle_rounds = rounds;
        self
    }

    /// Whether results keep the item bodies the service returns (`true`), or drop them to save
    /// memory on large loads (`false`).
    pub fn with_content_response(mut self, on: bool) -> Self {
        self.content_response = on;
        self
    }
}

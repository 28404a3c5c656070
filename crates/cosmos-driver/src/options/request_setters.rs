//! The per-call setters every options type that holds an [`OperationOptions`](super::OperationOptions)
//! in its `request` field shares (an item operation's, a query's, the change feed's, read many's):
//! each hands its value to the `OperationOptions` setter of the same name, so every setter is
//! written once, there.

/// Writes `with_session_token`, `with_consistency_level`, `with_excluded_regions` and
/// `with_availability_strategy` on `$ty`, whose `request` field is an `OperationOptions`; `$each`
/// names the requests they apply to in the docs ("every page request"). With `writes`, also
/// `with_content_response_on_write` and `with_end_to_end_timeout` (an item operation's).
macro_rules! request_setters {
    ($ty:ty, $each:literal) => {
        impl $ty {
            #[doc = concat!("Sets the session token of ", $each, " (wins over the driver's session tracking).")]
            pub fn with_session_token(mut self, token: $crate::protocol::SessionToken) -> Self {
                self.request = self.request.with_session_token(token);
                self
            }

            #[doc = concat!("Sets the consistency level of ", $each, " (may only weaken the account's).")]
            pub fn with_consistency_level(mut self, level: $crate::protocol::ConsistencyLevel) -> Self {
                self.request = self.request.with_consistency_level(level);
                self
            }

            #[doc = concat!("Sets the regions none of ", $each, " is sent to.")]
            pub fn with_excluded_regions<I, R>(mut self, regions: I) -> Self
            where
                I: IntoIterator<Item = R>,
                R: Into<$crate::protocol::Region>,
            {
                self.request = self.request.with_excluded_regions(regions);
                self
            }

            #[doc = concat!("Sets the priority of ", $each, " (`x-ms-cosmos-priority-level`).")]
            pub fn with_priority_level(mut self, level: $crate::protocol::PriorityLevel) -> Self {
                self.request = self.request.with_priority_level(level);
                self
            }

            #[doc = concat!("Sets the throughput bucket ", $each, " counts against (`x-ms-cosmos-throughput-bucket`).")]
            pub fn with_throughput_bucket(mut self, bucket: $crate::protocol::ThroughputBucket) -> Self {
                self.request = self.request.with_throughput_bucket(bucket);
                self
            }

            #[doc = concat!("Sets the availability strategy (cross-region hedging) of ", $each, ".")]
            pub fn with_availability_strategy(
                mut self,
                strategy: $crate::hedging::AvailabilityStrategy,
            ) -> Self {
                self.request = self.request.with_availability_strategy(strategy);
                self
            }
        }
    };
    ($ty:ty, $each:literal, writes) => {
        $crate::options::request_setters!($ty, $each);

        impl $ty {
            #[doc = concat!("Sets whether the response of ", $each, " carries the item, when it writes.")]
            pub fn with_content_response_on_write(mut self, on: bool) -> Self {
                self.request = self.request.with_content_response_on_write(on);
                self
            }

            #[doc = concat!("Sets the bound on the whole of ", $each, ", retries included.")]
            pub fn with_end_to_end_timeout(mut self, timeout: ::std::time::Duration) -> Self {
                self.request = self.request.with_end_to_end_timeout(timeout);
                self
            }
        }
    };
}

pub(crate) use request_setters;

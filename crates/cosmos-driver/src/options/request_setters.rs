//! The four per-call setters every multi-request operation's options share (queries, the change
//! feed, read many): each writes the [`OperationOptions`](super::OperationOptions) held in the
//! type's `request` field, which every request of the operation is sent with, under the names
//! [`ItemOptions`](crate::client::ItemOptions) gives them for a point operation.

/// Writes `with_session_token`, `with_consistency_level`, `with_excluded_regions` and
/// `with_availability_strategy` on `$ty`, whose `request` field is an `OperationOptions`; `$each`
/// names the requests they apply to in the docs ("every page request").
macro_rules! request_setters {
    ($ty:ty, $each:literal) => {
        impl $ty {
            #[doc = concat!("Sets the session token of ", $each, " (wins over the driver's session tracking).")]
            pub fn with_session_token(mut self, token: $crate::protocol::SessionToken) -> Self {
                self.request.session_token = Some(token);
                self
            }

            #[doc = concat!("Sets the consistency level of ", $each, " (may only weaken the account's).")]
            pub fn with_consistency_level(mut self, level: $crate::protocol::ConsistencyLevel) -> Self {
                self.request.consistency_level = Some(level);
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

            #[doc = concat!("Sets the availability strategy (cross-region hedging) of ", $each, ".")]
            pub fn with_availability_strategy(
                mut self,
                strategy: $crate::hedging::AvailabilityStrategy,
            ) -> Self {
                self.request.availability_strategy = Some(strategy);
                self
            }
        }
    };
}

pub(crate) use request_setters;

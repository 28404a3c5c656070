//! A change feed processor: many processes share a container's change feed, each owning some of
//! its ranges through leases kept in a lease container, with conditional writes (If-Match on the
//! lease's etag) as the only coordination.
//!
//! - One lease document per feed range (see [`Lease`]); the first instance to start creates
//!   them (the one that creates the lock document).
//! - Each instance renews its leases every renew interval and, every acquire interval, takes
//!   expired leases, then balances: at most one lease at a time from the most loaded instance,
//!   until every instance owns within one of the fair share (a pure decision, `balance`).
//! - Each owned lease is read with the pull-model change feed from its continuation; the
//!   handler gets at most `max_items` changes; after it returns `Ok` the page's continuation is
//!   written to the lease (If-Match): at-least-once delivery. An error retries the same batch.
//! - A split replaces the lease by its children's, each continuing from the parent's checkpoint
//!   (`split`); a lease merged into a bigger range reads its part of it.
//! - A lease found taken (412 on a write, or another owner) stops its range's work before the
//!   next batch. [`ChangeFeedProcessor::stop`] finishes the batches in flight, checkpoints them
//!   and releases the leases.
//! - [`ChangeFeedEstimator`] reports each lease's lag without owning anything.
//!
//! A layer above the container client: it imports `client` and the change feed; nothing below
//! imports it.

mod balance;
mod coordinator;
mod estimator;
mod events;
mod handle;
mod lease;
mod options;
mod shared;
mod split;
mod store;
mod worker;

pub use estimator::{ChangeFeedEstimator, LeaseLag};
pub use events::{LeaseWrite, ProcessorEvent};
pub use handle::{ChangeFeedProcessor, ChangeFeedProcessorBuilder};
pub use lease::{format_timestamp, parse_timestamp, Lease, LeaseRange, RangeBounds, MAX_NAME_LEN};
pub use options::{ProcessorOptions, ProcessorStart, MAX_BATCH_ITEMS};
pub use shared::ProcessorContext;

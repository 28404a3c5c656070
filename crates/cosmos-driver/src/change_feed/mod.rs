//! The change feed (pull model), as plain data and pure decisions: where a feed starts and what it
//! covers ([`ChangeFeedStart`], [`FeedScope`], [`ChangeFeedMode`]), the opaque [`FeedRange`], the
//! one-string continuation that covers every range a feed was made for, which range the next page
//! request reads (a range split since the continuation was made continues in its children from
//! the parent's position), the page request itself, the typed page and the feed's options.
//! `change_feed_reader` drives it: each page request goes through the driver's pipeline
//! (retried, routed and hedged like a point read).

mod change_feed_page;
mod change_feed_reader;
mod continuation;
mod feed_options;
mod feed_range;
mod feed_state;
mod page_request;
mod start_and_scope;

pub use change_feed_page::{ChangeFeedItem, ChangeFeedPage, ChangeMetadata, ChangeOperation};
pub(crate) use change_feed_reader::ChangeFeedReader;
#[cfg(test)]
pub(crate) use continuation::UnreadStart;
pub use continuation::MAX_CONTINUATION_BYTES;
pub(crate) use continuation::{ContinuationData, RangePosition};
pub use feed_options::ChangeFeedOptions;
pub use feed_range::FeedRange;
pub(crate) use feed_state::{FeedState, MAX_FEED_RANGES};
pub use start_and_scope::{ChangeFeedMode, ChangeFeedStart, FeedScope};

//! `container.change_feed::<T>(start, scope)`: a change feed as a `Stream` of its changes, the
//! same shape as a query's [`QueryItems`](crate::QueryItems) and a listing's
//! [`ResourceFeed`](crate::ResourceFeed). The page reading is
//! `operations::change_feed`'s; this is the typed face over it.

use std::collections::VecDeque;
use std::future::poll_fn;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use futures::future::BoxFuture;
use futures::stream::{self, BoxStream};
use futures::{Stream, StreamExt};
use serde::de::DeserializeOwned;

use crate::change_feed::ChangeFeedPage;
use crate::change_feed::ChangeFeedReader;
use crate::error::CosmosError;

type PageRead<T> = (
    Box<ChangeFeedReader<T>>,
    Result<ChangeFeedPage<T>, CosmosError>,
);

/// The reader, at rest or reading a page (it travels in the page's future and comes back).
enum Reading<T> {
    Idle(Box<ChangeFeedReader<T>>),
    Busy(BoxFuture<'static, PageRead<T>>),
    /// Only between the two.
    Moving,
}

/// The change feed of one container, read lazily. As a [`Stream`] it yields each change of one
/// poll as `T`, then ends once every range has answered "nothing new"; an error ends it too.
/// [`ChangeFeed::request_charge_so_far`] is the running charge and [`ChangeFeed::continuation`]
/// where to resume (`ChangeFeedStart::Continuation`). For each page's charge, continuation and
/// diagnostics read [`ChangeFeed::into_pages`], or one page at a time with
/// [`ChangeFeed::next_page`].
///
/// ```no_run
/// # use cosmos_driver::prelude::*;
/// # use cosmos_driver::change_feed::{ChangeFeedStart, FeedScope};
/// # async fn run(orders: ContainerClient) -> Result<(), CosmosError> {
/// let mut changes = orders.change_feed::<serde_json::Value>(ChangeFeedStart::Beginning, FeedScope::Container);
/// while let Some(change) = changes.try_next().await? {
///     println!("{change}");
/// }
/// println!("{} RU; resume with {:?}", changes.request_charge_so_far(), changes.continuation());
/// # Ok(())
/// # }
/// ```
pub struct ChangeFeed<T> {
    reading: Reading<T>,
    /// The changes of the last page read, not yet yielded.
    buffered: VecDeque<T>,
    request_charge: f64,
    /// Where the feed stands after the last page read.
    continuation: Option<String>,
    /// The item stream's poll is over (its last page was empty, or it failed).
    ended: bool,
}

impl<T> std::fmt::Debug for ChangeFeed<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChangeFeed")
            .field("buffered", &self.buffered.len())
            .field("request_charge", &self.request_charge)
            .field("ended", &self.ended)
            .finish_non_exhaustive()
    }
}

// The changes are moved out, never pinned in place.
impl<T> Unpin for ChangeFeed<T> {}

impl<T: DeserializeOwned + Send + 'static> ChangeFeed<T> {
    pub(crate) fn new(reader: ChangeFeedReader<T>) -> Self {
        ChangeFeed {
            continuation: reader.continuation(),
            reading: Reading::Idle(Box::new(reader)),
            buffered: VecDeque::new(),
            request_charge: 0.0,
            ended: false,
        }
    }

    /// Where the feed stands after the last page read: one string covering every range it reads,
    /// to resume with `ChangeFeedStart::Continuation`. Once the item stream has ended, after every
    /// change it gave. `None` when the feed could not be set up.
    pub fn continuation(&self) -> Option<String> {
        self.continuation.clone()
    }

    /// The request units of the pages read so far.
    pub fn request_charge_so_far(&self) -> f64 {
        self.request_charge
    }

    /// The next page with changes, or an empty page when every range of the feed has nothing new
    /// (the poll is over; call again later to poll again). A range that has split since the feed
    /// last read it continues in its children from the same position. Changes the item stream
    /// has buffered are not in it (they stay for the stream).
    pub async fn next_page(&mut self) -> Result<ChangeFeedPage<T>, CosmosError> {
        poll_fn(|cx| self.poll_page(cx)).await
    }

    /// Reads the next page: starts the request when the reader is at rest, and takes the reader
    /// back with the page.
    fn poll_page(&mut self, cx: &mut Context<'_>) -> Poll<Result<ChangeFeedPage<T>, CosmosError>> {
        self.reading = match std::mem::replace(&mut self.reading, Reading::Moving) {
            Reading::Idle(mut reader) => Reading::Busy(Box::pin(async move {
                let page = reader.next_page().await;
                (reader, page)
            })),
            other => other,
        };
        let Reading::Busy(read) = &mut self.reading else {
            return Poll::Ready(Err(CosmosError::invalid_input(
                "the change feed lost its reader (a page read panicked)",
            )));
        };
        let (reader, page) = ready!(read.as_mut().poll(cx));
        self.continuation = reader.continuation();
        self.reading = Reading::Idle(reader);
        if let Ok(p) = &page {
            self.request_charge += p.request_charge();
        }
        Poll::Ready(page)
    }

    /// One poll page by page, each page with its charge, continuation and diagnostics: the pages
    /// with changes, then the empty page that ends the poll (its continuation is where to resume),
    /// then the end. An error ends the stream. It continues from the next page not yet read
    /// (changes of a page the item stream had started are not repeated).
    pub fn into_pages(self) -> BoxStream<'static, Result<ChangeFeedPage<T>, CosmosError>> {
        let ended = self.ended;
        stream::unfold((self, ended), |(mut feed, done)| async move {
            if done {
                return None;
            }
            let page = feed.next_page().await;
            let end = match &page {
                Ok(p) => p.is_caught_up(),
                Err(_) => true,
            };
            Some((page, (feed, end)))
        })
        .boxed()
    }
}

impl<T: DeserializeOwned + Send + 'static> Stream for ChangeFeed<T> {
    type Item = Result<T, CosmosError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        loop {
            if let Some(item) = this.buffered.pop_front() {
                return Poll::Ready(Some(Ok(item)));
            }
            if this.ended {
                return Poll::Ready(None);
            }
            match ready!(this.poll_page(cx)) {
                Ok(page) => {
                    this.ended = page.is_caught_up();
                    this.buffered.extend(page.into_items());
                }
                Err(e) => {
                    this.ended = true;
                    return Poll::Ready(Some(Err(e)));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is_send<T: Send>() {}

    #[test]
    fn the_feed_is_a_send_stream_of_items() {
        is_send::<ChangeFeed<serde_json::Value>>();
        fn stream_of<S: Stream<Item = Result<u32, CosmosError>> + Unpin>() {}
        stream_of::<ChangeFeed<u32>>();
    }
}

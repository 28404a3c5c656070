//! `container.change_feed::<T>(start, scope)`: a change feed read page by page. Each page request
//! is one operation through the driver's pipeline (retried, routed and hedged like a point read);
//! the pure position keeping is [`crate::change_feed::FeedState`].

use std::collections::{HashMap, VecDeque};
use std::marker::PhantomData;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::Stream;
use serde::de::DeserializeOwned;

use super::driver_page_source::DriverPageSource;
use crate::change_feed::{
    page_operation, ChangeFeedMode, ChangeFeedPage, FeedState, NextRequest, PageStart,
};
use crate::operations::feed_body::feed_items;
use crate::operations::page_guard::PageGuard;
use crate::options::OperationOptions;
use crate::operations::Replans;
use crate::protocol::ContainerReference;
use crate::query::{item_error, QueryPageSource, TargetRange};
use crate::{CosmosDriver, CosmosError, CosmosResponse};

/// The position a page request reads after (its `If-None-Match` etag), if any.
fn sent_position(next: &NextRequest) -> Option<&str> {
    let start = match next {
        NextRequest::Range { start, .. } | NextRequest::PartitionKey { start, .. } => start,
    };
    match start {
        PageStart::After(etag) => Some(etag),
        PageStart::Beginning | PageStart::Now | PageStart::Since(_) => None,
    }
}

/// Which range (or part of one, or partition key) a page request reads: one guard each.
fn range_key(next: &NextRequest) -> String {
    match next {
        NextRequest::Range {
            range_id,
            part: None,
            ..
        } => range_id.clone(),
        NextRequest::Range {
            range_id,
            part: Some(part),
            ..
        } => format!("{range_id} [{:?}, {:?})", part.min(), part.max()),
        NextRequest::PartitionKey { partition_key, .. } => partition_key.as_json().to_owned(),
    }
}

/// The error of a change feed page that could not be read as `T`s (`error`): when the body is a
/// well-formed page and one item does not fit `T`, an error naming that item (index, id) instead
/// of a byte offset; either way with the page request's diagnostics (its attempts).
fn failed_page<T: DeserializeOwned>(
    response: &CosmosResponse,
    what: &str,
    error: CosmosError,
) -> CosmosError {
    let attempts = response.diagnostics().requests().len();
    let error = match feed_items::<serde_json::Value>(response, "Documents", what) {
        Ok(values) => values
            .iter()
            .enumerate()
            .find_map(|(i, v)| T::deserialize(v).err().map(|e| (i, v, e)))
            .map(|(i, v, e)| {
                let what = format!(
                    "{what} ({} items, read in {attempts} attempt{})",
                    values.len(),
                    if attempts == 1 { "" } else { "s" }
                );
                item_error(&what, i, v, e)
            })
            .unwrap_or(error),
        Err(_) => error,
    };
    error.with_diagnostics(response.diagnostics().clone())
}

/// How a change feed is read.
#[derive(Clone, Debug, Default)]
pub struct ChangeFeedOptions {
    /// Latest version (default) or all versions and deletes.
    pub mode: ChangeFeedMode,
    /// `x-ms-max-item-count`: the most changes one page holds.
    pub max_item_count: Option<u32>,
    /// Per-request options (session token, consistency, excluded regions, deadline, hedging).
    pub request: OperationOptions,
}

/// A change feed of one container, read lazily: [`ChangeFeed::next_page`] answers the next page
/// with changes, or an empty page when every range of the feed has nothing new (the poll is
/// over; call again later to poll again). [`ChangeFeed::continuation`] is where it stands.
#[derive(Debug)]
pub struct ChangeFeed<T> {
    driver: CosmosDriver,
    container: Option<ContainerReference>,
    state: Result<FeedState, Option<CosmosError>>,
    ranges: Option<Vec<TargetRange>>,
    options: ChangeFeedOptions,
    /// The position guard of each range read (by range id and the part of it read).
    guards: HashMap<String, PageGuard>,
    _items: PhantomData<fn() -> T>,
}

impl<T: DeserializeOwned> ChangeFeed<T> {
    pub(crate) fn new(
        driver: CosmosDriver,
        container: Result<ContainerReference, CosmosError>,
        state: impl FnOnce(&ContainerReference) -> Result<FeedState, CosmosError>,
        options: ChangeFeedOptions,
    ) -> Self {
        let (container, state) = match container {
            Ok(c) => {
                let s = state(&c).map_err(Some);
                (Some(c), s)
            }
            Err(e) => (None, Err(Some(e))),
        };
        ChangeFeed {
            driver,
            container,
            state,
            ranges: None,
            options,
            guards: HashMap::new(),
            _items: PhantomData,
        }
    }

    /// Where the feed stands: one string covering every range it reads, to resume with
    /// `ChangeFeedStart::Continuation`. `None` when the feed could not be set up.
    pub fn continuation(&self) -> Option<String> {
        self.state.as_ref().ok().map(FeedState::continuation)
    }

    fn setup_error(&mut self) -> CosmosError {
        match &mut self.state {
            Err(e) => e.take().unwrap_or_else(|| {
                CosmosError::invalid_input(
                    "the change feed could not be set up (see the first error)",
                )
            }),
            Ok(_) => CosmosError::invalid_input("the change feed is set up"),
        }
    }

    /// The next page with changes, or an empty page once every range has answered "nothing new"
    /// since the last change (the next call starts a new poll). A range that has split since the
    /// feed last read it continues in its children from the same position.
    pub async fn next_page(&mut self) -> Result<ChangeFeedPage<T>, CosmosError> {
        let (Some(container), Ok(_)) = (&self.container, &self.state) else {
            return Err(self.setup_error());
        };
        let container = container.clone();
        let source = DriverPageSource::new(self.driver.clone(), container.clone());
        let mut page = ChangeFeedPage {
            items: Vec::new(),
            continuation: String::new(),
            request_charge: 0.0,
            session_token: None,
            diagnostics: Vec::new(),
        };
        // Range re-reads this page may make after answers that a range is gone (a split).
        let mut replans = Replans::default();
        if let Ok(state) = &mut self.state {
            if state.poll_finished() {
                state.start_poll();
            }
        }
        loop {
            let Ok(state) = &mut self.state else {
                return Err(self.setup_error());
            };
            if !state.is_partition_key_scope() && self.ranges.is_none() {
                self.ranges = Some(source.ranges(true, &self.options.request).await?);
            }
            let next = match state.next_request(self.ranges.as_deref().unwrap_or(&[])) {
                Ok(next) => next,
                Err(_) if !state.is_partition_key_scope() && replans.take().is_some() => {
                    self.ranges = None;
                    continue;
                }
                Err(e) => return Err(e),
            };
            let op = page_operation(
                &container,
                &next,
                state.is_all_versions(),
                self.options.max_item_count,
            )?;
            let response = match self.driver.execute(op, &self.options.request).await {
                Ok(r) => r,
                Err(e) if e.is_range_gone() && replans.left() => {
                    tokio::time::sleep(replans.take().unwrap_or_default()).await;
                    self.ranges = None;
                    continue;
                }
                Err(e) => return Err(e),
            };
            page.request_charge += response.request_charge();
            page.session_token = response.session_token().map(str::to_owned);
            page.diagnostics.push(response.diagnostics().clone());
            let what = format!("a change feed page of {}", container.link());
            let items: Vec<T> = match feed_items(&response, "Documents", &what) {
                Ok(items) => items,
                Err(e) => return Err(failed_page::<T>(&response, &what, e)),
            };
            let guard = self.guards.entry(range_key(&next)).or_default();
            if let Err(fault) =
                guard.check_changes(sent_position(&next), response.etag(), items.len())
            {
                return Err(fault
                    .into_error(&what)
                    .with_diagnostics(response.diagnostics().clone()));
            }
            state.record_page(response.etag(), !items.is_empty());
            if !items.is_empty() || state.poll_finished() {
                page.items = items;
                page.continuation = state.continuation();
                return Ok(page);
            }
        }
    }

    /// One poll as a stream: the pages with changes, then the empty page that ends the poll (its
    /// continuation is where to resume), then the end. An error ends the stream.
    pub fn into_stream(self) -> impl Stream<Item = Result<ChangeFeedPage<T>, CosmosError>>
    where
        T: Send + 'static,
    {
        futures::stream::unfold((self, false), |(mut feed, done)| async move {
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
    }
}

impl<T: DeserializeOwned + Send + 'static> ChangeFeed<T> {
    /// One poll page by page, each page with its charge, continuation and diagnostics: the same
    /// stream as [`ChangeFeed::into_stream`], named as the other feeds' `into_pages`.
    pub fn into_pages(self) -> impl Stream<Item = Result<ChangeFeedPage<T>, CosmosError>> {
        self.into_stream()
    }

    /// One poll item by item: every change up to the end of the poll, then the end of the
    /// stream. [`ChangeFeedItems::request_charge_so_far`] and [`ChangeFeedItems::continuation`]
    /// say what was read and where to resume.
    pub fn into_items(self) -> ChangeFeedItems<T> {
        let continuation = self.continuation();
        ChangeFeedItems {
            pages: Box::pin(self.into_stream()),
            buffered: VecDeque::new(),
            request_charge: 0.0,
            continuation,
        }
    }
}

/// The changes of one poll of a change feed, item by item (from [`ChangeFeed::into_items`]).
pub struct ChangeFeedItems<T> {
    pages: Pin<Box<dyn Stream<Item = Result<ChangeFeedPage<T>, CosmosError>> + Send>>,
    buffered: VecDeque<T>,
    request_charge: f64,
    continuation: Option<String>,
}

impl<T> std::fmt::Debug for ChangeFeedItems<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChangeFeedItems")
            .field("buffered", &self.buffered.len())
            .field("request_charge", &self.request_charge)
            .finish()
    }
}

// The items are moved out, never pinned in place.
impl<T> Unpin for ChangeFeedItems<T> {}

impl<T> ChangeFeedItems<T> {
    /// The request units of the pages read so far.
    pub fn request_charge_so_far(&self) -> f64 {
        self.request_charge
    }

    /// Where the feed stands after the last page read (resume with
    /// `ChangeFeedStart::Continuation`): once the stream has ended, after every change it gave.
    pub fn continuation(&self) -> Option<&str> {
        self.continuation.as_deref()
    }
}

impl<T> Stream for ChangeFeedItems<T> {
    type Item = Result<T, CosmosError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        loop {
            if let Some(item) = this.buffered.pop_front() {
                return Poll::Ready(Some(Ok(item)));
            }
            match this.pages.as_mut().poll_next(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(None) => return Poll::Ready(None),
                Poll::Ready(Some(Err(e))) => return Poll::Ready(Some(Err(e))),
                Poll::Ready(Some(Ok(page))) => {
                    this.request_charge += page.request_charge();
                    this.continuation = Some(page.continuation().to_owned());
                    this.buffered.extend(page.into_items());
                }
            }
        }
    }
}

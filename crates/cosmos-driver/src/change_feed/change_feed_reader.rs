//! Reading a change feed page by page: each page request is one operation through the dispatcher
//! (retried, routed and hedged like a point read); the pure position keeping is
//! [`FeedState`]. A range found gone (a split) is planned again through the
//! one re-plan budget ([`crate::operations::Replans`]): the ranges are read again and the feed continues in
//! the children from the same position.

use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::Arc;

use serde::de::DeserializeOwned;

use super::change_feed_page::ChangeFeedPage;
use super::feed_options::ChangeFeedOptions;
use super::feed_state::{FeedState, NextRequest, PageStart};
use super::page_request::page_operation;
use crate::error::CosmosError;
use crate::operations::feed_body::feed_items;
use crate::operations::page_guard::PageGuard;
use crate::operations::{partition_key_ranges, run, Replanning, Round};
use crate::pipeline::DriverCore;
use crate::protocol::ContainerReference;
use crate::query::item_error;
use crate::response::CosmosResponse;
use crate::routing::TargetRange;

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

/// A change feed of one container being read: where it stands, the ranges it reads and the
/// continuation guard of each.
#[derive(Debug)]
pub(crate) struct ChangeFeedReader<T> {
    core: Arc<DriverCore>,
    container: Option<ContainerReference>,
    state: Result<FeedState, Option<CosmosError>>,
    ranges: Option<Vec<TargetRange>>,
    options: ChangeFeedOptions,
    /// The position guard of each range read (by range id and the part of it read).
    guards: HashMap<String, PageGuard>,
    _items: PhantomData<fn() -> T>,
}

impl<T: DeserializeOwned> ChangeFeedReader<T> {
    /// A feed of `container` (or why it cannot be read) from the position `state` makes.
    pub(crate) fn new(
        core: Arc<DriverCore>,
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
        ChangeFeedReader {
            core,
            container,
            state,
            ranges: None,
            options,
            guards: HashMap::new(),
            _items: PhantomData,
        }
    }

    /// Where the feed stands (`None` when it could not be set up).
    pub(crate) fn continuation(&self) -> Option<String> {
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
    /// since the last change (the next call starts a new poll).
    pub(crate) async fn next_page(&mut self) -> Result<ChangeFeedPage<T>, CosmosError> {
        let (Some(container), Ok(_)) = (&self.container, &self.state) else {
            return Err(self.setup_error());
        };
        let container = container.clone();
        let mut page = ChangeFeedPage {
            items: Vec::new(),
            continuation: String::new(),
            request_charge: 0.0,
            session_token: None,
            diagnostics: Vec::new(),
        };
        if let Ok(state) = &mut self.state {
            if state.poll_finished() {
                state.start_poll();
            }
        }
        let what = format!("a change feed page of {}", container.link());
        let mut replanning = Replanning::default();
        loop {
            let round = self
                .round(&container, &what, &mut page, replanning.refresh())
                .await?;
            if replanning.settle(round, &what).await?.is_some() {
                return Ok(page);
            }
        }
    }

    /// One round of a page: reads ranges one page request at a time until one has changes or
    /// the poll is over; a range found gone, or ranges that do not cover the feed's position,
    /// end the round for a re-plan (the ranges are read again when `refresh`).
    async fn round(
        &mut self,
        container: &ContainerReference,
        what: &str,
        page: &mut ChangeFeedPage<T>,
        refresh: bool,
    ) -> Result<Round<()>, CosmosError> {
        if refresh {
            self.ranges = None;
        }
        loop {
            let Ok(state) = &mut self.state else {
                return Err(self.setup_error());
            };
            if !state.is_partition_key_scope() && self.ranges.is_none() {
                self.ranges = Some(
                    partition_key_ranges(&self.core, container, true, &self.options.request)
                        .await?,
                );
            }
            let next = match state.next_request(self.ranges.as_deref().unwrap_or(&[])) {
                Ok(next) => next,
                // The ranges read do not cover the feed's position (a listing taken
                // mid-split): read them again.
                Err(e) if !state.is_partition_key_scope() => return Ok(Round::Stale(e)),
                Err(e) => return Err(e),
            };
            let op = page_operation(
                container,
                &next,
                state.is_all_versions(),
                self.options.max_item_count,
            )?;
            let response = match run(&self.core, op, &self.options.request).await {
                Ok(r) => r,
                Err(e) if e.is_range_gone() => return Ok(Round::Gone(e)),
                Err(e) => return Err(e),
            };
            page.request_charge += response.request_charge();
            page.session_token = response.session_token().map(str::to_owned);
            page.diagnostics.push(response.diagnostics().clone());
            let items: Vec<T> = match feed_items(&response, "Documents", what) {
                Ok(items) => items,
                Err(e) => return Err(failed_page::<T>(&response, what, e)),
            };
            let guard = self.guards.entry(range_key(&next)).or_default();
            if let Err(fault) =
                guard.check_changes(sent_position(&next), response.etag(), items.len())
            {
                return Err(fault
                    .into_error(what)
                    .with_diagnostics(response.diagnostics().clone()));
            }
            state.record_page(response.etag(), !items.is_empty());
            if !items.is_empty() || state.poll_finished() {
                page.items = items;
                page.continuation = state.continuation();
                return Ok(Round::Done(()));
            }
        }
    }
}

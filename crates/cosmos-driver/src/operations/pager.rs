//! A paged feed: one request per page, each through the pipeline entry, continued by the
//! service's continuation token until it sends none. Read feed ([`Pager`]) and the listings read
//! whole ([`read_whole`]: a container's partition key ranges) page through the same cursor. Every
//! page's body is checked to be a feed page (its array of resources) and every continuation
//! passes the [`PageGuard`](super::page_guard::PageGuard).

use std::sync::Arc;

use serde::de::DeserializeOwned;

use super::feed_body::{feed_array_name, feed_item_count, feed_items};
use super::operation_kind::OperationKind;
use super::page_guard::PageGuard;
use super::pipeline_entry::PipelineEntry;
use crate::error::CosmosError;
use crate::operation::CosmosOperation;
use crate::options::OperationOptions;
use crate::pipeline::DriverCore;
use crate::response::CosmosResponse;

/// Sends one page request of a feed (the page `operation`'s continuation names, or the first).
pub(crate) async fn page<E: PipelineEntry>(
    entry: &E,
    operation: &CosmosOperation,
    options: &OperationOptions,
) -> Result<CosmosResponse, CosmosError> {
    entry.send(operation, options).await
}

/// The pages of one feed operation, fetched lazily: each [`Pager::next_page`] sends one request
/// (retried, routed and hedged like a point read) and answers with that page. The feed ends when a
/// page carries no continuation token, or after an error (the pipeline has already retried what
/// could be retried). A page whose body is not a feed page (`{"Documents": [...]}` for items), a
/// page that hands back a continuation the feed already had, or more than
/// 1,000 empty pages in a row
/// end the feed with an error. Made by `CosmosDriver::pages`.
#[derive(Debug)]
pub struct Pager {
    core: Arc<DriverCore>,
    options: OperationOptions,
    cursor: FeedCursor,
}

impl Pager {
    pub(crate) fn new(
        core: Arc<DriverCore>,
        operation: CosmosOperation,
        options: OperationOptions,
    ) -> Self {
        Self {
            core,
            options,
            cursor: FeedCursor::new(operation),
        }
    }

    /// The next page, or `None` when the feed has ended.
    pub async fn next_page(&mut self) -> Option<Result<CosmosResponse, CosmosError>> {
        next_page(&mut self.cursor, &*self.core, &self.options).await
    }
}

/// Fetches the cursor's next page through `entry` and moves the cursor on.
async fn next_page<E: PipelineEntry>(
    cursor: &mut FeedCursor,
    entry: &E,
    options: &OperationOptions,
) -> Option<Result<CosmosResponse, CosmosError>> {
    let request = match cursor.next_request()? {
        Ok(request) => request,
        Err(e) => return Some(Err(e)),
    };
    let answer = page(entry, &request, options).await.and_then(|response| {
        let items = match feed_array_name(&request) {
            Some(field) => feed_item_count(&response, field, &request)?,
            None => usize::from(!response.body().is_empty()),
        };
        cursor
            .advance(response.continuation(), items)
            .map(|()| response)
    });
    if answer.is_err() {
        cursor.state = CursorState::Done;
    }
    Some(answer)
}

/// The most pages one listing read whole may have.
pub(crate) const MAX_LISTING_PAGES: usize = 1000;

/// Every resource of the feed `operation` (read feed of partition key ranges, ...), page after
/// page through `entry`, each page's array read as `R`. The pages pass the same guards as
/// [`Pager`]'s (a repeated or cycling continuation, a run of empty pages); a feed longer than
/// [`MAX_LISTING_PAGES`] pages is an error, never a partial answer.
pub(crate) async fn read_whole<E: PipelineEntry, R: DeserializeOwned>(
    entry: &E,
    operation: CosmosOperation,
    options: &OperationOptions,
) -> Result<Vec<R>, CosmosError> {
    let Some(field) = feed_array_name(&operation) else {
        return Err(CosmosError::invalid_input(format!(
            "{operation} is not a feed operation and has no pages (use execute)"
        )));
    };
    let mut cursor = FeedCursor::new(operation);
    let mut out = Vec::new();
    for _ in 0..MAX_LISTING_PAGES {
        let Some(answer) = next_page(&mut cursor, entry, options).await else {
            return Ok(out);
        };
        let response = answer?;
        out.extend(feed_items::<R>(&response, field, &cursor.operation)?);
        if cursor.state == CursorState::Done {
            return Ok(out);
        }
    }
    Err(CosmosError::new(
        crate::error::ErrorKind::Deserialization,
        format!(
            "{} did not end within {MAX_LISTING_PAGES} pages",
            cursor.operation
        ),
    ))
}

/// Where a feed stands: the pure part of paging.
#[derive(Debug)]
pub(crate) struct FeedCursor {
    operation: CosmosOperation,
    state: CursorState,
    guard: PageGuard,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum CursorState {
    /// No page fetched yet: the operation is sent as given (with its own continuation, if any).
    First,
    /// Continue from this token.
    Next(String),
    /// The feed has ended.
    Done,
}

impl FeedCursor {
    pub(crate) fn new(operation: CosmosOperation) -> Self {
        Self {
            operation,
            state: CursorState::First,
            guard: PageGuard::new(),
        }
    }

    /// The request for the next page, `None` when the feed has ended, or why the operation cannot
    /// be paged (the cursor then ends).
    pub(crate) fn next_request(&mut self) -> Option<Result<CosmosOperation, CosmosError>> {
        let request = match &self.state {
            CursorState::Done => return None,
            CursorState::First => self.first_request(),
            CursorState::Next(token) => self.operation.clone().with_continuation(token),
        };
        if request.is_err() {
            self.state = CursorState::Done;
        }
        Some(request)
    }

    fn first_request(&self) -> Result<CosmosOperation, CosmosError> {
        if OperationKind::of(&self.operation) != OperationKind::PagedFeed {
            return Err(CosmosError::invalid_input(format!(
                "{} is not a feed operation and has no pages (use execute)",
                self.operation
            )));
        }
        self.operation.validate()?;
        Ok(self.operation.clone())
    }

    /// Moves on after a page that held `items` resources and carried `continuation`. A page that
    /// hands back a token the feed already had (the one it was fetched with, or an earlier one), or
    /// one empty page too many, made no progress: that ends the feed with an error rather than
    /// looping.
    pub(crate) fn advance(
        &mut self,
        continuation: Option<&str>,
        items: usize,
    ) -> Result<(), CosmosError> {
        let sent = match &self.state {
            CursorState::Next(token) => Some(token.as_str()),
            CursorState::First => self.operation.continuation(),
            CursorState::Done => None,
        };
        let continuation = continuation.filter(|t| !t.is_empty());
        if let Err(fault) = self.guard.check(sent, continuation, items) {
            self.state = CursorState::Done;
            return Err(fault.into_error(&self.operation));
        }
        self.state = match continuation {
            None => CursorState::Done,
            Some(token) => CursorState::Next(token.to_owned()),
        };
        Ok(())
    }
}

#[cfg(test)]
#[path = "pager_tests.rs"]
mod tests;

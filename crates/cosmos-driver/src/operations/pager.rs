//! A paged feed: one request per page, each through the pipeline entry, continued by the
//! service's continuation token until it sends none. Read feed is the first user; queries and the
//! change feed reuse the same cursor.

use std::sync::Arc;

use super::operation_kind::OperationKind;
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
/// could be retried). Made by `CosmosDriver::pages`.
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
    let answer = page(entry, &request, options)
        .await
        .and_then(|response| cursor.advance(response.continuation()).map(|()| response));
    if answer.is_err() {
        cursor.state = CursorState::Done;
    }
    Some(answer)
}

/// Where a feed stands: the pure part of paging.
#[derive(Debug)]
pub(crate) struct FeedCursor {
    operation: CosmosOperation,
    state: CursorState,
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

    /// Moves on after a page that carried `continuation`. A page that hands back the token it was
    /// fetched with made no progress: that ends the feed with an error rather than looping.
    pub(crate) fn advance(&mut self, continuation: Option<&str>) -> Result<(), CosmosError> {
        let sent = match &self.state {
            CursorState::Next(token) => Some(token.as_str()),
            CursorState::First => self.operation.continuation(),
            CursorState::Done => None,
        };
        match continuation.filter(|t| !t.is_empty()) {
            None => {
                self.state = CursorState::Done;
                Ok(())
            }
            Some(token) if Some(token) == sent => {
                self.state = CursorState::Done;
                Err(CosmosError::new(
                    crate::error::ErrorKind::Service,
                    format!(
                        "the service answered a page of {} with the continuation token it was sent; \
                         the feed would never end",
                        self.operation
                    ),
                ))
            }
            Some(token) => {
                self.state = CursorState::Next(token.to_owned());
                Ok(())
            }
        }
    }
}

#[cfg(test)]
#[path = "pager_tests.rs"]
mod tests;

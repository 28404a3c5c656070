//! A query's result as streams: [`QueryItems<T>`] yields each item deserialized as `T`
//! (`futures::Stream<Item = Result<T, CosmosError>>`); [`QueryItems::into_pages`] yields pages
//! with their continuation, charge, session token, metrics and diagnostics. Pages are fetched
//! lazily, as the stream is read.

use std::collections::VecDeque;
use std::marker::PhantomData;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::stream::BoxStream;
use futures::{Stream, StreamExt};
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::query_pager::{QueryPager, QuerySummary, RawQueryPage};
use crate::diagnostics::DiagnosticsContext;
use crate::error::{CosmosError, ErrorKind};

/// One page of a query's result, items typed.
#[derive(Debug)]
pub struct QueryPage<T> {
    items: Vec<T>,
    continuation: Result<Option<String>, String>,
    request_charge: f64,
    session_token: Option<String>,
    query_metrics: Vec<String>,
    index_metrics: Vec<String>,
    diagnostics: Vec<DiagnosticsContext>,
    summary: QuerySummary,
}

impl<T> QueryPage<T> {
    /// The page's items.
    pub fn items(&self) -> &[T] {
        &self.items
    }

    /// The page's items, owned.
    pub fn into_items(self) -> Vec<T> {
        self.items
    }

    /// The token that resumes the query after this page (`None`: the query is complete). An
    /// error when no token can be issued at this point because it would be larger than
    /// [`MAX_TOKEN_BYTES`](super::MAX_TOKEN_BYTES) (an aggregate or GROUP BY with very many
    /// groups, a DISTINCT with very many values); the error says what to do instead.
    pub fn continuation(&self) -> Result<Option<&str>, CosmosError> {
        match &self.continuation {
            Ok(t) => Ok(t.as_deref()),
            Err(m) => Err(CosmosError::new(ErrorKind::NotSupported, m.clone())),
        }
    }

    /// Request units of the service pages behind this page.
    pub fn request_charge(&self) -> f64 {
        self.request_charge
    }

    /// The session token of the last service page behind this page.
    pub fn session_token(&self) -> Option<&str> {
        self.session_token.as_deref()
    }

    /// Query metrics (`x-ms-documentdb-query-metrics`) of each service page, when asked for.
    pub fn query_metrics(&self) -> &[String] {
        &self.query_metrics
    }

    /// Index metrics (`x-ms-cosmos-index-utilization`) of each service page, when asked for.
    pub fn index_metrics(&self) -> &[String] {
        &self.index_metrics
    }

    /// Diagnostics of each service page behind this page.
    pub fn diagnostics(&self) -> &[DiagnosticsContext] {
        &self.diagnostics
    }

    /// The query's summary up to this page.
    pub fn summary(&self) -> &QuerySummary {
        &self.summary
    }
}

fn typed<T: DeserializeOwned>(raw: RawQueryPage) -> Result<QueryPage<T>, CosmosError> {
    let items = raw
        .values
        .into_iter()
        .enumerate()
        .map(|(i, v)| T::deserialize(&v).map_err(|e| item_error("a query result", i, &v, e)))
        .collect::<Result<Vec<T>, _>>()?;
    Ok(QueryPage {
        items,
        continuation: raw.continuation,
        request_charge: raw.request_charge,
        session_token: raw.session_token,
        query_metrics: raw.query_metrics,
        index_metrics: raw.index_metrics,
        diagnostics: raw.diagnostics,
        summary: raw.summary,
    })
}

fn raw_pages(pager: QueryPager) -> BoxStream<'static, Result<RawQueryPage, CosmosError>> {
    futures::stream::unfold(pager, |mut p| async move {
        p.next_page().await.map(|page| (page, p))
    })
    .boxed()
}

/// The pages of a query's result.
pub struct QueryPages<T> {
    inner: BoxStream<'static, Result<RawQueryPage, CosmosError>>,
    _item: PhantomData<fn() -> T>,
}

impl<T> std::fmt::Debug for QueryPages<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("QueryPages")
    }
}

impl<T: DeserializeOwned> Stream for QueryPages<T> {
    type Item = Result<QueryPage<T>, CosmosError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.inner
            .poll_next_unpin(cx)
            .map(|o| o.map(|r| r.and_then(typed::<T>)))
    }
}

enum ItemsState {
    Fresh(Box<QueryPager>),
    Running {
        pages: BoxStream<'static, Result<RawQueryPage, CosmosError>>,
        /// Each item with its index in its page.
        buffered: VecDeque<(usize, Value)>,
    },
    Done,
}

/// The items of a query's result, each deserialized as `T`.
/// [`QueryItems::request_charge_so_far`] is the running charge of the pages read; for each page's
/// charge, continuation and diagnostics read [`QueryItems::into_pages`] instead.
pub struct QueryItems<T> {
    state: ItemsState,
    request_charge: f64,
    pages_read: usize,
    /// The diagnostics of the page being read out (for the error of an item that does not fit).
    page_diagnostics: Vec<DiagnosticsContext>,
    _item: PhantomData<fn() -> T>,
}

/// The error of a result item that cannot be read as the requested type: it names the item's
/// index in its page (counted from 0), its id when it has one, and serde's reason.
pub(crate) fn item_error(
    what: &str,
    index: usize,
    value: &Value,
    e: serde_json::Error,
) -> CosmosError {
    let id = match value.get("id").and_then(Value::as_str) {
        Some(id) => format!(" (id {id:?})"),
        None => String::new(),
    };
    CosmosError::new(
        ErrorKind::Deserialization,
        format!("{what}: item {index}{id} of the page cannot be read as the requested type: {e}"),
    )
    .with_source(e)
}

impl<T> std::fmt::Debug for QueryItems<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("QueryItems")
    }
}

impl<T> QueryItems<T> {
    /// The items of `pager`'s result.
    pub fn new(pager: QueryPager) -> Self {
        QueryItems {
            state: ItemsState::Fresh(Box::new(pager)),
            request_charge: 0.0,
            pages_read: 0,
            page_diagnostics: Vec::new(),
            _item: PhantomData,
        }
    }

    /// A stream that fails at once with `error` (a query refused before anything was sent).
    pub fn failed(error: CosmosError) -> Self {
        QueryItems {
            state: ItemsState::Running {
                pages: futures::stream::once(async move { Err(error) }).boxed(),
                buffered: VecDeque::new(),
            },
            request_charge: 0.0,
            pages_read: 0,
            page_diagnostics: Vec::new(),
            _item: PhantomData,
        }
    }

    /// The request units of the pages read so far (every page the items streamed so far came
    /// from, and the page being read out).
    pub fn request_charge_so_far(&self) -> f64 {
        self.request_charge
    }

    /// How many service pages have been read so far.
    pub fn pages_read(&self) -> usize {
        self.pages_read
    }

    /// The result page by page. The stream continues where the items stream stopped, at the
    /// next service page (items of a page already started are not repeated).
    pub fn into_pages(self) -> QueryPages<T> {
        let inner = match self.state {
            ItemsState::Fresh(pager) => raw_pages(*pager),
            ItemsState::Running { pages, .. } => pages,
            ItemsState::Done => futures::stream::empty().boxed(),
        };
        QueryPages {
            inner,
            _item: PhantomData,
        }
    }
}

impl<T: DeserializeOwned> Stream for QueryItems<T> {
    type Item = Result<T, CosmosError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        loop {
            match &mut self.state {
                ItemsState::Fresh(_) => {
                    let ItemsState::Fresh(pager) =
                        std::mem::replace(&mut self.state, ItemsState::Done)
                    else {
                        continue;
                    };
                    self.state = ItemsState::Running {
                        pages: raw_pages(*pager),
                        buffered: VecDeque::new(),
                    };
                }
                ItemsState::Running { pages, buffered } => {
                    if let Some((index, v)) = buffered.pop_front() {
                        let e = match T::deserialize(&v) {
                            Ok(item) => return Poll::Ready(Some(Ok(item))),
                            Err(e) => e,
                        };
                        let page = self.pages_read.saturating_sub(1);
                        let diagnostics = DiagnosticsContext::aggregate(std::mem::take(
                            &mut self.page_diagnostics,
                        ));
                        let attempts = diagnostics.requests().len();
                        let what = format!(
                            "a query result (page {page}, read in {attempts} attempt{})",
                            if attempts == 1 { "" } else { "s" }
                        );
                        let error = item_error(&what, index, &v, e).with_diagnostics(diagnostics);
                        return Poll::Ready(Some(Err(error)));
                    }
                    match pages.poll_next_unpin(cx) {
                        Poll::Pending => return Poll::Pending,
                        Poll::Ready(None) => {
                            self.state = ItemsState::Done;
                            return Poll::Ready(None);
                        }
                        Poll::Ready(Some(Err(e))) => {
                            self.state = ItemsState::Done;
                            return Poll::Ready(Some(Err(e)));
                        }
                        Poll::Ready(Some(Ok(page))) => {
                            buffered.extend(page.values.into_iter().enumerate());
                            self.request_charge += page.request_charge;
                            self.pages_read += 1;
                            self.page_diagnostics = page.diagnostics;
                        }
                    }
                }
                ItemsState::Done => return Poll::Ready(None),
            }
        }
    }
}

//! A listing (the account's databases, a database's containers) as a stream of resources with a
//! running charge, or page by page with each page's charge, continuation and diagnostics.

use std::collections::VecDeque;
use std::marker::PhantomData;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::stream::{self, BoxStream, Stream, StreamExt};
use serde::de::DeserializeOwned;

use crate::diagnostics::DiagnosticsContext;
use crate::error::{CosmosError, ErrorKind};
use crate::operations::Pager;
use crate::query::item_error;

/// One page of a listing.
#[derive(Debug)]
pub struct ResourcePage<T> {
    items: Vec<T>,
    request_charge: f64,
    continuation: Option<String>,
    diagnostics: DiagnosticsContext,
}

impl<T> ResourcePage<T> {
    /// The page's resources.
    pub fn items(&self) -> &[T] {
        &self.items
    }

    /// The page's resources, owned.
    pub fn into_items(self) -> Vec<T> {
        self.items
    }

    /// The request units of the page.
    pub fn request_charge(&self) -> f64 {
        self.request_charge
    }

    /// The service's continuation after this page (`None`: the listing is complete).
    pub fn continuation(&self) -> Option<&str> {
        self.continuation.as_deref()
    }

    /// The page request's diagnostics.
    pub fn diagnostics(&self) -> &DiagnosticsContext {
        &self.diagnostics
    }
}

/// The resources of a listing, read page by page as the stream is polled.
pub struct ResourceFeed<T> {
    pages: BoxStream<'static, Result<ResourcePage<T>, CosmosError>>,
    buffered: VecDeque<T>,
    request_charge: f64,
    _item: PhantomData<fn() -> T>,
}

impl<T> std::fmt::Debug for ResourceFeed<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceFeed")
            .field("request_charge", &self.request_charge)
            .finish()
    }
}

// The resources are moved out, never pinned in place.
impl<T> Unpin for ResourceFeed<T> {}

impl<T: DeserializeOwned + Send + 'static> ResourceFeed<T> {
    /// The resources of `pager`'s pages, each page's array `name`.
    pub(crate) fn new(pager: Pager, name: &'static str) -> Self {
        let pages = stream::unfold(Some(pager), move |pager| async move {
            let mut pager = pager?;
            match pager.next_page().await? {
                Ok(page) => {
                    let parsed = typed_page(&page, name);
                    let next = parsed.is_ok().then_some(pager);
                    Some((parsed, next))
                }
                Err(e) => Some((Err(e), None)),
            }
        })
        .boxed();
        Self::from_pages(pages)
    }

    /// A feed that fails at once with `error`.
    pub(crate) fn failed(error: CosmosError) -> Self {
        Self::from_pages(stream::once(async move { Err(error) }).boxed())
    }

    fn from_pages(pages: BoxStream<'static, Result<ResourcePage<T>, CosmosError>>) -> Self {
        ResourceFeed {
            pages,
            buffered: VecDeque::new(),
            request_charge: 0.0,
            _item: PhantomData,
        }
    }
}

impl<T> ResourceFeed<T> {
    /// The request units of the pages read so far.
    pub fn request_charge_so_far(&self) -> f64 {
        self.request_charge
    }

    /// The listing page by page, from the next page not yet read.
    pub fn into_pages(self) -> BoxStream<'static, Result<ResourcePage<T>, CosmosError>> {
        self.pages
    }
}

impl<T> Stream for ResourceFeed<T> {
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
                    this.request_charge += page.request_charge;
                    this.buffered.extend(page.items);
                }
            }
        }
    }
}

/// The array `name` of `page`'s body, each resource read as `T`.
fn typed_page<T: DeserializeOwned>(
    page: &crate::response::CosmosResponse,
    name: &str,
) -> Result<ResourcePage<T>, CosmosError> {
    let diagnostics = page.diagnostics().clone();
    let mut feed: serde_json::Map<String, serde_json::Value> = page.json()?;
    let Some(serde_json::Value::Array(values)) = feed.remove(name) else {
        return Err(CosmosError::new(
            ErrorKind::Deserialization,
            format!("the feed page has no {name:?} array"),
        )
        .with_diagnostics(diagnostics));
    };
    let what = format!("a page of the {name} feed");
    let mut items = Vec::with_capacity(values.len());
    for (i, v) in values.iter().enumerate() {
        match T::deserialize(v) {
            Ok(item) => items.push(item),
            Err(e) => return Err(item_error(&what, i, v, e).with_diagnostics(diagnostics)),
        }
    }
    Ok(ResourcePage {
        items,
        request_charge: page.request_charge(),
        continuation: page.continuation().map(str::to_owned),
        diagnostics,
    })
}

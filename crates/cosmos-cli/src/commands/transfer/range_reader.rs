//! Reads a container's feed ranges at once: a bounded number of workers, each taking the next
//! range still to read and sending its pages, in order, through a channel that holds a bounded
//! number of pages. So at most `2 × in_flight` pages wait in memory (one per worker waiting to
//! send, and the channel's), whatever the container's size. Pages of different ranges arrive
//! interleaved; the pages of one range arrive in order.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

use cosmos_driver::query::{Query, QueryOptions, QueryScope};
use cosmos_driver::{ContainerClient, CosmosError, FeedRange};
use futures::StreamExt;
use serde_json::Value;
use tokio::sync::mpsc;
use tokio::task::JoinSet;

/// The most ranges read at once.
pub const MAX_IN_FLIGHT: usize = 64;

/// One range to read, from its continuation (`None`: from its start).
pub struct RangeJob {
    /// The caller's number for the range, given back with each of its pages.
    pub index: usize,
    /// The feed range.
    pub range: FeedRange,
    /// Where to resume it.
    pub continuation: Option<String>,
}

/// One page of one range.
pub struct RangePage {
    /// The range's [`RangeJob::index`].
    pub index: usize,
    /// The page's items.
    pub items: Vec<Value>,
    /// The continuation after this page; `None`: the range is finished.
    pub next: Option<String>,
    /// Request units of the page.
    pub request_charge: f64,
}

/// The pages of every range, as they arrive. Dropping it stops the workers.
pub struct RangeReader {
    pages: mpsc::Receiver<Result<RangePage, CosmosError>>,
    _workers: JoinSet<()>,
}

/// What each worker reads with.
#[derive(Clone)]
struct Source {
    container: ContainerClient,
    query: String,
    options: QueryOptions,
    jobs: Arc<Mutex<VecDeque<RangeJob>>>,
    pages: mpsc::Sender<Result<RangePage, CosmosError>>,
}

impl RangeReader {
    /// Starts reading `jobs` with `query`, `in_flight` ranges at once (1 to [`MAX_IN_FLIGHT`]).
    pub fn start(
        container: ContainerClient,
        query: String,
        options: QueryOptions,
        jobs: Vec<RangeJob>,
        in_flight: usize,
    ) -> Self {
        let in_flight = in_flight.clamp(1, MAX_IN_FLIGHT);
        let (tx, rx) = mpsc::channel(in_flight);
        let workers_needed = in_flight.min(jobs.len());
        let source = Source {
            container,
            query,
            options,
            jobs: Arc::new(Mutex::new(VecDeque::from(jobs))),
            pages: tx,
        };
        let mut workers = JoinSet::new();
        for _ in 0..workers_needed {
            workers.spawn(work(source.clone()));
        }
        RangeReader {
            pages: rx,
            _workers: workers,
        }
    }

    /// The next page of any range; `None` once every range is finished (or a worker stopped on
    /// an error, which came first).
    pub async fn next(&mut self) -> Option<Result<RangePage, CosmosError>> {
        self.pages.recv().await
    }
}

async fn work(source: Source) {
    loop {
        let job = source
            .jobs
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop_front();
        let Some(job) = job else { return };
        if !read_range(&source, job).await {
            return;
        }
    }
}

/// Sends every page of `job`'s range; false when the reader is gone or the range failed.
async fn read_range(source: &Source, job: RangeJob) -> bool {
    let mut options = source.options.clone();
    if let Some(t) = job.continuation {
        options = options.with_continuation(t);
    }
    let mut pages = source
        .container
        .query_items_with::<Value>(
            Query::new(source.query.clone()),
            QueryScope::from(job.range),
            options,
        )
        .into_pages();
    let mut finished = false;
    while let Some(page) = pages.next().await {
        let page = page.and_then(|p| {
            let next = p.continuation()?.map(str::to_owned);
            Ok(RangePage {
                index: job.index,
                request_charge: p.request_charge(),
                next,
                items: p.into_items(),
            })
        });
        let failed = page.is_err();
        finished = page.as_ref().is_ok_and(|p| p.next.is_none());
        if source.pages.send(page).await.is_err() || failed {
            return false;
        }
    }
    if !finished {
        // The feed ended without a last page saying so: mark the range finished.
        let done = RangePage {
            index: job.index,
            items: Vec::new(),
            next: None,
            request_charge: 0.0,
        };
        return source.pages.send(Ok(done)).await.is_ok();
    }
    true
}

//! A bulk run: operations read lazily from the caller's stream, queued per route (partition key
//! range), sent as non-atomic batches within the service's limits while each route's congestion
//! limit allows, throttled operations sent again after the service's wait, operations of a split
//! range routed anew after the ranges are read again (through the one re-plan budget of compound
//! operations, `operations::Replans`), and every result put at the caller's index.
//!
//! Memory: at most `max_pending` operations are taken from the input and not yet finished; the
//! input is not read past that.

use std::collections::{HashMap, VecDeque};
use std::time::Duration;

use bytes::Bytes;
use futures::stream::FuturesUnordered;
use futures::{FutureExt, Stream, StreamExt};
use tokio::time::Instant;

use super::batch_outcome::{operation_fate, request_fate, OperationFate, RequestFate};
use super::bulk_operation::BulkOperation;
use super::bulk_options::BulkOptions;
use super::bulk_response::{BulkItemResult, BulkResponse, BulkStats};
use super::bulk_target::BulkTarget;
use super::congestion::{BatchSignal, RangeCongestion};
use super::range_map::{BulkRoute, RangeMap};
use crate::batch::results::{parse_results_of, Bodies};
use crate::batch::wire::{array_len, MAX_BODY_BYTES, MAX_OPERATIONS};
use crate::batch::BatchOperationResult;
use crate::error::{CosmosError, ErrorKind};
use crate::operations::Replans;
use crate::protocol::CosmosStatus;
use crate::response::CosmosResponse;

/// The wait after a 429 that named none.
const DEFAULT_THROTTLE_WAIT: Duration = Duration::from_millis(100);

/// One operation taken from the input and not yet finished.
struct Pending {
    index: usize,
    op: BulkOperation,
    /// The operation's encoded JSON.
    bytes: Vec<u8>,
    throttles: u32,
    /// The range map the operation was last routed by (its generation in the run).
    routed_by: u32,
}

#[derive(Default)]
struct RouteQueue {
    queue: VecDeque<Pending>,
    in_flight: usize,
    paused_until: Option<Instant>,
}

impl RouteQueue {
    fn ready(&self, now: Instant) -> bool {
        !self.queue.is_empty() && self.paused_until.is_none_or(|t| t <= now)
    }
}

/// The state of one run.
struct Run<'t> {
    target: &'t dyn BulkTarget,
    options: &'t BulkOptions,
    map: RangeMap,
    routes: HashMap<BulkRoute, RouteQueue>,
    congestion: RangeCongestion<BulkRoute>,
    results: Vec<Option<BulkItemResult>>,
    pending: usize,
    stats: BulkStats,
    /// The re-plans (range re-reads after a batch found its range gone) the run has left.
    replans: Replans,
    /// How many times the range map was read again (the generation of `map`).
    map_generation: u32,
}

/// Runs every operation of `operations` against `target`; the results are in the input's order.
/// Fails only when the container's routes cannot be read at the start.
pub(crate) async fn run_bulk<S>(
    target: &dyn BulkTarget,
    operations: S,
    options: &BulkOptions,
) -> Result<BulkResponse, CosmosError>
where
    S: Stream<Item = BulkOperation>,
{
    let started = Instant::now();
    let map = target.routes(false).await?;
    let mut run = Run {
        target,
        options,
        map,
        routes: HashMap::new(),
        congestion: RangeCongestion::new(options.min_in_flight, options.max_in_flight),
        results: Vec::new(),
        pending: 0,
        stats: BulkStats::default(),
        replans: Replans::default(),
        map_generation: 0,
    };
    let mut operations = std::pin::pin!(operations);
    let mut input_done = false;
    let mut in_flight = FuturesUnordered::new();
    loop {
        // Take what the input has ready, up to the bound.
        let mut input_waits = false;
        while !input_done && run.pending < options.max_pending {
            match operations.next().now_or_never() {
                Some(Some(op)) => run.intake(op),
                Some(None) => input_done = true,
                None => {
                    input_waits = true;
                    break;
                }
            }
        }
        // Send what the routes' limits allow: full batches, and partial ones when waiting would
        // not fill them (the input is over or not ready, or the bound is reached with nothing in
        // flight to free it).
        let flush = input_done || input_waits || in_flight.is_empty();
        let now = Instant::now();
        for (route, q) in run.routes.iter_mut() {
            if q.paused_until.is_some_and(|t| t <= now) {
                q.paused_until = None;
            }
            while q.ready(now)
                && in_flight.len() < options.max_in_flight_total
                && run.congestion.may_send(route, q.in_flight)
                && (flush || holds_a_full_batch(&q.queue))
            {
                let batch = take_batch(&mut q.queue);
                q.in_flight += 1;
                in_flight.push(send(run.target, route.clone(), batch));
            }
        }
        if input_done && run.pending == 0 {
            break;
        }
        let wake = run
            .routes
            .values()
            .filter(|q| !q.queue.is_empty())
            .filter_map(|q| q.paused_until)
            .min();
        let may_read = !input_done && run.pending < options.max_pending;
        tokio::select! {
            Some((route, batch, answer)) = in_flight.next(), if !in_flight.is_empty() => {
                run.finish(route, batch, answer).await;
            }
            next = operations.next(), if may_read => match next {
                Some(op) => run.intake(op),
                None => input_done = true,
            },
            () = sleep_until(wake), if wake.is_some() => {}
        }
    }
    run.stats.duration = started.elapsed();
    let results = run
        .results
        .into_iter()
        .enumerate()
        .map(|(index, r)| {
            r.unwrap_or_else(|| {
                Err(CosmosError::new(
                    ErrorKind::Service,
                    format!("bulk operation {index} was not answered"),
                ))
            })
        })
        .collect();
    Ok(BulkResponse {
        results,
        stats: run.stats,
    })
}

async fn sleep_until(at: Option<Instant>) {
    if let Some(at) = at {
        tokio::time::sleep_until(at).await;
    }
}

/// Sends one batch; answers with the route and the operations it carried.
async fn send(
    target: &dyn BulkTarget,
    route: BulkRoute,
    batch: Vec<Pending>,
) -> (BulkRoute, Vec<Pending>, Result<CosmosResponse, CosmosError>) {
    let len = batch.iter().map(|p| p.bytes.len()).sum();
    let mut body = Vec::with_capacity(array_len(len, batch.len()));
    body.push(b'[');
    for (i, p) in batch.iter().enumerate() {
        if i > 0 {
            body.push(b',');
        }
        body.extend_from_slice(&p.bytes);
    }
    body.push(b']');
    let answer = target.send(route.clone(), Bytes::from(body)).await;
    (route, batch, answer)
}

/// Whether the operations at the front of `queue` fill a batch (100 operations, or the next one
/// would take the body past 2 MB).
fn holds_a_full_batch(queue: &VecDeque<Pending>) -> bool {
    let mut bytes = 0;
    for (count, p) in queue.iter().enumerate() {
        if count == MAX_OPERATIONS || array_len(bytes + p.bytes.len(), count + 1) > MAX_BODY_BYTES {
            return true;
        }
        bytes += p.bytes.len();
    }
    false
}

/// The operations at the front of `queue` that fit one batch (100 operations, 2 MB).
fn take_batch(queue: &mut VecDeque<Pending>) -> Vec<Pending> {
    let mut batch: Vec<Pending> = Vec::new();
    let mut bytes = 0;
    while let Some(next) = queue.front() {
        let fits = batch.len() < MAX_OPERATIONS
            && array_len(bytes + next.bytes.len(), batch.len() + 1) <= MAX_BODY_BYTES;
        if !fits {
            break;
        }
        bytes += next.bytes.len();
        batch.extend(queue.pop_front());
    }
    batch
}

impl Run<'_> {
    fn finish_one(&mut self, index: usize, result: BulkItemResult) {
        if let Some(slot) = self.results.get_mut(index) {
            *slot = Some(result);
        }
        self.pending -= 1;
    }

    /// Takes one operation from the input: refused now when it cannot fit any batch, else queued
    /// on its route.
    fn intake(&mut self, op: BulkOperation) {
        let index = self.results.len();
        self.results.push(None);
        self.pending += 1;
        match serde_json::to_vec(&op.wire) {
            Ok(bytes) if array_len(bytes.len(), 1) <= MAX_BODY_BYTES => {
                let route = self.map.route(op.partition_key());
                let p = Pending {
                    index,
                    op,
                    bytes,
                    throttles: 0,
                    routed_by: self.map_generation,
                };
                self.routes.entry(route).or_default().queue.push_back(p);
            }
            Ok(bytes) => {
                let e = CosmosError::invalid_input(format!(
                    "bulk {} is {} bytes; a batch body is at most {MAX_BODY_BYTES}",
                    op.wire.describe(index),
                    bytes.len()
                ));
                self.finish_one(index, Err(e));
            }
            Err(e) => {
                let e = CosmosError::invalid_input(format!(
                    "bulk {} is not JSON: {e}",
                    op.wire.describe(index)
                ));
                self.finish_one(index, Err(e));
            }
        }
    }

    /// Takes a batch's answer into account.
    async fn finish(
        &mut self,
        route: BulkRoute,
        batch: Vec<Pending>,
        answer: Result<CosmosResponse, CosmosError>,
    ) {
        if let Some(q) = self.routes.get_mut(&route) {
            q.in_flight -= 1;
        }
        let mut throttled: Vec<Pending> = Vec::new();
        let mut wait: Option<Duration> = None;
        let mut misrouted: Vec<(Pending, BulkItemResult)> = Vec::new();
        match answer {
            Ok(response) => {
                self.stats.batches += 1;
                self.stats.request_charge += response.request_charge();
                // Throttled attempts the pipeline retried before this answer.
                let retried = response
                    .diagnostics()
                    .requests()
                    .iter()
                    .filter(|r| r.status().is_some_and(|s| s.status == 429))
                    .count();
                self.stats.throttled += retried;
                if retried > 0 {
                    wait = Some(Duration::ZERO);
                }
                let bodies = if self.options.content_response {
                    Bodies::Keep
                } else {
                    Bodies::Skip
                };
                let parsed = parse_results_of(
                    response.body(),
                    batch.iter().map(|p| (p.op.kind(), Some(p.op.id()))),
                    bodies,
                );
                match parsed {
                    Ok(results) => {
                        for (p, mut result) in batch.into_iter().zip(results) {
                            match operation_fate(result.status, result.retry_after) {
                                OperationFate::Finished => {
                                    result.index = p.index;
                                    if !self.options.content_response {
                                        result.resource_body = None;
                                    }
                                    self.finish_one(p.index, Ok(result));
                                }
                                OperationFate::Throttled(after) => {
                                    self.stats.throttled += 1;
                                    wait = longer(wait, after);
                                    self.throttled_or_finish(p, &mut throttled, result);
                                }
                                OperationFate::Misrouted => misrouted.push((p, Ok(result))),
                            }
                        }
                    }
                    Err(e) => {
                        let e = e.with_diagnostics(response.diagnostics().clone());
                        for p in batch {
                            self.finish_one(p.index, Err(copy(&e)));
                        }
                    }
                }
            }
            Err(error) => match request_fate(&error) {
                RequestFate::Throttled(after) => {
                    self.stats.throttled += 1;
                    wait = longer(wait, after);
                    for p in batch {
                        let result = synthesized(&p, &error);
                        self.throttled_or_finish(p, &mut throttled, result);
                    }
                }
                RequestFate::Misrouted => {
                    misrouted.extend(batch.into_iter().map(|p| (p, Err(copy(&error)))));
                }
                RequestFate::Failed => {
                    for p in batch {
                        self.finish_one(p.index, Err(copy(&error)));
                    }
                }
            },
        }
        let signal = if wait.is_some() {
            BatchSignal::Throttled
        } else {
            BatchSignal::Success
        };
        self.congestion.record(&route, signal);
        if !throttled.is_empty() {
            let q = self.routes.entry(route).or_default();
            // Back at the front, in their order: they were sent before what is queued.
            for p in throttled.into_iter().rev() {
                q.queue.push_front(p);
            }
            let until = Instant::now() + wait.unwrap_or(DEFAULT_THROTTLE_WAIT);
            q.paused_until = Some(q.paused_until.map_or(until, |t| t.max(until)));
        }
        if !misrouted.is_empty() {
            self.reroute(misrouted).await;
        }
    }

    fn throttled_or_finish(
        &mut self,
        mut p: Pending,
        throttled: &mut Vec<Pending>,
        mut result: BatchOperationResult,
    ) {
        p.throttles += 1;
        if p.throttles > self.options.max_throttle_rounds {
            result.index = p.index;
            self.finish_one(p.index, Ok(result));
        } else {
            throttled.push(p);
        }
    }

    /// Routes `misrouted` (each with the answer it would finish with) and every queued operation
    /// anew, in the caller's order. When one of them was routed by the current range map, the
    /// ranges are read again first, taking a re-plan from the run's budget and waiting its delay;
    /// when none is left, the misrouted operations finish with the service's answer. Operations
    /// sent before the last re-read are routed by it without another.
    async fn reroute(&mut self, misrouted: Vec<(Pending, BulkItemResult)>) {
        let stale_map = misrouted
            .iter()
            .any(|(p, _)| p.routed_by == self.map_generation);
        if stale_map {
            let Some(wait) = self.replans.take() else {
                for (p, result) in misrouted {
                    let result = result.map(|mut r| {
                        r.index = p.index;
                        r
                    });
                    self.finish_one(p.index, result);
                }
                return;
            };
            tokio::time::sleep(wait).await;
            self.stats.range_refreshes += 1;
            match self.target.routes(true).await {
                Ok(map) => {
                    self.map = map;
                    self.map_generation += 1;
                }
                Err(e) => {
                    for (p, _) in misrouted {
                        self.finish_one(p.index, Err(copy(&e)));
                    }
                    return;
                }
            }
        }
        self.stats.rerouted += misrouted.len();
        let mut all: Vec<Pending> = misrouted.into_iter().map(|(p, _)| p).collect();
        for q in self.routes.values_mut() {
            all.extend(q.queue.drain(..));
        }
        all.sort_by_key(|p| p.index);
        for mut p in all {
            let route = self.map.route(p.op.partition_key());
            p.routed_by = self.map_generation;
            self.routes.entry(route).or_default().queue.push_back(p);
        }
        self.routes
            .retain(|_, q| !q.queue.is_empty() || q.in_flight > 0);
    }
}

fn longer(a: Option<Duration>, b: Option<Duration>) -> Option<Duration> {
    let b = b.unwrap_or(DEFAULT_THROTTLE_WAIT);
    Some(a.map_or(b, |a| a.max(b)))
}

/// The result an operation finishes with when its whole request was throttled too often.
fn synthesized(p: &Pending, error: &CosmosError) -> BatchOperationResult {
    BatchOperationResult {
        index: p.index,
        kind: p.op.kind(),
        id: Some(p.op.id().to_owned()),
        status: error.cosmos_status().unwrap_or(CosmosStatus::new(429, 0)),
        etag: None,
        resource_body: None,
        request_charge: 0.0,
        retry_after: error.headers().and_then(|h| h.retry_after()),
        message: Some(error.message().to_owned()),
    }
}

/// The same error for another operation (errors are not `Clone`: diagnostics stay with the first).
fn copy(error: &CosmosError) -> CosmosError {
    let mut e = CosmosError::new(error.kind(), error.message().to_owned());
    if let Some(status) = error.cosmos_status() {
        e = e.with_status(status);
    }
    e
}

//! The bulk run against an in-memory target on paused time: results in the caller's order, the
//! input read no further than the bound, congestion limits respected, throttled operations sent
//! again after the wait, split ranges re-read, failed requests reported per operation.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use futures::future::BoxFuture;
use futures::StreamExt;
use http::{HeaderMap, HeaderValue};
use serde_json::{json, Value};

use super::bulk_target::BulkTarget;
use super::range_map::{BulkRoute, KeyDefinition, RangeMap};
use super::*;
use crate::diagnostics::DiagnosticsContext;
use crate::error::CosmosError;
use crate::protocol::ResponseHeaders;
use crate::protocol::{header_names as h, CosmosStatus};
use crate::response::CosmosResponse;
use crate::routing::TargetRange;

/// What the fake service does with the next request to a route.
#[derive(Clone, Debug)]
enum Script {
    /// Answer every operation 201 (409 when its id starts with "dup").
    Serve,
    /// Answer every operation 429 with this wait.
    ThrottleOps(u64),
    /// Refuse the whole request with 429 and this wait.
    ThrottleRequest(u64),
    /// Refuse the whole request with 410/1002.
    Gone,
    /// Refuse the whole request with 400.
    BadRequest,
}

#[derive(Default)]
struct State {
    /// Scripts per route name, used front first; `Serve` when empty.
    scripts: HashMap<String, Vec<Script>>,
    in_flight: HashMap<String, usize>,
    max_in_flight: HashMap<String, usize>,
    /// Batches in flight over every route, and the most seen at once.
    in_flight_total: usize,
    max_in_flight_total: usize,
    requests: Vec<(String, usize)>,
    refreshes: usize,
}

struct Fake {
    state: Mutex<State>,
    /// The maps served before and after the first refresh.
    maps: (RangeMap, RangeMap),
    latency: Duration,
    answered: Arc<AtomicUsize>,
}

fn name(route: &BulkRoute) -> String {
    match route {
        BulkRoute::Range(id) => format!("range {id}"),
        BulkRoute::PartitionKey(pk) => pk.as_json().to_owned(),
    }
}

fn headers(pairs: &[(http::HeaderName, String)]) -> ResponseHeaders {
    let mut map = HeaderMap::new();
    for (n, v) in pairs {
        map.insert(n.clone(), HeaderValue::from_str(v).unwrap());
    }
    ResponseHeaders::new(map)
}

impl Fake {
    fn new(maps: (RangeMap, RangeMap)) -> Self {
        Fake {
            state: Mutex::new(State::default()),
            maps,
            latency: Duration::from_millis(10),
            answered: Arc::new(AtomicUsize::new(0)),
        }
    }

    fn script(&self, route: &str, scripts: Vec<Script>) {
        self.state
            .lock()
            .unwrap()
            .scripts
            .insert(route.to_owned(), scripts);
    }

    fn answer(&self, script: Script, ops: &[Value]) -> Result<CosmosResponse, CosmosError> {
        let whole = |status: u16, sub: u32, wait: Option<u64>| {
            let mut pairs = vec![];
            if let Some(ms) = wait {
                pairs.push((h::RETRY_AFTER_MS, ms.to_string()));
            }
            Err(CosmosError::service(
                CosmosStatus::new(status, sub),
                headers(&pairs),
                Bytes::from_static(b"{\"message\":\"scripted\"}"),
            ))
        };
        let entries: Vec<Value> = match script {
            Script::Gone => return whole(410, 1002, None),
            Script::BadRequest => return whole(400, 0, None),
            Script::ThrottleRequest(ms) => return whole(429, 3200, Some(ms)),
            Script::ThrottleOps(ms) => ops
                .iter()
                .map(|_| json!({"statusCode": 429, "subStatusCode": 3200, "retryAfterMilliseconds": ms}))
                .collect(),
            Script::Serve => ops
                .iter()
                .map(|op| {
                    let dup = op["id"].as_str().unwrap().starts_with("dup");
                    if dup {
                        json!({"statusCode": 409, "requestCharge": 1.0})
                    } else {
                        json!({"statusCode": 201, "requestCharge": 5.0, "eTag": "\"e\"", "resourceBody": op["resourceBody"]})
                    }
                })
                .collect(),
        };
        self.answered.fetch_add(
            entries.iter().filter(|e| e["statusCode"] != 429).count(),
            Ordering::SeqCst,
        );
        let charge: f64 = entries
            .iter()
            .map(|e| e["requestCharge"].as_f64().unwrap_or(0.0))
            .sum();
        Ok(CosmosResponse::new(
            CosmosStatus::new(200, 0),
            headers(&[(h::REQUEST_CHARGE, charge.to_string())]),
            Bytes::from(Value::Array(entries).to_string()),
            DiagnosticsContext::default(),
        ))
    }
}

impl BulkTarget for Fake {
    fn routes(&self, refresh: bool) -> BoxFuture<'_, Result<RangeMap, CosmosError>> {
        Box::pin(async move {
            let mut s = self.state.lock().unwrap();
            if refresh {
                s.refreshes += 1;
            }
            Ok(if s.refreshes == 0 {
                self.maps.0.clone()
            } else {
                self.maps.1.clone()
            })
        })
    }

    fn send(
        &self,
        route: BulkRoute,
        body: Bytes,
    ) -> BoxFuture<'_, Result<CosmosResponse, CosmosError>> {
        Box::pin(async move {
            let route = name(&route);
            let ops: Vec<Value> = serde_json::from_slice(&body).unwrap();
            assert!(ops.len() <= 100 && body.len() <= 2 * 1024 * 1024);
            let script = {
                let mut s = self.state.lock().unwrap();
                s.requests.push((route.clone(), ops.len()));
                let n = s.in_flight.entry(route.clone()).or_default();
                *n += 1;
                let n = *n;
                let max = s.max_in_flight.entry(route.clone()).or_default();
                *max = (*max).max(n);
                s.in_flight_total += 1;
                s.max_in_flight_total = s.max_in_flight_total.max(s.in_flight_total);
                let scripts = s.scripts.entry(route.clone()).or_default();
                if scripts.is_empty() {
                    Script::Serve
                } else {
                    scripts.remove(0)
                }
            };
            tokio::time::sleep(self.latency).await;
            {
                let mut s = self.state.lock().unwrap();
                *s.in_flight.get_mut(&route).unwrap() -= 1;
                s.in_flight_total -= 1;
            }
            self.answer(script, &ops)
        })
    }
}

fn by_key() -> (RangeMap, RangeMap) {
    (RangeMap::by_partition_key(), RangeMap::by_partition_key())
}

fn create(i: usize, keys: usize) -> BulkOperation {
    let pk = format!("k{}", i % keys);
    BulkOperation::create(pk.as_str(), &json!({"id": format!("i{i}"), "pk": pk})).unwrap()
}

fn statuses(response: &BulkResponse) -> Vec<u16> {
    response
        .results()
        .iter()
        .map(|r| r.as_ref().map_or(0, |r| r.status.status))
        .collect()
}

#[tokio::test(start_paused = true)]
async fn results_come_back_in_the_callers_order_and_the_input_is_read_within_the_bound() {
    let fake = Fake::new(by_key());
    let pulled = Arc::new(AtomicUsize::new(0));
    let answered = fake.answered.clone();
    let max_ahead = Arc::new(AtomicUsize::new(0));
    let (p, m) = (pulled.clone(), max_ahead.clone());
    let ops = futures::stream::iter(0..2_000).map(move |i| {
        let ahead = p.fetch_add(1, Ordering::SeqCst) + 1 - answered.load(Ordering::SeqCst);
        m.fetch_max(ahead, Ordering::SeqCst);
        create(i, 3)
    });
    let options = BulkOptions::new().with_max_pending_operations(300);
    let response = run_bulk(&fake, ops, &options).await.unwrap();

    assert_eq!(statuses(&response), vec![201; 2_000]);
    for (i, r) in response.results().iter().enumerate() {
        let r = r.as_ref().unwrap();
        assert_eq!((r.index, r.id.clone()), (i, Some(format!("i{i}"))));
        assert!(r.resource_body.is_some());
    }
    assert!(max_ahead.load(Ordering::SeqCst) <= 300, "{max_ahead:?}");
    let s = fake.state.lock().unwrap();
    // Full batches except each key's last.
    assert!(s.requests.iter().filter(|(_, n)| *n < 100).count() <= 3 * 3);
    assert_eq!(response.stats().request_charge, 5.0 * 2_000.0);
    assert_eq!(response.stats().batches, s.requests.len());
}

#[tokio::test(start_paused = true)]
async fn batches_in_flight_over_all_ranges_stay_within_the_run_wide_bound() {
    // 300 keys, each its own route: per-range limits alone would send 300 batches at once.
    let fake = Fake::new(by_key());
    let ops = futures::stream::iter((0..3_000).map(|i| create(i, 300)));
    let options = BulkOptions::new()
        .with_in_flight_per_range(4, 16)
        .with_max_in_flight(32);
    let response = run_bulk(&fake, ops, &options).await.unwrap();
    assert_eq!(statuses(&response), vec![201; 3_000]);
    let most = fake.state.lock().unwrap().max_in_flight_total;
    assert!(
        (16..=32).contains(&most),
        "{most} batches were in flight at once"
    );
    // The default bound.
    let fake = Fake::new(by_key());
    let ops = futures::stream::iter((0..3_000).map(|i| create(i, 300)));
    let response = run_bulk(
        &fake,
        ops,
        &BulkOptions::new().with_in_flight_per_range(4, 16),
    )
    .await
    .unwrap();
    assert_eq!(statuses(&response), vec![201; 3_000]);
    assert!(fake.state.lock().unwrap().max_in_flight_total <= 128);
}

#[tokio::test(start_paused = true)]
async fn throttled_operations_wait_and_go_again_and_the_limit_stays_within_bounds() {
    let fake = Fake::new(by_key());
    let route = "[\"k0\"]";
    fake.script(
        route,
        vec![
            Script::ThrottleOps(200),
            Script::ThrottleRequest(300),
            Script::ThrottleOps(100),
        ],
    );
    let options = BulkOptions::new().with_in_flight_per_range(1, 3);
    let started = tokio::time::Instant::now();
    let response = run_bulk(
        &fake,
        futures::stream::iter((0..1_000).map(|i| create(i, 1))),
        &options,
    )
    .await
    .unwrap();
    assert_eq!(statuses(&response), vec![201; 1_000]);
    // Three throttled answers (two with 100 operations each, one whole request).
    assert_eq!(response.stats().throttled, 100 + 1 + 100);
    assert!(started.elapsed() >= Duration::from_millis(600));
    let s = fake.state.lock().unwrap();
    let max = s.max_in_flight[route];
    assert!((1..=3).contains(&max), "{max}");
    // The first throttled batch went again, in the same order, as the next request.
    assert_eq!(s.requests.len(), 10 + 3);
}

#[tokio::test(start_paused = true)]
async fn an_operation_throttled_too_often_finishes_with_the_429() {
    let fake = Fake::new(by_key());
    fake.script("[\"k0\"]", vec![Script::ThrottleOps(10); 5]);
    let options = BulkOptions::new().with_max_throttle_rounds(2);
    let response = run_bulk(
        &fake,
        futures::stream::iter((0..4).map(|i| create(i, 2))),
        &options,
    )
    .await
    .unwrap();
    // k0 holds operations 0 and 2; k1 holds 1 and 3.
    assert_eq!(statuses(&response), vec![429, 201, 429, 201]);
    assert_eq!(response.succeeded(), 2);
}

#[tokio::test(start_paused = true)]
async fn a_gone_range_is_read_again_and_its_operations_routed_anew() {
    let definition = KeyDefinition {
        paths: vec!["/pk".into()],
        kind: Some("Hash".into()),
        version: Some(2),
    };
    let range = |id: &str, min: &str, max: &str| TargetRange {
        id: id.into(),
        min: min.into(),
        max: max.into(),
    };
    let before = RangeMap::new(&definition, vec![range("0", "", "FF")]);
    let after = RangeMap::new(
        &definition,
        vec![
            range("1", "", "20000000000000000000000000000000"),
            range("2", "20000000000000000000000000000000", "FF"),
        ],
    );
    let fake = Fake::new((before, after));
    fake.script("range 0", vec![Script::Gone; 10]);
    let response = run_bulk(
        &fake,
        futures::stream::iter((0..300).map(|i| create(i, 50))),
        &BulkOptions::new(),
    )
    .await
    .unwrap();
    assert_eq!(statuses(&response), vec![201; 300]);
    assert_eq!(response.stats().range_refreshes, 1);
    assert!(response.stats().rerouted >= 100);
    let s = fake.state.lock().unwrap();
    assert!(s.requests.iter().any(|(r, _)| r == "range 1"));
    assert!(s.requests.iter().any(|(r, _)| r == "range 2"));
    assert!(s
        .requests
        .iter()
        .all(|(r, _)| r != "range 0" || s.refreshes == 1));
}

#[tokio::test(start_paused = true)]
async fn a_range_that_stays_gone_spends_the_one_re_plan_budget_then_its_operations_fail() {
    let definition = KeyDefinition {
        paths: vec!["/pk".into()],
        kind: Some("Hash".into()),
        version: Some(2),
    };
    let whole = RangeMap::new(
        &definition,
        vec![TargetRange {
            id: "0".into(),
            min: "".into(),
            max: "FF".into(),
        }],
    );
    // The listing never catches up: every re-read still shows range 0, which stays gone.
    let fake = Fake::new((whole.clone(), whole));
    fake.script("range 0", vec![Script::Gone; 1000]);
    let started = tokio::time::Instant::now();
    let response = run_bulk(
        &fake,
        futures::stream::iter((0..3).map(|i| create(i, 3))),
        &BulkOptions::new(),
    )
    .await
    .unwrap();
    for r in response.results() {
        let e = r.as_ref().unwrap_err();
        assert_eq!((e.status(), e.sub_status()), (Some(410), Some(1002)));
    }
    let replans = crate::operations::MAX_REPLANS as usize;
    assert_eq!(response.stats().range_refreshes, replans);
    assert_eq!(fake.state.lock().unwrap().refreshes, replans);
    // The re-reads waited longer each time (none, then 20 ms doubling up to 1 s): 58 s in all.
    assert!(
        started.elapsed() >= Duration::from_secs(58),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test(start_paused = true)]
async fn a_failed_request_fails_its_operations_and_only_them() {
    let fake = Fake::new(by_key());
    fake.script("[\"k1\"]", vec![Script::BadRequest]);
    let mut ops: Vec<BulkOperation> = (0..4).map(|i| create(i, 2)).collect();
    ops.push(BulkOperation::create("k0", &json!({"id": "dup-1"})).unwrap());
    let response = run_bulk(&fake, futures::stream::iter(ops), &BulkOptions::new())
        .await
        .unwrap();
    assert_eq!(statuses(&response), vec![201, 0, 201, 0, 409]);
    let err = response.results()[1].as_ref().unwrap_err();
    assert_eq!(err.status(), Some(400));
    assert_eq!(response.succeeded(), 2);
}

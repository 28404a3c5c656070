//! Query throughput of the emulator: single-partition queries per second, and a cross-partition
//! ORDER BY over 100,000 items carried out as an SDK does (ask for the plan, run the rewritten
//! query on every partition key range page by page, merge by the `orderByItems`). A benchmark,
//! not a test.
//!
//! ```text
//! cargo run --release -p cosmos-emulator --example query_throughput -- [--items 100000]
//!     [--connections 8] [--duration-secs 10]
//! ```
//!
//! It starts an emulator in this process (profile `local`, 4 partition key ranges, auth off so
//! the figure is the query engine's), loads the items over HTTP, then measures.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use clap::Parser;
use cosmos_emulator::EmulatorBuilder;
use http::{Method, Request};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde_json::{json, Value};

#[derive(Parser, Clone)]
struct Args {
    /// Items loaded (spread over 1,000 partition key values).
    #[arg(long, default_value_t = 100_000)]
    items: usize,
    /// Concurrent single-partition queries.
    #[arg(long, default_value_t = 8)]
    connections: usize,
    /// Measured seconds of single-partition queries.
    #[arg(long, default_value_t = 10)]
    duration_secs: u64,
}

type Http = Client<HttpConnector, Full<Bytes>>;

async fn send(
    http: &Http,
    base: &str,
    method: Method,
    path: &str,
    headers: &[(&str, String)],
    body: Value,
) -> Result<(u16, http::HeaderMap, Value), String> {
    let mut builder = Request::builder()
        .method(method)
        .uri(format!("{}{path}", base.trim_end_matches('/')))
        .header("x-ms-version", "2020-07-15");
    for (name, value) in headers {
        builder = builder.header(*name, value);
    }
    let request = builder
        .body(Full::new(Bytes::from(body.to_string())))
        .map_err(|e| e.to_string())?;
    let response = http.request(request).await.map_err(|e| e.to_string())?;
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let bytes = response
        .into_body()
        .collect()
        .await
        .map_err(|e| e.to_string())?
        .to_bytes();
    let value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    Ok((status, headers, value))
}

fn query_headers(extra: &[(&'static str, String)]) -> Vec<(&'static str, String)> {
    let mut h = vec![
        ("x-ms-documentdb-isquery", "True".to_owned()),
        ("content-type", "application/query+json".to_owned()),
    ];
    h.extend_from_slice(extra);
    h
}

#[tokio::main]
async fn main() -> Result<(), String> {
    let args = Args::parse();
    let emu = EmulatorBuilder::new()
        .profile("local")
        .partitions(4)
        .no_auth(true)
        .start()
        .await
        .map_err(|e| format!("{e:?}"))?;
    let base = emu.endpoint().to_owned();
    let http: Http = Client::builder(TokioExecutor::new()).build_http();
    send(
        &http,
        &base,
        Method::POST,
        "/dbs",
        &[],
        json!({"id": "bench"}),
    )
    .await?;
    send(
        &http,
        &base,
        Method::POST,
        "/dbs/bench/colls",
        &[],
        json!({"id": "items", "partitionKey": {"paths": ["/pk"], "kind": "Hash", "version": 2}}),
    )
    .await?;

    let started = Instant::now();
    let next = Arc::new(AtomicU64::new(0));
    let mut loaders = Vec::new();
    for _ in 0..16 {
        let (http, base, next, items) =
            (http.clone(), base.clone(), next.clone(), args.items as u64);
        loaders.push(tokio::spawn(async move {
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= items {
                    return Ok::<(), String>(());
                }
                let pk = format!("p{}", i % 1000);
                let doc = json!({"id": format!("i{i}"), "pk": pk, "n": (i * 7919) % 100_003, "s": format!("name {}", i % 97), "tags": ["a", "b"]});
                let (status, _, _) = send(&http, &base, Method::POST, "/dbs/bench/colls/items/docs",
                    &[("x-ms-documentdb-partitionkey", json!([pk]).to_string())], doc).await?;
                if status != 201 {
                    return Err(format!("create answered {status}"));
                }
            }
        }));
    }
    for l in loaders {
        l.await.map_err(|e| e.to_string())??;
    }
    println!(
        "loaded {} items in {:.1} s",
        args.items,
        started.elapsed().as_secs_f64()
    );

    // Single-partition queries: ~100 items per key, a filter and a projection.
    let done = Arc::new(AtomicU64::new(0));
    let deadline = Instant::now() + Duration::from_secs(args.duration_secs);
    let mut workers = Vec::new();
    for w in 0..args.connections {
        let (http, base, done) = (http.clone(), base.clone(), done.clone());
        workers.push(tokio::spawn(async move {
            let mut k = w as u64;
            while Instant::now() < deadline {
                k = (k * 31 + 7) % 1000;
                let pk = json!([format!("p{k}")]).to_string();
                let body = json!({"query": "SELECT c.id, c.n FROM c WHERE c.n > @min", "parameters": [{"name": "@min", "value": 50_000}]});
                let (status, _, page) = send(&http, &base, Method::POST, "/dbs/bench/colls/items/docs",
                    &query_headers(&[("x-ms-documentdb-partitionkey", pk)]), body).await?;
                if status != 200 || !page["Documents"].is_array() {
                    return Err(format!("query answered {status}: {page}"));
                }
                done.fetch_add(1, Ordering::Relaxed);
            }
            Ok::<(), String>(())
        }));
    }
    for w in workers {
        w.await.map_err(|e| e.to_string())??;
    }
    let n = done.load(Ordering::Relaxed);
    println!(
        "single-partition queries: {n} in {} s = {:.0} queries/s ({} concurrent, ~{} items per partition key)",
        args.duration_secs,
        n as f64 / args.duration_secs as f64,
        args.connections,
        args.items / 1000
    );

    // Cross-partition ORDER BY the way an SDK runs it.
    let started = Instant::now();
    let text = "SELECT c.id, c.n FROM c ORDER BY c.n";
    let (status, _, plan) = send(
        &http,
        &base,
        Method::POST,
        "/dbs/bench/colls/items/docs",
        &[
            ("x-ms-cosmos-is-query-plan-request", "True".to_owned()),
            ("content-type", "application/query+json".to_owned()),
        ],
        json!({"query": text}),
    )
    .await?;
    if status != 200 {
        return Err(format!("the plan answered {status}: {plan}"));
    }
    let rewritten = plan["queryInfo"]["rewrittenQuery"]
        .as_str()
        .unwrap_or_default()
        .replace("{documentdb-formattableorderbyquery-filter}", "true");
    let mut ranges = Vec::new();
    let mut pages = 0;
    for range in ["0", "1", "2", "3"] {
        let (http, base, rewritten) = (http.clone(), base.clone(), rewritten.clone());
        ranges.push(tokio::spawn(async move {
            let mut rows = Vec::new();
            let mut pages = 0;
            let mut continuation: Option<String> = None;
            loop {
                let mut extra = vec![
                    ("x-ms-documentdb-partitionkeyrangeid", range.to_owned()),
                    ("x-ms-max-item-count", "1000".to_owned()),
                ];
                if let Some(c) = &continuation {
                    extra.push(("x-ms-continuation", c.clone()));
                }
                let (status, headers, page) = send(
                    &http,
                    &base,
                    Method::POST,
                    "/dbs/bench/colls/items/docs",
                    &query_headers(&extra),
                    json!({"query": rewritten}),
                )
                .await?;
                if status != 200 {
                    return Err(format!("range {range} answered {status}: {page}"));
                }
                pages += 1;
                rows.extend(page["Documents"].as_array().cloned().unwrap_or_default());
                continuation = headers
                    .get("x-ms-continuation")
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned);
                if continuation.is_none() {
                    return Ok::<_, String>((rows, pages));
                }
            }
        }));
    }
    let mut merged: Vec<Value> = Vec::new();
    for r in ranges {
        let (rows, p) = r.await.map_err(|e| e.to_string())??;
        pages += p;
        merged.extend(rows);
    }
    merged.sort_by_key(|r| r["orderByItems"][0]["item"].as_i64().unwrap_or(i64::MIN));
    let elapsed = started.elapsed().as_secs_f64();
    if merged.len() != args.items {
        return Err(format!(
            "the ORDER BY returned {} of {} items",
            merged.len(),
            args.items
        ));
    }
    println!(
        "cross-partition ORDER BY over {} items: {elapsed:.2} s ({pages} pages of up to 1000 over 4 ranges, {:.0} items/s)",
        merged.len(),
        merged.len() as f64 / elapsed
    );
    Ok(())
}

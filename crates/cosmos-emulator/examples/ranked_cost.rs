//! What ranked full-text queries cost within one partition key: `FullTextScore` with 2,000,
//! 20,000 and 50,000 terms (status and time to answer), and an RRF of 16 `FullTextScore` calls
//! of 100 terms each (about 12 KB of query text) over the key's items, followed page by page
//! (status, time, the process's CPU time and the number of pages). A measurement, not a test.
//!
//! ```text
//! cargo run --release -p cosmos-emulator --example ranked_cost -- [--items 200]
//! ```
//!
//! It starts an emulator in this process (auth off, default page budget) and talks to it over
//! HTTP.

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
    /// Items under the queried partition key.
    #[arg(long, default_value_t = 200)]
    items: usize,
}

type Http = Client<HttpConnector, Full<Bytes>>;

const DOCS: &str = "/dbs/bench/colls/items/docs";

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

/// CPU time this process has used (user and system), from `/proc/self/stat`.
fn cpu() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map_or("", |(_, rest)| rest)
        .split_whitespace()
        .collect();
    // After the command: state is field 3, utime 14 and stime 15 (1-based over the whole line).
    let ticks = |i: usize| {
        fields
            .get(i - 3)
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0)
    };
    Duration::from_millis((ticks(14) + ticks(15)) * 10)
}

fn terms(from: usize, n: usize) -> String {
    (from..from + n)
        .map(|i| format!("'w{}'", i % 5000))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Runs `query` under key "k" page by page: status, pages, results, wall and CPU time.
async fn run(http: &Http, base: &str, query: &str) -> Result<String, String> {
    let (wall, cpu0) = (Instant::now(), cpu());
    let mut continuation: Option<String> = None;
    let (mut pages, mut results) = (0, 0);
    let status = loop {
        let mut headers = vec![
            ("x-ms-documentdb-isquery", "True".to_owned()),
            ("content-type", "application/query+json".to_owned()),
            ("x-ms-documentdb-partitionkey", json!(["k"]).to_string()),
        ];
        if let Some(t) = &continuation {
            headers.push(("x-ms-continuation", t.clone()));
        }
        let (status, h, page) = send(
            http,
            base,
            Method::POST,
            DOCS,
            &headers,
            json!({"query": query}),
        )
        .await?;
        pages += 1;
        if status != 200 {
            let m = page["message"]
                .as_str()
                .unwrap_or_default()
                .chars()
                .take(110)
                .collect::<String>();
            break format!("{status} ({m})");
        }
        results += page["Documents"].as_array().map_or(0, Vec::len);
        continuation = h
            .get("x-ms-continuation")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        if continuation.is_none() {
            break "200".to_owned();
        }
    };
    Ok(format!(
        "status {status}, {pages} page(s), {results} results, {:.2} s wall, {:.2} s CPU, {} bytes of query",
        wall.elapsed().as_secs_f64(),
        (cpu() - cpu0).as_secs_f64(),
        query.len()
    ))
}

#[tokio::main]
async fn main() -> Result<(), String> {
    let args = Args::parse();
    let emu = EmulatorBuilder::new()
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
        json!({"id": "items", "partitionKey": {"paths": ["/pk"], "kind": "Hash", "version": 2},
               "fullTextPolicy": {"defaultLanguage": "en-US", "fullTextPaths": [{"path": "/t", "language": "en-US"}]},
               "indexingPolicy": {"fullTextIndexes": [{"path": "/t"}]}}),
    )
    .await?;
    let mut x: u64 = 12345;
    for i in 0..args.items {
        let words: Vec<String> = (0..80)
            .map(|_| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                format!("w{}", (x >> 33) % 3000)
            })
            .collect();
        let doc = json!({"id": format!("d{i}"), "pk": "k", "t": words.join(" ")});
        let (status, _, _) = send(
            &http,
            &base,
            Method::POST,
            DOCS,
            &[("x-ms-documentdb-partitionkey", json!(["k"]).to_string())],
            doc,
        )
        .await?;
        if status != 201 {
            return Err(format!("create answered {status}"));
        }
    }
    println!(
        "{} items under one partition key, 80 words each",
        args.items
    );
    for n in [2_000, 20_000, 50_000] {
        let q = format!(
            "SELECT TOP 10 c.id FROM c ORDER BY RANK FullTextScore(c.t, {})",
            terms(0, n)
        );
        println!(
            "FullTextScore of {n} terms: {}",
            run(&http, &base, &q).await?
        );
    }
    let calls: Vec<String> = (0..16)
        .map(|j| format!("FullTextScore(c.t, {})", terms(j * 100, 100)))
        .collect();
    let q = format!(
        "SELECT TOP 10 c.id FROM c ORDER BY RANK RRF({})",
        calls.join(", ")
    );
    println!(
        "RRF of 16 x FullTextScore of 100 terms: {}",
        run(&http, &base, &q).await?
    );
    Ok(())
}

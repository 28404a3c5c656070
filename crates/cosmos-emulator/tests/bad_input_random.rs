//! A few thousand randomized and malformed requests over raw TCP (fixed seed, bounded in time): bad
//! methods, paths, headers and bodies, wrong content lengths, slow, stalled and truncated uploads,
//! garbage bytes, huge headers, signed requests with percent-encoded separators in their paths, JSON
//! nested up to and past the item depth limit, long queries, rule floods on the admin API and
//! cross-site admin requests. The server runs as a child process (the `cosmos-emulator` binary), so
//! an abort or crash ends only it and counts as a failure here. It must not panic, must answer
//! well-framed requests with a proper HTTP response below 500 (admin requests without the key or
//! from a foreign Host with 401, 403 or 415), and must still serve a normal signed read afterwards.

mod common;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::process::EmulatorProcess;
use common::{master_auth, now_date, signing_parts, TestClient};
use cosmos_emulator::WELL_KNOWN_KEY;
use http::Method;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const REQUESTS: usize = 3000;
const CONCURRENCY: usize = 16;
/// The fixed seed; set `BAD_INPUT_SEED` to explore others.
const SEED: u64 = 0x05ee_dc05;
/// The child's body read timeout: stalled uploads are answered 408 after it.
const BODY_TIMEOUT_MS: u64 = 1000;

/// One generated case: the bytes to send, how to send them, and whether the framing is valid HTTP
/// (then a complete response below 500 is required).
struct Case {
    bytes: Vec<u8>,
    delivery: Delivery,
    well_framed: bool,
    label: &'static str,
    /// Statuses that are the only acceptable answers, when the case demands particular ones.
    only: Option<&'static [u16]>,
}

enum Delivery {
    /// Send everything, then half-close.
    Whole,
    /// Send in small pieces with pauses, then half-close.
    Slow,
    /// Send only a prefix, then drop the connection.
    Truncated(usize),
    /// Send only a prefix and keep the connection open: the body read timeout must answer.
    Stalled(usize),
}

const METHODS: [&str; 7] = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"];
const ODD_METHODS: [&str; 6] = ["get", "FOO", "TRACE", "CONNECT", "PROPFIND", "M-SEARCH"];

fn pick<'a, T>(rng: &mut SmallRng, items: &'a [T]) -> &'a T {
    &items[rng.random_range(0..items.len())]
}

fn random_token(rng: &mut SmallRng, max: usize) -> String {
    const CHARS: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJ0123456789-_.~%+";
    let len = rng.random_range(0..=max);
    (0..len).map(|_| *pick(rng, CHARS) as char).collect()
}

fn random_path(rng: &mut SmallRng) -> String {
    let fixed = [
        "/",
        "/dbs",
        "/dbs/db",
        "/dbs/db/colls",
        "/dbs/db/colls/c",
        "/dbs/db/colls/c/docs",
        "/dbs/db/colls/c/docs/a",
        "/dbs/db/colls/c/pkranges",
        "/dbs/db/colls/c/docs/a/extra/segments",
        "/dbs//colls/",
        "/dbs/%zz/colls/%",
        "/dbs/db/colls/c/docs/%E2%82%AC%00",
        "/../../etc/passwd",
        "/_emulator/faults/abc",
        "/_emulator/counters",
        "/_emulator/profile",
        "/_emulator/failover",
        "/_emulator/replication-lag",
        "/_emulator/",
        "/offers",
        "/offers/of1",
        "*",
        "http://example.com/dbs",
    ];
    match rng.random_range(0..4) {
        0 => pick(rng, &fixed).to_string(),
        1 => {
            let segments = rng.random_range(0..9);
            (0..segments)
                .map(|_| format!("/{}", random_token(rng, 12)))
                .collect::<String>()
                + "/"
        }
        2 => format!(
            "{}?{}={}",
            pick(rng, &fixed),
            random_token(rng, 8),
            random_token(rng, 8)
        ),
        _ => format!("/dbs/db/colls/c/docs/{}", random_token(rng, 64)),
    }
}

fn random_json_body(rng: &mut SmallRng) -> Vec<u8> {
    let bodies: [&[u8]; 22] = [
        br#"[{"operationType":"Create","resourceBody":{"id":"x","pk":"p"}},{"operationType":"Read","id":"x"}]"#,
        br#"[{"operationType":"Patch","id":"x","resourceBody":{"operations":[]}},{"operationType":"Delete"}]"#,
        br#"[{"operationType":42},{"operationType":"Replace","id":"x","resourceBody":[1]}]"#,
        br#"[{"operationType":"Upsert","partitionKey":"[\"q\"","resourceBody":{"id":"y","pk":"q"}}]"#,
        br#"[{"op":"set","path":"/n","value":1}]"#,
        br#"{"content":{"offerThroughput":-1,"offerAutopilotSettings":{"maxThroughput":"x"}}}"#,
        br#"{"query":"SELECT * FROM root r WHERE r.resource = @x","parameters":[{"name":"@x","value":7}]}"#,
        br#"{"region":"West US","lag":"lognormal:5,99999"}"#,
        br#"{"id":"x","pk":"p"}"#,
        br#"{"id":"x/y","pk":"p"}"#,
        br#"{"id":"","pk":"p"}"#,
        br#"{"id":123,"pk":{"nested":[1,2]}}"#,
        br#"{"operations":[{"op":"incr","path":"/n","value":"NaN"}]}"#,
        br#"{"operations":[{"op":"move","from":"/a","path":"/a/b"}],"condition":"from c where"}"#,
        br#"{"rules":[{"reaction":"explode"}]}"#,
        br#"{"name":"warp"}"#,
        br#"[1,2,3"#,
        br#"{"id":"#,
        b"null",
        b"\xff\xfe\x00garbage",
        br#"{"query":"SELECT * FROM c WHERE","parameters":[]}"#,
        br#"{"id":"deep","pk":"p","v":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}"#,
    ];
    let mut body = pick(rng, &bodies).to_vec();
    if rng.random_bool(0.2) {
        let cut = rng.random_range(0..=body.len());
        body.truncate(cut);
    }
    if rng.random_bool(0.1) {
        body.extend((0..rng.random_range(0..64)).map(|_| rng.random::<u8>()));
    }
    body
}

fn random_headers(rng: &mut SmallRng) -> Vec<(String, String)> {
    let mut headers = Vec::new();
    let candidates = [
        (
            "x-ms-documentdb-partitionkey",
            vec![
                "[\"p\"]",
                "[\"p\"",
                "p",
                "[]",
                "[1,2,3]",
                "[null]",
                "[{\"a\":1}]",
            ],
        ),
        (
            "x-ms-date",
            vec![
                "Mon, 01 Jan 1990 00:00:00 GMT",
                "yesterday",
                "",
                "Thu, 31 Dec 9999 23:59:59 GMT",
            ],
        ),
        (
            "authorization",
            vec![
                "type=master&ver=1.0&sig=abc",
                "type%3Dmaster%26ver%3D1.0%26sig%3D%25%25",
                "type=aad&ver=1.0&sig=x",
                "garbage",
            ],
        ),
        ("x-ms-version", vec!["2020-07-15", "1999-01-01", ""]),
        ("x-ms-documentdb-is-upsert", vec!["true", "TRUE", "maybe"]),
        ("x-ms-documentdb-isquery", vec!["true", "false", "1"]),
        (
            "content-type",
            vec![
                "application/json",
                "application/query+json",
                "text/plain",
                "application/json-patch+json",
            ],
        ),
        (
            "if-match",
            vec!["\"00000000-0000-0000-0000-000000000000\"", "*", "\"", ""],
        ),
        ("if-none-match", vec!["*", "\"x\"", ""]),
        (
            "x-ms-max-item-count",
            vec!["-1", "0", "999999999999999999999", "ten"],
        ),
        (
            "x-ms-continuation",
            vec!["", "garbage", "{\"token\":1}", "-5"],
        ),
        (
            "x-ms-session-token",
            vec!["0:-1#5", "garbage", "0:1#99999999999999999999", "#"],
        ),
        (
            "x-ms-consistency-level",
            vec!["Strong", "Eventual", "Chaos"],
        ),
        (
            "x-ms-cosmos-hub-region-processing-only",
            vec!["True", "nope"],
        ),
        (
            "a-im",
            vec![
                "Incremental feed",
                "Full-Fidelity Feed",
                "Incremental Feed ",
                "snapshot",
                "",
            ],
        ),
        (
            "if-modified-since",
            vec![
                "Tue, 01 Dec 2026 00:00:00 GMT",
                "0",
                "Thu, 01 Jan 1970 00:00:00 GMT",
            ],
        ),
        (
            "x-ms-documentdb-partitionkeyrangeid",
            vec!["0", "3", "99", "-1", ""],
        ),
        (
            "x-ms-read-key-type",
            vec!["EffectivePartitionKeyRange", "Other"],
        ),
        ("x-ms-start-epk", vec!["", "FF", "zz", "05C1"]),
        (
            "x-ms-end-epk",
            vec![
                "FF",
                "",
                "0",
                "1111111111111111111111111111111111111111111111111111111111111111111111",
            ],
        ),
        (
            "x-ms-cosmos-changefeed-wire-format-version",
            vec!["2021-09-15", "1"],
        ),
        ("x-ms-cosmos-is-batch-request", vec!["True", "true", "no"]),
        ("x-ms-cosmos-batch-atomic", vec!["True", "False", "maybe"]),
        (
            "x-ms-offer-throughput",
            vec!["400", "0", "-5", "18446744073709551616"],
        ),
        (
            "x-ms-cosmos-offer-autopilot-settings",
            vec!["{\"maxThroughput\":4000}", "{", "[]"],
        ),
    ];
    for _ in 0..rng.random_range(0..6) {
        let (name, values) = pick(rng, &candidates);
        headers.push((name.to_string(), pick(rng, values).to_string()));
    }
    if rng.random_bool(0.1) {
        headers.push((
            random_token(rng, 20).replace('%', "x") + "x",
            random_token(rng, 40),
        ));
    }
    headers
}

/// Replaces any date and authorization headers with a valid signature for this request, so that
/// its headers and body reach the handlers (paths with escapes are left unsigned).
fn sign(method: &str, path: &str, headers: &mut Vec<(String, String)>) {
    let path = path.split('?').next().unwrap_or_default();
    if path.contains('%') || !path.starts_with('/') {
        return;
    }
    headers.retain(|(name, _)| name != "x-ms-date" && name != "authorization");
    let (kind, link) = signing_parts(path);
    let date = now_date();
    headers.push((
        "authorization".into(),
        master_auth(WELL_KNOWN_KEY, method, &kind, &link, &date),
    ));
    headers.push(("x-ms-date".into(), date));
}

/// Signs the request as an attacker would: over the link the encoded path decodes to (so the
/// signature is valid for the path the server would join from the decoded segments).
fn sign_decoded(method: &str, path: &str, headers: &mut Vec<(String, String)>) {
    let (kind, link) = signing_parts(path);
    let date = now_date();
    headers.push((
        "authorization".into(),
        master_auth(WELL_KNOWN_KEY, method, &kind, &link, &date),
    ));
    headers.push(("x-ms-date".into(), date));
}

/// A write (create, upsert, replace or patch) of JSON nested `depth` levels deep.
fn deep_write(
    rng: &mut SmallRng,
    depth: usize,
) -> (&'static str, &'static str, String, Vec<(String, String)>) {
    let nested = format!("{}1{}", "[".repeat(depth), "]".repeat(depth));
    match rng.random_range(0..4) {
        0 => (
            "POST",
            "/dbs/db/colls/c/docs",
            format!(r#"{{"id":"deep","pk":"p","v":{nested}}}"#),
            Vec::new(),
        ),
        1 => (
            "POST",
            "/dbs/db/colls/c/docs",
            format!(r#"{{"id":"deep","pk":"p","v":{nested}}}"#),
            vec![("x-ms-documentdb-is-upsert".to_owned(), "true".to_owned())],
        ),
        2 => (
            "PUT",
            "/dbs/db/colls/c/docs/a",
            format!(r#"{{"id":"a","pk":"p","v":{nested}}}"#),
            Vec::new(),
        ),
        _ => (
            "PATCH",
            "/dbs/db/colls/c/docs/a",
            format!(r#"{{"operations":[{{"op":"set","path":"/v","value":{nested}}}]}}"#),
            Vec::new(),
        ),
    }
}

fn render(
    method: &str,
    path: &str,
    headers: &[(String, String)],
    body: &[u8],
    content_length: Option<usize>,
) -> Vec<u8> {
    let mut out = format!("{method} {path} HTTP/1.1\r\nhost: localhost\r\n");
    for (name, value) in headers {
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    if let Some(length) = content_length {
        out.push_str(&format!("content-length: {length}\r\n"));
    }
    out.push_str("\r\n");
    let mut bytes = out.into_bytes();
    bytes.extend_from_slice(body);
    bytes
}

fn generate(rng: &mut SmallRng) -> Case {
    let whole = |bytes, well_framed, label| Case {
        bytes,
        delivery: Delivery::Whole,
        well_framed,
        label,
        only: None,
    };
    match rng.random_range(0..20) {
        // Well-framed requests with odd contents.
        0..=4 => {
            let method = if rng.random_bool(0.85) {
                *pick(rng, &METHODS)
            } else {
                *pick(rng, &ODD_METHODS)
            };
            let body = if rng.random_bool(0.6) {
                random_json_body(rng)
            } else {
                Vec::new()
            };
            let path = random_path(rng);
            let mut headers = random_headers(rng);
            if rng.random_bool(0.6) {
                sign(method, &path, &mut headers);
            }
            let well_framed = method != "CONNECT" && !path.starts_with("http://");
            whole(
                render(method, &path, &headers, &body, Some(body.len())),
                well_framed,
                "odd contents",
            )
        }
        // A content-length that does not match the body.
        5 => {
            let body = random_json_body(rng);
            let claimed = match rng.random_range(0..3) {
                0 => body.len() + rng.random_range(1..100),
                1 => body.len().saturating_sub(rng.random_range(1..5)),
                _ => 3 * 1024 * 1024,
            };
            let bytes = render(
                "POST",
                "/dbs/db/colls/c/docs",
                &random_headers(rng),
                &body,
                Some(claimed),
            );
            whole(bytes, false, "wrong content-length")
        }
        // Broken framing: duplicate or invalid lengths, bad chunked bodies, bad request lines.
        6 => {
            let heads: [&[u8]; 8] = [
                b"POST /dbs HTTP/1.1\r\ncontent-length: 5\r\ncontent-length: 7\r\n\r\nabcdefg",
                b"POST /dbs HTTP/1.1\r\ncontent-length: -1\r\n\r\n",
                b"POST /dbs HTTP/1.1\r\ncontent-length: 99999999999999999999999\r\n\r\n",
                b"POST /dbs HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n",
                b"POST /dbs HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n5\r\nab",
                b"GET /dbs HTTP/9.9\r\n\r\n",
                b"GET\r\n\r\n",
                b"GET /dbs HTTP/1.1\r\nno-colon-here\r\n\r\n",
            ];
            whole(pick(rng, &heads).to_vec(), false, "broken framing")
        }
        // Pure garbage bytes.
        7 => {
            let len = rng.random_range(1..4096);
            whole(
                (0..len).map(|_| rng.random::<u8>()).collect(),
                false,
                "garbage",
            )
        }
        // Huge headers: one enormous value or very many headers.
        8 => {
            let headers: Vec<(String, String)> = if rng.random_bool(0.5) {
                vec![(
                    "x-big".into(),
                    "a".repeat(rng.random_range(10_000..600_000)),
                )]
            } else {
                (0..rng.random_range(100..2000))
                    .map(|i| (format!("x-h{i}"), "v".into()))
                    .collect()
            };
            whole(
                render("GET", "/dbs/db", &headers, b"", None),
                false,
                "huge headers",
            )
        }
        // A very long path.
        9 => {
            let path = format!("/dbs/{}", "d".repeat(rng.random_range(1_000..100_000)));
            whole(render("GET", &path, &[], b"", None), false, "long path")
        }
        // Slow upload of a well-framed request.
        10 => {
            let body = random_json_body(rng);
            let mut headers = random_headers(rng);
            sign("POST", "/dbs/db/colls/c/docs", &mut headers);
            let bytes = render(
                "POST",
                "/dbs/db/colls/c/docs",
                &headers,
                &body,
                Some(body.len()),
            );
            Case {
                bytes,
                delivery: Delivery::Slow,
                well_framed: true,
                label: "slow upload",
                only: None,
            }
        }
        // A signed request whose path hides a separator or control character in a segment.
        12 => {
            let encoded = *pick(
                rng,
                &[
                    "%2F", "%2f", "%5C", "%3F", "%23", "%0A", "%00", "%7F", "%1B",
                ],
            );
            let path = format!("/dbs/db/colls/c/docs/x{encoded}y");
            let method = *pick(rng, &["GET", "PUT", "DELETE", "PATCH"]);
            let mut headers = vec![(
                "x-ms-documentdb-partitionkey".to_owned(),
                "[\"p\"]".to_owned(),
            )];
            sign_decoded(method, &path, &mut headers);
            Case {
                bytes: render(method, &path, &headers, b"", Some(0)),
                delivery: Delivery::Whole,
                well_framed: true,
                label: "encoded separator in a signed path",
                only: Some(&[400]),
            }
        }
        // JSON nested up to and past the item depth limit, on every item write path.
        13 => {
            let depth = rng.random_range(90..=140);
            let (method, path, body, extra) = deep_write(rng, depth);
            let mut headers = vec![(
                "x-ms-documentdb-partitionkey".to_owned(),
                "[\"p\"]".to_owned(),
            )];
            headers.extend(extra);
            sign(method, path, &mut headers);
            let body = body.into_bytes();
            whole(
                render(method, path, &headers, &body, Some(body.len())),
                true,
                "deep JSON",
            )
        }
        // A long query: thousands of OR terms, one in ten up to about 1.9 MB.
        14 => {
            let terms = if rng.random_bool(0.1) {
                rng.random_range(100_000..170_000)
            } else {
                rng.random_range(1_000..10_000)
            };
            let condition = vec!["c.n = 1"; terms].join(" OR ");
            let body =
                json!({ "query": format!("SELECT * FROM c WHERE {condition}"), "parameters": [] })
                    .to_string()
                    .into_bytes();
            let mut headers = vec![
                (
                    "x-ms-documentdb-partitionkey".to_owned(),
                    "[\"p\"]".to_owned(),
                ),
                ("x-ms-documentdb-isquery".to_owned(), "true".to_owned()),
                (
                    "content-type".to_owned(),
                    "application/query+json".to_owned(),
                ),
            ];
            sign("POST", "/dbs/db/colls/c/docs", &mut headers);
            whole(
                render(
                    "POST",
                    "/dbs/db/colls/c/docs",
                    &headers,
                    &body,
                    Some(body.len()),
                ),
                true,
                "long query",
            )
        }
        // A signed upload that stops part way and keeps the connection open.
        15 => {
            let body = br#"{"id":"stalled","pk":"p","v":"0123456789"}"#.to_vec();
            let mut headers = vec![(
                "x-ms-documentdb-partitionkey".to_owned(),
                "[\"p\"]".to_owned(),
            )];
            sign("POST", "/dbs/db/colls/c/docs", &mut headers);
            let bytes = render(
                "POST",
                "/dbs/db/colls/c/docs",
                &headers,
                &body,
                Some(body.len()),
            );
            let cut = bytes.len() - rng.random_range(1..body.len());
            Case {
                bytes,
                delivery: Delivery::Stalled(cut),
                well_framed: true,
                label: "stalled body",
                only: Some(&[408]),
            }
        }
        // A flood of (disabled) rules through the admin API with the key: the cap answers 400.
        16 => {
            let count = rng.random_range(1..400);
            let rules: Vec<serde_json::Value> = (0..count)
                .map(|i| json!({"name": format!("flood-{i}"), "path": "*".repeat(rng.random_range(1..1100)), "reaction": "close", "enabled": false}))
                .collect();
            let body = json!({ "rules": rules }).to_string().into_bytes();
            let headers = vec![
                (
                    "authorization".to_owned(),
                    format!("Bearer {WELL_KNOWN_KEY}"),
                ),
                ("content-type".to_owned(), "application/json".to_owned()),
            ];
            Case {
                bytes: render(
                    "POST",
                    "/_emulator/faults",
                    &headers,
                    &body,
                    Some(body.len()),
                ),
                delivery: Delivery::Whole,
                well_framed: true,
                label: "rule flood",
                only: Some(&[201, 400]),
            }
        }
        // What a web page could send: no key, or a text/plain body, or a foreign Host.
        17 => {
            let (method, path, body) = *pick(
                rng,
                &[
                    ("POST", "/_emulator/faults", r#"{"reaction":"stall"}"#),
                    (
                        "POST",
                        "/_emulator/failover",
                        r#"{"writeRegion":"West US"}"#,
                    ),
                    ("PUT", "/_emulator/profile", r#"{"name":"slow-both"}"#),
                    ("DELETE", "/_emulator/counters", ""),
                    ("GET", "/_emulator/faults", ""),
                ],
            );
            let mut headers = Vec::new();
            let mut host = "localhost";
            match rng.random_range(0..3) {
                0 => headers.push(("content-type".to_owned(), "text/plain".to_owned())),
                1 => {
                    headers.push((
                        "authorization".to_owned(),
                        format!("Bearer {WELL_KNOWN_KEY}"),
                    ));
                    headers.push((
                        "content-type".to_owned(),
                        "text/plain;charset=UTF-8".to_owned(),
                    ));
                    if body.is_empty() {
                        host = "rebound.example";
                    }
                }
                _ => {
                    headers.push((
                        "authorization".to_owned(),
                        format!("Bearer {WELL_KNOWN_KEY}"),
                    ));
                    headers.push(("content-type".to_owned(), "application/json".to_owned()));
                    host = *pick(
                        rng,
                        &["rebound.example", "rebound.example:8081", "10.1.2.3"],
                    );
                }
            }
            let mut bytes = render(method, path, &headers, body.as_bytes(), Some(body.len()));
            let head = String::from_utf8_lossy(&bytes).replacen(
                "host: localhost",
                &format!("host: {host}"),
                1,
            );
            bytes = head.into_bytes();
            Case {
                bytes,
                delivery: Delivery::Whole,
                well_framed: true,
                label: "cross-site admin request",
                only: Some(&[401, 403, 415]),
            }
        }
        // Truncated upload: the connection drops part way.
        _ => {
            let body = random_json_body(rng);
            let bytes = render(
                "PUT",
                "/dbs/db/colls/c/docs/a",
                &random_headers(rng),
                &body,
                Some(body.len()),
            );
            let cut = rng.random_range(0..bytes.len());
            Case {
                bytes,
                delivery: Delivery::Truncated(cut),
                well_framed: false,
                label: "truncated upload",
                only: None,
            }
        }
    }
}

/// Sends one case and returns the first response's status, if one came back.
///
/// A well-framed request keeps its write side open and waits for one complete response (hyper,
/// by default, drops a request whose client half-closes before the answer is written); anything
/// else half-closes at once so the server sees the end and closes.
async fn send(authority: &str, case: &Case) -> Result<Option<u16>, String> {
    let mut stream = TcpStream::connect(authority)
        .await
        .map_err(|e| format!("connect: {e}"))?;
    // Write errors are expected when the server refuses early (e.g. huge headers).
    match case.delivery {
        Delivery::Whole => {
            let _ = stream.write_all(&case.bytes).await;
        }
        Delivery::Slow => {
            for piece in case.bytes.chunks(case.bytes.len().div_ceil(4).max(1)) {
                if stream.write_all(piece).await.is_err() {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(15)).await;
            }
        }
        Delivery::Truncated(cut) => {
            let _ = stream.write_all(&case.bytes[..cut]).await;
            return Ok(None);
        }
        Delivery::Stalled(cut) => {
            let _ = stream.write_all(&case.bytes[..cut]).await;
        }
    }
    if !case.well_framed {
        let _ = stream.shutdown().await;
    }
    let head_request = case.bytes.starts_with(b"HEAD ");
    let mut received = Vec::new();
    let mut buf = [0u8; 8192];
    let read = async {
        loop {
            if case.well_framed && response_complete(&received, head_request) {
                break;
            }
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) if received.len() < 1 << 20 => received.extend_from_slice(&buf[..n]),
                Ok(_) => break,
            }
        }
    };
    if tokio::time::timeout(Duration::from_secs(5), read)
        .await
        .is_err()
        && case.well_framed
    {
        return Err("no complete answer within 5 s".into());
    }
    if received.is_empty() {
        return Ok(None);
    }
    if case.well_framed && !response_complete(&received, head_request) {
        return Err(format!(
            "incomplete answer: {:?}",
            String::from_utf8_lossy(&received)
        ));
    }
    let head = String::from_utf8_lossy(&received[..received.len().min(64)]).to_string();
    let status = head
        .strip_prefix("HTTP/1.1 ")
        .and_then(|rest| rest.get(..3))
        .and_then(|code| code.parse::<u16>().ok())
        .ok_or_else(|| format!("not an HTTP response: {head:?}"))?;
    Ok(Some(status))
}

/// Whether `received` holds a response head and the whole body its content-length announces.
fn response_complete(received: &[u8], head_request: bool) -> bool {
    let Some(end) = received.windows(4).position(|w| w == b"\r\n\r\n") else {
        return false;
    };
    let head = String::from_utf8_lossy(&received[..end]).to_ascii_lowercase();
    let status_without_body = head.starts_with("http/1.1 204") || head.starts_with("http/1.1 304");
    let length = head
        .lines()
        .find_map(|line| line.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse::<usize>().ok())
        .unwrap_or(0);
    let body = if head_request || status_without_body {
        0
    } else {
        length
    };
    received.len() >= end + 4 + body
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thousands_of_malformed_requests_do_not_break_the_server() {
    let timeout = BODY_TIMEOUT_MS.to_string();
    let mut server = EmulatorProcess::start(&["--body-read-timeout-ms", &timeout])
        .expect("the emulator binary starts");
    let client = TestClient::new(WELL_KNOWN_KEY);
    client.setup(&server.endpoint, "db", "c").await;
    assert_eq!(
        client
            .create_item(&server.endpoint, "db", "c", &json!({"id": "a", "pk": "p"}))
            .await
            .status,
        201
    );

    let seed = std::env::var("BAD_INPUT_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(SEED);
    let mut rng = SmallRng::seed_from_u64(seed);
    let cases: Vec<Case> = (0..REQUESTS).map(|_| generate(&mut rng)).collect();
    let mut kinds: BTreeMap<&str, usize> = BTreeMap::new();
    for case in &cases {
        *kinds.entry(case.label).or_default() += 1;
    }
    println!(
        "{} requests of {} kinds: {kinds:?}",
        cases.len(),
        kinds.len()
    );
    let endpoints: Vec<String> = [server.endpoint.as_str(), server.region("West US")]
        .iter()
        .map(|e| {
            e.trim_start_matches("http://")
                .trim_end_matches('/')
                .to_owned()
        })
        .collect();
    let cases = Arc::new(cases);
    let next = Arc::new(AtomicUsize::new(0));
    let workers: Vec<_> = (0..CONCURRENCY)
        .map(|worker| {
            let (cases, next, endpoints) = (cases.clone(), next.clone(), endpoints.clone());
            tokio::spawn(async move {
                let mut problems = Vec::new();
                let mut statuses = Vec::new();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(case) = cases.get(i) else { break };
                    // Admin requests go to the global endpoint, where the admin API is served.
                    let authority = if case.bytes.windows(10).take(12).any(|w| w == b"/_emulator") {
                        &endpoints[0]
                    } else {
                        &endpoints[(i + worker) % endpoints.len()]
                    };
                    match send(authority, case).await {
                        Ok(Some(status))
                            if case.only.is_some_and(|only| !only.contains(&status)) =>
                        {
                            problems.push(format!(
                                "case {i} ({}): answered {status}, expected one of {:?}",
                                case.label,
                                case.only.unwrap_or_default()
                            ));
                        }
                        Ok(Some(status)) if case.well_framed && status >= 500 => {
                            problems.push(format!("case {i} ({}): answered {status}", case.label));
                        }
                        Ok(None) if case.well_framed => {
                            problems.push(format!(
                                "case {i} ({}): closed without an answer: {:?}",
                                case.label,
                                String::from_utf8_lossy(&case.bytes[..case.bytes.len().min(300)])
                            ));
                        }
                        Ok(Some(status)) => statuses.push(status),
                        Ok(None) => {}
                        Err(e) => problems.push(format!("case {i} ({}): {e}", case.label)),
                    }
                }
                (problems, statuses)
            })
        })
        .collect();
    let run = async {
        let (mut problems, mut statuses) = (Vec::new(), Vec::new());
        for worker in workers {
            let (p, s) = worker.await.unwrap();
            problems.extend(p);
            statuses.extend(s);
        }
        (problems, statuses)
    };
    let (problems, mut statuses) = tokio::time::timeout(Duration::from_secs(240), run)
        .await
        .expect("the run must finish in 4 minutes");
    if let Some(status) = server.exited() {
        panic!(
            "the emulator process ended during the run ({status}); its log:\n{}",
            server.log_text()
        );
    }
    let shown: Vec<&String> = problems.iter().take(20).collect();
    assert!(
        problems.is_empty(),
        "{} problems, first ones: {shown:#?}",
        problems.len()
    );
    let log = server.log_text();
    assert!(!log.contains("panicked"), "the server panicked: {log}");
    // The mix reached past the HTTP parser into routing, auth and the handlers.
    statuses.sort_unstable();
    statuses.dedup();
    for expected in [200, 400, 401, 403, 404, 405, 408, 415] {
        assert!(
            statuses.contains(&expected),
            "no {expected} among the answers {statuses:?}"
        );
    }

    // Signed requests in the mix may have changed the data, and the rule floods installed
    // (disabled) rules: undo that, then normal signed reads must work everywhere.
    let cleared = client
        .admin(&server.endpoint, Method::DELETE, "/_emulator/faults", None)
        .await;
    assert_eq!(cleared.status, 200, "{cleared:?}");
    assert_eq!(
        server.exited(),
        None,
        "the emulator process is still running"
    );
    client.setup(&server.endpoint, "db", "c").await;
    let pk = [
        ("x-ms-documentdb-partitionkey", "[\"p\"]"),
        ("x-ms-documentdb-is-upsert", "true"),
    ];
    let upsert = client
        .post_json(
            &server.endpoint,
            "/dbs/db/colls/c/docs",
            &pk,
            &json!({"id": "a", "pk": "p"}),
        )
        .await;
    assert!(upsert.status == 200 || upsert.status == 201, "{upsert:?}");
    for base in [
        server.endpoint.as_str(),
        server.region("East US"),
        server.region("West US"),
    ] {
        let read = client.read_a(base, &[]).await;
        assert_eq!(read.status, 200, "{base}: {read:?}");
        assert_eq!(read.json()["id"], "a");
    }
}

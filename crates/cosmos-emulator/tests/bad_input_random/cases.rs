//! The request generator of the randomized bad-input test: what one case sends and how.

use super::*;

/// One generated case: the bytes to send, how to send them, and whether the framing is valid HTTP
/// (then a complete response below 500 is required).
pub(super) struct Case {
    pub(super) bytes: Vec<u8>,
    pub(super) delivery: Delivery,
    pub(super) well_framed: bool,
    pub(super) label: &'static str,
    /// Statuses that are the only acceptable answers, when the case demands particular ones.
    pub(super) only: Option<&'static [u16]>,
}

pub(super) enum Delivery {
    /// Send everything, then half-close.
    Whole,
    /// Send in small pieces with pauses, then half-close.
    Slow,
    /// Send only a prefix, then drop the connection.
    Truncated(usize),
    /// Send only a prefix and keep the connection open: the body read timeout must answer.
    Stalled(usize),
}

pub(super) const METHODS: [&str; 7] = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"];
pub(super) const ODD_METHODS: [&str; 6] =
    ["get", "FOO", "TRACE", "CONNECT", "PROPFIND", "M-SEARCH"];

pub(super) fn pick<'a, T>(rng: &mut SmallRng, items: &'a [T]) -> &'a T {
    &items[rng.random_range(0..items.len())]
}

pub(super) fn random_token(rng: &mut SmallRng, max: usize) -> String {
    const CHARS: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJ0123456789-_.~%+";
    let len = rng.random_range(0..=max);
    (0..len).map(|_| *pick(rng, CHARS) as char).collect()
}

pub(super) fn random_path(rng: &mut SmallRng) -> String {
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

pub(super) fn random_json_body(rng: &mut SmallRng) -> Vec<u8> {
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

pub(super) fn random_headers(rng: &mut SmallRng) -> Vec<(String, String)> {
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
pub(super) fn sign(method: &str, path: &str, headers: &mut Vec<(String, String)>) {
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
pub(super) fn sign_decoded(method: &str, path: &str, headers: &mut Vec<(String, String)>) {
    let (kind, link) = signing_parts(path);
    let date = now_date();
    headers.push((
        "authorization".into(),
        master_auth(WELL_KNOWN_KEY, method, &kind, &link, &date),
    ));
    headers.push(("x-ms-date".into(), date));
}

/// A write (create, upsert, replace or patch) of JSON nested `depth` levels deep.
pub(super) fn deep_write(
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

pub(super) fn render(
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

pub(super) fn generate(rng: &mut SmallRng) -> Case {
    let whole = |bytes, well_framed, label| Case {
        bytes,
        delivery: Delivery::Whole,
        well_framed,
        label,
        only: None,
    };
    match rng.random_range(0..21) {
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
        // A long PATCH condition (thousands of OR terms, one in ten up to about 1.9 MB), on an
        // existing or a missing item: the condition is parsed before the item is looked up.
        18 => {
            let terms = if rng.random_bool(0.1) {
                rng.random_range(100_000..170_000)
            } else {
                rng.random_range(1_000..10_000)
            };
            let condition = format!("from c where {}", vec!["1 = 1"; terms].join(" or "));
            let body = json!({"operations": [{"op": "set", "path": "/n", "value": 1}], "condition": condition})
                .to_string()
                .into_bytes();
            let path = *pick(
                rng,
                &["/dbs/db/colls/c/docs/a", "/dbs/db/colls/c/docs/missing"],
            );
            let mut headers = vec![(
                "x-ms-documentdb-partitionkey".to_owned(),
                "[\"p\"]".to_owned(),
            )];
            sign("PATCH", path, &mut headers);
            whole(
                render("PATCH", path, &headers, &body, Some(body.len())),
                true,
                "long PATCH condition",
            )
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

//! A small signing HTTP client for the integration tests (its own signer, independent of the crate's).
#![allow(dead_code)]

pub mod data_files;
pub mod process;

use std::time::{Duration, SystemTime};

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use bytes::Bytes;
use cosmos_emulator::{Emulator, EmulatorBuilder, ReplicationLag, WELL_KNOWN_KEY};
use http::{HeaderMap, Method, Request};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;

/// A response, fully read.
#[derive(Debug)]
pub struct Resp {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Resp {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("body is not JSON ({e}): {:?}", self.body))
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    pub fn sub_status(&self) -> u32 {
        self.header("x-ms-substatus")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    }

    pub fn message(&self) -> String {
        self.json()["message"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }
}

/// The resource type and link a path is signed with (decoded, no leading slash).
pub fn signing_parts(path: &str) -> (String, String) {
    let segments: Vec<String> = path
        .trim_matches('/')
        .split('/')
        .filter(|s| !s.is_empty())
        .map(percent_decode)
        .collect();
    if segments.is_empty() {
        return (String::new(), String::new());
    }
    if segments.len() % 2 == 1 {
        let kind = segments[segments.len() - 1].clone();
        (kind, segments[..segments.len() - 1].join("/"))
    } else {
        (segments[segments.len() - 2].clone(), segments.join("/"))
    }
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap();
            out.push(u8::from_str_radix(hex, 16).unwrap());
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).unwrap()
}

/// `type=master&ver=1.0&sig=...`, URL-encoded, for the given request facts.
pub fn master_auth(key: &str, verb: &str, resource_type: &str, link: &str, date: &str) -> String {
    let payload = format!(
        "{}\n{}\n{}\n{}\n\n",
        verb.to_lowercase(),
        resource_type.to_lowercase(),
        link,
        date.to_lowercase()
    );
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, &STANDARD.decode(key).unwrap());
    let sig = STANDARD.encode(ring::hmac::sign(&key, payload.as_bytes()).as_ref());
    let raw = format!("type=master&ver=1.0&sig={sig}");
    raw.replace('%', "%25")
        .replace('&', "%26")
        .replace('=', "%3D")
        .replace('+', "%2B")
        .replace('/', "%2F")
}

/// Now, as an RFC 1123 date.
pub fn now_date() -> String {
    httpdate::fmt_http_date(SystemTime::now())
}

/// A test client signing with `key`.
#[derive(Clone)]
pub struct TestClient {
    http: Client<HttpConnector, Full<Bytes>>,
    pub key: String,
}

impl TestClient {
    pub fn new(key: &str) -> Self {
        let http = Client::builder(TokioExecutor::new()).build_http();
        Self {
            http,
            key: key.to_owned(),
        }
    }

    /// Sends a signed request to `base` (an endpoint URL ending in '/') + `path`.
    pub async fn send(
        &self,
        base: &str,
        method: Method,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<&[u8]>,
    ) -> Resp {
        let date = now_date();
        let (kind, link) = signing_parts(path);
        let auth = master_auth(&self.key, method.as_str(), &kind, &link, &date);
        let mut all: Vec<(&str, &str)> = vec![
            ("x-ms-date", &date),
            ("authorization", &auth),
            ("x-ms-version", "2020-07-15"),
        ];
        all.extend_from_slice(headers);
        self.send_raw(base, method, path, &all, body).await
    }

    /// Sends exactly these headers (no signing).
    pub async fn send_raw(
        &self,
        base: &str,
        method: Method,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<&[u8]>,
    ) -> Resp {
        self.try_send_raw(base, method, path, headers, body)
            .await
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// A signed request (see [`TestClient::send`]) that may fail (a server killed meanwhile).
    pub async fn try_send(
        &self,
        base: &str,
        method: Method,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<&[u8]>,
    ) -> Result<Resp, String> {
        let date = now_date();
        let (kind, link) = signing_parts(path);
        let auth = master_auth(&self.key, method.as_str(), &kind, &link, &date);
        let mut all: Vec<(&str, &str)> = vec![
            ("x-ms-date", &date),
            ("authorization", &auth),
            ("x-ms-version", "2020-07-15"),
        ];
        all.extend_from_slice(headers);
        self.try_send_raw(base, method, path, &all, body).await
    }

    /// As [`TestClient::send_raw`], with a failure to connect or read as Err.
    pub async fn try_send_raw(
        &self,
        base: &str,
        method: Method,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<&[u8]>,
    ) -> Result<Resp, String> {
        let uri = format!("{}{}", base.trim_end_matches('/'), path);
        let mut builder = Request::builder().method(method).uri(uri);
        for (name, value) in headers {
            builder = builder.header(*name, *value);
        }
        let request = builder
            .body(Full::new(Bytes::copy_from_slice(body.unwrap_or_default())))
            .unwrap();
        let response = tokio::time::timeout(Duration::from_secs(30), self.http.request(request))
            .await
            .map_err(|_| "request timed out".to_owned())?
            .map_err(|e| format!("request failed: {e}"))?;
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let body = response
            .into_body()
            .collect()
            .await
            .map_err(|e| format!("body: {e}"))?
            .to_bytes();
        Ok(Resp {
            status,
            headers,
            body,
        })
    }

    /// A GET without any headers (no signature, no admin credential).
    pub async fn get_unsigned(&self, base: &str, path: &str) -> Resp {
        self.send_raw(base, Method::GET, path, &[], None).await
    }

    /// An admin API request: the account key as a bearer credential and, with a body, JSON.
    pub async fn admin(&self, base: &str, method: Method, path: &str, body: Option<&str>) -> Resp {
        let auth = format!("Bearer {}", self.key);
        let mut headers = vec![("authorization", auth.as_str())];
        if body.is_some() {
            headers.push(("content-type", "application/json"));
        }
        self.send_raw(base, method, path, &headers, body.map(str::as_bytes))
            .await
    }

    /// An admin GET (see [`TestClient::admin`]).
    pub async fn admin_get(&self, base: &str, path: &str) -> Resp {
        self.admin(base, Method::GET, path, None).await
    }

    pub async fn get(&self, base: &str, path: &str, headers: &[(&str, &str)]) -> Resp {
        self.send(base, Method::GET, path, headers, None).await
    }

    pub async fn post_json(
        &self,
        base: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &Value,
    ) -> Resp {
        self.send(
            base,
            Method::POST,
            path,
            headers,
            Some(body.to_string().as_bytes()),
        )
        .await
    }

    /// Posts `body` (`{"query", "parameters"}`) as a query to the docs feed at `path`, with `extra`
    /// headers.
    pub async fn query(
        &self,
        base: &str,
        path: &str,
        body: &Value,
        extra: &[(&str, &str)],
    ) -> Resp {
        let mut headers = vec![
            ("x-ms-documentdb-isquery", "True"),
            ("content-type", "application/query+json"),
        ];
        headers.extend_from_slice(extra);
        self.send(
            base,
            Method::POST,
            path,
            &headers,
            Some(body.to_string().as_bytes()),
        )
        .await
    }

    /// Creates database `db` and container `coll` (partition key `/pk`) through `base`.
    pub async fn setup(&self, base: &str, db: &str, coll: &str) {
        let r = self
            .post_json(base, "/dbs", &[], &serde_json::json!({"id": db}))
            .await;
        assert!(r.status == 201 || r.status == 409, "create db: {r:?}");
        let body = serde_json::json!({"id": coll, "partitionKey": {"paths": ["/pk"], "kind": "Hash", "version": 2}});
        let r = self
            .post_json(base, &format!("/dbs/{db}/colls"), &[], &body)
            .await;
        assert!(r.status == 201 || r.status == 409, "create coll: {r:?}");
    }

    /// Creates an item with partition key value `doc["pk"]`.
    pub async fn create_item(&self, base: &str, db: &str, coll: &str, doc: &Value) -> Resp {
        let pk = pk_header(&doc["pk"]);
        self.post_json(
            base,
            &format!("/dbs/{db}/colls/{coll}/docs"),
            &[("x-ms-documentdb-partitionkey", &pk)],
            doc,
        )
        .await
    }

    /// Reads item `a` of partition `p` in `db/c` (the item most tests create) with extra headers.
    pub async fn read_a(&self, base: &str, extra: &[(&str, &str)]) -> Resp {
        let pk = serde_json::json!("p");
        self.read_item(base, "db", "c", "a", &pk, extra).await
    }

    /// Reads an item with extra headers.
    pub async fn read_item(
        &self,
        base: &str,
        db: &str,
        coll: &str,
        id: &str,
        pk: &Value,
        extra: &[(&str, &str)],
    ) -> Resp {
        let pk = pk_header(pk);
        let mut headers = vec![("x-ms-documentdb-partitionkey", pk.as_str())];
        headers.extend_from_slice(extra);
        self.get(base, &format!("/dbs/{db}/colls/{coll}/docs/{id}"), &headers)
            .await
    }
}

impl TestClient {
    /// Sends `method` to `path` with partition key `pk`, `extra` headers and an optional JSON body.
    pub async fn send_with_pk(
        &self,
        base: &str,
        method: Method,
        path: &str,
        pk: &Value,
        extra: &[(&str, &str)],
        body: Option<&Value>,
    ) -> Resp {
        let pk = pk_header(pk);
        let mut headers = vec![("x-ms-documentdb-partitionkey", pk.as_str())];
        headers.extend_from_slice(extra);
        let body = body.map(Value::to_string);
        self.send(
            base,
            method,
            path,
            &headers,
            body.as_deref().map(str::as_bytes),
        )
        .await
    }
}

/// Starts `builder`'s emulator and creates database `db` with container `c` (partition key `/pk`)
/// through its global endpoint; returns it with a client signing with the well-known key.
pub async fn start_with_container(builder: EmulatorBuilder) -> (Emulator, TestClient) {
    let emu = builder.start().await.expect("the emulator starts");
    let client = TestClient::new(WELL_KNOWN_KEY);
    client.setup(emu.endpoint(), "db", "c").await;
    (emu, client)
}

/// Runs `request`; returns its answer and how long it took.
pub async fn timed<T>(request: impl std::future::Future<Output = T>) -> (T, Duration) {
    let started = std::time::Instant::now();
    let answer = request.await;
    (answer, started.elapsed())
}

/// Asserts that a request was held at least `min_ms` (and answered well before any timeout).
pub fn assert_delayed(elapsed: Duration, min_ms: u64) {
    assert!(
        elapsed >= Duration::from_millis(min_ms) && elapsed < Duration::from_secs(10),
        "held {elapsed:?}, expected at least {min_ms} ms"
    );
}

/// East US (the write region) and West US, whose replica applies each write `lag_ms` later.
pub fn east_and_lagging_west(lag_ms: u64) -> EmulatorBuilder {
    EmulatorBuilder::new()
        .regions(["East US", "West US"])
        .region_replication_lag("West US", ReplicationLag::fixed_ms(lag_ms))
}

/// The East US and West US endpoints.
pub fn east_west(emu: &Emulator) -> (&str, &str) {
    let endpoint = |name| emu.region_endpoint(name).expect("the region exists");
    (endpoint("East US"), endpoint("West US"))
}

/// The partition key header for a single value.
pub fn pk_header(value: &Value) -> String {
    Value::Array(vec![value.clone()]).to_string()
}

#[test]
fn signing_parts_follow_the_protocol() {
    assert_eq!(signing_parts("/"), (String::new(), String::new()));
    assert_eq!(signing_parts("/dbs"), ("dbs".into(), String::new()));
    assert_eq!(
        signing_parts("/dbs/a/colls"),
        ("colls".into(), "dbs/a".into())
    );
    assert_eq!(
        signing_parts("/dbs/a/colls/b/docs/x%20y"),
        ("docs".into(), "dbs/a/colls/b/docs/x y".into())
    );
}

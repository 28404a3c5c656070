//! HTTP/2 beside HTTP/1.1 on every port: h2c with prior knowledge over plain TCP, `h2` by ALPN
//! over TLS, and HTTP/1.1 still served on both.

use crate::common;

use std::sync::Arc;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use bytes::Bytes;
use common::{master_auth, now_date, signing_parts};
use cosmos_emulator::{EmulatorBuilder, WELL_KNOWN_KEY};
use http_body_util::{BodyExt, Full};
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls::pki_types::{CertificateDer, ServerName};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;

fn authority(endpoint: &str) -> String {
    endpoint
        .trim_start_matches("https://")
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_owned()
}

fn signed(method: &str, uri: String, path: &str, body: Option<&str>) -> http::Request<Full<Bytes>> {
    let date = now_date();
    let (kind, link) = signing_parts(path);
    http::Request::builder()
        .method(method)
        .uri(uri)
        .header("x-ms-date", &date)
        .header("x-ms-version", "2020-07-15")
        .header("authorization", master_auth(WELL_KNOWN_KEY, method, &kind, &link, &date))
        .body(Full::new(Bytes::from(body.unwrap_or_default().to_owned())))
        .unwrap()
}

/// Sends requests over one HTTP/2 connection on `io`; answers each status and body.
async fn over_h2<I>(io: I, base: &str, requests: &[(&str, &str, Option<&str>)]) -> Vec<(u16, serde_json::Value)>
where
    I: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (mut sender, conn) =
        hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(io))
            .await
            .expect("the HTTP/2 handshake succeeds");
    tokio::spawn(conn);
    let mut out = Vec::new();
    for (method, path, body) in requests {
        let request = signed(method, format!("{base}{}", path.trim_start_matches('/')), path, *body);
        let response = sender.send_request(request).await.expect("an HTTP/2 answer");
        assert_eq!(response.version(), http::Version::HTTP_2);
        let status = response.status().as_u16();
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        out.push((status, serde_json::from_slice(&bytes).unwrap_or(serde_json::Value::Null)));
    }
    out
}

const REQUESTS: &[(&str, &str, Option<&str>)] = &[
    ("GET", "/", None),
    ("POST", "/dbs", Some(r#"{"id": "h2db"}"#)),
    ("GET", "/dbs/h2db", None),
];

fn check(answers: &[(u16, serde_json::Value)]) {
    assert_eq!(answers[0].0, 200, "{answers:?}");
    assert!(answers[0].1["writableLocations"].is_array());
    assert_eq!(answers[1].0, 201, "{answers:?}");
    assert_eq!(answers[2].0, 200, "{answers:?}");
    assert_eq!(answers[2].1["id"], "h2db");
}

#[tokio::test]
async fn h2c_with_prior_knowledge_and_http1_on_plain_tcp() {
    let emu = EmulatorBuilder::new().start().await.unwrap();
    let base = emu.endpoint().to_owned();
    let tcp = TcpStream::connect(authority(&base)).await.unwrap();
    check(&over_h2(tcp, &base, REQUESTS).await);
    // HTTP/1.1 on the same port.
    let c = common::TestClient::new(WELL_KNOWN_KEY);
    let r = c.get(&base, "/dbs/h2db", &[]).await;
    assert_eq!(r.status, 200, "{r:?}");
}

fn tls_config(cert_pem: &str, alpn: &[&[u8]]) -> rustls::ClientConfig {
    let body: String = cert_pem.lines().filter(|l| !l.starts_with("-----")).collect();
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(CertificateDer::from(STANDARD.decode(body).unwrap()))
        .unwrap();
    let mut config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    config
}

async fn tls_connect(
    base: &str,
    config: rustls::ClientConfig,
) -> tokio_rustls::client::TlsStream<TcpStream> {
    let tcp = TcpStream::connect(authority(base)).await.unwrap();
    TlsConnector::from(Arc::new(config))
        .connect(ServerName::try_from("127.0.0.1").unwrap().to_owned(), tcp)
        .await
        .expect("the TLS handshake succeeds")
}

#[tokio::test]
async fn h2_by_alpn_and_http1_over_tls() {
    let emu = EmulatorBuilder::new().tls(true).start().await.unwrap();
    let base = emu.endpoint().to_owned();
    let pem = emu.tls_cert_pem().unwrap().to_owned();

    let tls = tls_connect(&base, tls_config(&pem, &[b"h2", b"http/1.1"])).await;
    assert_eq!(tls.get_ref().1.alpn_protocol(), Some(&b"h2"[..]));
    check(&over_h2(tls, &base, REQUESTS).await);

    // A client offering only HTTP/1.1 gets it.
    let tls = tls_connect(&base, tls_config(&pem, &[b"http/1.1"])).await;
    assert_eq!(tls.get_ref().1.alpn_protocol(), Some(&b"http/1.1"[..]));
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tls))
        .await
        .unwrap();
    tokio::spawn(conn);
    let mut request = signed("GET", "/dbs/h2db".into(), "/dbs/h2db", None);
    request
        .headers_mut()
        .insert("host", authority(&base).parse().unwrap());
    let response = sender.send_request(request).await.unwrap();
    assert_eq!(response.version(), http::Version::HTTP_11);
    assert_eq!(response.status(), 200);
}

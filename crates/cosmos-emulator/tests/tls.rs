//! HTTPS: a self-signed certificate for 127.0.0.1, the account document advertising https endpoints.

use crate::common;

use std::sync::Arc;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use bytes::Bytes;
use common::{master_auth, now_date};
use cosmos_emulator::{EmulatorBuilder, WELL_KNOWN_KEY};
use http_body_util::{BodyExt, Empty};
use hyper_util::rt::TokioIo;
use rustls::pki_types::{CertificateDer, ServerName};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;

fn der_from_pem(pem: &str) -> Vec<u8> {
    let body: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
    STANDARD.decode(body).unwrap()
}

async fn https_get(endpoint: &str, cert_pem: &str, path: &str) -> (u16, serde_json::Value) {
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(CertificateDer::from(der_from_pem(cert_pem)))
        .unwrap();
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    let authority = endpoint
        .trim_start_matches("https://")
        .trim_end_matches('/')
        .to_owned();
    let tcp = TcpStream::connect(&authority).await.unwrap();
    let tls = TlsConnector::from(Arc::new(config))
        .connect(ServerName::try_from("127.0.0.1").unwrap().to_owned(), tcp)
        .await
        .expect("the certificate is valid for 127.0.0.1");
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tls))
        .await
        .unwrap();
    tokio::spawn(conn);
    let date = now_date();
    let request = http::Request::get(path)
        .header("host", authority)
        .header("x-ms-date", &date)
        .header(
            "authorization",
            master_auth(WELL_KNOWN_KEY, "GET", "", "", &date),
        )
        .body(Empty::<Bytes>::new())
        .unwrap();
    let response = sender.send_request(request).await.unwrap();
    let status = response.status().as_u16();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    (status, serde_json::from_slice(&body).unwrap())
}

#[tokio::test]
async fn serves_https_with_the_generated_certificate() {
    let emu = EmulatorBuilder::new().tls(true).start().await.unwrap();
    assert!(emu.endpoint().starts_with("https://127.0.0.1:"));
    let pem = emu
        .tls_cert_pem()
        .expect("a certificate when TLS is on")
        .to_owned();
    assert!(pem.contains("BEGIN CERTIFICATE"));
    let (status, doc) = https_get(emu.endpoint(), &pem, "/").await;
    assert_eq!(status, 200);
    for location in doc["readableLocations"].as_array().unwrap() {
        assert!(location["databaseAccountEndpoint"]
            .as_str()
            .unwrap()
            .starts_with("https://"));
    }
    let west = emu.region_endpoint("West US").unwrap();
    assert_eq!(https_get(west, &pem, "/").await.0, 200);
}

#[tokio::test]
async fn plain_http_has_no_certificate() {
    let emu = EmulatorBuilder::new().start().await.unwrap();
    assert!(emu.tls_cert_pem().is_none());
    assert!(emu.endpoint().starts_with("http://"));
}

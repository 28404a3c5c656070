//! HTTP/2 over real sockets: prior knowledge over plain TCP and ALPN `h2` over TLS, beside
//! HTTP/1.1 on the same port. Many requests share one connection; the admin API, which checks the
//! host, reads it from the `:authority` an HTTP/2 client sends instead of `Host`.

use std::sync::Arc;

use bytes::Bytes;
use cosmos_emulator::{Emulator, EmulatorBuilder, WELL_KNOWN_KEY};
use http::{Method, Request, Version};
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http2;
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;

use crate::common::{self, master_auth, now_date};

type Sender = http2::SendRequest<Full<Bytes>>;

/// An HTTP/2 connection over `io`, driven on its own task.
async fn h2_over<S>(io: S) -> Sender
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (sender, connection) = http2::handshake(TokioExecutor::new(), TokioIo::new(io))
        .await
        .expect("the emulator speaks HTTP/2");
    tokio::spawn(connection);
    sender
}

fn host_port(endpoint: &str) -> String {
    let rest = endpoint.split("://").nth(1).unwrap();
    rest.trim_end_matches('/').to_owned()
}

/// A signed GET of `/dbs/db/colls/c/docs/{id}` (partition key "p") or of the database feed.
fn signed_get(
    scheme: &str,
    authority: &str,
    path: &str,
    resource_type: &str,
    link: &str,
) -> Request<Full<Bytes>> {
    let date = now_date();
    let mut builder = Request::builder()
        .method(Method::GET)
        .uri(format!("{scheme}://{authority}{path}"))
        .version(Version::HTTP_2)
        .header("x-ms-date", &date)
        .header("x-ms-version", "2020-07-15")
        .header(
            "authorization",
            master_auth(WELL_KNOWN_KEY, "GET", resource_type, link, &date),
        );
    if resource_type == "docs" {
        builder = builder.header("x-ms-documentdb-partitionkey", "[\"p\"]");
    }
    builder.body(Full::new(Bytes::new())).unwrap()
}

async fn send(
    sender: &mut Sender,
    request: Request<Full<Bytes>>,
) -> (u16, Version, serde_json::Value) {
    sender.ready().await.expect("the connection stays open");
    let response = sender.send_request(request).await.expect("an answer");
    let status = response.status().as_u16();
    let version = response.version();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    let json = serde_json::from_slice(&body).unwrap_or(serde_json::Value::Null);
    (status, version, json)
}

async fn emulator_with_item(tls: bool) -> Emulator {
    let emu = EmulatorBuilder::new()
        .tls(tls)
        .start()
        .await
        .expect("the emulator starts");
    if !tls {
        let client = common::TestClient::new(WELL_KNOWN_KEY);
        client.setup(emu.endpoint(), "db", "c").await;
        let r = client
            .create_item(
                emu.endpoint(),
                "db",
                "c",
                &serde_json::json!({"id": "a", "pk": "p"}),
            )
            .await;
        assert_eq!(r.status, 201, "{r:?}");
    }
    emu
}

#[tokio::test]
async fn prior_knowledge_h2c_multiplexes_reads_on_one_connection() {
    let emu = emulator_with_item(false).await;
    let authority = host_port(emu.endpoint());
    let sender = h2_over(TcpStream::connect(&authority).await.unwrap()).await;

    // Twenty reads in flight at once on the one connection.
    let mut reads = tokio::task::JoinSet::new();
    for _ in 0..20 {
        let mut sender = sender.clone();
        let request = signed_get(
            "http",
            &authority,
            "/dbs/db/colls/c/docs/a",
            "docs",
            "dbs/db/colls/c/docs/a",
        );
        reads.spawn(async move { send(&mut sender, request).await });
    }
    while let Some(done) = reads.join_next().await {
        let (status, version, item) = done.unwrap();
        assert_eq!((status, version), (200, Version::HTTP_2));
        assert_eq!(item["id"], "a");
    }

    // The admin API checks the host: over HTTP/2 it comes from `:authority`.
    let admin = |authority: &str| {
        Request::builder()
            .method(Method::GET)
            .uri(format!("http://{authority}/_emulator/counters"))
            .version(Version::HTTP_2)
            .header("authorization", format!("Bearer {WELL_KNOWN_KEY}"))
            .body(Full::new(Bytes::new()))
            .unwrap()
    };
    let mut sender = sender.clone();
    let (status, _, _) = send(&mut sender, admin(&authority)).await;
    assert_eq!(
        status, 200,
        "the admin API answers an HTTP/2 client on a loopback authority"
    );
    let (status, _, _) = send(&mut sender, admin("evil.example")).await;
    assert_eq!(
        status, 403,
        "a foreign :authority is refused as a foreign Host is"
    );

    // A bad signature is refused over HTTP/2 as over HTTP/1.1, and the connection stays usable.
    let mut bad = signed_get("http", &authority, "/dbs", "dbs", "");
    bad.headers_mut().insert(
        "authorization",
        "type%3Dmaster%26ver%3D1.0%26sig%3Dbm9wZQ%3D%3D"
            .parse()
            .unwrap(),
    );
    let (status, _, _) = send(&mut sender, bad).await;
    assert_eq!(status, 401);
    let (status, _, feed) = send(
        &mut sender,
        signed_get("http", &authority, "/dbs", "dbs", ""),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(feed["_count"], 1);
}

#[tokio::test]
async fn tls_offers_h2_by_alpn_and_keeps_http1() {
    let emu = emulator_with_item(true).await;
    let authority = host_port(emu.endpoint());
    let pem = emu
        .tls_cert_pem()
        .expect("a TLS emulator has a certificate")
        .to_owned();
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(pem.as_bytes()) {
        roots.add(cert.unwrap()).unwrap();
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let connect = |alpn: Vec<Vec<u8>>| {
        let roots = roots.clone();
        let provider = provider.clone();
        let authority = authority.clone();
        async move {
            let mut config = rustls::ClientConfig::builder_with_provider(provider)
                .with_safe_default_protocol_versions()
                .unwrap()
                .with_root_certificates(roots)
                .with_no_client_auth();
            config.alpn_protocols = alpn;
            let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
            let tcp = TcpStream::connect(&authority).await.unwrap();
            connector
                .connect(ServerName::try_from("localhost").unwrap(), tcp)
                .await
                .expect("the TLS handshake succeeds")
        }
    };

    let h2 = connect(vec![b"h2".to_vec(), b"http/1.1".to_vec()]).await;
    assert_eq!(
        h2.get_ref().1.alpn_protocol(),
        Some(&b"h2"[..]),
        "the emulator picks h2 when offered"
    );
    let mut sender = h2_over(h2).await;
    let (status, version, feed) = send(
        &mut sender,
        signed_get("https", &authority, "/dbs", "dbs", ""),
    )
    .await;
    assert_eq!((status, version), (200, Version::HTTP_2));
    assert!(feed["Databases"].is_array(), "{feed}");

    let h1 = connect(vec![b"http/1.1".to_vec()]).await;
    assert_eq!(h1.get_ref().1.alpn_protocol(), Some(&b"http/1.1"[..]));
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(h1))
        .await
        .unwrap();
    tokio::spawn(connection);
    let mut request = signed_get("https", &authority, "/dbs", "dbs", "");
    *request.version_mut() = Version::HTTP_11;
    request
        .headers_mut()
        .insert("host", authority.parse().unwrap());
    let response = sender.send_request(request).await.unwrap();
    assert_eq!(
        (response.status().as_u16(), response.version()),
        (200, Version::HTTP_11)
    );
}

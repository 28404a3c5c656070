//! The pooled keep-alive HTTP client of one driver: hyper with rustls, one pool for all endpoints.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, Request, StatusCode};
use http_body_util::{BodyExt, Full, LengthLimitError, Limited};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;
use tokio::time::Instant;

use crate::error::{CosmosError, ErrorKind};
use crate::protocol::{header_names as h, MAX_SESSION_TOKEN_BYTES};

/// The read buffer limit of a connection (hyper's default is about 400 KB): once this much of a
/// response's status line and headers is buffered and they are still not complete, the response
/// is refused (a read may take a little past it first). Well above any head the service sends, and
/// far above the longest header the driver keeps ([`MAX_SESSION_TOKEN_BYTES`]), so that a response
/// with an oversized session token is refused naming the header and its size; a head longer still
/// is refused naming this limit.
pub(crate) const MAX_RESPONSE_HEAD_BYTES: usize = 2 * 1024 * 1024;

/// A response as it came off the wire.
#[derive(Debug)]
pub(crate) struct RawResponse {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Bytes,
}

/// Why an attempt produced no response.
#[derive(Debug)]
pub(crate) enum SendFailure {
    /// The connection could not be established: the request never left the client.
    Connect(Box<dyn std::error::Error + Send + Sync>),
    /// The connection failed after the request may have been sent.
    Io(Box<dyn std::error::Error + Send + Sync>),
    /// No response before the attempt's deadline (the request may have been sent).
    TimedOut,
    /// The response body is larger than the driver accepts (the limit, in bytes).
    BodyTooLarge(usize),
    /// A response header is longer than the driver accepts.
    HeaderTooLarge {
        /// The header's name.
        name: http::HeaderName,
        /// Its length, in bytes.
        bytes: usize,
        /// The limit, in bytes.
        limit: usize,
    },
    /// The response's status line and headers are longer than the client reads (the limit).
    HeadTooLarge(usize),
}

impl SendFailure {
    /// What happened, with the reason a person can act on when the error chain gives one.
    pub(crate) fn explain(&self) -> String {
        match self {
            SendFailure::Connect(e) => format!(
                "connection failed: {}",
                super::failure_reason::explain(e.as_ref())
            ),
            SendFailure::Io(e) => format!(
                "connection lost: {}",
                super::failure_reason::explain(e.as_ref())
            ),
            other => other.describe().to_owned(),
        }
    }

    pub(crate) fn describe(&self) -> &'static str {
        match self {
            SendFailure::Connect(_) => "connection failed",
            SendFailure::Io(_) => "connection lost",
            SendFailure::TimedOut => "timed out",
            SendFailure::BodyTooLarge(_)
            | SendFailure::HeaderTooLarge { .. }
            | SendFailure::HeadTooLarge(_) => "response too large",
        }
    }
}

/// How often an idle HTTP/2 connection is pinged, and how long an answer may take before the
/// connection is taken for dead (so a half-open connection is not kept for every request).
const HTTP2_KEEP_ALIVE: Duration = Duration::from_secs(30);
const HTTP2_KEEP_ALIVE_TIMEOUT: Duration = Duration::from_secs(10);

type Pool = Client<HttpsConnector<HttpConnector>, Full<Bytes>>;

/// The hyper client of one driver.
#[derive(Clone)]
pub(crate) struct HttpClient {
    /// Every request, but those `h2c` takes.
    client: Pool,
    /// With HTTP/2 asked for over plain HTTP, the `http://` requests: HTTP/2 with prior knowledge
    /// (over TLS, `client` offers `h2` by ALPN instead).
    h2c: Option<Pool>,
}

impl HttpClient {
    /// A client trusting the webpki roots plus `extra_pem` (certificates in PEM), keeping up to
    /// `max_idle_per_host` idle connections per host for `idle_timeout`, each connection
    /// established within `connect_timeout`; offering HTTP/2 by ALPN over TLS when `alpn_h2`, and
    /// speaking it with prior knowledge over plain HTTP when `h2c`; HTTP/1.1 otherwise.
    pub(crate) fn new(
        max_idle_per_host: usize,
        idle_timeout: Duration,
        connect_timeout: Duration,
        alpn_h2: bool,
        h2c: bool,
        extra_pem: Option<&[u8]>,
    ) -> Result<Self, CosmosError> {
        let mut roots = rustls::RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
        };
        if let Some(pem) = extra_pem {
            let mut added = 0;
            for cert in CertificateDer::pem_slice_iter(pem) {
                let cert = cert.map_err(|e| {
                    CosmosError::invalid_input(format!(
                        "the extra trusted certificate is not valid PEM: {e}"
                    ))
                })?;
                roots.add(cert).map_err(|e| {
                    CosmosError::invalid_input(format!(
                        "the extra trusted certificate was refused: {e}"
                    ))
                })?;
                added += 1;
            }
            if added == 0 {
                return Err(CosmosError::invalid_input(
                    "the extra trusted certificate PEM holds no certificate",
                ));
            }
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let tls = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| CosmosError::new(ErrorKind::Transport, format!("TLS setup failed: {e}")))?
            .with_root_certificates(roots)
            .with_no_client_auth();
        let mut http = HttpConnector::new();
        http.enforce_http(false);
        http.set_nodelay(true);
        http.set_connect_timeout(Some(connect_timeout));
        http.set_keepalive(Some(Duration::from_secs(30)));
        let connector = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls)
            .https_or_http();
        let https = if alpn_h2 || h2c {
            connector.enable_all_versions().wrap_connector(http)
        } else {
            connector.enable_http1().wrap_connector(http)
        };
        let pool = |prior_knowledge: bool| {
            let mut builder = Client::builder(TokioExecutor::new());
            builder
                .pool_timer(TokioTimer::new())
                .pool_idle_timeout(idle_timeout)
                .pool_max_idle_per_host(max_idle_per_host)
                .http1_max_buf_size(MAX_RESPONSE_HEAD_BYTES)
                .timer(TokioTimer::new())
                .http2_keep_alive_interval(HTTP2_KEEP_ALIVE)
                .http2_keep_alive_timeout(HTTP2_KEEP_ALIVE_TIMEOUT)
                .http2_max_header_list_size(MAX_RESPONSE_HEAD_BYTES as u32)
                .http2_only(prior_knowledge);
            builder.build(https.clone())
        };
        Ok(Self {
            client: pool(false),
            h2c: h2c.then(|| pool(true)),
        })
    }

    /// Sends `request` and reads the whole response (at most `max_body` bytes of body), giving up
    /// at `deadline`.
    ///
    /// The request is handed to hyper before the returned future is first polled, so the future
    /// holds only what is in flight (it is embedded in every operation's future; keeping it small
    /// keeps every move of those cheap). Dropping it cancels the request, so nothing leaks: over
    /// HTTP/1.1 hyper drops the connection it was using instead of returning it to the pool; over
    /// HTTP/2 it resets the request's stream and the connection goes on.
    pub(crate) fn send(
        &self,
        request: Request<Full<Bytes>>,
        deadline: Instant,
        max_body: usize,
    ) -> tokio::time::Timeout<
        impl std::future::Future<Output = Result<RawResponse, SendFailure>> + Send + 'static,
    > {
        let pool = match &self.h2c {
            Some(h2c) if request.uri().scheme() == Some(&http::uri::Scheme::HTTP) => h2c,
            _ => &self.client,
        };
        let response = pool.request(request);
        tokio::time::timeout_at(deadline, async move {
            let response = response.await.map_err(|e| {
                if e.is_connect() {
                    SendFailure::Connect(Box::new(e))
                } else if head_too_large(&e) {
                    SendFailure::HeadTooLarge(MAX_RESPONSE_HEAD_BYTES)
                } else {
                    SendFailure::Io(Box::new(e))
                }
            })?;
            let (parts, body) = response.into_parts();
            if let Some(token) = parts.headers.get(&h::SESSION_TOKEN) {
                if token.len() > MAX_SESSION_TOKEN_BYTES {
                    return Err(SendFailure::HeaderTooLarge {
                        name: h::SESSION_TOKEN,
                        bytes: token.len(),
                        limit: MAX_SESSION_TOKEN_BYTES,
                    });
                }
            }
            let body = Limited::new(body, max_body)
                .collect()
                .await
                .map_err(|e| {
                    if e.is::<LengthLimitError>() {
                        SendFailure::BodyTooLarge(max_body)
                    } else {
                        SendFailure::Io(e)
                    }
                })?
                .to_bytes();
            Ok(RawResponse {
                status: parts.status,
                headers: parts.headers,
                body,
            })
        })
    }
}

/// Whether hyper refused the response because its head is longer than the client reads.
fn head_too_large(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut next = Some(e);
    while let Some(e) = next {
        if e.downcast_ref::<hyper::Error>()
            .is_some_and(hyper::Error::is_parse_too_large)
        {
            return true;
        }
        next = e.source();
    }
    false
}

/// The result of awaiting [`HttpClient::send`]: the response, or why there is none.
pub(crate) fn sent(
    result: Result<Result<RawResponse, SendFailure>, tokio::time::error::Elapsed>,
) -> Result<RawResponse, SendFailure> {
    result.unwrap_or(Err(SendFailure::TimedOut))
}

impl std::fmt::Debug for HttpClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HttpClient")
    }
}

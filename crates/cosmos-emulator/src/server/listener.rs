//! Accepting connections on one port and serving HTTP on each: HTTP/1.1 with keep-alive, or
//! HTTP/2, chosen by ALPN over TLS and by the connection's first bytes over plain TCP (an HTTP/2
//! client with prior knowledge opens with the `PRI` preface; no HTTP/1 method starts so).

use std::sync::Arc;
use std::time::Duration;

use hyper::server::conn::{http1, http2};
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::{JoinHandle, JoinSet};
use tokio_rustls::TlsAcceptor;

use super::connection_cap::{refuse, ConnectionCap};
use super::pipeline;
use super::port::Port;
use crate::exchange::Shared;
use crate::faults::OutageMode;

/// How long a client may take to send a request's headers (and to finish a TLS handshake).
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(30);

/// Requests one HTTP/2 connection may have in flight at once; the connection cap bounds the
/// connections, this bounds what each of them multiplexes.
pub(super) const MAX_CONCURRENT_STREAMS: u32 = 256;

/// How long an idle HTTP/2 connection waits for a ping's answer before it is closed.
const HTTP2_KEEP_ALIVE_TIMEOUT: Duration = Duration::from_secs(20);

/// Serves `listener` until the returned task is aborted; aborting it also drops every connection.
/// Each connection holds a slot of `cap` while it is open. Once `stop` turns true the listener
/// closes, every connection finishes the request it is serving and closes, and the task ends when
/// the last one has.
pub(crate) fn spawn(
    listener: TcpListener,
    shared: Arc<Shared>,
    port: Port,
    tls: Option<TlsAcceptor>,
    cap: Arc<ConnectionCap>,
    stop: watch::Receiver<bool>,
) -> JoinHandle<()> {
    tokio::spawn(accept_loop(listener, shared, port, tls, cap, stop))
}

async fn accept_loop(
    listener: TcpListener,
    shared: Arc<Shared>,
    port: Port,
    tls: Option<TlsAcceptor>,
    cap: Arc<ConnectionCap>,
    stop: watch::Receiver<bool>,
) {
    let mut connections = JoinSet::new();
    let mut stopping = stop.clone();
    loop {
        tokio::select! {
            () = stopped(&mut stopping) => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    let _ = stream.set_nodelay(true);
                    if let Port::Region(i) = port {
                        if shared.outages.mode_at(i) == Some(OutageMode::Refuse) {
                            reset(stream);
                            continue;
                        }
                    }
                    match cap.admit() {
                        Some(slot) => {
                            let outages = shared.outages.clone();
                            let serve = serve_connection(stream, shared.clone(), port, tls.clone(), stop.clone());
                            connections.spawn(async move {
                                match port {
                                    // A region going out in `refuse` mode drops its connections.
                                    Port::Region(i) => tokio::select! {
                                        () = serve => {}
                                        () = outages.refused(i) => {}
                                    },
                                    Port::Global => serve.await,
                                }
                                drop(slot);
                            });
                        }
                        None => {
                            connections.spawn(refuse(stream, cap.max()));
                        }
                    }
                }
                Err(e) => {
                    // Out of file descriptors and the like: back off briefly instead of spinning.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
            },
            Some(_) = connections.join_next() => {}
        }
    }
    drop(listener);
    while connections.join_next().await.is_some() {}
}

/// Serves a connection until it ends or `stop` turns true; then it finishes the requests in
/// flight and closes instead of staying alive.
macro_rules! until_stopped {
    ($connection:expr, $stop:ident) => {{
        let connection = $connection;
        tokio::pin!(connection);
        tokio::select! {
            ended = connection.as_mut() => ended,
            () = stopped(&mut $stop) => {
                connection.as_mut().graceful_shutdown();
                connection.await
            }
        }
    }};
}

/// Returns once `stop` turns true (or its sender is gone).
async fn stopped(stop: &mut watch::Receiver<bool>) {
    let _ = stop.wait_for(|s| *s).await;
}

/// Drops an accepted connection with a TCP reset (linger zero), as a host that refuses it would.
fn reset(stream: TcpStream) {
    // Linger zero makes the drop send a reset at once; it never blocks.
    #[allow(deprecated)]
    let _ = stream.set_linger(Some(Duration::ZERO));
    drop(stream);
}

/// The HTTP version a connection speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Protocol {
    Http1,
    Http2,
}

/// Over TLS, what ALPN settled; a client that offered nothing speaks HTTP/1.1.
fn protocol_from_alpn(alpn: Option<&[u8]>) -> Protocol {
    match alpn {
        Some(b"h2") => Protocol::Http2,
        _ => Protocol::Http1,
    }
}

/// Over plain TCP, from the first bytes the client sent; None while they cannot tell yet.
fn protocol_from_first_bytes(first: &[u8]) -> Option<Protocol> {
    const PREFACE_START: &[u8] = b"PRI";
    if first.len() >= PREFACE_START.len() {
        return Some(if first.starts_with(PREFACE_START) {
            Protocol::Http2
        } else {
            Protocol::Http1
        });
    }
    if PREFACE_START.starts_with(first) {
        None
    } else {
        Some(Protocol::Http1)
    }
}

/// Peeks at a plain connection until its first bytes tell the protocol; None when the client
/// closes or sends nothing within the header timeout.
async fn sniff(stream: &TcpStream) -> Option<Protocol> {
    let sniffing = async {
        let mut first = [0u8; 3];
        loop {
            match stream.peek(&mut first).await {
                Ok(0) | Err(_) => return None,
                Ok(n) => {
                    if let Some(protocol) = protocol_from_first_bytes(&first[..n]) {
                        return Some(protocol);
                    }
                    // Fewer than three bytes so far, all of them the preface's: wait for more.
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
            }
        }
    };
    tokio::time::timeout(HEADER_READ_TIMEOUT, sniffing)
        .await
        .ok()
        .flatten()
}

async fn serve_connection(
    stream: TcpStream,
    shared: Arc<Shared>,
    port: Port,
    tls: Option<TlsAcceptor>,
    stop: watch::Receiver<bool>,
) {
    match tls {
        None => {
            if let Some(protocol) = sniff(&stream).await {
                serve_http(stream, protocol, shared, port, stop).await;
            }
        }
        Some(acceptor) => {
            match tokio::time::timeout(HEADER_READ_TIMEOUT, acceptor.accept(stream)).await {
                Ok(Ok(tls_stream)) => {
                    let protocol = protocol_from_alpn(tls_stream.get_ref().1.alpn_protocol());
                    serve_http(tls_stream, protocol, shared, port, stop).await;
                }
                Ok(Err(e)) => tracing::debug!(error = %e, "TLS handshake failed"),
                Err(_) => tracing::debug!("TLS handshake timed out"),
            }
        }
    }
}

async fn serve_http<S>(
    io: S,
    protocol: Protocol,
    shared: Arc<Shared>,
    port: Port,
    mut stop: watch::Receiver<bool>,
) where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let service = service_fn(move |request| {
        let shared = shared.clone();
        async move {
            let started = std::time::Instant::now();
            let mut answer = pipeline::handle(shared, port, request).await;
            if let Ok(response) = &mut answer {
                stamp_duration(response.headers_mut(), started.elapsed());
            }
            answer
        }
    });
    let io = TokioIo::new(io);
    let served = match protocol {
        Protocol::Http1 => until_stopped!(
            http1::Builder::new()
                .keep_alive(true)
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_READ_TIMEOUT)
                .serve_connection(io, service),
            stop
        ),
        Protocol::Http2 => until_stopped!(
            http2::Builder::new(TokioExecutor::new())
                .timer(TokioTimer::new())
                .max_concurrent_streams(MAX_CONCURRENT_STREAMS)
                .keep_alive_interval(Some(HTTP2_KEEP_ALIVE_TIMEOUT))
                .keep_alive_timeout(HTTP2_KEEP_ALIVE_TIMEOUT)
                .serve_connection(io, service),
            stop
        ),
    };
    if let Err(e) = served {
        tracing::debug!(error = %e, "connection ended with an error");
    }
}

/// `x-ms-request-duration-ms`: how long the server took over the request, in milliseconds with
/// three decimals (as the service sends it; SDKs read it on every answer).
fn stamp_duration(headers: &mut http::HeaderMap, took: Duration) {
    let text = format!("{:.3}", took.as_secs_f64() * 1000.0);
    if let Ok(value) = http::HeaderValue::from_str(&text) {
        headers.insert(
            http::HeaderName::from_static(crate::protocol::headers::REQUEST_DURATION_MS),
            value,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_bytes_tell_the_protocol() {
        let table: &[(&[u8], Option<Protocol>)] = &[
            (b"PRI * HTTP/2.0\r\n", Some(Protocol::Http2)),
            (b"PRI", Some(Protocol::Http2)),
            (b"PR", None),
            (b"P", None),
            (b"POST /dbs", Some(Protocol::Http1)),
            (b"PUT", Some(Protocol::Http1)),
            (b"PATCH /x", Some(Protocol::Http1)),
            (b"PO", Some(Protocol::Http1)),
            (b"GET / HTTP/1.1", Some(Protocol::Http1)),
            (b"D", Some(Protocol::Http1)),
            (b"\x16\x03\x01", Some(Protocol::Http1)),
        ];
        for (first, want) in table {
            assert_eq!(protocol_from_first_bytes(first), *want, "{first:?}");
        }
    }

    #[test]
    fn alpn_picks_h2_only_when_settled_on_it() {
        assert_eq!(protocol_from_alpn(Some(b"h2")), Protocol::Http2);
        assert_eq!(protocol_from_alpn(Some(b"http/1.1")), Protocol::Http1);
        assert_eq!(protocol_from_alpn(None), Protocol::Http1);
    }
}

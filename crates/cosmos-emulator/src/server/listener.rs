//! Accepting connections on one port and serving HTTP on each (optional TLS): HTTP/1.1 with
//! keep-alive, or HTTP/2, told apart by the connection's first bytes (the HTTP/2 preface): h2c
//! with prior knowledge over plain TCP, and over TLS what ALPN agreed (`h2` or `http/1.1`).

use std::sync::Arc;
use std::time::Duration;

use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::{JoinHandle, JoinSet};
use tokio_rustls::TlsAcceptor;

use super::connection_cap::{refuse, ConnectionCap};
use super::pipeline;
use super::port::Port;
use crate::exchange::Shared;
use crate::faults::OutageMode;

/// How long a client may take to send a request's headers (and to finish a TLS handshake).
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(30);
/// Most requests one HTTP/2 connection may have open at once.
const MAX_STREAMS: u32 = 256;
/// How often an idle HTTP/2 connection is pinged (an unanswered ping closes it).
const HTTP2_PING_INTERVAL: Duration = Duration::from_secs(60);

/// Serves `listener` until the returned task is aborted; aborting it also drops every connection.
/// Each connection holds a slot of `cap` while it is open.
pub fn spawn(
    listener: TcpListener,
    shared: Arc<Shared>,
    port: Port,
    tls: Option<TlsAcceptor>,
    cap: Arc<ConnectionCap>,
) -> JoinHandle<()> {
    tokio::spawn(accept_loop(listener, shared, port, tls, cap))
}

async fn accept_loop(
    listener: TcpListener,
    shared: Arc<Shared>,
    port: Port,
    tls: Option<TlsAcceptor>,
    cap: Arc<ConnectionCap>,
) {
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
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
                            let serve = serve_connection(stream, shared.clone(), port, tls.clone());
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
}

/// Drops an accepted connection with a TCP reset (linger zero), as a host that refuses it would.
fn reset(stream: TcpStream) {
    // Linger zero makes the drop send a reset at once; it never blocks.
    #[allow(deprecated)]
    let _ = stream.set_linger(Some(Duration::ZERO));
    drop(stream);
}

async fn serve_connection(
    stream: TcpStream,
    shared: Arc<Shared>,
    port: Port,
    tls: Option<TlsAcceptor>,
) {
    match tls {
        None => serve_http(stream, shared, port).await,
        Some(acceptor) => {
            match tokio::time::timeout(HEADER_READ_TIMEOUT, acceptor.accept(stream)).await {
                Ok(Ok(tls_stream)) => serve_http(tls_stream, shared, port).await,
                Ok(Err(e)) => tracing::debug!(error = %e, "TLS handshake failed"),
                Err(_) => tracing::debug!("TLS handshake timed out"),
            }
        }
    }
}

async fn serve_http<S>(io: S, shared: Arc<Shared>, port: Port)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let service = service_fn(move |request| pipeline::handle(shared.clone(), port, request));
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .keep_alive(true)
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT);
    builder
        .http2()
        .timer(TokioTimer::new())
        .max_concurrent_streams(MAX_STREAMS)
        .keep_alive_interval(Some(HTTP2_PING_INTERVAL))
        .keep_alive_timeout(HEADER_READ_TIMEOUT);
    if let Err(e) = builder.serve_connection(TokioIo::new(io), service).await {
        tracing::debug!(error = %e, "connection ended with an error");
    }
}

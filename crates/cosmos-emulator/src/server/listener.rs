//! Accepting connections on one port and serving HTTP/1.1 (keep-alive, optional TLS) on each.

use std::sync::Arc;
use std::time::Duration;

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
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

/// Serves `listener` until the returned task is aborted; aborting it also drops every connection.
/// Each connection holds a slot of `cap` while it is open. Once `stop` turns true the listener
/// closes, every connection finishes the request it is serving and closes, and the task ends when
/// the last one has.
pub fn spawn(
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

async fn serve_connection(
    stream: TcpStream,
    shared: Arc<Shared>,
    port: Port,
    tls: Option<TlsAcceptor>,
    stop: watch::Receiver<bool>,
) {
    match tls {
        None => serve_http(stream, shared, port, stop).await,
        Some(acceptor) => {
            match tokio::time::timeout(HEADER_READ_TIMEOUT, acceptor.accept(stream)).await {
                Ok(Ok(tls_stream)) => serve_http(tls_stream, shared, port, stop).await,
                Ok(Err(e)) => tracing::debug!(error = %e, "TLS handshake failed"),
                Err(_) => tracing::debug!("TLS handshake timed out"),
            }
        }
    }
}

async fn serve_http<S>(io: S, shared: Arc<Shared>, port: Port, mut stop: watch::Receiver<bool>)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let service = service_fn(move |request| pipeline::handle(shared.clone(), port, request));
    let mut builder = http1::Builder::new();
    builder
        .keep_alive(true)
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT);
    let connection = builder.serve_connection(TokioIo::new(io), service);
    tokio::pin!(connection);
    let ended = tokio::select! {
        ended = connection.as_mut() => ended,
        () = stopped(&mut stop) => {
            // Finish the request in flight (if any), then close instead of keeping it alive.
            connection.as_mut().graceful_shutdown();
            connection.await
        }
    };
    if let Err(e) = ended {
        tracing::debug!(error = %e, "connection ended with an error");
    }
}

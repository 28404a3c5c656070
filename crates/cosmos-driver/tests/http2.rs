//! The driver over HTTP/2 against the emulator over real sockets: with prior knowledge over plain
//! HTTP and by ALPN over TLS, every concurrent read shares one connection per endpoint, so an
//! emulator that admits only three connections answers them all; over HTTP/1.1 the same reads
//! need a connection each and meet the cap. `Negotiated` picks HTTP/2 by ALPN over TLS and
//! HTTP/1.1 over plain HTTP.

use cosmos_driver::{ConnectionPoolOptions, CosmosDriver, HttpVersion};
use cosmos_emulator::EmulatorBuilder;
use futures::future::join_all;

use crate::common;

const READS: usize = 32;

/// `READS` concurrent reads of one item through a driver speaking `version` to an emulator that
/// admits three connections; the status of every attempt of every read (None: no response).
async fn concurrent_reads(tls: bool, version: HttpVersion) -> Vec<Vec<Option<u16>>> {
    let emu = common::start(
        EmulatorBuilder::new()
            .regions(["East US"])
            .tls(tls)
            .max_connections(3),
    )
    .await;
    let pool = ConnectionPoolOptions {
        http_version: version,
        ..ConnectionPoolOptions::default()
    };
    let driver = CosmosDriver::new(common::options(&emu).with_connection_pool(pool))
        .await
        .expect("the driver connects");
    let c = common::container(&driver, "db", "c").await;
    common::create_item(&driver, &c, "a", "p", 1).await;
    let options = cosmos_driver::OperationOptions::new();
    let reads = (0..READS).map(|_| driver.execute(common::read(&c, "a", "p"), &options));
    join_all(reads)
        .await
        .into_iter()
        .map(|r| {
            let diagnostics = match &r {
                Ok(response) => response.diagnostics(),
                Err(e) => e.diagnostics(),
            };
            diagnostics
                .requests()
                .iter()
                .map(|a| a.status().map(|s| s.status))
                .collect()
        })
        .collect()
}

#[tokio::test]
async fn prior_knowledge_h2c_carries_concurrent_reads_on_one_connection() {
    let statuses = concurrent_reads(false, HttpVersion::Http2).await;
    assert!(
        statuses.iter().all(|s| s == &[Some(200)]),
        "every read answered at its first attempt: {statuses:?}"
    );
}

#[tokio::test]
async fn alpn_h2_over_tls_carries_concurrent_reads_on_one_connection() {
    let statuses = concurrent_reads(true, HttpVersion::Http2).await;
    assert!(
        statuses.iter().all(|s| s == &[Some(200)]),
        "every read answered at its first attempt: {statuses:?}"
    );
}

#[tokio::test]
async fn http1_needs_a_connection_per_concurrent_read() {
    let statuses = concurrent_reads(false, HttpVersion::Http1).await;
    assert!(
        statuses.iter().any(|s| s != &[Some(200)]),
        "over HTTP/1.1, {READS} concurrent reads open more than the three connections the \
         emulator admits: {statuses:?}"
    );
}

#[tokio::test]
async fn negotiated_picks_h2_over_tls() {
    assert_eq!(
        ConnectionPoolOptions::default().http_version,
        HttpVersion::Http1,
        "HTTP/1.1 stays the default"
    );
    let statuses = concurrent_reads(true, HttpVersion::Negotiated).await;
    assert!(
        statuses.iter().all(|s| s == &[Some(200)]),
        "ALPN picks h2, so every read shares one connection: {statuses:?}"
    );
}

#[tokio::test]
async fn negotiated_speaks_http1_over_plain_http() {
    let statuses = concurrent_reads(false, HttpVersion::Negotiated).await;
    assert!(
        statuses.iter().any(|s| s != &[Some(200)]),
        "without TLS there is nothing to negotiate, so HTTP/1.1 opens a connection per read and \
         meets the cap: {statuses:?}"
    );
}

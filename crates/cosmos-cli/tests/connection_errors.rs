//! What a person reads when the endpoint is wrong: the reason (refused, not Cosmos DB, not TLS),
//! not a bare "connection failed"; and a preferred region the account lacks is named.

use std::io::{Read, Write};
use std::net::TcpListener;

use crate::common::{start, Cli};

fn cli_at(endpoint: String) -> Cli {
    Cli {
        endpoint,
        key: cosmos_emulator::WELL_KNOWN_KEY.to_owned(),
    }
}

/// A port nothing listens on (bound, then closed).
fn closed_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// A web server that is not Cosmos DB: answers every request with an HTML page, on a thread
/// that ends after `requests` answers.
fn html_server(requests: usize) -> (u16, std::thread::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let thread = std::thread::spawn(move || {
        for stream in listener.incoming().take(requests) {
            let Ok(mut stream) = stream else { continue };
            let mut buf = [0u8; 4096];
            let _ = stream.read(&mut buf);
            let body = "<!DOCTYPE html><html><body>It works!</body></html>";
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    (port, thread)
}

#[tokio::test]
async fn a_closed_port_is_named_as_refused() {
    let cli = cli_at(format!("http://127.0.0.1:{}/", closed_port()));
    let err = cli.fails(&["db", "list"]).await;
    assert!(
        err.contains("the connection was refused"),
        "the reason is missing: {err}"
    );
}

#[tokio::test]
async fn a_web_server_is_named_as_not_cosmos_with_what_it_answered() {
    let (port, server) = html_server(1);
    let cli = cli_at(format!("http://127.0.0.1:{port}/"));
    let err = cli.fails(&["db", "list"]).await;
    assert!(err.contains("is not a Cosmos DB endpoint"), "{err}");
    assert!(
        err.contains("text/html") && err.contains("<!DOCTYPE html>"),
        "{err}"
    );
    server.join().unwrap();
}

#[tokio::test]
async fn https_to_a_plain_http_server_is_named_as_not_tls() {
    let (port, server) = html_server(1);
    let cli = cli_at(format!("https://127.0.0.1:{port}/"));
    let err = cli.fails(&["db", "list"]).await;
    assert!(err.contains("does not speak TLS"), "{err}");
    server.join().unwrap();
}

#[tokio::test]
async fn an_unknown_preferred_region_is_warned_about() {
    let (_emulator, cli) = start().await;
    let out = cli
        .run(&["db", "list", "--preferred-regions", "Mars North"])
        .await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("preferred regions that the account does not have")
            && stderr.contains("Mars North"),
        "{stderr}"
    );
}

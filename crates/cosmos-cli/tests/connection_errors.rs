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

#[tokio::test]
async fn a_connection_string_names_the_account_and_its_key_stays_out_of_errors() {
    let (emulator, _cli) = start().await;
    let run = |connection_string: String| async move {
        tokio::task::spawn_blocking(move || {
            std::process::Command::new(env!("CARGO_BIN_EXE_cosmos"))
                .args(["db", "list"])
                .env_remove("COSMOS_ENDPOINT")
                .env_remove("COSMOS_KEY")
                .env("COSMOS_CONNECTION_STRING", connection_string)
                .output()
                .unwrap()
        })
        .await
        .unwrap()
    };
    let good = format!(
        "AccountEndpoint={};AccountKey={};",
        emulator.endpoint(),
        emulator.key()
    );
    let out = run(good).await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A wrong key: refused by the service, and the key is not repeated.
    let wrong_key =
        "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==";
    let out = run(format!(
        "accountkey={wrong_key};accountendpoint={}",
        emulator.endpoint()
    ))
    .await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(7), "{stderr}");
    assert!(!stderr.contains(wrong_key), "{stderr}");
    // Not a connection string at all.
    let out = run("Server=localhost;Database=x".into()).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--connection-string"), "{stderr}");
}

#[tokio::test]
async fn item_replace_takes_its_id_as_get_does() {
    let (_emulator, cli) = start().await;
    cli.json(&["db", "create", "shop"]).await;
    cli.json(&[
        "container",
        "create",
        "--db",
        "shop",
        "orders",
        "--partition-key",
        "/pk",
    ])
    .await;
    let at = ["--db", "shop", "--container", "orders", "--pk", "p"];
    let with = |head: &[&'static str], tail: &[&'static str]| -> Vec<&'static str> {
        head.iter()
            .chain(at.iter())
            .chain(tail.iter())
            .copied()
            .collect()
    };
    cli.json(&with(
        &["item", "create"],
        &["--body", r#"{"id":"o1","pk":"p","n":1}"#],
    ))
    .await;
    // The id given as for `get`; the body needs none.
    let replaced = cli
        .json(&with(
            &["item", "replace"],
            &["o1", "--body", r#"{"pk":"p","n":2}"#],
        ))
        .await;
    assert_eq!(
        (replaced["id"].as_str(), replaced["n"].as_i64()),
        (Some("o1"), Some(2))
    );
    // A body naming another item is refused before anything is sent.
    let err = cli
        .fails(&with(
            &["item", "replace"],
            &["o1", "--body", r#"{"id":"o2","pk":"p"}"#],
        ))
        .await;
    assert!(err.contains("is not the item id"), "{err}");
    // Without an id anywhere: said so.
    let err = cli
        .fails(&with(&["item", "replace"], &["--body", r#"{"pk":"p"}"#]))
        .await;
    assert!(err.contains("give the item id"), "{err}");
}

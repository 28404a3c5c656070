//! Dropping an operation's future cancels its request and releases the connection: against a
//! server that never answers, the server sees the connection closed as soon as the future is gone.

use std::time::Duration;

use cosmos_driver::{
    CosmosDriver, CosmosOperation, Credential, DatabaseReference, DriverOptions, OperationOptions,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::sync::mpsc;

/// A one-region server: answers `GET /` with an account document, holds every other request
/// forever, and reports when a held connection is closed by the client.
async fn stalling_server() -> (String, mpsc::UnboundedReceiver<&'static str>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    let (tx, rx) = mpsc::unbounded_channel();
    let account = format!(
        r#"{{"writableLocations":[{{"name":"Local","databaseAccountEndpoint":"{url}"}}],"readableLocations":[{{"name":"Local","databaseAccountEndpoint":"{url}"}}],"enableMultipleWriteLocations":false,"userConsistencyPolicy":{{"defaultConsistencyLevel":"Session"}}}}"#
    );
    tokio::spawn(async move {
        loop {
            let Ok((mut socket, _)) = listener.accept().await else {
                return;
            };
            let tx = tx.clone();
            let account = account.clone();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 8192];
                loop {
                    let mut seen = Vec::new();
                    while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
                        match socket.read(&mut buf).await {
                            Ok(0) | Err(_) => {
                                let _ = tx.send("closed");
                                return;
                            }
                            Ok(n) => seen.extend_from_slice(&buf[..n]),
                        }
                    }
                    if seen.starts_with(b"GET / ") {
                        let reply = format!(
                            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{account}",
                            account.len()
                        );
                        if socket.write_all(reply.as_bytes()).await.is_err() {
                            return;
                        }
                        continue;
                    }
                    let _ = tx.send("held");
                    // Never answer; wait for the client to go away.
                    loop {
                        match socket.read(&mut buf).await {
                            Ok(0) | Err(_) => {
                                let _ = tx.send("closed");
                                return;
                            }
                            Ok(_) => {}
                        }
                    }
                }
            });
        }
    });
    (url, rx)
}

#[tokio::test]
async fn dropping_the_future_closes_the_connection() {
    let (url, mut events) = stalling_server().await;
    let key =
        "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw==";
    let driver = CosmosDriver::new(DriverOptions::new(
        url,
        Credential::master_key(key).unwrap(),
    ))
    .await
    .unwrap();
    let item = DatabaseReference::new("db")
        .unwrap()
        .container("c")
        .unwrap()
        .item("a")
        .unwrap();
    let op = CosmosOperation::read_item(item).with_partition_key("p");
    let options = OperationOptions::new();
    let read = driver.execute(op, &options);
    let dropped = tokio::time::timeout(Duration::from_millis(200), read).await;
    assert!(dropped.is_err(), "the server never answers");

    let mut saw_held = false;
    let closed = tokio::time::timeout(Duration::from_secs(5), async {
        while let Some(e) = events.recv().await {
            match e {
                "held" => saw_held = true,
                "closed" if saw_held => return true,
                _ => {}
            }
        }
        false
    })
    .await;
    assert_eq!(
        closed,
        Ok(true),
        "the held connection was closed once the future was dropped"
    );
}

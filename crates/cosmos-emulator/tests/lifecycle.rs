//! Starting on chosen ports, and stopping: shutdown and drop close listeners and open connections.

use crate::common;

use std::time::Duration;

use common::TestClient;
use cosmos_emulator::{EmulatorBuilder, WELL_KNOWN_KEY};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

fn authority(endpoint: &str) -> String {
    endpoint
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_owned()
}

/// Opens a keep-alive connection and completes one request on it.
async fn open_connection(endpoint: &str) -> TcpStream {
    let mut stream = TcpStream::connect(authority(endpoint)).await.unwrap();
    let request = format!(
        "GET /_emulator/counters HTTP/1.1\r\nhost: localhost\r\nauthorization: Bearer {WELL_KNOWN_KEY}\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut buf = vec![0u8; 4096];
    let n = stream.read(&mut buf).await.unwrap();
    assert!(String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 200"));
    stream
}

async fn assert_closed(mut stream: TcpStream) {
    let mut buf = [0u8; 16];
    match tokio::time::timeout(Duration::from_secs(5), stream.read(&mut buf)).await {
        Ok(Ok(0)) | Ok(Err(_)) => {}
        other => panic!("the connection is still open: {other:?}"),
    }
}

#[tokio::test]
async fn shutdown_stops_listeners_and_connections() {
    let emu = EmulatorBuilder::new().start().await.unwrap();
    let global = emu.endpoint().to_owned();
    let west = emu.region_endpoint("West US").unwrap().to_owned();
    let open = open_connection(&global).await;
    emu.shutdown().await;
    assert_closed(open).await;
    assert!(TcpStream::connect(authority(&global)).await.is_err());
    assert!(TcpStream::connect(authority(&west)).await.is_err());
}

#[tokio::test]
async fn dropping_the_handle_stops_everything() {
    let emu = EmulatorBuilder::new().start().await.unwrap();
    let global = emu.endpoint().to_owned();
    let open = open_connection(&global).await;
    drop(emu);
    assert_closed(open).await;
    let mut refused = false;
    for _ in 0..50 {
        if TcpStream::connect(authority(&global)).await.is_err() {
            refused = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(refused, "the listener still accepts after drop");
}

#[tokio::test]
async fn given_ports_are_used_for_the_global_and_region_endpoints() {
    // Find a free block of ports by binding an ephemeral one and trying the next ones.
    for _ in 0..20 {
        let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = probe.local_addr().unwrap().port();
        drop(probe);
        if port > 60000 {
            continue;
        }
        let Ok(emu) = EmulatorBuilder::new()
            .regions(["East US", "West US"])
            .port(port)
            .start()
            .await
        else {
            continue;
        };
        assert_eq!(emu.endpoint(), format!("http://127.0.0.1:{port}/"));
        assert_eq!(
            emu.region_endpoint("East US").unwrap(),
            format!("http://127.0.0.1:{}/", port + 1)
        );
        assert_eq!(
            emu.region_endpoint("West US").unwrap(),
            format!("http://127.0.0.1:{}/", port + 2)
        );
        let c = TestClient::new(WELL_KNOWN_KEY);
        assert_eq!(c.get(emu.endpoint(), "/", &[]).await.status, 200);
        return;
    }
    panic!("no free port block found");
}

#[tokio::test]
async fn bad_configurations_do_not_start() {
    assert!(EmulatorBuilder::new()
        .regions(Vec::<String>::new())
        .start()
        .await
        .is_err());
    assert!(EmulatorBuilder::new()
        .regions(["East US", "east us"])
        .start()
        .await
        .is_err());
    assert!(EmulatorBuilder::new()
        .write_regions(["Mars"])
        .start()
        .await
        .is_err());
    assert!(EmulatorBuilder::new()
        .key("not base64!")
        .start()
        .await
        .is_err());
    assert!(EmulatorBuilder::new()
        .profile("no-such-profile")
        .start()
        .await
        .is_err());
    assert!(EmulatorBuilder::new()
        .fault_rules_json("{")
        .start()
        .await
        .is_err());
    let err = EmulatorBuilder::new()
        .key("not base64!")
        .start()
        .await
        .unwrap_err()
        .to_string();
    assert!(!err.contains("not base64!"), "the key is not echoed: {err}");
}

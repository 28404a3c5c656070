//! Running the emulator binary in containers and CI: the readiness probe, the advertised host,
//! and a graceful stop on SIGTERM.

use std::time::Duration;

use crate::common;
use common::process::EmulatorProcess;
use common::TestClient;
use cosmos_emulator::WELL_KNOWN_KEY;
use http::Method;

#[tokio::test]
async fn the_ready_probe_answers_without_credentials_and_says_nothing_else() {
    let emu = EmulatorProcess::start(&[]).unwrap();
    let client = TestClient::new(WELL_KNOWN_KEY);
    for base in [
        emu.endpoint.as_str(),
        emu.region("East US"),
        emu.region("West US"),
    ] {
        let r = client.get_unsigned(base, "/_emulator/ready").await;
        assert_eq!(r.status, 200, "{base}: {r:?}");
        assert_eq!(&r.body[..], b"ready\n", "the probe reveals nothing");
    }
    let r = client
        .send_raw(&emu.endpoint, Method::POST, "/_emulator/ready", &[], None)
        .await;
    assert_eq!(r.status, 405);
    // Everything else still needs its credential.
    let r = client
        .get_unsigned(&emu.endpoint, "/_emulator/counters")
        .await;
    assert_eq!(r.status, 401, "{r:?}");
    let r = client.get_unsigned(&emu.endpoint, "/").await;
    assert_eq!(r.status, 401, "{r:?}");
    let r = client
        .get_unsigned(&emu.endpoint, "/_emulator/ready/x")
        .await;
    assert_eq!(r.status, 401, "only the probe's exact path is open: {r:?}");
}

#[tokio::test]
async fn the_advertised_host_is_in_every_endpoint_the_account_lists() {
    let emu = EmulatorProcess::start(&["--advertise-host", "cosmos.test"]).unwrap();
    assert!(
        emu.endpoint.starts_with("http://cosmos.test:"),
        "{}",
        emu.endpoint
    );
    // Reach it by its listen address; the port is the advertised one's.
    let port = emu
        .endpoint
        .rsplit(':')
        .next()
        .unwrap()
        .trim_end_matches('/');
    let base = format!("http://127.0.0.1:{port}/");
    let client = TestClient::new(WELL_KNOWN_KEY);
    let account = client.get(&base, "/", &[]).await;
    assert_eq!(account.status, 200, "{account:?}");
    let account = account.json();
    for list in ["writableLocations", "readableLocations"] {
        let locations = account[list].as_array().unwrap();
        assert!(!locations.is_empty());
        for location in locations {
            let url = location["databaseAccountEndpoint"].as_str().unwrap();
            assert!(url.starts_with("http://cosmos.test:"), "{list}: {url}");
        }
    }
    // The admin API takes a Host naming the advertised host.
    let auth = format!("Bearer {WELL_KNOWN_KEY}");
    let host = format!("cosmos.test:{port}");
    let r = client
        .send_raw(
            &base,
            Method::GET,
            "/_emulator/counters",
            &[("authorization", &auth), ("host", &host)],
            None,
        )
        .await;
    assert_eq!(r.status, 200, "{r:?}");
    let r = client
        .send_raw(
            &base,
            Method::GET,
            "/_emulator/counters",
            &[("authorization", &auth), ("host", "elsewhere.test")],
            None,
        )
        .await;
    assert_eq!(r.status, 403, "{r:?}");
}

#[test]
fn an_advertised_host_that_is_not_a_host_name_stops_the_start() {
    let err = EmulatorProcess::start(&["--advertise-host", "http://x:80/"])
        .err()
        .expect("refused");
    assert!(err.contains("not a host name"), "{err}");
}

#[tokio::test]
async fn sigterm_lets_the_request_in_flight_finish_then_exits_zero() {
    let dir = std::env::temp_dir().join(format!("ops-sigterm-{}", rand::random::<u32>()));
    std::fs::create_dir_all(&dir).unwrap();
    let rules = dir.join("rules.json");
    std::fs::write(
        &rules,
        br#"{"rules":[{"name":"slow-account","ops":["metadata"],"path":"/","reaction":{"delay":{"fixed_ms":3000}}}]}"#,
    )
    .unwrap();
    let (mut emu, mut stdout) =
        EmulatorProcess::start_with_stdout(&["--faults", rules.to_str().unwrap()]).unwrap();
    let client = TestClient::new(WELL_KNOWN_KEY);
    let in_flight = {
        let (client, base) = (client.clone(), emu.region("East US").to_owned());
        tokio::spawn(async move { client.get(&base, "/", &[]).await })
    };
    // The request is counted before its delay: once it shows, it is being served.
    loop {
        let counters = client
            .admin_get(&emu.endpoint, "/_emulator/counters")
            .await
            .json();
        if counters["East US"]["metadata"].as_u64().unwrap_or(0) >= 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    emu.terminate();
    let answered = in_flight.await.unwrap();
    assert_eq!(
        answered.status, 200,
        "the request in flight is answered: {answered:?}"
    );
    let status = tokio::task::spawn_blocking(move || {
        let status = emu.wait_exit(Duration::from_secs(60));
        (status, emu)
    })
    .await
    .unwrap();
    let (status, emu) = status;
    assert_eq!(
        status.and_then(|s| s.code()),
        Some(0),
        "exit status {status:?}; log: {}",
        emu.log_text()
    );
    let said: Vec<String> = stdout.by_ref().map_while(Result::ok).collect();
    assert!(
        said.iter().any(|l| l.contains("stopping (SIGTERM)")),
        "{said:?}"
    );
    let port = emu
        .endpoint
        .rsplit(':')
        .next()
        .unwrap()
        .trim_end_matches('/');
    assert!(
        std::net::TcpStream::connect(format!("127.0.0.1:{port}")).is_err(),
        "nothing listens after the exit"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn sigterm_exits_zero_when_nobody_reads_standard_output_any_more() {
    // `start` reads the banner, then drops its end of the pipe: the stop's lines go nowhere.
    let mut emu = EmulatorProcess::start(&[]).unwrap();
    emu.terminate();
    let status = emu.wait_exit(Duration::from_secs(30));
    assert_eq!(
        status.and_then(|s| s.code()),
        Some(0),
        "exit status {status:?}; log: {}",
        emu.log_text()
    );
}

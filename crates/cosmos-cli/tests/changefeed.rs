//! `cosmos changefeed process` and `lag` as processes against an emulator started by the test:
//! every change on stdout as one JSON line with its lease and LSN, lease events on stderr, a clean
//! stop on SIGTERM that releases the leases, the lag at 0 once handled, and bad flags refused.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cosmos_emulator::EmulatorBuilder;
use serde_json::Value;

use crate::common::Cli;

#[tokio::test]
async fn process_prints_each_change_and_stops_cleanly_on_sigterm() {
    let emu = EmulatorBuilder::new().partitions(2).start().await.unwrap();
    let cli = Cli {
        endpoint: emu.endpoint().to_owned(),
        key: emu.key().to_owned(),
    };
    let _ = cli.run(&["db", "create", "x"]).await;
    cli.json(&[
        "container",
        "create",
        "--db",
        "x",
        "c",
        "--partition-key",
        "/pk",
    ])
    .await;
    for i in 0..12 {
        let body = format!(r#"{{"id":"d{i}","pk":"p{i}","n":{i}}}"#);
        cli.json(&[
            "item",
            "create",
            "--db",
            "x",
            "--container",
            "c",
            "--body",
            &body,
        ])
        .await;
    }
    let mut child = Command::new(env!("CARGO_BIN_EXE_cosmos"))
        .args([
            "changefeed",
            "process",
            "--db",
            "x",
            "--container",
            "c",
            "--leases",
            "leases",
            "--name",
            "p",
            "--instance",
            "one",
            "--from",
            "beginning",
            "--max-items",
            "5",
            "--lease-acquire",
            "300ms",
            "--lease-renew",
            "300ms",
            "--poll-delay",
            "100ms",
        ])
        .env("COSMOS_ENDPOINT", &cli.endpoint)
        .env("COSMOS_KEY", &cli.key)
        .env_remove("RUST_LOG")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let lines = Arc::new(Mutex::new(Vec::<String>::new()));
    let sink = lines.clone();
    let stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            sink.lock().unwrap().push(line);
        }
    });
    let mut waited = 0;
    while lines.lock().unwrap().len() < 12 && waited < 200 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        waited += 1;
    }
    let lag = cli
        .json(&[
            "changefeed",
            "lag",
            "--db",
            "x",
            "--container",
            "c",
            "--leases",
            "leases",
            "--name",
            "p",
        ])
        .await;
    assert_eq!(lag["total"], 0, "{lag}");
    assert_eq!(lag["leases"].as_array().unwrap().len(), 2, "{lag}");
    assert!(lag["leases"]
        .as_array()
        .unwrap()
        .iter()
        .all(|l| l["owner"] == "one"));
    Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    let out = tokio::task::spawn_blocking(move || child.wait_with_output().unwrap())
        .await
        .unwrap();
    reader.join().unwrap();
    assert!(out.status.success(), "exit on SIGTERM: {:?}", out.status);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let events: Vec<Value> = stderr
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let count = |what: &str| events.iter().filter(|e| e["event"] == what).count();
    assert_eq!(count("acquired"), 2, "{stderr}");
    assert_eq!(count("released"), 2, "{stderr}");
    assert_eq!(count("stopped"), 1, "{stderr}");
    let changes: Vec<Value> = lines
        .lock()
        .unwrap()
        .iter()
        .map(|l| serde_json::from_str(l).expect("one JSON object a line"))
        .collect();
    let mut ids: Vec<String> = changes
        .iter()
        .map(|c| c["document"]["id"].as_str().unwrap().to_owned())
        .collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 12);
    for c in &changes {
        assert!(c["lsn"].as_u64().is_some() && c["lease"].is_string(), "{c}");
        assert_eq!(c["lsn"], c["document"]["_lsn"]);
    }
    // Released: the lag command shows no owner.
    let lag = cli
        .json(&[
            "changefeed",
            "lag",
            "--db",
            "x",
            "--container",
            "c",
            "--leases",
            "leases",
            "--name",
            "p",
        ])
        .await;
    assert!(
        lag["leases"]
            .as_array()
            .unwrap()
            .iter()
            .all(|l| l["owner"].is_null()),
        "{lag}"
    );
}

#[tokio::test]
async fn bad_flags_are_refused_before_any_work() {
    let (_emu, cli) = crate::common::start().await;
    let base = [
        "changefeed",
        "process",
        "--db",
        "x",
        "--container",
        "c",
        "--leases",
        "l",
        "--name",
        "p",
        "--instance",
        "i",
    ];
    let mut with_from = base.to_vec();
    with_from.extend(["--from", "yesterday"]);
    assert!(cli.fails(&with_from).await.contains("RFC 3339"));
    let mut zero = base.to_vec();
    zero.extend(["--max-items", "0"]);
    assert!(cli.fails(&zero).await.contains("max_items"));
    let mut intervals = base.to_vec();
    intervals.extend(["--lease-renew", "60s", "--lease-expiration", "30s"]);
    assert!(cli.fails(&intervals).await.contains("renew"));
}

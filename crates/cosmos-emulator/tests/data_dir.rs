//! `--data-dir`: what was acknowledged survives a restart, a SIGKILL in the middle of writes
//! loses nothing acknowledged and leaves nothing half written, a torn log tail is dropped with a
//! message, and the log is folded into snapshots as it grows.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::common;
use common::process::EmulatorProcess;
use common::{pk_header, TestClient};
use cosmos_emulator::WELL_KNOWN_KEY;
use http::Method;
use serde_json::{json, Value};

const DOCS: &str = "/dbs/db/colls/c/docs";

fn fresh_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("emu-data-{name}-{}", rand::random::<u32>()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn start(dir: &Path, extra: &[&str]) -> EmulatorProcess {
    let mut args = vec!["--data-dir", dir.to_str().unwrap()];
    args.extend_from_slice(extra);
    EmulatorProcess::start(&args).unwrap_or_else(|log| panic!("the emulator did not start: {log}"))
}

/// The item without what the service stamps per response.
fn item(r: &common::Resp) -> Value {
    assert_eq!(r.status, 200, "{r:?}");
    r.json()
}

fn files(dir: &Path, prefix: &str) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(prefix) && !n.ends_with(".tmp"))
        })
        .collect();
    out.sort();
    out
}

#[tokio::test]
async fn databases_containers_items_and_offers_survive_a_restart() {
    let dir = fresh_dir("restart");
    let c = TestClient::new(WELL_KNOWN_KEY);
    let (db_before, coll_before, offer_before, kept, replaced);
    {
        let emu = start(&dir, &[]);
        let base = emu.endpoint.as_str();
        c.setup(base, "db", "c").await;
        let r = c
            .post_json(base, "/dbs/db/colls", &[("x-ms-offer-throughput", "700")], &json!({"id": "t", "partitionKey": {"paths": ["/pk"], "kind": "Hash", "version": 2}, "defaultTtl": 3600}))
            .await;
        assert_eq!(r.status, 201, "{r:?}");
        for i in 0..20 {
            let r = c
                .create_item(
                    base,
                    "db",
                    "c",
                    &json!({"id": format!("i{i}"), "pk": format!("p{}", i % 5), "n": i}),
                )
                .await;
            assert_eq!(r.status, 201, "{r:?}");
        }
        let r = c
            .send_with_pk(
                base,
                Method::PUT,
                &format!("{DOCS}/i3"),
                &json!("p3"),
                &[],
                Some(&json!({"id": "i3", "pk": "p3", "n": 333})),
            )
            .await;
        assert_eq!(r.status, 200, "{r:?}");
        let r = c
            .send_with_pk(
                base,
                Method::DELETE,
                &format!("{DOCS}/i4"),
                &json!("p4"),
                &[],
                None,
            )
            .await;
        assert_eq!(r.status, 204, "{r:?}");
        db_before = c.get(base, "/dbs/db", &[]).await.json();
        coll_before = c.get(base, "/dbs/db/colls/t", &[]).await.json();
        let offers = c.get(base, "/offers", &[]).await.json();
        offer_before = offers["Offers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["offerResourceId"] == coll_before["_rid"])
            .cloned()
            .expect("the container's offer");
        kept = item(&c.read_item(base, "db", "c", "i7", &json!("p2"), &[]).await);
        replaced = item(&c.read_item(base, "db", "c", "i3", &json!("p3"), &[]).await);
        emu.terminate();
    }
    let emu = start(&dir, &[]);
    let base = emu.endpoint.as_str();
    assert_eq!(c.get(base, "/dbs/db", &[]).await.json(), db_before);
    assert_eq!(
        c.get(base, "/dbs/db/colls/t", &[]).await.json(),
        coll_before
    );
    let offers = c.get(base, "/offers", &[]).await.json();
    assert!(
        offers["Offers"].as_array().unwrap().contains(&offer_before),
        "{offers} should hold {offer_before}"
    );
    assert_eq!(
        item(&c.read_item(base, "db", "c", "i7", &json!("p2"), &[]).await),
        kept
    );
    assert_eq!(
        item(&c.read_item(base, "db", "c", "i3", &json!("p3"), &[]).await),
        replaced
    );
    let gone = c.read_item(base, "db", "c", "i4", &json!("p4"), &[]).await;
    assert_eq!(gone.status, 404, "a deleted item stays deleted: {gone:?}");
    // New resources get resource ids the kept ones do not have.
    let r = c
        .create_item(base, "db", "c", &json!({"id": "after", "pk": "p2"}))
        .await;
    assert_eq!(r.status, 201, "{r:?}");
    assert_ne!(r.json()["_rid"], kept["_rid"]);
    let r = c.post_json(base, "/dbs", &[], &json!({"id": "db2"})).await;
    assert_eq!(r.status, 201, "{r:?}");
    assert_ne!(r.json()["_rid"], db_before["_rid"]);
    let r = c
        .create_item(base, "db", "c", &json!({"id": "i0", "pk": "p0"}))
        .await;
    assert_eq!(r.status, 409, "kept items still conflict: {r:?}");
    drop(emu);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The body writer `w` gives its `n`th item (or batch member `m`): large enough that a record
/// spans several pages of the log.
fn payload(w: usize, n: usize) -> String {
    format!("{w}-{n}-").repeat(200)
}

#[tokio::test]
async fn a_sigkill_during_concurrent_writes_keeps_every_acknowledged_write_whole() {
    let dir = fresh_dir("sigkill");
    let c = TestClient::new(WELL_KNOWN_KEY);
    let mut emu = start(&dir, &[]);
    let base = emu.endpoint.clone();
    c.setup(&base, "db", "c").await;
    const WRITERS: usize = 8;
    // (writer, n): single creates; batches are three creates in one partition, all or none.
    let acked: Arc<Mutex<BTreeSet<(usize, usize)>>> = Arc::default();
    let tried: Arc<Mutex<BTreeSet<(usize, usize)>>> = Arc::default();
    let mut writers = Vec::new();
    for w in 0..WRITERS {
        let (c, base, acked, tried) = (c.clone(), base.clone(), acked.clone(), tried.clone());
        writers.push(tokio::spawn(async move {
            for n in 0.. {
                tried.lock().unwrap().insert((w, n));
                let pk = format!("w{w}-{n}");
                let answered = if n % 2 == 0 {
                    let doc = json!({"id": format!("{w}-{n}"), "pk": pk, "body": payload(w, n)});
                    c.try_send(&base, Method::POST, DOCS, &[("x-ms-documentdb-partitionkey", &pk_header(&json!(pk)))], Some(doc.to_string().as_bytes()))
                        .await
                        .map(|r| r.status == 201)
                } else {
                    let ops: Vec<Value> = (0..3)
                        .map(|m| json!({"operationType": "Create", "resourceBody": {"id": format!("{w}-{n}-{m}"), "pk": pk, "body": payload(w, n + m)}}))
                        .collect();
                    c.try_send(
                        &base,
                        Method::POST,
                        DOCS,
                        &[
                            ("x-ms-documentdb-partitionkey", &pk_header(&json!(pk))),
                            ("x-ms-cosmos-is-batch-request", "True"),
                            ("x-ms-cosmos-batch-atomic", "True"),
                        ],
                        Some(Value::Array(ops).to_string().as_bytes()),
                    )
                    .await
                    .map(|r| r.status == 200)
                };
                match answered {
                    Ok(true) => {
                        acked.lock().unwrap().insert((w, n));
                    }
                    Ok(false) => panic!("a write was refused"),
                    Err(_) => return,
                }
            }
        }));
    }
    while acked.lock().unwrap().len() < 300 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    emu.kill_hard();
    for w in writers {
        w.await.unwrap();
    }
    let (acked, tried) = (acked.lock().unwrap().clone(), tried.lock().unwrap().clone());
    assert!(
        tried.len() > acked.len(),
        "writes were in flight at the kill"
    );
    let emu = start(&dir, &[]);
    let base = emu.endpoint.as_str();
    let (mut unacked_present, mut unacked_absent) = (0, 0);
    for &(w, n) in &tried {
        let pk = json!(format!("w{w}-{n}"));
        let members: Vec<(String, String)> = if n % 2 == 0 {
            vec![(format!("{w}-{n}"), payload(w, n))]
        } else {
            (0..3)
                .map(|m| (format!("{w}-{n}-{m}"), payload(w, n + m)))
                .collect()
        };
        let mut present = 0;
        for (id, body) in &members {
            let r = c.read_item(base, "db", "c", id, &pk, &[]).await;
            match r.status {
                200 => {
                    assert_eq!(r.json()["body"], json!(body), "{id} is whole");
                    present += 1;
                }
                404 => {}
                other => panic!("reading {id}: {other} {r:?}"),
            }
        }
        if acked.contains(&(w, n)) {
            assert_eq!(
                present,
                members.len(),
                "acknowledged write {w}-{n} is all there"
            );
        } else {
            assert!(
                present == 0 || present == members.len(),
                "unacknowledged batch {w}-{n} is all there or not at all ({present} of {})",
                members.len()
            );
            if present == 0 {
                unacked_absent += 1;
            } else {
                unacked_present += 1;
            }
        }
    }
    println!(
        "{} acknowledged writes kept; of {} unacknowledged, {unacked_present} landed whole and {unacked_absent} not at all",
        acked.len(),
        tried.len() - acked.len()
    );
    drop(emu);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_torn_log_tail_is_dropped_with_a_message() {
    let dir = fresh_dir("torn");
    let c = TestClient::new(WELL_KNOWN_KEY);
    {
        let mut emu = start(&dir, &[]);
        let base = emu.endpoint.as_str();
        c.setup(base, "db", "c").await;
        for id in ["a", "b", "last"] {
            let r = c
                .create_item(base, "db", "c", &json!({"id": id, "pk": "p"}))
                .await;
            assert_eq!(r.status, 201, "{r:?}");
        }
        emu.kill_hard();
    }
    // The last record (item "last") loses its final bytes, as a write cut by a crash would.
    let logs = files(&dir, "log-");
    let log = logs.last().expect("a log file");
    let len = std::fs::metadata(log).unwrap().len();
    let file = std::fs::OpenOptions::new().write(true).open(log).unwrap();
    file.set_len(len - 7).unwrap();
    drop(file);
    let emu = start(&dir, &[]);
    let base = emu.endpoint.as_str();
    let log_text = emu.log_text();
    assert!(
        log_text.contains("dropped a torn tail")
            && (log_text.contains("fails its checksum") || log_text.contains("cut short")),
        "{log_text}"
    );
    for id in ["a", "b"] {
        assert_eq!(
            c.read_item(base, "db", "c", id, &json!("p"), &[])
                .await
                .status,
            200
        );
    }
    let r = c.read_item(base, "db", "c", "last", &json!("p"), &[]).await;
    assert_eq!(r.status, 404, "the torn write is not half there: {r:?}");
    // Garbage after whole records: dropped too, and the start goes on.
    drop(emu);
    let logs = files(&dir, "log-");
    let mut bytes = std::fs::read(logs.last().unwrap()).unwrap();
    bytes.extend_from_slice(&[0xff; 5]);
    std::fs::write(logs.last().unwrap(), bytes).unwrap();
    let emu = start(&dir, &[]);
    assert!(
        emu.log_text().contains("dropped a torn tail"),
        "{}",
        emu.log_text()
    );
    assert_eq!(
        c.read_item(&emu.endpoint, "db", "c", "a", &json!("p"), &[])
            .await
            .status,
        200
    );
    drop(emu);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_growing_log_is_folded_into_snapshots() {
    let dir = fresh_dir("compact");
    let c = TestClient::new(WELL_KNOWN_KEY);
    {
        let emu = start(&dir, &["--compact-log-bytes", "4096"]);
        let base = emu.endpoint.as_str();
        c.setup(base, "db", "c").await;
        let first = files(&dir, "snapshot-");
        for i in 0..150 {
            let r = c
                .create_item(base, "db", "c", &json!({"id": format!("i{i}"), "pk": format!("p{}", i % 7), "pad": "x".repeat(100)}))
                .await;
            assert_eq!(r.status, 201, "{r:?}");
        }
        // Compaction runs beside the writes and starts after a write once the log is past the
        // size: write small items until one newer snapshot and a short log are all there is.
        let started = std::time::Instant::now();
        let mut extra = 0;
        loop {
            let snapshots = files(&dir, "snapshot-");
            let logs = files(&dir, "log-");
            let short = logs.len() == 1 && std::fs::metadata(&logs[0]).unwrap().len() < 4096;
            if snapshots.len() == 1 && snapshots != first && short {
                break;
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "the log was not folded: {:?}",
                files(&dir, "")
            );
            let r = c
                .create_item(
                    base,
                    "db",
                    "c",
                    &json!({"id": format!("extra{extra}"), "pk": "x"}),
                )
                .await;
            assert_eq!(r.status, 201, "{r:?}");
            extra += 1;
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let snapshot = &files(&dir, "snapshot-")[0];
        assert!(
            std::fs::metadata(snapshot).unwrap().len() > 150 * 100,
            "the snapshot holds the items"
        );
        emu.terminate();
    }
    let emu = start(&dir, &[]);
    for i in 0..150 {
        let pk = json!(format!("p{}", i % 7));
        let r = c
            .read_item(&emu.endpoint, "db", "c", &format!("i{i}"), &pk, &[])
            .await;
        assert_eq!(r.status, 200, "i{i}: {r:?}");
    }
    drop(emu);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Writes `count` items of about 1 KiB from `tasks` concurrent clients; the mean time per write
/// as one client sees it, and the writes per second all clients achieve.
async fn measure_writes(base: &str, tasks: usize, count: usize) -> (Duration, f64) {
    let c = TestClient::new(WELL_KNOWN_KEY);
    let run = rand::random::<u32>();
    let started = std::time::Instant::now();
    let mut handles = Vec::new();
    for t in 0..tasks {
        let (c, base) = (c.clone(), base.to_owned());
        handles.push(tokio::spawn(async move {
            let mut spent = Duration::ZERO;
            for n in 0..count / tasks {
                let doc = json!({"id": format!("b{run}-{t}-{n}"), "pk": format!("p{t}"), "pad": "x".repeat(1000)});
                let one = std::time::Instant::now();
                let r = c.create_item(&base, "db", "c", &doc).await;
                spent += one.elapsed();
                assert_eq!(r.status, 201, "{r:?}");
            }
            spent
        }));
    }
    let mut spent = Duration::ZERO;
    for h in handles {
        spent += h.await.unwrap();
    }
    let writes = (count / tasks * tasks) as u32;
    (
        spent / writes,
        f64::from(writes) / started.elapsed().as_secs_f64(),
    )
}

/// The cost of `--data-dir` per write: run with
/// `cargo test --release -p cosmos-emulator --test integration data_dir::write_cost -- --ignored --nocapture`.
#[tokio::test]
#[ignore = "a measurement, not a check: run it by name"]
async fn write_cost() {
    for (label, with_dir) in [("in memory", false), ("--data-dir", true)] {
        let dir = fresh_dir("bench");
        let emu = if with_dir {
            start(&dir, &[])
        } else {
            EmulatorProcess::start(&[]).unwrap()
        };
        TestClient::new(WELL_KNOWN_KEY)
            .setup(&emu.endpoint, "db", "c")
            .await;
        measure_writes(&emu.endpoint, 4, 200).await;
        for tasks in [1, 16] {
            let (mean, rate) = measure_writes(&emu.endpoint, tasks, 2000).await;
            println!(
                "{label:>10}, {tasks:>2} concurrent clients: {:>7.0} µs per write, {rate:>6.0} writes/s",
                mean.as_secs_f64() * 1e6
            );
        }
        drop(emu);
        let _ = std::fs::remove_dir_all(&dir);
    }
}

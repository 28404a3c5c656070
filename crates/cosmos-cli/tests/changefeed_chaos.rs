//! Chaos run of `cosmos changefeed process`: 4 instances (processes of the built binary) on a
//! container of 8 ranges served by the emulator binary (`cosmos emulator`, another process), while the test writes 50,000 creates,
//! replaces and deletes of 2,000 documents over 60 s (each write carries the document's version).
//! At 15 s one instance is SIGKILLed, at 20 s two ranges split, at 30 s a fifth instance starts,
//! from 35 s to 45 s a tenth of requests answer 429. Then it checks:
//! - the final version of every document not deleted was handled (latest-version mode shows no
//!   deletes, so deleted documents are not checked);
//! - each instance handled each document's versions in LSN order;
//! - duplicates stay within one batch per lease handover (counted and printed);
//! - after two acquire intervals without membership changes every instance owns within one of
//!   the fair share;
//! - `cosmos changefeed lag` reports 0 within 30 s of the last write;
//! - no lease write forks: each conditional write of a lease follows the one before it, and
//!   renewals, checkpoints and releases come only from the lease's owner.
//!
//! Heavy (about two minutes on two cores): `#[ignore]`d, run by `.ci/run` with `--ignored`.
//! `CFP_CHAOS_WRITES` and `CFP_CHAOS_SECS` scale it down for a quick look.

use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cosmos_driver::{ContainerClient, CosmosDriver, Credential, DriverOptions};
use serde_json::{json, Value};

const DOCS: usize = 2_000;
const MAX_ITEMS: u64 = 50;
const ACQUIRE_MS: u64 = 1_000;

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// One running instance and what it printed.
struct Instance {
    name: String,
    child: Child,
    out: Arc<Mutex<Vec<String>>>,
    err: Arc<Mutex<Vec<String>>>,
}

/// A process the test started: killed when dropped (a failed assertion leaves none behind).
impl Drop for Instance {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The emulator binary (`cosmos emulator`), one region, 8 ranges per container.
struct EmulatorProcess {
    child: Child,
    endpoint: String,
}

impl Drop for EmulatorProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The official emulator's well-known key, which `cosmos emulator` serves by default.
const EMULATOR_KEY: &str =
    "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw==";

/// A port free on loopback with the next one free too (the region's endpoint).
fn free_ports() -> u16 {
    for _ in 0..50 {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = l.local_addr().unwrap().port();
        if port < 65_000 && std::net::TcpListener::bind(("127.0.0.1", port + 1)).is_ok() {
            return port;
        }
    }
    panic!("no two free ports");
}

async fn start_emulator() -> EmulatorProcess {
    let port = free_ports();
    let child = Command::new(env!("CARGO_BIN_EXE_cosmos"))
        .args([
            "emulator",
            "--port",
            &port.to_string(),
            "--regions",
            "East US",
            "--profile",
            "local",
            "--partitions",
            "8",
        ])
        .env_remove("RUST_LOG")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("cosmos emulator starts");
    let emulator = EmulatorProcess {
        child,
        endpoint: format!("http://127.0.0.1:{port}/"),
    };
    for _ in 0..300 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            return emulator;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the emulator did not listen on {port}");
}

fn spawn(endpoint: &str, key: &str, name: &str) -> Instance {
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
            "chaos",
            "--instance",
            name,
            "--from",
            "beginning",
            "--max-items",
            &MAX_ITEMS.to_string(),
            "--lease-renew",
            "400ms",
            "--lease-acquire",
            &format!("{ACQUIRE_MS}ms"),
            "--lease-expiration",
            "3s",
            "--poll-delay",
            "100ms",
            "--log-lease-writes",
        ])
        .env("COSMOS_ENDPOINT", endpoint)
        .env("COSMOS_KEY", key)
        .env_remove("RUST_LOG")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cosmos changefeed process starts");
    let collect = |pipe: Box<dyn std::io::Read + Send>| {
        let lines = Arc::new(Mutex::new(Vec::new()));
        let sink = lines.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                sink.lock().unwrap().push(line);
            }
        });
        lines
    };
    let out = collect(Box::new(child.stdout.take().unwrap()));
    let err = collect(Box::new(child.stderr.take().unwrap()));
    Instance {
        name: name.to_owned(),
        child,
        out,
        err,
    }
}

/// One admin request over a plain HTTP/1.1 connection (the emulator's admin API).
async fn admin(endpoint: &str, key: &str, method: &str, path: &str, body: Value) -> Value {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let authority = endpoint
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_owned();
    let body = if body.is_null() {
        String::new()
    } else {
        body.to_string()
    };
    let request = format!(
        "{method} {path} HTTP/1.1\r\nhost: {authority}\r\nauthorization: Bearer {key}\r\n\
         content-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let mut stream = tokio::net::TcpStream::connect(&authority)
        .await
        .expect("admin connect");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.unwrap();
    let text = String::from_utf8_lossy(&answer).into_owned();
    let status_ok = text.starts_with("HTTP/1.1 2");
    assert!(status_ok, "{method} {path}: {text}");
    let payload = text.split("\r\n\r\n").nth(1).unwrap_or("");
    // A chunked answer: take the first JSON object in it.
    let json_start = payload.find('{').unwrap_or(payload.len());
    let json_end = payload.rfind('}').map(|i| i + 1).unwrap_or(payload.len());
    serde_json::from_str(&payload[json_start..json_end.max(json_start)]).unwrap_or(Value::Null)
}

/// The acknowledged state of one document: its last version and whether its last write was a
/// delete.
#[derive(Clone, Copy, Default, Debug)]
struct Acked {
    version: u64,
    deleted: bool,
    exists: bool,
}

/// One writer task: the documents `i % lanes == lane`, one write every `pace`, `count` writes.
async fn writer(
    c: ContainerClient,
    lane: usize,
    lanes: usize,
    count: u64,
    pace: Duration,
    state: Arc<Mutex<Vec<Acked>>>,
) -> u64 {
    let mine: Vec<usize> = (0..DOCS).filter(|i| i % lanes == lane).collect();
    let mut tick = tokio::time::interval(pace);
    let mut retries = 0;
    for k in 0..count {
        tick.tick().await;
        let doc = mine[(k as usize) % mine.len()];
        let id = format!("doc{doc}");
        let now = state.lock().unwrap()[doc];
        // Every 10th write of a document that exists deletes it; the others create or replace.
        let delete = now.exists && (k / mine.len() as u64) % 10 == 9;
        let next = now.version + 1;
        loop {
            let result = if delete {
                match c.delete_item(id.as_str(), &id, None).await {
                    Err(e) if e.is_not_found() => Ok(()),
                    r => r.map(|_| ()),
                }
            } else {
                c.upsert_item(id.as_str(), &json!({"id": id, "pk": id, "v": next}), None)
                    .await
                    .map(|_| ())
            };
            match result {
                Ok(()) => break,
                Err(_) => {
                    retries += 1;
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
            }
        }
        let mut s = state.lock().unwrap();
        s[doc] = Acked {
            version: if delete { now.version } else { next },
            deleted: delete,
            exists: !delete,
        };
    }
    retries
}

fn lag_of(endpoint: &str, key: &str) -> Option<Value> {
    let out = Command::new(env!("CARGO_BIN_EXE_cosmos"))
        .args([
            "changefeed",
            "lag",
            "--db",
            "x",
            "--container",
            "c",
            "--leases",
            "leases",
            "--name",
            "chaos",
        ])
        .env("COSMOS_ENDPOINT", endpoint)
        .env("COSMOS_KEY", key)
        .env_remove("RUST_LOG")
        .output()
        .ok()?;
    serde_json::from_slice(&out.stdout).ok()
}

fn parse_lines(lines: &[String]) -> Vec<Value> {
    lines
        .iter()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "about two minutes: run by .ci/run with --ignored"]
async fn four_instances_through_a_kill_two_splits_a_join_and_a_throttling_storm() {
    let writes = env_or("CFP_CHAOS_WRITES", 50_000);
    let secs = env_or("CFP_CHAOS_SECS", 60);
    let at = |s: u64| Duration::from_millis(s * 1000 * secs / 60);
    let emu = start_emulator().await;
    let (endpoint, key) = (emu.endpoint.clone(), EMULATOR_KEY.to_owned());
    let options = DriverOptions::new(&endpoint, Credential::master_key(&key).unwrap());
    let mut driver = None;
    for _ in 0..100 {
        match CosmosDriver::new(options.clone()).await {
            Ok(d) => {
                driver = Some(d);
                break;
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
    let driver = driver.expect("the emulator answers");
    driver.create_database("x", None).await.unwrap();
    let pk = cosmos_driver::PartitionKeyDefinition::new("/pk").unwrap();
    driver
        .database("x")
        .create_container(&cosmos_driver::ContainerProperties::new("c", &pk), None)
        .await
        .unwrap();
    let c = driver.container("x", "c");

    let mut instances: Vec<Instance> = (1..=4)
        .map(|i| spawn(&endpoint, &key, &format!("i{i}")))
        .collect();
    // Wait until the 8 leases are spread.
    let spread = Instant::now();
    loop {
        if let Some(lag) = lag_of(&endpoint, &key) {
            let leases = lag["leases"].as_array().cloned().unwrap_or_default();
            if leases.len() == 8 && leases.iter().all(|l| l["owner"].is_string()) {
                break;
            }
        }
        assert!(
            spread.elapsed() < Duration::from_secs(60),
            "leases never spread"
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
    }

    let state = Arc::new(Mutex::new(vec![Acked::default(); DOCS]));
    let lanes = 16usize;
    let per_lane = writes / lanes as u64;
    let pace = Duration::from_micros((secs * 1_000_000) / per_lane.max(1));
    let start = Instant::now();
    let mut tasks = Vec::new();
    for lane in 0..lanes {
        tasks.push(tokio::spawn(writer(
            c.clone(),
            lane,
            lanes,
            per_lane,
            pace,
            state.clone(),
        )));
    }
    // The fault timeline.
    tokio::time::sleep(at(15).saturating_sub(start.elapsed())).await;
    let killed = instances.remove(3);
    let mut killed = killed;
    killed.child.kill().expect("SIGKILL i4");
    let _ = killed.child.wait();
    tokio::time::sleep(at(20).saturating_sub(start.elapsed())).await;
    for range in ["0", "1"] {
        admin(
            &endpoint,
            &key,
            "POST",
            "/_emulator/split",
            json!({"db": "x", "container": "c", "range": range}),
        )
        .await;
    }
    tokio::time::sleep(at(30).saturating_sub(start.elapsed())).await;
    instances.push(spawn(&endpoint, &key, "i5"));
    tokio::time::sleep(at(35).saturating_sub(start.elapsed())).await;
    let rule = admin(
        &endpoint,
        &key,
        "POST",
        "/_emulator/faults",
        json!({"rules": [{
            "name": "storm", "probability": 0.1,
            "reaction": {"respond": {"status": 429, "sub_status": 3200, "retry_after_ms": 20}}
        }]}),
    )
    .await;
    tokio::time::sleep(at(45).saturating_sub(start.elapsed())).await;
    let id = rule["ids"][0]
        .as_str()
        .map(str::to_owned)
        .unwrap_or_else(|| rule["ids"][0].to_string());
    admin(
        &endpoint,
        &key,
        "DELETE",
        &format!("/_emulator/faults/{id}"),
        Value::Null,
    )
    .await;
    let mut retries = 0;
    for t in tasks {
        retries += t.await.unwrap();
    }
    let write_secs = start.elapsed().as_secs_f64();
    let last_write = Instant::now();

    // Catch-up: lag 0 within 30 s of the last write.
    let mut caught_up = None;
    while last_write.elapsed() < Duration::from_secs(30) {
        if let Some(lag) = lag_of(&endpoint, &key) {
            if lag["total"] == 0 && lag["leases"].as_array().is_some_and(|l| !l.is_empty()) {
                caught_up = Some(last_write.elapsed());
                break;
            }
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let caught_up = caught_up.expect("lag 0 within 30 s of the last write");

    // Balance: two acquire intervals after the last membership change (i5 joined long ago),
    // every live instance owns within one of the fair share.
    tokio::time::sleep(Duration::from_millis(2 * ACQUIRE_MS + 500)).await;
    let lag = lag_of(&endpoint, &key).expect("lag");
    let leases = lag["leases"].as_array().cloned().unwrap_or_default();
    let mut owned: BTreeMap<String, usize> =
        instances.iter().map(|i| (i.name.clone(), 0)).collect();
    for l in &leases {
        let owner = l["owner"].as_str().unwrap_or("").to_owned();
        assert!(
            owned.contains_key(&owner),
            "lease {l} owned by {owner:?}, not a live instance"
        );
        *owned.get_mut(&owner).unwrap() += 1;
    }
    let (lo, hi) = (
        *owned.values().min().unwrap(),
        *owned.values().max().unwrap(),
    );
    assert_eq!(leases.len(), 10, "8 ranges, two of them split: {leases:?}");
    assert!(
        hi - lo <= 1,
        "owned within one of the fair share: {owned:?}"
    );

    // Stop the live instances cleanly.
    for i in &instances {
        let _ = Command::new("kill")
            .args(["-TERM", &i.child.id().to_string()])
            .status();
    }
    for i in instances.iter_mut() {
        let status = i.child.wait().unwrap();
        assert!(
            status.success(),
            "{} exits cleanly on SIGTERM: {status}",
            i.name
        );
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    instances.push(killed);

    // What was handled, per instance.
    let acked = state.lock().unwrap().clone();
    let mut delivered: HashMap<(String, u64), u64> = HashMap::new(); // (doc, version) -> times
    let mut by_lsn: HashMap<(String, u64), u64> = HashMap::new(); // (doc, lsn) -> times
    let mut out_of_order = 0;
    let mut total = 0u64;
    for i in &instances {
        let mut last: HashMap<String, u64> = HashMap::new();
        for line in parse_lines(&i.out.lock().unwrap()) {
            let doc = line["document"]["id"].as_str().unwrap_or("").to_owned();
            let v = line["document"]["v"].as_u64().unwrap_or(0);
            let lsn = line["lsn"].as_u64().unwrap_or(0);
            total += 1;
            *delivered.entry((doc.clone(), v)).or_default() += 1;
            *by_lsn.entry((doc.clone(), lsn)).or_default() += 1;
            let prev = last.insert(doc, lsn).unwrap_or(0);
            if lsn < prev {
                out_of_order += 1;
            }
        }
    }
    let mut missing = Vec::new();
    let mut checked = 0;
    for (d, a) in acked.iter().enumerate() {
        if a.exists && !a.deleted {
            checked += 1;
            if !delivered.contains_key(&(format!("doc{d}"), a.version)) {
                missing.push((d, a.version));
            }
        }
    }
    let duplicates: u64 = by_lsn.values().map(|n| n - 1).sum();

    // Lease write history: no fork, and only the owner renews, checkpoints or releases.
    let mut writes_seen: Vec<Value> = Vec::new();
    let mut acquisitions = 0u64;
    for i in &instances {
        for e in parse_lines(&i.err.lock().unwrap()) {
            if e["event"] == "lease_write" {
                writes_seen.push(e);
            } else if e["event"] == "acquired" {
                acquisitions += 1;
            }
        }
    }
    let mut by_prev: HashMap<(String, String), Vec<&Value>> = HashMap::new();
    let mut by_etag: HashMap<(String, String), &Value> = HashMap::new();
    for w in &writes_seen {
        let lease = w["lease"].as_str().unwrap_or("").to_owned();
        if let Some(p) = w["previous_etag"].as_str() {
            by_prev
                .entry((lease.clone(), p.to_owned()))
                .or_default()
                .push(w);
        }
        if let Some(e) = w["etag"].as_str() {
            by_etag.insert((lease, e.to_owned()), w);
        }
    }
    let forks: Vec<_> = by_prev.iter().filter(|(_, v)| v.len() > 1).collect();
    let mut foreign = Vec::new();
    for w in &writes_seen {
        let kind = w["write"].as_str().unwrap_or("");
        if !matches!(kind, "renew" | "checkpoint" | "release") {
            continue;
        }
        let lease = w["lease"].as_str().unwrap_or("").to_owned();
        if let Some(prev) = w["previous_etag"]
            .as_str()
            .and_then(|p| by_etag.get(&(lease, p.to_owned())))
        {
            if prev["owner"] != w["instance"] {
                foreign.push(((*prev).clone(), w.clone()));
            }
        }
    }

    let bound = MAX_ITEMS * acquisitions;
    println!(
        "chaos: {writes} writes in {write_secs:.1} s ({retries} writer retries), {total} changes handled, \
         {checked} final versions checked, {} missing, {duplicates} duplicates (bound {bound} = {MAX_ITEMS} x {acquisitions} acquisitions), \
         {out_of_order} out of LSN order, caught up {:.1} s after the last write, owned {owned:?}, {} lease writes",
        missing.len(),
        caught_up.as_secs_f64(),
        writes_seen.len()
    );
    assert!(
        missing.is_empty(),
        "final versions never handled: {:?}",
        &missing[..missing.len().min(20)]
    );
    assert_eq!(
        out_of_order, 0,
        "an instance handled a document's versions out of LSN order"
    );
    assert!(
        duplicates <= bound,
        "{duplicates} duplicates over the bound {bound}"
    );
    assert!(forks.is_empty(), "two writes from one etag: {forks:?}");
    assert!(
        foreign.is_empty(),
        "a lease written by one not its owner: {foreign:?}"
    );
    drop(emu);
}

//! A data directory seen from outside: fresh directories, its snapshot and log files, damaging
//! them, and running the binary on it until it serves or refuses.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::process::EmulatorProcess;
use super::TestClient;

/// A new, empty path under the temporary directory.
pub fn fresh_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("emu-data-{name}-{}", rand::random::<u32>()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// The files of `dir` whose names start with `prefix` (temporary ones left out), sorted.
pub fn files(dir: &Path, prefix: &str) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.is_file()
                && p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with(prefix) && !n.ends_with(".tmp"))
        })
        .collect();
    out.sort();
    out
}

/// The directories `damaged-*` of `dir` and the files in them.
pub fn set_aside(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        let aside = path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("damaged-"));
        if aside && path.is_dir() {
            for inner in std::fs::read_dir(&path).unwrap().flatten() {
                out.push(inner.path());
            }
        }
    }
    out.sort();
    out
}

/// Starts the binary on `dir` with `extra` flags; panics with its log when it does not come up.
pub fn start(dir: &Path, extra: &[&str]) -> EmulatorProcess {
    let mut args = vec!["--data-dir", dir.to_str().unwrap()];
    args.extend_from_slice(extra);
    EmulatorProcess::start(&args).unwrap_or_else(|log| panic!("the emulator did not start: {log}"))
}

/// Runs the binary on `dir` expecting it to refuse to start: its exit status is not success and
/// it ends within 60 s; returns what it wrote (standard error, then standard output).
pub fn refused(dir: &Path, extra: &[&str]) -> String {
    let out = std::env::temp_dir().join(format!("emu-refused-{}", rand::random::<u32>()));
    let err = std::env::temp_dir().join(format!("emu-refused-{}", rand::random::<u32>()));
    let mut child = Command::new(env!("CARGO_BIN_EXE_cosmos-emulator"))
        .args(["--port", "0", "--regions", "East US,West US"])
        .args(["--data-dir", dir.to_str().unwrap()])
        .args(extra)
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "the emulator started on a damaged directory: {}",
                std::fs::read_to_string(&out).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let text = format!(
        "{}{}",
        std::fs::read_to_string(&err).unwrap_or_default(),
        std::fs::read_to_string(&out).unwrap_or_default()
    );
    let _ = std::fs::remove_file(&out);
    let _ = std::fs::remove_file(&err);
    assert!(!status.success(), "it exited with success: {text}");
    assert!(
        !text.contains("Press Ctrl-C"),
        "it served before exiting: {text}"
    );
    text
}

/// Flips the bits of the byte at `offset` of `path`.
pub fn flip_byte(path: &Path, offset: usize) {
    let mut bytes = std::fs::read(path).unwrap();
    bytes[offset] ^= 0xff;
    std::fs::write(path, bytes).unwrap();
}

/// Keeps the first `len` bytes of `path`.
pub fn truncate(path: &Path, len: u64) {
    let file = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    file.set_len(len).unwrap();
}

/// The length of `path`.
pub fn len(path: &Path) -> u64 {
    std::fs::metadata(path).unwrap().len()
}

/// Item `n` of the numbered items the damage tests write.
pub fn numbered(n: usize) -> Value {
    json!({"id": format!("i{n}"), "pk": format!("p{}", n % 5), "pad": format!("{n}-").repeat(20)})
}

/// Creates numbered items `from..to` in `db/c` through `base`; panics unless each is answered
/// 201 (acknowledged).
pub async fn write_numbered(c: &TestClient, base: &str, from: usize, to: usize) {
    for n in from..to {
        let r = c.create_item(base, "db", "c", &numbered(n)).await;
        assert_eq!(r.status, 201, "item {n}: {r:?}");
    }
}

/// How many of numbered items `0..count` `base` serves whole.
pub async fn served(c: &TestClient, base: &str, count: usize) -> usize {
    let mut found = 0;
    for n in 0..count {
        let doc = numbered(n);
        let r = c
            .read_item(base, "db", "c", &format!("i{n}"), &doc["pk"], &[])
            .await;
        match r.status {
            200 => {
                assert_eq!(r.json()["pad"], doc["pad"], "item {n} is whole");
                found += 1;
            }
            404 => {}
            other => panic!("reading item {n}: {other} {r:?}"),
        }
    }
    found
}

/// Creates `doc` through `base`: its status, or None when the emulator did not answer.
pub async fn try_create(c: &TestClient, base: &str, doc: &Value) -> Option<u16> {
    let pk = super::pk_header(&doc["pk"]);
    c.try_send(
        base,
        http::Method::POST,
        "/dbs/db/colls/c/docs",
        &[("x-ms-documentdb-partitionkey", &pk)],
        Some(doc.to_string().as_bytes()),
    )
    .await
    .ok()
    .map(|r| r.status)
}

//! `--data-dir` with damaged, missing or unwritable files: nothing acknowledged disappears
//! silently. Either every acknowledged item is served, or the emulator refuses to start naming
//! the damage (and changes nothing); with `--recover` it starts, says exactly what it dropped
//! and keeps the damaged files, moved aside.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::common;
use common::data_files::{
    files, flip_byte, fresh_dir, len, numbered, refused, served, set_aside, start, truncate,
    try_create, write_numbered,
};
use common::TestClient;
use cosmos_emulator::WELL_KNOWN_KEY;

const ITEMS: usize = 40;

fn name(path: &Path) -> String {
    path.file_name().unwrap().to_string_lossy().into_owned()
}

/// A directory whose newest log holds the catalog and `ITEMS` acknowledged item writes.
async fn with_items_in_log(label: &str) -> (PathBuf, PathBuf) {
    let dir = fresh_dir(label);
    let c = TestClient::new(WELL_KNOWN_KEY);
    let mut emu = start(&dir, &[]);
    c.setup(&emu.endpoint, "db", "c").await;
    write_numbered(&c, &emu.endpoint, 0, ITEMS).await;
    emu.kill_hard();
    let log = files(&dir, "log-").pop().expect("a log");
    (dir, log)
}

/// A directory whose newest snapshot holds `ITEMS` acknowledged items (its log is empty).
async fn with_items_in_snapshot(label: &str) -> (PathBuf, PathBuf) {
    let (dir, _) = with_items_in_log(label).await;
    start(&dir, &[]).kill_hard();
    let snapshot = files(&dir, "snapshot-").pop().expect("a snapshot");
    (dir, snapshot)
}

/// Refused without `--recover` (naming `damaged` and the place); nothing in the directory
/// changed. Then started with `--recover`: the output names the file set aside, the file is
/// still on disk, and a plain start afterwards serves what the recovery served. Returns how
/// many items were served after the recovery.
async fn refused_then_recovered(dir: &Path, damaged: &Path, expect: &[&str]) -> usize {
    let listing = |dir: &Path| -> Vec<(String, Vec<u8>)> {
        files(dir, "")
            .iter()
            .map(|p| (name(p), std::fs::read(p).unwrap()))
            .collect()
    };
    let before = listing(dir);
    let text = refused(dir, &[]);
    assert!(text.contains(&name(damaged)), "names the file: {text}");
    assert!(
        text.contains("--recover"),
        "says how to start anyway: {text}"
    );
    for word in expect {
        assert!(text.contains(word), "says {word:?}: {text}");
    }
    assert_eq!(listing(dir), before, "a refused start changes nothing");
    assert!(set_aside(dir).is_empty());

    let c = TestClient::new(WELL_KNOWN_KEY);
    let emu = start(dir, &["--recover"]);
    let out = emu.log_text();
    assert!(
        out.contains("set aside") && out.contains(&name(damaged)),
        "the recovery says what it dropped: {out}"
    );
    let aside = set_aside(dir);
    assert!(
        aside.iter().any(|p| name(p) == name(damaged)
            && std::fs::read(p).unwrap()
                == before.iter().find(|(n, _)| *n == name(damaged)).unwrap().1),
        "the damaged file is kept, unchanged: {aside:?}"
    );
    assert!(!damaged.exists(), "moved out of the directory's files");
    let after = served(&c, &emu.endpoint, ITEMS).await;
    drop(emu);
    let emu = start(dir, &[]);
    assert_eq!(served(&c, &emu.endpoint, ITEMS).await, after);
    println!(
        "{}: {after} of {ITEMS} served after --recover; said: {out}",
        name(damaged)
    );
    after
}

#[tokio::test]
async fn a_flipped_byte_in_a_log_is_refused_and_recover_keeps_the_records_before_it() {
    for (place, at) in [("start", 0.0), ("middle", 0.5), ("end", 1.0)] {
        let (dir, log) = with_items_in_log(&format!("flip-log-{place}")).await;
        let size = len(&log) as usize;
        // The first record's payload, the middle, the last byte.
        let offset = ((size as f64 * at) as usize).clamp(12, size - 1);
        flip_byte(&log, offset);
        let expect: &[&str] = if place == "end" {
            &["offset"]
        } else {
            &["offset", "valid records follow"]
        };
        let kept = refused_then_recovered(&dir, &log, expect).await;
        assert!(
            kept < ITEMS,
            "{place}: the records from the damage on are dropped"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[tokio::test]
async fn a_flipped_byte_in_a_snapshot_is_refused() {
    for (place, at) in [("start", 0.0), ("middle", 0.5), ("end", 1.0)] {
        let (dir, snapshot) = with_items_in_snapshot(&format!("flip-snap-{place}")).await;
        let size = len(&snapshot) as usize;
        let offset = ((size as f64 * at) as usize).clamp(12, size - 1);
        flip_byte(&snapshot, offset);
        refused_then_recovered(&dir, &snapshot, &["offset"]).await;
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[tokio::test]
async fn a_snapshot_cut_in_half_is_refused_and_kept() {
    let (dir, snapshot) = with_items_in_snapshot("half-snap").await;
    truncate(&snapshot, len(&snapshot) / 2);
    refused_then_recovered(&dir, &snapshot, &["offset"]).await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_log_cut_short_is_a_torn_tail_but_a_hole_in_it_is_damage() {
    // Cut: nothing follows the last whole record, as after a crash; the start goes on.
    let (dir, log) = with_items_in_log("cut-log").await;
    truncate(&log, len(&log) / 2);
    let c = TestClient::new(WELL_KNOWN_KEY);
    let emu = start(&dir, &[]);
    assert!(
        emu.log_text().contains("dropped a torn tail"),
        "{}",
        emu.log_text()
    );
    let kept = served(&c, &emu.endpoint, ITEMS).await;
    assert!(kept > 0 && kept < ITEMS, "{kept}");
    drop(emu);
    let _ = std::fs::remove_dir_all(&dir);
    // A hole: bytes from a third to a half are gone, whole records follow.
    let (dir, log) = with_items_in_log("hole-log").await;
    let bytes = std::fs::read(&log).unwrap();
    let (a, b) = (bytes.len() / 3, bytes.len() / 2);
    let holed = [&bytes[..a], &bytes[b..]].concat();
    std::fs::write(&log, holed).unwrap();
    refused_then_recovered(&dir, &log, &["valid records follow"]).await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_missing_snapshot_or_log_is_refused() {
    // The snapshot the log starts from is gone.
    let (dir, _) = with_items_in_log("missing-snap").await;
    let snapshot = files(&dir, "snapshot-").pop().unwrap();
    std::fs::remove_file(&snapshot).unwrap();
    let text = refused(&dir, &[]);
    assert!(
        text.contains("missing") && text.contains(&name(&snapshot)),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
    // A log generation between the snapshot and a later log is gone.
    let (dir, log) = with_items_in_log("missing-log").await;
    let g = u64::from_str_radix(name(&log).trim_start_matches("log-"), 16).unwrap();
    let later = dir.join(format!("log-{:016x}", g + 1));
    std::fs::rename(&log, &later).unwrap();
    let text = refused(&dir, &[]);
    assert!(
        text.contains("missing") && text.contains(&name(&log)),
        "{text}"
    );
    assert!(later.exists());
    // --recover keeps the snapshot's state and sets the log after the gap aside.
    let c = TestClient::new(WELL_KNOWN_KEY);
    let emu = start(&dir, &["--recover"]);
    assert!(emu.log_text().contains(&name(&later)), "{}", emu.log_text());
    assert_eq!(served(&c, &emu.endpoint, ITEMS).await, 0);
    assert!(set_aside(&dir).iter().any(|p| name(p) == name(&later)));
    drop(emu);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_sigkill_during_compaction_keeps_every_acknowledged_write() {
    let dir = fresh_dir("kill-compact");
    let c = TestClient::new(WELL_KNOWN_KEY);
    let acked: Arc<Mutex<Vec<usize>>> = Arc::default();
    let mut next = 0;
    for round in 0..4 {
        let mut emu = start(&dir, &["--compact-log-bytes", "8192"]);
        let base = emu.endpoint.clone();
        if round == 0 {
            c.setup(&base, "db", "c").await;
        }
        let mut writers = Vec::new();
        for w in 0..4 {
            let (c, base, acked) = (c.clone(), base.clone(), acked.clone());
            let from = next + w * 100_000;
            writers.push(tokio::spawn(async move {
                for n in from.. {
                    match try_create(&c, &base, &numbered(n)).await {
                        Some(201) => acked.lock().unwrap().push(n),
                        Some(other) => panic!("item {n} refused: {other}"),
                        None => return,
                    }
                }
            }));
        }
        // Snapshots are folded every few dozen writes: kill at a time that moves each round.
        let target = acked.lock().unwrap().len() + 150 + round * 37;
        while acked.lock().unwrap().len() < target {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        emu.kill_hard();
        for w in writers {
            w.await.unwrap();
        }
        next += 1_000_000;
    }
    let emu = start(&dir, &[]);
    let acked = acked.lock().unwrap().clone();
    for &n in &acked {
        let doc = numbered(n);
        let r = c
            .read_item(&emu.endpoint, "db", "c", &format!("i{n}"), &doc["pk"], &[])
            .await;
        assert_eq!(r.status, 200, "acknowledged item {n}: {r:?}");
    }
    println!("{} acknowledged writes kept over 4 kills", acked.len());
    drop(emu);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A small tmpfs mounted for one test, unmounted on drop.
struct Tmpfs(PathBuf);

impl Tmpfs {
    /// Mounts a tmpfs of `size` at a fresh directory; None (with a line saying the test is
    /// skipped) when this runs without root.
    fn mount(size: &str) -> Option<Tmpfs> {
        let uid = std::process::Command::new("id").arg("-u").output().unwrap();
        let root = String::from_utf8_lossy(&uid.stdout).trim() == "0";
        let dir = fresh_dir("tmpfs");
        std::fs::create_dir_all(&dir).unwrap();
        let mounted = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&dir)
            .status()
            .is_ok_and(|s| s.success());
        if !mounted {
            assert!(!root, "running as root, yet a tmpfs could not be mounted");
            eprintln!("SKIPPED: the full-disk test needs root to mount a tmpfs");
            println!("SKIPPED: the full-disk test needs root to mount a tmpfs");
            return None;
        }
        Some(Tmpfs(dir))
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[tokio::test]
async fn a_full_disk_refuses_writes_and_keeps_what_was_acknowledged() {
    let Some(disk) = Tmpfs::mount("2m") else {
        return;
    };
    let dir = disk.0.join("data");
    let filler = disk.0.join("filler");
    std::fs::write(&filler, vec![0u8; 1400 << 10]).unwrap();
    let c = TestClient::new(WELL_KNOWN_KEY);
    let mut acked = Vec::new();
    let refusal;
    {
        // Compactions run as the disk fills: one of them meets the full disk too.
        let mut emu = start(&dir, &["--compact-log-bytes", "65536"]);
        let base = emu.endpoint.clone();
        c.setup(&base, "db", "c").await;
        let mut n = 0;
        refusal = loop {
            let mut doc = numbered(n);
            doc["pad"] = serde_json::json!(format!("{n}-").repeat(400));
            let r = c.create_item(&base, "db", "c", &doc).await;
            if r.status != 201 {
                break r;
            }
            acked.push(n);
            n += 1;
            assert!(n < 5000, "the disk never filled");
        };
        // Every later write is refused as well, and not applied: what is served does not drift
        // from what a restart loads. Reads go on.
        let late = numbered(999_999);
        let r = c.create_item(&base, "db", "c", &late).await;
        assert_eq!(r.status, refusal.status, "{r:?}");
        let r = c
            .read_item(&base, "db", "c", "i999999", &late["pk"], &[])
            .await;
        assert_eq!(r.status, 404, "a refused write is served: {r:?}");
        let first = numbered(acked[0]);
        let r = c
            .read_item(
                &base,
                "db",
                "c",
                &format!("i{}", acked[0]),
                &first["pk"],
                &[],
            )
            .await;
        assert_eq!(r.status, 200, "{r:?}");
        // A compaction met the full disk first: its snapshot could not be written.
        let log = emu.log_text();
        assert!(log.contains("compaction failed"), "{log}");
        emu.kill_hard();
    }
    assert!(
        refusal.status == 503 || refusal.status == 507,
        "{refusal:?}"
    );
    assert!(
        refusal.message().contains("No space left"),
        "the refusal says why: {}",
        refusal.message()
    );
    // Still full: the start cannot write its snapshot and says so, or serves everything.
    let text = refused(&dir, &[]);
    assert!(text.contains("No space left"), "{text}");
    // With room again, every acknowledged write is there.
    std::fs::remove_file(&filler).unwrap();
    let emu = start(&dir, &[]);
    for &n in &acked {
        let doc = numbered(n);
        let r = c
            .read_item(&emu.endpoint, "db", "c", &format!("i{n}"), &doc["pk"], &[])
            .await;
        assert_eq!(r.status, 200, "acknowledged item {n}: {r:?}");
        assert_eq!(r.json()["pad"], json_pad(n));
    }
    println!("{} acknowledged writes kept after a full disk", acked.len());
    drop(emu);
}

fn json_pad(n: usize) -> serde_json::Value {
    serde_json::json!(format!("{n}-").repeat(400))
}

#[tokio::test]
async fn a_compaction_whose_snapshot_fails_keeps_the_log_and_the_next_one_starts_a_new_log() {
    let dir = fresh_dir("compact-fails");
    let c = TestClient::new(WELL_KNOWN_KEY);
    {
        let mut emu = start(&dir, &["--compact-log-bytes", "4096"]);
        let base = emu.endpoint.clone();
        let base = base.as_str();
        // The first compaction's snapshot (generation 2) cannot be written: a directory holds
        // its temporary name. Its log goes on; the next compaction must not start over it.
        std::fs::create_dir(dir.join(format!("snapshot-{:016x}.tmp", 2))).unwrap();
        c.setup(base, "db", "c").await;
        write_numbered(&c, base, 0, 120).await;
        // Compactions run beside the writes: wait (at most 30 s) until one after the failed
        // one is done.
        let started = std::time::Instant::now();
        let later = |dir: &Path| {
            files(dir, "snapshot-")
                .iter()
                .any(|s| name(s) > format!("snapshot-{:016x}", 2))
        };
        let mut n = 120;
        while !later(&dir) && started.elapsed() < Duration::from_secs(30) {
            write_numbered(&c, base, n, n + 1).await;
            n += 1;
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let compacted = later(&dir);
        write_numbered(&c, base, n, n + 20).await;
        let all = n + 20;
        emu.terminate();
        // The restart waits for the stop: one emulator at a time uses a directory.
        assert!(
            emu.wait_exit(Duration::from_secs(30)).is_some(),
            "the first emulator stops"
        );
        let emu = start(&dir, &[]);
        let kept = served(&c, &emu.endpoint, all).await;
        println!("{kept} of {all} acknowledged items served after the restart");
        assert_eq!(kept, all, "every acknowledged item is kept");
        assert!(compacted, "a later compaction ran");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn an_embedded_emulator_refuses_a_damaged_directory_unless_told_to_recover() {
    let (dir, log) = with_items_in_log("embedded").await;
    let size = len(&log) as usize;
    flip_byte(&log, size / 2);
    let Err(refused) = cosmos_emulator::EmulatorBuilder::new()
        .data_dir(&dir)
        .start()
        .await
    else {
        panic!("a damaged directory refuses the start");
    };
    assert!(
        refused.0.contains(&name(&log)) && refused.0.contains("offset"),
        "{refused}"
    );
    assert!(set_aside(&dir).is_empty() && log.exists());
    let emu = cosmos_emulator::EmulatorBuilder::new()
        .data_dir(&dir)
        .recover(true)
        .start()
        .await
        .expect("recover starts");
    let c = TestClient::new(WELL_KNOWN_KEY);
    let kept = served(&c, emu.endpoint(), ITEMS).await;
    assert!(kept > 0 && kept < ITEMS, "{kept}");
    assert!(set_aside(&dir).iter().any(|p| name(p) == name(&log)));
    drop(emu);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_second_emulator_on_a_directory_in_use_is_refused_and_changes_nothing() {
    let dir = fresh_dir("in-use");
    let c = TestClient::new(WELL_KNOWN_KEY);
    let emu = start(&dir, &[]);
    c.setup(&emu.endpoint, "db", "c").await;
    write_numbered(&c, &emu.endpoint, 0, ITEMS).await;
    let before: Vec<(String, u64)> = files(&dir, "").iter().map(|f| (name(f), len(f))).collect();
    let said = refused(&dir, &[]);
    assert!(said.contains("in use by another emulator"), "{said}");
    let after: Vec<(String, u64)> = files(&dir, "").iter().map(|f| (name(f), len(f))).collect();
    assert_eq!(before, after, "the refused start changed the directory");
    assert_eq!(served(&c, &emu.endpoint, ITEMS).await, ITEMS);
    write_numbered(&c, &emu.endpoint, ITEMS, ITEMS + 1).await;
    drop(emu);
    let _ = std::fs::remove_dir_all(&dir);
}

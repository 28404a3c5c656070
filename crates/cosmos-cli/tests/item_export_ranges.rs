//! `cosmos item export` on a container of several partition key ranges, against an emulator
//! started by the test: the ranges are read at once, every document comes out, and a stopped
//! export resumes with each document exactly once.

use std::collections::BTreeMap;

use cosmos_emulator::EmulatorBuilder;
use serde_json::{json, Value};

use crate::common::{self, Cli};

async fn emulator(rules: Option<&str>) -> (cosmos_emulator::Emulator, Cli) {
    let mut builder = EmulatorBuilder::new().partitions(4);
    if let Some(rules) = rules {
        builder = builder.fault_rules_json(rules.as_bytes().to_vec());
    }
    let emulator = builder.start().await.expect("emulator starts");
    let cli = Cli {
        endpoint: emulator.endpoint().to_owned(),
        key: emulator.key().to_owned(),
    };
    (emulator, cli)
}

/// A container of four ranges holding `n` documents.
async fn filled(cli: &Cli, n: usize) {
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
    let file = std::env::temp_dir().join(format!(
        "cosmos-cli-ranges-{}-{n}.jsonl",
        std::process::id()
    ));
    let text: String = (0..n)
        .map(|i| {
            format!(
                "{}\n",
                json!({"id": format!("d{i}"), "pk": format!("p{}", i % 41), "n": i})
            )
        })
        .collect();
    std::fs::write(&file, text).unwrap();
    let out = cli
        .run(&[
            "item",
            "import",
            "--db",
            "x",
            "--container",
            "c",
            "--quiet",
            file.to_str().unwrap(),
        ])
        .await;
    common::succeeded(&out, "import");
    let _ = std::fs::remove_file(&file);
}

fn summary(stderr: &[u8]) -> Value {
    let text = String::from_utf8_lossy(stderr);
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find_map(|v| v.get("summary").cloned())
        .unwrap_or_else(|| panic!("no summary on stderr: {text}"))
}

async fn export(cli: &Cli, extra: &[&str]) -> (String, Value) {
    let mut args = vec!["item", "export", "--db", "x", "--container", "c", "--quiet"];
    args.extend_from_slice(extra);
    let out = cli.run(&args).await;
    let stdout = common::succeeded(&out, "export");
    (stdout, summary(&out.stderr))
}

/// How many times each `n` was exported.
fn counts(jsonl: &str) -> BTreeMap<u64, usize> {
    let mut seen = BTreeMap::new();
    for line in jsonl.lines() {
        let v: Value = serde_json::from_str(line).expect("a line is JSON");
        *seen.entry(v["n"].as_u64().unwrap()).or_default() += 1;
    }
    seen
}

fn each_once(n: usize) -> BTreeMap<u64, usize> {
    (0..n as u64).map(|i| (i, 1)).collect()
}

/// Every query request waits 250 ms: read one after another, the 4 ranges' 16 pages or more take at least
/// 4 s; read 4 at a time, about a quarter of that (plus the plans).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ranges_are_read_at_once_and_every_document_comes_out() {
    let rules = r#"{"rules":[{"ops":["query"],"reaction":{"delay":{"fixed_ms":250}}}]}"#;
    let (_emulator, cli) = emulator(Some(rules)).await;
    filled(&cli, 400).await;
    let (out, s) = export(&cli, &["--max-item-count", "25"]).await;
    assert_eq!(counts(&out), each_once(400));
    assert_eq!(s["complete"], true, "{s}");
    let seconds = s["seconds"].as_f64().unwrap();
    eprintln!("export of 4 ranges: {s}");
    assert!(seconds < 2.5, "ranges read one after another: {s}");
}

/// Stopped every 3 pages and resumed from the printed continuation until complete: each document
/// once, whatever ranges were in flight when it stopped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_export_resumes_with_every_document_once() {
    let (_emulator, cli) = emulator(None).await;
    filled(&cli, 700).await;
    let mut all = String::new();
    let mut token: Option<String> = None;
    for round in 0.. {
        assert!(round < 40, "the export ends");
        let mut args = vec!["--max-item-count", "30", "--max-pages", "3"];
        if let Some(t) = &token {
            args.extend_from_slice(&["--continuation", t]);
        }
        let (out, s) = export(&cli, &args).await;
        all.push_str(&out);
        assert_eq!(
            s["exported"].as_u64(),
            Some(out.lines().count() as u64),
            "{s}"
        );
        if s["complete"] == true {
            assert!(s.get("continuation").is_none(), "{s}");
            break;
        }
        token = Some(
            s["continuation"]
                .as_str()
                .expect("a continuation")
                .to_owned(),
        );
    }
    assert_eq!(counts(&all), each_once(700));

    // A token that is not one is refused before reading.
    let out = cli
        .run(&[
            "item",
            "export",
            "--db",
            "x",
            "--container",
            "c",
            "--continuation",
            "r1.!!",
        ])
        .await;
    assert!(!out.status.success());
    assert!(out.stdout.is_empty());
}

/// An ORDER BY query is not split by range: it comes out whole and in order, and resumes from
/// the single query's continuation.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ordered_query_runs_as_one_query_in_order() {
    let (_emulator, cli) = emulator(None).await;
    filled(&cli, 300).await;
    let q = "SELECT * FROM c ORDER BY c.n";
    let common = ["--query", q, "--max-item-count", "50"];
    let mut args = common.to_vec();
    args.extend_from_slice(&["--max-pages", "2"]);
    let (first, s) = export(&cli, &args).await;
    let token = s["continuation"]
        .as_str()
        .expect("a continuation")
        .to_owned();
    assert!(!token.starts_with("r1."), "a single query's token: {s}");
    let mut args = common.to_vec();
    args.extend_from_slice(&["--continuation", &token]);
    let (rest, s) = export(&cli, &args).await;
    assert_eq!(s["complete"], true, "{s}");
    let ns: Vec<u64> = format!("{first}{rest}")
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["n"]
                .as_u64()
                .unwrap()
        })
        .collect();
    assert_eq!(ns, (0..300).collect::<Vec<u64>>());
}

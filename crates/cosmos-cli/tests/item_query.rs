//! `cosmos item query` against an emulator started by the test, over real HTTP.

use std::process::{Command, Output};

use cosmos_emulator::EmulatorBuilder;
use serde_json::{json, Value};

async fn run(endpoint: &str, key: &str, args: &[&str]) -> Output {
    let (endpoint, key) = (endpoint.to_owned(), key.to_owned());
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_cosmos"))
            .args(&args)
            .env("COSMOS_ENDPOINT", endpoint)
            .env("COSMOS_KEY", key)
            .env_remove("RUST_LOG")
            .output()
            .expect("the cosmos binary runs")
    })
    .await
    .expect("the command task completes")
}

fn ok(out: &Output, what: &str) -> String {
    assert!(
        out.status.success(),
        "{what} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn query_prints_json_or_lines_and_resumes_from_its_token() {
    let emu = EmulatorBuilder::new()
        .start()
        .await
        .expect("emulator starts");
    let (e, k) = (emu.endpoint().to_owned(), emu.key().to_owned());
    ok(&run(&e, &k, &["db", "create", "shop"]).await, "db create");
    ok(
        &run(&e, &k, &["container", "create", "--db", "shop", "orders"]).await,
        "container create",
    );
    for i in 0..7 {
        let body = json!({"id": format!("o{i}"), "pk": "c-7", "n": i}).to_string();
        let args = [
            "item",
            "create",
            "--db",
            "shop",
            "--container",
            "orders",
            "--body",
            &body,
        ];
        ok(&run(&e, &k, &args).await, "item create");
    }
    let at = [
        "item",
        "query",
        "--db",
        "shop",
        "--container",
        "orders",
        "--pk",
        "c-7",
    ];
    let q = "SELECT VALUE c.n FROM c WHERE c.n >= @lo";

    let mut args = at.to_vec();
    args.extend([q, "--param", "@lo=2"]);
    let out = ok(&run(&e, &k, &args).await, "query");
    let all: Value = serde_json::from_str(&out).expect("a JSON array");
    assert_eq!(all, json!([2, 3, 4, 5, 6]));

    let mut args = at.to_vec();
    args.extend([q, "--param", "@lo=2", "--jsonl", "--max-item-count", "2"]);
    let out = ok(&run(&e, &k, &args).await, "query --jsonl");
    assert_eq!(
        out.lines().collect::<Vec<_>>(),
        vec!["2", "3", "4", "5", "6"]
    );

    let mut args = at.to_vec();
    args.extend([
        q,
        "--param",
        "@lo=2",
        "--max-item-count",
        "2",
        "--max-pages",
        "1",
        "--diagnostics",
    ]);
    let first = run(&e, &k, &args).await;
    assert_eq!(
        serde_json::from_str::<Value>(&ok(&first, "first page")).unwrap(),
        json!([2, 3])
    );
    let stderr = String::from_utf8_lossy(&first.stderr).into_owned();
    let token = stderr
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find_map(|v| v["continuation"].as_str().map(str::to_owned))
        .expect("the resume token on stderr");
    assert!(stderr.contains("query_summary"), "{stderr}");

    let mut args = at.to_vec();
    args.extend([q, "--param", "@lo=2", "--continuation", &token]);
    let rest = ok(&run(&e, &k, &args).await, "resumed");
    assert_eq!(
        serde_json::from_str::<Value>(&rest).unwrap(),
        json!([4, 5, 6])
    );

    let mut args = at.to_vec();
    args.extend([q, "--param", "@lo=3", "--continuation", &token]);
    let refused = run(&e, &k, &args).await;
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("different query"));

    let mut args = at.to_vec();
    args.extend([q, "--param", "lo=3"]);
    let refused = run(&e, &k, &args).await;
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("must start with '@'"));
}

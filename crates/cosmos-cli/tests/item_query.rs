//! `cosmos item query` against an emulator started by the test, over real HTTP.

use crate::common;

use common::{start, succeeded};
use serde_json::{json, Value};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn query_prints_json_or_lines_and_resumes_from_its_token() {
    let (_emu, cli) = start().await;
    cli.stdout(&["db", "create", "shop"]).await;
    cli.stdout(&["container", "create", "--db", "shop", "orders"])
        .await;
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
        cli.stdout(&args).await;
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
    let out = cli.stdout(&args).await;
    let all: Value = serde_json::from_str(&out).expect("a JSON array");
    assert_eq!(all, json!([2, 3, 4, 5, 6]));

    let mut args = at.to_vec();
    args.extend([q, "--param", "@lo=2", "--jsonl", "--max-item-count", "2"]);
    let out = cli.stdout(&args).await;
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
    let first = cli.run(&args).await;
    assert_eq!(
        serde_json::from_str::<Value>(&succeeded(&first, "first page")).unwrap(),
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
    let rest = cli.stdout(&args).await;
    assert_eq!(
        serde_json::from_str::<Value>(&rest).unwrap(),
        json!([4, 5, 6])
    );

    let mut args = at.to_vec();
    args.extend([q, "--param", "@lo=3", "--continuation", &token]);
    let refused = cli.run(&args).await;
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("different query"));

    let mut args = at.to_vec();
    args.extend([q, "--param", "lo=3"]);
    let refused = cli.run(&args).await;
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("must start with '@'"));
}

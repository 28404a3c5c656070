//! `cosmos db|container|item` against an emulator started by the test, over real HTTP.

use crate::common;

use common::{start, Cli};
use serde_json::Value;

const AT: [&str; 4] = ["--db", "shop", "--container", "orders"];

fn with<'a>(head: &[&'a str], tail: &[&'a str]) -> Vec<&'a str> {
    head.iter()
        .chain(AT.iter())
        .chain(tail.iter())
        .copied()
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn databases_and_containers() {
    let (_emulator, cli) = start().await;
    assert_eq!(cli.json(&["db", "create", "shop"]).await["id"], "shop");
    assert_eq!(cli.json(&["db", "read", "shop"]).await["id"], "shop");
    let list = cli.json(&["db", "list"]).await;
    assert!(
        list.as_array().unwrap().iter().any(|d| d["id"] == "shop"),
        "{list}"
    );
    let c = cli
        .json(&[
            "container",
            "create",
            "--db",
            "shop",
            "orders",
            "--partition-key",
            "/customer",
        ])
        .await;
    assert_eq!(c["partitionKey"]["paths"][0], "/customer");
    assert_eq!(
        cli.json(&["container", "read", "--db", "shop", "orders"])
            .await["id"],
        "orders"
    );
    let list = cli.json(&["container", "list", "--db", "shop"]).await;
    assert_eq!(list.as_array().unwrap().len(), 1, "{list}");
    let err = cli
        .fails(&["container", "create", "--db", "shop", "orders"])
        .await;
    assert!(err.contains("status 409"), "{err}");
    assert_eq!(
        cli.json(&["container", "delete", "--db", "shop", "orders"])
            .await["deleted"],
        "orders"
    );
    assert_eq!(cli.json(&["db", "delete", "shop"]).await["deleted"], "shop");
    let err = cli.fails(&["db", "read", "shop"]).await;
    assert!(err.contains("status 404, sub-status 0"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn item_lifecycle() {
    let (_emulator, cli) = start().await;
    cli.json(&["db", "create", "shop"]).await;
    cli.json(&[
        "container",
        "create",
        "--db",
        "shop",
        "orders",
        "--partition-key",
        "/customer",
    ])
    .await;

    // Create: the partition key comes from the body.
    let created = cli
        .json(&with(
            &["item", "create"],
            &["--body", r#"{"id":"o1","customer":"ann","total":3}"#],
        ))
        .await;
    assert_eq!(created["total"], 3);
    let etag = created["_etag"].as_str().expect("an etag").to_owned();

    let got = cli
        .json(&with(&["item", "get"], &["--pk", "ann", "o1"]))
        .await;
    assert_eq!(got["customer"], "ann");

    // Replace with the current etag succeeds; with the old one it answers 412.
    let replaced = cli
        .json(&with(
            &["item", "replace"],
            &[
                "--if-match",
                &etag,
                "--body",
                r#"{"id":"o1","customer":"ann","total":4}"#,
            ],
        ))
        .await;
    assert_eq!(replaced["total"], 4);
    let err = cli
        .fails(&with(
            &["item", "replace"],
            &[
                "--if-match",
                &etag,
                "--body",
                r#"{"id":"o1","customer":"ann","total":5}"#,
            ],
        ))
        .await;
    assert!(err.contains("status 412"), "{err}");

    // Upsert from a file, then list.
    let path = std::env::temp_dir().join(format!("cosmos-cli-item-{}.json", std::process::id()));
    std::fs::write(&path, r#"{"id":"o2","customer":"bob","total":7}"#).unwrap();
    let body_arg = format!("@{}", path.display());
    assert_eq!(
        cli.json(&with(&["item", "upsert"], &["--body", &body_arg]))
            .await["total"],
        7
    );
    std::fs::remove_file(&path).unwrap();
    let listed = cli
        .json(&["item", "list", "--db", "shop", "--container", "orders"])
        .await;
    let ids: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|d| d["id"].as_str())
        .collect();
    assert_eq!(ids.len(), 2, "{listed}");
    assert!(ids.contains(&"o1") && ids.contains(&"o2"));
    let one = cli
        .json(&[
            "item",
            "list",
            "--db",
            "shop",
            "--container",
            "orders",
            "--max",
            "1",
        ])
        .await;
    assert_eq!(one.as_array().unwrap().len(), 1);
    // Stopped at --max with more left, it says so on stderr; at exactly every item, it does not.
    let list_max = |max: &'static str| {
        let args = [
            "item",
            "list",
            "--db",
            "shop",
            "--container",
            "orders",
            "--max",
            max,
        ];
        let cli = &cli;
        async move { cli.run(&args).await }
    };
    let out = list_max("1").await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(r#""stopped_at_max":1"#), "{stderr}");
    let out = list_max("2").await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && !stderr.contains("stopped_at_max"),
        "{stderr}"
    );

    // Diagnostics: status, charge and one request row; the key appears nowhere.
    let out = cli
        .run(&with(
            &["item", "get"],
            &["--pk", "bob", "o2", "--diagnostics"],
        ))
        .await;
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["status"], 200);
    assert_eq!(v["result"]["id"], "o2");
    assert!(v["request_charge"].as_f64().unwrap() > 0.0);
    assert_eq!(v["diagnostics"]["requests"].as_array().unwrap().len(), 1);
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!all.contains(&cli.key), "the key leaked into the output");

    // Patch with flags, applied in the order given.
    let patched = cli
        .json(&with(
            &["item", "patch"],
            &[
                "--pk",
                "bob",
                "o2",
                "--incr",
                "/total=3",
                "--set",
                "/tags=[\"a\"]",
                "--add",
                "/tags/-=b",
                "--move",
                "/total:/sum",
                "--remove",
                "/tags/0",
            ],
        ))
        .await;
    assert_eq!(patched["sum"], 10);
    assert!(patched.get("total").is_none(), "{patched}");
    assert_eq!(patched["tags"], serde_json::json!(["b"]));
    let patched = cli
        .json(&with(
            &["item", "patch"],
            &[
                "--pk",
                "bob",
                "o2",
                "--ops",
                r#"[{"op":"incr","path":"/sum","value":-1}]"#,
            ],
        ))
        .await;
    assert_eq!(patched["sum"], 9);
    let err = cli
        .fails(&with(
            &["item", "patch"],
            &["--pk", "bob", "o2", "--remove", "/absent"],
        ))
        .await;
    assert!(
        err.contains("status 400") || err.contains("absent"),
        "{err}"
    );

    // Delete, then the item is gone.
    assert_eq!(
        cli.json(&with(&["item", "delete"], &["--pk", "ann", "o1"]))
            .await["deleted"],
        "o1"
    );
    let err = cli
        .fails(&with(&["item", "get"], &["--pk", "ann", "o1"]))
        .await;
    assert!(err.contains("status 404"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_is_refused_with_a_reason() {
    let (_emulator, cli) = start().await;
    let err = cli
        .fails(&with(&["item", "create"], &["--body", "{not json"]))
        .await;
    assert!(err.contains("--body is not valid JSON"), "{err}");
    let err = cli.fails(&with(&["item", "get"], &["o1"])).await;
    assert!(err.contains("--pk"), "{err}");
    let err = cli
        .fails(&with(&["item", "patch"], &["--pk", "p", "o1"]))
        .await;
    assert!(err.contains("no patch operations"), "{err}");
    let err = cli
        .fails(&with(
            &["item", "patch"],
            &["--pk", "p", "o1", "--incr", "/n=many"],
        ))
        .await;
    assert!(err.contains("not a number"), "{err}");
    // A wrong key is answered 401 by the emulator; the key itself is never printed.
    let wrong = Cli {
        endpoint: cli.endpoint.clone(),
        key: "d3Jvbmcta2V5LXdyb25nLWtleQ==".into(),
    };
    let err = wrong.fails(&["db", "list"]).await;
    assert!(err.contains("401") && !err.contains(&wrong.key), "{err}");
    // No endpoint at all.
    let none = Cli {
        endpoint: String::new(),
        key: String::new(),
    };
    let err = none.fails(&["db", "list"]).await;
    assert!(err.contains("COSMOS_ENDPOINT"), "{err}");
}

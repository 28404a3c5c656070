//! `--priority` and `--throughput-bucket` on every data command, through the `cosmos` binary against
//! an emulator over real HTTP: the emulator refuses (400, sub-status 4242) exactly the requests
//! that carry `x-ms-cosmos-priority-level: Low` or `x-ms-cosmos-throughput-bucket: 2`, so each
//! command fails with the flag and succeeds without it. `cosmos container throughput` shows and
//! sets a container's bucket caps.

use crate::common;

use common::{start, Cli};
use cosmos_emulator::faults::{FaultRule, Reaction};
use cosmos_emulator::EmulatorBuilder;
use std::time::Duration;

const AT: [&str; 4] = ["--db", "cls", "--container", "c"];

/// `cosmos item SUB --db cls --container c REST...`.
fn item<'a>(sub: &'a str, rest: &[&'a str]) -> Vec<&'a str> {
    let mut v = vec!["item", sub];
    v.extend_from_slice(&AT);
    v.extend_from_slice(rest);
    v
}

/// Every data command, as it succeeds on the seeded container (item "a" in partition "p", stored
/// procedure "noop").
fn data_commands() -> Vec<Vec<&'static str>> {
    vec![
        item("get", &["--pk", "p", "a"]),
        item("create", &["--body", r#"{"id":"new","pk":"p"}"#]),
        item("upsert", &["--body", r#"{"id":"a","pk":"p","n":1}"#]),
        item(
            "replace",
            &["--pk", "p", "a", "--body", r#"{"id":"a","pk":"p","n":2}"#],
        ),
        item("patch", &["--pk", "p", "a", "--set", "/n=3"]),
        item("query", &["SELECT * FROM c"]),
        item("list", &[]),
        item("export", &["--quiet"]),
        item("delete", &["--pk", "gone", "--all"]),
        vec![
            "sproc",
            "execute",
            "--db",
            "cls",
            "--container",
            "c",
            "--pk",
            "p",
            "noop",
        ],
        item("delete", &["--pk", "p", "a"]),
    ]
}

async fn seed(cli: &Cli) {
    cli.json(&["db", "create", "cls"]).await;
    cli.json(&["container", "create", "--db", "cls", "c"]).await;
    cli.json(&item("create", &["--body", r#"{"id":"a","pk":"p"}"#]))
        .await;
    let mut sproc = vec!["sproc", "create"];
    sproc.extend_from_slice(&AT);
    sproc.extend_from_slice(&[
        "noop",
        "--body",
        "function () { getContext().getResponse().setBody(1); }",
    ]);
    cli.json(&sproc).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn priority_and_bucket_reach_the_requests_of_every_data_command() {
    let (emulator, cli) = start().await;
    seed(&cli).await;
    let _low = emulator.faults().add(
        FaultRule::new(Reaction::respond(400, 4242))
            .with_header("x-ms-cosmos-priority-level", "Low"),
    );
    let _two = emulator.faults().add(
        FaultRule::new(Reaction::respond(400, 4242))
            .with_header("x-ms-cosmos-throughput-bucket", "2"),
    );
    for command in data_commands() {
        for flags in [["--priority", "low"], ["--throughput-bucket", "2"]] {
            let mut args = command.clone();
            args.extend_from_slice(&flags);
            let out = cli.run(&args).await;
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(
                !out.status.success(),
                "{args:?} succeeded: the flag was not sent"
            );
            assert!(err.contains("4242"), "{args:?}: {err}");
        }
        // High priority and another bucket are served.
        let mut args = command.clone();
        args.extend_from_slice(&["--priority", "high", "--throughput-bucket", "1"]);
        let out = cli.run(&args).await;
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{args:?}: {err}");
    }
    // A bucket outside 1 to 5 is refused before anything is sent.
    let mut args = item("get", &["--pk", "p", "a"]);
    args.extend_from_slice(&["--throughput-bucket", "6"]);
    let err = cli.fails(&args).await;
    assert!(err.contains("1 to 5"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn container_throughput_shows_and_sets_bucket_caps() {
    // The caps change three times here: no interval between changes.
    let emulator = EmulatorBuilder::new()
        .bucket_change_interval(Duration::ZERO)
        .start()
        .await
        .expect("emulator starts");
    let cli = Cli {
        endpoint: emulator.endpoint().to_owned(),
        key: emulator.key().to_owned(),
    };
    seed(&cli).await;
    let show = ["container", "throughput", "--db", "cls", "c"];
    let before = cli.json(&show).await;
    assert_eq!(before["throughput"], 400, "{before}");
    assert_eq!(
        before["throughputBuckets"],
        serde_json::json!([]),
        "{before}"
    );
    let mut set = show.to_vec();
    set.extend_from_slice(&["--bucket", "1=20", "--bucket", "2=50"]);
    let after = cli.json(&set).await;
    let want = serde_json::json!([
        {"id": 1, "maxThroughputPercentage": 20},
        {"id": 2, "maxThroughputPercentage": 50}
    ]);
    assert_eq!(after["throughputBuckets"], want, "{after}");
    assert_eq!(cli.json(&show).await["throughputBuckets"], want);
    // --default-bucket marks one of the buckets given as the default, and the show marks it.
    let mut with_default = show.to_vec();
    with_default.extend_from_slice(&[
        "--bucket",
        "1=20",
        "--bucket",
        "2=50",
        "--default-bucket",
        "2",
    ]);
    let want = serde_json::json!([
        {"id": 1, "maxThroughputPercentage": 20},
        {"id": 2, "maxThroughputPercentage": 50, "isDefaultBucket": true}
    ]);
    assert_eq!(cli.json(&with_default).await["throughputBuckets"], want);
    assert_eq!(cli.json(&show).await["throughputBuckets"], want);
    // The default must be one of the buckets given.
    let mut stray = show.to_vec();
    stray.extend_from_slice(&["--bucket", "1=20", "--default-bucket", "3"]);
    let err = cli.fails(&stray).await;
    assert!(err.contains("--default-bucket"), "{err}");
    let mut clear = show.to_vec();
    clear.push("--clear-buckets");
    assert_eq!(
        cli.json(&clear).await["throughputBuckets"],
        serde_json::json!([])
    );
    for bad in ["0=20", "6=20", "1=0", "1=101", "1", "x=2", "1=20%"] {
        let mut args = show.to_vec();
        args.extend_from_slice(&["--bucket", bad]);
        let err = cli.fails(&args).await;
        assert!(err.contains("--bucket"), "{bad}: {err}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bench_sends_the_class_on_its_measured_operations() {
    let (emulator, cli) = start().await;
    let _low = emulator.faults().add(
        FaultRule::new(Reaction::respond(400, 4242))
            .with_header("x-ms-cosmos-priority-level", "Low"),
    );
    let _two = emulator.faults().add(
        FaultRule::new(Reaction::respond(400, 4242))
            .with_header("x-ms-cosmos-throughput-bucket", "2"),
    );
    let bench = |class: [&'static str; 2]| {
        let cli = &cli;
        async move {
            let mut args = vec![
                "bench",
                "--items",
                "5",
                "--ops",
                "10",
                "--rate",
                "0",
                "--concurrency",
                "2",
                "--warmup",
                "0s",
            ];
            args.extend_from_slice(&class);
            cli.run(&args).await
        }
    };
    for refused in [["--priority", "low"], ["--throughput-bucket", "2"]] {
        let out = bench(refused).await;
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{refused:?}: the class was not sent");
        assert!(
            err.contains("measured operations failed"),
            "{refused:?}: {err}"
        );
    }
    let out = bench(["--priority", "high"]).await;
    common::succeeded(&out, "bench --priority high");
}

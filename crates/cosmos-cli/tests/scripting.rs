//! `cosmos` in scripts: exit statuses by class, the key from a file or standard input, the charge
//! on stderr, the help, the plain-http refusal, completions, and `bench --allow-errors`.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use cosmos_emulator::faults::{FaultRule, OpKind, Reaction};
use serde_json::Value;

use crate::common::{self, start};

/// Runs `cosmos ARGS` with `env` (and nothing of the caller's COSMOS_* variables), feeding `stdin`.
async fn run(args: &[&str], env: &[(&str, &str)], stdin: &[u8]) -> Output {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let env: Vec<(String, String)> = env
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let stdin = stdin.to_vec();
    tokio::task::spawn_blocking(move || {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_cosmos"));
        cmd.args(&args)
            .env_remove("RUST_LOG")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, _) in std::env::vars() {
            if k.starts_with("COSMOS_") {
                cmd.env_remove(k);
            }
        }
        cmd.envs(env);
        let mut child = cmd.spawn().expect("the cosmos binary runs");
        let mut input = child.stdin.take().unwrap();
        // A command that does not read its input may have exited already.
        let _ = input.write_all(&stdin);
        drop(input);
        child.wait_with_output().expect("cosmos finishes")
    })
    .await
    .expect("the command task completes")
}

fn code(out: &Output) -> i32 {
    out.status.code().expect("exited, not killed")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

const AT: [&str; 6] = ["--db", "shop", "--container", "orders", "--pk", "ann"];

fn item<'a>(verb: &'a str, tail: &[&'a str]) -> Vec<&'a str> {
    ["item", verb]
        .iter()
        .chain(AT.iter())
        .chain(tail.iter())
        .copied()
        .collect()
}

async fn shop(cli: &common::Cli) {
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
    cli.json(&item(
        "create",
        &["--body", r#"{"id":"o1","customer":"ann"}"#],
    ))
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exit_statuses_tell_the_class_of_failure() {
    let (emulator, cli) = start().await;
    shop(&cli).await;
    let env = [
        ("COSMOS_ENDPOINT", cli.endpoint.as_str()),
        ("COSMOS_KEY", cli.key.as_str()),
    ];
    let bad_key = [
        ("COSMOS_ENDPOINT", cli.endpoint.as_str()),
        ("COSMOS_KEY", "d3Jvbmcta2V5LXdyb25nLWtleQ=="),
    ];
    let missing = item("get", &["nope"]);
    let duplicate = item("create", &["--body", r#"{"id":"o1","customer":"ann"}"#]);
    let stale = item(
        "replace",
        &[
            "--body",
            r#"{"id":"o1","customer":"ann"}"#,
            "--if-match",
            "\"0\"",
        ],
    );
    let bad_body = item("create", &["--body", "{not json"]);
    let bad_doc = item("create", &["--body", r#"{"id":"a/b","customer":"ann"}"#]);
    let unreachable = [
        ("COSMOS_ENDPOINT", "http://127.0.0.1:1/"),
        ("COSMOS_KEY", cli.key.as_str()),
    ];
    // (what, arguments, environment, exit status)
    type Case<'a> = (&'a str, Vec<&'a str>, &'a [(&'a str, &'a str)], i32);
    let cases: Vec<Case> = vec![
        ("not found", missing.clone(), &env, 4),
        ("conflict", duplicate, &env, 5),
        ("precondition", stale, &env, 5),
        ("bad body", bad_body, &env, 3),
        ("bad id", bad_doc, &env, 3),
        ("auth", vec!["db", "read", "shop"], &bad_key, 7),
        ("unreachable", vec!["db", "list"], &unreachable, 8),
        ("no endpoint", vec!["db", "list"], &[], 2),
        ("unknown flag", vec!["db", "list", "--bogus"], &env, 2),
    ];
    for (what, args, env, want) in cases {
        let out = run(&args, env, b"").await;
        assert_eq!(code(&out), want, "{what}: {args:?}: {}", stderr(&out));
        assert!(
            out.stdout.is_empty(),
            "{what}: a failure prints nothing on stdout"
        );
    }
    // Throttled past every retry: reads answer 429 with a short retry-after.
    let _throttle = emulator
        .faults()
        .add(FaultRule::new(Reaction::respond_retry_after(429, 3200, 1)).for_ops([OpKind::Read]));
    let out = run(&item("get", &["o1"]), &env, b"").await;
    assert_eq!(code(&out), 6, "{}", stderr(&out));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_key_comes_from_a_file_or_standard_input() {
    let (_emulator, cli) = start().await;
    shop(&cli).await;
    let endpoint = [("COSMOS_ENDPOINT", cli.endpoint.as_str())];
    let dir = std::env::temp_dir().join(format!("cosmos-cli-key-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let key_file = dir.join("key");
    std::fs::write(&key_file, format!("{}\n", cli.key)).unwrap();
    let key_path = key_file.to_str().unwrap();
    let get = item("get", &["o1"]);
    let with = |extra: &[&'static str]| -> Vec<String> {
        get.iter()
            .map(|s| s.to_string())
            .chain(extra.iter().map(|s| s.to_string()))
            .collect()
    };
    let file_args: Vec<String> = with(&[])
        .into_iter()
        .chain(["--key-file".into(), key_path.into()])
        .collect();
    let file_args: Vec<&str> = file_args.iter().map(String::as_str).collect();
    let out = run(&file_args, &endpoint, b"").await;
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["id"], "o1");

    for flag in [&["--key-stdin"][..], &["--key", "-"][..]] {
        let args = with(flag);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = run(&args, &endpoint, format!("{}\n", cli.key).as_bytes()).await;
        assert_eq!(code(&out), 0, "{flag:?}: {}", stderr(&out));
        assert_eq!(
            serde_json::from_slice::<Value>(&out.stdout).unwrap()["id"],
            "o1"
        );
    }

    // An empty key, and the key and the body both on standard input, are usage errors.
    let out = run(
        &with(&["--key-stdin"])
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
        &endpoint,
        b"\n",
    )
    .await;
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(stderr(&out).contains("empty"), "{}", stderr(&out));
    let both = item("create", &["--body", "-", "--key-stdin"]);
    let out = run(&both, &endpoint, b"{}").await;
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(stderr(&out).contains("standard input"), "{}", stderr(&out));
    // A wrong key read from a file is refused by the service, and the key is never echoed.
    std::fs::write(&key_file, "d3Jvbmcta2V5LXdyb25nLWtleQ==").unwrap();
    let out = run(&file_args, &endpoint, b"").await;
    assert_eq!(code(&out), 7, "{}", stderr(&out));
    assert!(!stderr(&out).contains("d3Jvbmcta2V5"), "{}", stderr(&out));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn item_commands_put_their_charge_on_stderr() {
    let (_emulator, cli) = start().await;
    shop(&cli).await;
    let charge = |out: &Output| -> f64 {
        let text = stderr(out);
        let line = text
            .lines()
            .find(|l| l.contains("request_charge"))
            .unwrap_or_else(|| panic!("no charge on stderr: {text}"));
        let v: Value = serde_json::from_str(line).expect("the charge line is JSON");
        v["request_charge"].as_f64().expect("a number")
    };
    let body = r#"{"id":"o2","customer":"ann","n":1}"#;
    let out = cli.run(&item("create", &["--body", body])).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).expect("stdout is the document alone");
    assert_eq!(
        (doc["id"].as_str(), doc["n"].as_i64()),
        (Some("o2"), Some(1))
    );
    assert!(charge(&out) > 0.0);
    for args in [
        item("get", &["o2"]),
        vec!["item", "list", "--db", "shop", "--container", "orders"],
        item("query", &["SELECT * FROM c"]),
        item("delete", &["o2"]),
    ] {
        let out = cli.run(&args).await;
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        serde_json::from_slice::<Value>(&out.stdout).expect("stdout is JSON alone");
        assert!(charge(&out) > 0.0, "{args:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn help_completions_and_plain_http() {
    let help = run(&["item", "get", "--help"], &[], b"").await;
    let text = String::from_utf8_lossy(&help.stdout).into_owned();
    assert_eq!(code(&help), 0);
    assert!(
        !text.contains("[env:"),
        "no empty env values in the help: {text}"
    );
    assert!(
        text.contains("COSMOS_ENDPOINT") && text.contains("--key-file"),
        "{text}"
    );
    let set = run(
        &["db", "--help"],
        &[
            ("COSMOS_ENDPOINT", "https://a.example/"),
            ("COSMOS_KEY", "a2V5"),
        ],
        b"",
    )
    .await;
    let text = String::from_utf8_lossy(&set.stdout).into_owned();
    assert!(!text.contains("a2V5") && !text.contains("[env:"), "{text}");
    assert!(!text.contains("required"), "{text}");
    let top = run(&["--help"], &[], b"").await;
    let text = String::from_utf8_lossy(&top.stdout).into_owned();
    assert!(
        text.contains("Exit status:") && text.contains("4  not found"),
        "{text}"
    );

    for (shell, needle) in [
        ("bash", "complete -F"),
        ("zsh", "#compdef cosmos"),
        ("fish", "complete -c cosmos"),
    ] {
        let out = run(&["completions", shell], &[], b"").await;
        let script = String::from_utf8_lossy(&out.stdout).into_owned();
        assert_eq!(code(&out), 0, "{shell}");
        assert!(
            script.contains(needle) && script.contains("item"),
            "{shell}: {script}"
        );
    }
    assert_eq!(code(&run(&["completions", "tcsh"], &[], b"").await), 2);

    let env = [
        ("COSMOS_ENDPOINT", "http://cosmos.internal:8081/"),
        ("COSMOS_KEY", "a2V5"),
    ];
    let out = run(&["db", "list"], &env, b"").await;
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    let e = stderr(&out);
    assert!(
        e.contains("--allow-insecure-http") && e.contains("COSMOS_ALLOW_INSECURE_HTTP"),
        "{e}"
    );
    assert!(
        !e.contains("allow_insecure_http"),
        "names the CLI's flag, not the driver's option: {e}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bench_fails_when_operations_fail_unless_allowed() {
    let (_emulator, cli) = start().await;
    // No such database: every read fails (404) and setup is skipped.
    let args = [
        "bench",
        "--skip-setup",
        "--db",
        "missing",
        "--ops",
        "20",
        "--warmup",
        "0s",
        "--hedging",
        "off",
        "--rate",
        "200",
    ];
    let env = [
        ("COSMOS_ENDPOINT", cli.endpoint.as_str()),
        ("COSMOS_KEY", cli.key.as_str()),
    ];
    let out = run(&args, &env, b"").await;
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert!(stderr(&out).contains("--allow-errors"), "{}", stderr(&out));
    let table = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        table.contains("errors by status"),
        "the results are printed first: {table}"
    );
    let allowed: Vec<&str> = args.iter().copied().chain(["--allow-errors"]).collect();
    let out = run(&allowed, &env, b"").await;
    assert_eq!(code(&out), 0, "{}", stderr(&out));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scripts_from_the_command_line_against_the_emulator() {
    let (_emulator, cli) = start().await;
    shop(&cli).await;
    let dir = std::env::temp_dir().join(format!("cosmos-cli-sproc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let js = dir.join("greet.js");
    std::fs::write(
        &js,
        "function greet(name) { console.log('greeting ' + name); \
         var c = getContext().getCollection(); \
         c.createDocument(c.getSelfLink(), {id: 'g-' + name, customer: 'ann'}, function (e) { if (e) throw e; }); \
         getContext().getResponse().setBody({hello: name}); }",
    )
    .unwrap();
    let at = ["--db", "shop", "--container", "orders"];
    let with = |head: &[&'static str], tail: &[&str]| -> Vec<String> {
        head.iter()
            .chain(at.iter())
            .chain(tail.iter())
            .map(|s| s.to_string())
            .collect()
    };
    let strs = |v: &[String]| {
        v.iter()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join("\u{1}")
    };
    let run_ok = |args: Vec<String>| {
        let cli = &cli;
        async move {
            let a: Vec<&str> = args.iter().map(String::as_str).collect();
            let out = cli.run(&a).await;
            assert!(out.status.success(), "{a:?}: {}", stderr(&out));
            out
        }
    };
    let body_arg = format!("@{}", js.display());
    let made = run_ok(with(&["sproc", "create"], &["greet", "--body", &body_arg])).await;
    let made: Value = serde_json::from_slice(&made.stdout).unwrap();
    assert_eq!(made["id"], "greet");

    let out = run_ok(with(
        &["sproc", "execute"],
        &["--pk", "ann", "greet", "--params", r#"["bob"]"#, "--log"],
    ))
    .await;
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer, serde_json::json!({"hello": "bob"}));
    let err = stderr(&out);
    assert!(err.contains(r#"{"script_log":"greeting bob"}"#), "{err}");
    assert!(err.contains("request_charge"), "{err}");
    let item = cli.json(&item("get", &["g-bob"])).await;
    assert_eq!(item["id"], "g-bob");

    let trig = run_ok(with(
        &["trigger", "create"],
        &[
            "stamp",
            "--body",
            "function () {}",
            "--type",
            "pre",
            "--operation",
            "create",
        ],
    ))
    .await;
    let trig: Value = serde_json::from_slice(&trig.stdout).unwrap();
    assert_eq!(
        (
            trig["triggerType"].as_str(),
            trig["triggerOperation"].as_str()
        ),
        (Some("Pre"), Some("Create"))
    );
    run_ok(with(
        &["udf", "create"],
        &["tax", "--body", "function (x) { return x * 2; }"],
    ))
    .await;
    let udfs = run_ok(with(&["udf", "list"], &[])).await;
    let udfs: Value = serde_json::from_slice(&udfs.stdout).unwrap();
    assert_eq!(udfs.as_array().map(|a| a.len()), Some(1), "{udfs}");
    let sprocs = run_ok(with(&["sproc", "list"], &[])).await;
    let sprocs: Value = serde_json::from_slice(&sprocs.stdout).unwrap();
    assert_eq!(sprocs[0]["id"], "greet");

    let dup = with(&["sproc", "create"], &["greet", "--body", "function () {}"]);
    let out = cli
        .run(&dup.iter().map(String::as_str).collect::<Vec<_>>())
        .await;
    assert_eq!(code(&out), 5, "{}", strs(&dup));
    run_ok(with(&["sproc", "delete"], &["greet"])).await;
    let gone = with(&["sproc", "read"], &["greet"]);
    let out = cli
        .run(&gone.iter().map(String::as_str).collect::<Vec<_>>())
        .await;
    assert_eq!(code(&out), 4, "{}", stderr(&out));
    std::fs::remove_dir_all(&dir).unwrap();
}

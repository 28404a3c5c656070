//! Scripts that call built-ins whose native loops never reach the runtime's interrupt handler:
//! answered within the time limit as a stored procedure and as a UDF in a query, no script thread
//! left running after the requests, SIGTERM still stopping the real binary within its grace
//! period; and `console.log` output bounded in the response header.

use crate::common;

use std::time::{Duration, Instant};

use common::process::EmulatorProcess;
use common::{start_with_container, TestClient};
use cosmos_emulator::{EmulatorBuilder, WELL_KNOWN_KEY};
use http::Method;
use serde_json::{json, Value};

const COLL: &str = "/dbs/db/colls/c";

/// The scripts' time limit (the default bound) and the slack the caller allows past it.
const LIMIT: Duration = Duration::from_millis(5_500);

/// The two attacks as they were found.
const ATTACKS: [(&str, &str); 2] = [
    (
        "copyWithin",
        "Array.prototype.copyWithin.call({length: 1e15}, 0, 1)",
    ),
    ("join", "new Array(2 ** 32 - 1).join('')"),
];

async fn create(c: &TestClient, base: &str, kind: &str, id: &str, body: &str) {
    let r = c
        .post_json(
            base,
            &format!("{COLL}/{kind}"),
            &[],
            &json!({"id": id, "body": body}),
        )
        .await;
    assert_eq!(r.status, 201, "{r:?}");
}

async fn execute(c: &TestClient, base: &str, id: &str, extra: &[(&str, &str)]) -> common::Resp {
    c.send_with_pk(
        base,
        Method::POST,
        &format!("{COLL}/sprocs/{id}"),
        &json!("p"),
        extra,
        Some(&json!([])),
    )
    .await
}

/// Threads named `cosmos-script` in process `pid`.
fn script_threads(pid: u32) -> usize {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0;
    };
    tasks
        .filter_map(Result::ok)
        .filter(|t| {
            std::fs::read_to_string(t.path().join("comm"))
                .is_ok_and(|name| name.trim() == "cosmos-script")
        })
        .count()
}

/// Child processes of process `pid` (started by any of its threads).
fn worker_processes(pid: u32) -> usize {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0;
    };
    tasks
        .filter_map(Result::ok)
        .map(|t| {
            std::fs::read_to_string(t.path().join("children"))
                .map(|c| c.split_whitespace().count())
                .unwrap_or(0)
        })
        .sum()
}

/// Waits up to a second for `pid`'s script threads and worker processes to end (an end may
/// trail its answer by a moment); returns how many are left.
async fn left_running(pid: u32) -> (usize, usize) {
    let waited = Instant::now();
    loop {
        let left = (script_threads(pid), worker_processes(pid));
        if left == (0, 0) || waited.elapsed() > Duration::from_secs(1) {
            return left;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn each_named_attack_is_answered_within_the_limit_on_threads() {
    named_attacks_answered_within_the_limit(EmulatorBuilder::new()).await;
}

#[tokio::test]
async fn each_named_attack_is_answered_within_the_limit_in_processes() {
    named_attacks_answered_within_the_limit(
        EmulatorBuilder::new().script_worker(env!("CARGO_BIN_EXE_cosmos-emulator")),
    )
    .await;
}

async fn named_attacks_answered_within_the_limit(builder: EmulatorBuilder) {
    let (emu, c) = start_with_container(builder).await;
    let base = emu.endpoint();
    c.create_item(base, "db", "c", &json!({"id": "one", "pk": "p"}))
        .await;
    for (name, attack) in ATTACKS {
        create(
            &c,
            base,
            "sprocs",
            name,
            &format!("function () {{ {attack}; }}"),
        )
        .await;
        create(
            &c,
            base,
            "udfs",
            name,
            &format!("function () {{ {attack}; return 1; }}"),
        )
        .await;
    }
    for (name, _) in ATTACKS {
        let started = Instant::now();
        let r = tokio::time::timeout(LIMIT + Duration::from_secs(1), execute(&c, base, name, &[]))
            .await
            .unwrap_or_else(|_| panic!("the procedure {name} was not answered within the limit"));
        assert_eq!(r.status, 408, "{name}: {r:?}");
        assert!(started.elapsed() < LIMIT, "{name}: {:?}", started.elapsed());
        let query = json!({"query": format!("SELECT VALUE udf.{name}() FROM c")});
        let q = tokio::time::timeout(
            LIMIT + Duration::from_secs(1),
            c.query(
                base,
                &format!("{COLL}/docs"),
                &query,
                &[("x-ms-documentdb-partitionkey", "[\"p\"]")],
            ),
        )
        .await
        .unwrap_or_else(|_| {
            panic!("the query calling udf.{name} was not answered within the limit")
        });
        assert_eq!(q.status, 400, "{name}: {q:?}");
        assert!(q.message().contains("ran past"), "{name}: {}", q.message());
    }
    // The attacks' threads were stopped, not left: the emulator still starts new scripts.
    let r = execute(&c, base, "copyWithin", &[]).await;
    assert_eq!(r.status, 408, "{r:?}");
}

#[tokio::test]
async fn an_eight_mebibyte_log_line_is_cut_at_the_cap_in_the_header() {
    let (emu, c) = start_with_container(EmulatorBuilder::new()).await;
    let base = emu.endpoint();
    let body = "function () { console.log('x'.repeat(8 * 1024 * 1024)); console.log('after'); getContext().getResponse().setBody('done'); }";
    create(&c, base, "sprocs", "loud", body).await;
    let r = execute(
        &c,
        base,
        "loud",
        &[("x-ms-documentdb-script-enable-logging", "true")],
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.status);
    let log = r
        .header("x-ms-documentdb-script-log-results")
        .expect("a log header");
    assert_eq!(log.len(), 8192);
    assert!(log.bytes().all(|b| b == b'x'));
}

type Stdout = std::io::Lines<std::io::BufReader<std::process::ChildStdout>>;

/// Starts the binary with a procedure and a UDF per attack; its standard output stays open (it
/// prints on the way out).
async fn binary_with_attacks() -> (EmulatorProcess, Stdout, TestClient, String) {
    let (server, stdout) = EmulatorProcess::start_with_stdout(&[])
        .unwrap_or_else(|log| panic!("the emulator did not start: {log}"));
    let c = TestClient::new(WELL_KNOWN_KEY);
    let base = server.endpoint.clone();
    c.setup(&base, "db", "c").await;
    c.create_item(&base, "db", "c", &json!({"id": "one", "pk": "p"}))
        .await;
    for (name, attack) in ATTACKS {
        create(
            &c,
            &base,
            "sprocs",
            name,
            &format!("function () {{ {attack}; }}"),
        )
        .await;
        create(
            &c,
            &base,
            "udfs",
            name,
            &format!("function () {{ {attack}; return 1; }}"),
        )
        .await;
    }
    (server, stdout, c, base)
}

#[tokio::test]
async fn no_script_thread_of_the_binary_outlives_its_request() {
    let (server, _stdout, c, base) = binary_with_attacks().await;
    let mut answers: Vec<Value> = Vec::new();
    for (name, _) in ATTACKS {
        for _ in 0..2 {
            let r = tokio::time::timeout(
                LIMIT + Duration::from_secs(1),
                execute(&c, &base, name, &[]),
            )
            .await
            .unwrap_or_else(|_| panic!("the procedure {name} was not answered within the limit"));
            answers.push(json!([name, r.status]));
            let query = json!({"query": format!("SELECT VALUE udf.{name}() FROM c")});
            let q = tokio::time::timeout(
                LIMIT + Duration::from_secs(1),
                c.query(
                    &base,
                    &format!("{COLL}/docs"),
                    &query,
                    &[("x-ms-documentdb-partitionkey", "[\"p\"]")],
                ),
            )
            .await
            .unwrap_or_else(|_| {
                panic!("the query calling udf.{name} was not answered within the limit")
            });
            answers.push(json!([name, q.status]));
        }
    }
    assert_eq!(
        answers,
        vec![
            json!(["copyWithin", 408]),
            json!(["copyWithin", 400]),
            json!(["copyWithin", 408]),
            json!(["copyWithin", 400]),
            json!(["join", 408]),
            json!(["join", 400]),
            json!(["join", 408]),
            json!(["join", 400]),
        ]
    );
    assert_eq!(
        left_running(server.pid()).await,
        (0, 0),
        "script threads or worker processes still running after their requests"
    );
}

#[tokio::test]
async fn sigterm_stops_the_binary_within_its_grace_period_while_scripts_run_away() {
    let (mut server, stdout, c, base) = binary_with_attacks().await;
    // Requests in flight, never awaited: the stop must not wait for their scripts beyond the grace.
    for (name, _) in ATTACKS {
        for _ in 0..2 {
            let (c, base) = (c.clone(), base.clone());
            tokio::spawn(async move {
                let _ = c
                    .try_send(
                        &base,
                        Method::POST,
                        &format!("{COLL}/sprocs/{name}"),
                        &[("x-ms-documentdb-partitionkey", "[\"p\"]")],
                        Some(b"[]"),
                    )
                    .await;
            });
        }
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let started = Instant::now();
    server.terminate();
    // The README's grace period is 10 s; the process must be gone by then (plus a margin to exit).
    let status = tokio::task::spawn_blocking(move || {
        // Reads what it prints on the way out, so it never blocks writing it.
        let printed = std::thread::spawn(move || stdout.map_while(Result::ok).collect::<Vec<_>>());
        let status = server.wait_exit(Duration::from_secs(11));
        drop(printed);
        (status, server)
    })
    .await
    .unwrap();
    let (status, server) = status;
    assert!(
        status.is_some(),
        "still running {:?} after SIGTERM; log: {}",
        started.elapsed(),
        server.log_text()
    );
    assert!(status.unwrap().success(), "{status:?}");
}

/// Plain JavaScript that no guard bounds: each missed lookup walks a prototype chain of 140,000
/// objects, and the runtime polls its interrupt handler only every 10,000 loop steps, so a thread
/// running it runs on for minutes after its request is answered at the limit.
const DEEP_CHAIN: &str = "var p = {}; for (var i = 0; i < 140000; i++) { p = Object.create(p); } \
    var n = 0; while (true) { if (p.a !== undefined || p.b !== undefined || p.c !== undefined) n++; }";

#[tokio::test]
async fn in_the_binary_nothing_of_a_deep_prototype_chain_outlives_its_request() {
    let server = EmulatorProcess::start(&[])
        .unwrap_or_else(|log| panic!("the emulator did not start: {log}"));
    let c = TestClient::new(WELL_KNOWN_KEY);
    let base = server.endpoint.clone();
    c.setup(&base, "db", "c").await;
    c.create_item(&base, "db", "c", &json!({"id": "one", "pk": "p"}))
        .await;
    create(
        &c,
        &base,
        "sprocs",
        "deep",
        &format!("function () {{ {DEEP_CHAIN} }}"),
    )
    .await;
    create(
        &c,
        &base,
        "udfs",
        "deep",
        &format!("function () {{ {DEEP_CHAIN} return 1; }}"),
    )
    .await;
    create(
        &c,
        &base,
        "sprocs",
        "calm",
        "function () { getContext().getResponse().setBody('calm'); }",
    )
    .await;
    // More than the two stuck threads after which the thread isolation refuses new scripts.
    let mut answers = Vec::new();
    for _ in 0..3 {
        let started = Instant::now();
        let r = tokio::time::timeout(
            LIMIT + Duration::from_secs(1),
            execute(&c, &base, "deep", &[]),
        )
        .await
        .expect("the procedure is answered at its limit");
        assert!(started.elapsed() < LIMIT + Duration::from_secs(1));
        answers.push(r.status);
        assert_eq!(
            left_running(server.pid()).await,
            (0, 0),
            "script threads or worker processes still running after the procedure's answer"
        );
    }
    let query = json!({"query": "SELECT VALUE udf.deep() FROM c"});
    let q = tokio::time::timeout(
        LIMIT + Duration::from_secs(1),
        c.query(
            &base,
            &format!("{COLL}/docs"),
            &query,
            &[("x-ms-documentdb-partitionkey", "[\"p\"]")],
        ),
    )
    .await
    .expect("the query is answered at its limit");
    assert_eq!(q.status, 400, "{q:?}");
    assert!(q.message().contains("ran past"), "{}", q.message());
    assert_eq!(
        left_running(server.pid()).await,
        (0, 0),
        "script threads or worker processes still running after the query's answer"
    );
    assert_eq!(answers, vec![408, 408, 408]);
    let calm = execute(&c, &base, "calm", &[]).await;
    assert_eq!(calm.status, 200, "{calm:?}");
    assert_eq!(calm.json(), json!("calm"));
}

#[tokio::test]
async fn sigterm_stops_the_binary_at_once_while_a_script_thread_is_stuck_past_its_request() {
    let (mut server, stdout) = EmulatorProcess::start_with_stdout(&["--scripts-in-process"])
        .unwrap_or_else(|log| panic!("the emulator did not start: {log}"));
    let c = TestClient::new(WELL_KNOWN_KEY);
    let base = server.endpoint.clone();
    c.setup(&base, "db", "c").await;
    create(
        &c,
        &base,
        "sprocs",
        "deep",
        &format!("function () {{ {DEEP_CHAIN} }}"),
    )
    .await;
    let r = tokio::time::timeout(
        LIMIT + Duration::from_secs(5),
        execute(&c, &base, "deep", &[]),
    )
    .await
    .expect("the procedure is answered at its limit");
    assert_eq!(r.status, 408, "{r:?}");
    assert!(
        script_threads(server.pid()) > 0,
        "the script's thread was expected to be still running after its answer"
    );
    let started = Instant::now();
    server.terminate();
    let status = tokio::task::spawn_blocking(move || {
        let printed = std::thread::spawn(move || stdout.map_while(Result::ok).collect::<Vec<_>>());
        let status = server.wait_exit(Duration::from_secs(11));
        drop(printed);
        (status, server)
    })
    .await
    .unwrap();
    let (status, server) = status;
    assert!(
        status.is_some_and(|s| s.success()),
        "{status:?} {:?} after SIGTERM; log: {}",
        started.elapsed(),
        server.log_text()
    );
    // Nothing was in flight: the stop does not wait out the grace period for the stuck thread.
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "took {:?}",
        started.elapsed()
    );
}

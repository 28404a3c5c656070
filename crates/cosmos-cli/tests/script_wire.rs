//! `cosmos sproc|trigger|udf` on the wire, against a scripted server on loopback that records
//! each request and answers as the service documents: the path, method, partition key and
//! logging headers sent, and the answer, script log and charge read back.

use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;

use crate::common::Cli;
use crate::hostile_server::read_request;

const KEY: &str =
    "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw==";

/// What the server saw: method and path, headers, body.
type Seen = Arc<Mutex<Vec<SeenRequest>>>;

async fn serve() -> (Cli, Seen) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    let account = format!(
        r#"{{"writableLocations":[{{"name":"Local","databaseAccountEndpoint":"{url}"}}],"readableLocations":[{{"name":"Local","databaseAccountEndpoint":"{url}"}}],"enableMultipleWriteLocations":false,"userConsistencyPolicy":{{"defaultConsistencyLevel":"Session"}}}}"#
    );
    let seen: Seen = Arc::default();
    let log = seen.clone();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let (account, log) = (account.clone(), log.clone());
            tokio::spawn(async move {
                let mut buf = Vec::new();
                while let Some(head) = read_request(&mut socket, &mut buf).await {
                    let mut words = head.line.split(' ');
                    let method = words.next().unwrap_or_default().to_owned();
                    let path = words.next().unwrap_or_default().to_owned();
                    let (status, body, extra): (u16, String, &str) = match (method.as_str(), path.as_str()) {
                        ("GET", "/") => (200, account.clone(), ""),
                        ("GET", "/dbs/db/colls/c") => (
                            200,
                            r#"{"id":"c","partitionKey":{"paths":["/pk"],"kind":"Hash","version":2}}"#.into(),
                            "",
                        ),
                        ("GET", "/dbs/db/colls/c/pkranges") => (
                            200,
                            r#"{"PartitionKeyRanges":[{"id":"0","minInclusive":"","maxExclusive":"FF"}]}"#.into(),
                            "",
                        ),
                        ("POST", "/dbs/db/colls/c/sprocs/hello") => (
                            200,
                            r#"{"greeting":"hello world","n":2}"#.into(),
                            "x-ms-documentdb-script-log-results: said%20hi%0Atwice\r\n",
                        ),
                        ("POST", "/dbs/db/colls/c/triggers") => {
                            (201, String::from_utf8_lossy(&head.body).into_owned(), "")
                        }
                        ("GET", "/dbs/db/colls/c/udfs") => (
                            200,
                            r#"{"_rid":"x","UserDefinedFunctions":[{"id":"tax","body":"function tax(x) { return x * 1.2; }","_etag":"\"1\""}],"_count":1}"#.into(),
                            "",
                        ),
                        _ => (404, r#"{"code":"NotFound","message":"Resource Not Found"}"#.into(), ""),
                    };
                    log.lock()
                        .unwrap()
                        .push((format!("{method} {path}"), head.headers, head.body));
                    let reply = format!(
                        "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\nx-ms-activity-id: act-1\r\nx-ms-request-charge: 3.5\r\n{extra}content-length: {}\r\n\r\n{body}",
                        body.len()
                    );
                    if socket.write_all(reply.as_bytes()).await.is_err() {
                        break;
                    }
                }
            });
        }
    });
    (
        Cli {
            endpoint: url,
            key: KEY.into(),
        },
        seen,
    )
}

/// A request the server saw: its request line, headers and body.
type SeenRequest = (String, Vec<(String, String)>, Vec<u8>);

fn request<'a>(seen: &'a [SeenRequest], what: &str) -> &'a SeenRequest {
    seen.iter()
        .find(|(line, _, _)| line == what)
        .unwrap_or_else(|| {
            panic!(
                "no {what} among {:?}",
                seen.iter().map(|s| &s.0).collect::<Vec<_>>()
            )
        })
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sproc_execute_sends_a_keyed_post_and_prints_the_answer_and_log() {
    let (cli, seen) = serve().await;
    let out = cli
        .run(&[
            "sproc",
            "execute",
            "--db",
            "db",
            "--container",
            "c",
            "--pk",
            "p1",
            "hello",
            "--params",
            r#"["world", 2]"#,
            "--log",
        ])
        .await;
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    let answer: Value = serde_json::from_slice(&out.stdout).expect("stdout is the answer");
    assert_eq!(
        answer,
        serde_json::json!({"greeting": "hello world", "n": 2})
    );
    let lines: Vec<Value> = stderr
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|_| panic!("not JSON: {l}")))
        .collect();
    assert!(
        lines.iter().any(|l| l["script_log"] == "said hi\ntwice"),
        "{stderr}"
    );
    assert!(lines.iter().any(|l| l["request_charge"] == 3.5), "{stderr}");

    let seen = seen.lock().unwrap().clone();
    let executions: Vec<_> = seen
        .iter()
        .filter(|(l, _, _)| l == "POST /dbs/db/colls/c/sprocs/hello")
        .collect();
    assert_eq!(
        executions.len(),
        1,
        "executed once, never hedged or repeated"
    );
    let (_, headers, body) = executions[0];
    assert_eq!(
        header(headers, "x-ms-documentdb-partitionkey"),
        Some(r#"["p1"]"#)
    );
    assert_eq!(
        header(headers, "x-ms-documentdb-script-enable-logging"),
        Some("true")
    );
    assert!(header(headers, "authorization").is_some_and(|a| a.contains("type%3Dmaster")));
    assert_eq!(
        serde_json::from_slice::<Value>(body).unwrap(),
        serde_json::json!(["world", 2])
    );

    // Parameters that are not an array are refused before anything is sent.
    let out = cli
        .run(&[
            "sproc",
            "execute",
            "--db",
            "db",
            "--container",
            "c",
            "--pk",
            "p1",
            "hello",
            "--params",
            "{}",
        ])
        .await;
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trigger_create_and_udf_list_speak_the_service_json() {
    let (cli, seen) = serve().await;
    let created = cli
        .json(&[
            "trigger",
            "create",
            "--db",
            "db",
            "--container",
            "c",
            "stamp",
            "--body",
            "function stamp() {}",
            "--type",
            "pre",
            "--operation",
            "create",
        ])
        .await;
    assert_eq!(created["triggerType"], "Pre", "{created}");
    let seen_now = seen.lock().unwrap().clone();
    let (_, _, body) = request(&seen_now, "POST /dbs/db/colls/c/triggers");
    assert_eq!(
        serde_json::from_slice::<Value>(body).unwrap(),
        serde_json::json!({"id": "stamp", "body": "function stamp() {}", "triggerType": "Pre", "triggerOperation": "Create"})
    );
    let udfs = cli
        .json(&["udf", "list", "--db", "db", "--container", "c"])
        .await;
    assert_eq!(udfs[0]["id"], "tax", "{udfs}");
    assert_eq!(udfs.as_array().unwrap().len(), 1);
    let missing = cli
        .run(&["sproc", "read", "--db", "db", "--container", "c", "nope"])
        .await;
    assert_eq!(missing.status.code(), Some(4));
}

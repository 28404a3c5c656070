//! `cosmos item list` and `cosmos item query` against a broken server on loopback end with an
//! error and a non-zero exit, never an empty result or an endless loop.

use crate::common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use common::Cli;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const KEY: &str =
    "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw==";
/// Page requests answered from the rule before the server ends every feed (so that a command
/// that does not stop still ends).
const HOSTILE_PAGES: usize = 3000;

/// The body and continuation of a feed page, given the continuation it was asked with.
type Rule = fn(Option<&str>) -> (&'static str, Option<&'static str>);

/// One HTTP/1.1 request: its request line, headers (lower-cased names) and body.
pub(crate) struct Head {
    pub(crate) line: String,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
}

impl Head {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Reads one request (head and body); `None` when the connection ends.
pub(crate) async fn read_request(socket: &mut TcpStream, buf: &mut Vec<u8>) -> Option<Head> {
    let end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        let mut chunk = [0u8; 8192];
        match socket.read(&mut chunk).await {
            Ok(0) | Err(_) => return None,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    };
    let text = String::from_utf8_lossy(&buf[..end]).into_owned();
    let mut lines = text.split("\r\n");
    let line = lines.next().unwrap_or_default().to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let mut head = Head {
        line,
        headers,
        body: Vec::new(),
    };
    let length: usize = head
        .header("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let total = end + 4 + length;
    while buf.len() < total {
        let mut chunk = [0u8; 8192];
        match socket.read(&mut chunk).await {
            Ok(0) | Err(_) => return None,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    head.body = buf[end + 4..total].to_vec();
    buf.drain(..total);
    Some(head)
}

/// A server that answers the account, the container, its range and query plans, and every feed
/// page by `rule`; the counter counts page requests.
async fn serve(rule: Rule) -> (Cli, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    let account = format!(
        r#"{{"writableLocations":[{{"name":"Local","databaseAccountEndpoint":"{url}"}}],"readableLocations":[{{"name":"Local","databaseAccountEndpoint":"{url}"}}],"enableMultipleWriteLocations":false,"userConsistencyPolicy":{{"defaultConsistencyLevel":"Session"}}}}"#
    );
    let pages = Arc::new(AtomicUsize::new(0));
    let counter = pages.clone();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let (account, pages) = (account.clone(), pages.clone());
            tokio::spawn(async move {
                let mut buf = Vec::new();
                while let Some(head) = read_request(&mut socket, &mut buf).await {
                    let path = head.line.split(' ').nth(1).unwrap_or_default();
                    let (body, continuation): (String, Option<&str>) = match path {
                        "/" => (account.clone(), None),
                        "/dbs/db/colls/c" => (
                            r#"{"id":"c","partitionKey":{"paths":["/pk"],"kind":"Hash","version":2}}"#.into(),
                            None,
                        ),
                        "/dbs/db/colls/c/pkranges" => (
                            r#"{"PartitionKeyRanges":[{"id":"0","minInclusive":"","maxExclusive":"FF"}]}"#.into(),
                            None,
                        ),
                        _ if head.header("x-ms-cosmos-is-query-plan-request").is_some() => (
                            r#"{"partitionedQueryExecutionInfoVersion":2,"queryInfo":{},"queryRanges":[{"min":"","max":"FF","isMinInclusive":true,"isMaxInclusive":false}]}"#.into(),
                            None,
                        ),
                        _ => {
                            let n = pages.fetch_add(1, Ordering::SeqCst);
                            if n < HOSTILE_PAGES {
                                let (body, next) = rule(head.header("x-ms-continuation"));
                                (body.to_owned(), next)
                            } else {
                                (r#"{"Documents":[]}"#.to_owned(), None)
                            }
                        }
                    };
                    let mut reply = format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nx-ms-activity-id: act-1\r\ncontent-length: {}\r\n",
                        body.len()
                    );
                    if let Some(c) = continuation {
                        reply.push_str(&format!("x-ms-continuation: {c}\r\n"));
                    }
                    reply.push_str("\r\n");
                    reply.push_str(&body);
                    if socket.write_all(reply.as_bytes()).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    let cli = Cli {
        endpoint: url,
        key: KEY.to_owned(),
    };
    (cli, counter)
}

const LIST: &[&str] = &["item", "list", "--db", "db", "--container", "c"];
const QUERY: &[&str] = &[
    "item",
    "query",
    "--db",
    "db",
    "--container",
    "c",
    "SELECT * FROM c",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_that_cannot_be_read_fail_the_command() {
    let rules: [(Rule, &str); 3] = [
        (
            |_| (r#"{"Documents":[{"id":"a","pk":"#, Some("n")),
            "at Documents[0].pk: EOF",
        ),
        (
            |_| (r#"{"Documents":{"id":"a"}}"#, Some("n")),
            "invalid type: map",
        ),
        (|_| ("", Some("n")), "the body is empty"),
    ];
    for (rule, needle) in rules {
        let (cli, pages) = serve(rule).await;
        let stderr = cli.fails(LIST).await;
        assert!(stderr.contains(needle), "item list: {stderr}");
        assert!(stderr.contains("activity id act-1"), "item list: {stderr}");
        let stderr = cli.fails(QUERY).await;
        assert!(stderr.contains(needle), "item query: {stderr}");
        assert_eq!(pages.load(Ordering::SeqCst), 2, "one page request each");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn continuations_that_repeat_or_cycle_fail_the_command() {
    let rules: [(Rule, &str, usize); 2] = [
        (
            |_| (r#"{"Documents":[{"id":"a"}]}"#, Some("T")),
            "the continuation token it was sent",
            2,
        ),
        (
            |sent| {
                let next = if sent == Some("A") { "B" } else { "A" };
                (r#"{"Documents":[]}"#, Some(next))
            },
            "cycle",
            3,
        ),
    ];
    for (rule, needle, per_command) in rules {
        let (cli, pages) = serve(rule).await;
        let stderr = cli.fails(LIST).await;
        assert!(stderr.contains(needle), "item list: {stderr}");
        let stderr = cli.fails(QUERY).await;
        assert!(stderr.contains(needle), "item query: {stderr}");
        assert_eq!(pages.load(Ordering::SeqCst), 2 * per_command);
    }
}

//! A broken or hostile server on loopback gets an error, never an empty result or an endless loop:
//! pages that cannot be read, continuations that repeat or cycle, endless empty pages, and session
//! tokens that grow without bound or arrive oversized.
//!
//! The fake server answers the account, the container, its one partition key range and query
//! plans as a real one would, and every feed page from the test's own answer. After
//! `HOSTILE_PAGES` page requests it ends every feed, so a driver without a guard finishes (and
//! fails the assertions) instead of hanging the test.

use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use cosmos_driver::query::{Query, QueryOptions, QueryScope};
use cosmos_driver::{
    CosmosDriver, CosmosError, CosmosOperation, Credential, DatabaseReference, DriverOptions,
    ErrorKind, OperationOptions, PartitionKey,
};
use futures::StreamExt;
use http_body_util::{BodyExt, Full};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::net::TcpListener;

const KEY: &str =
    "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw==";
/// Page requests answered from the test's rule before the server ends every feed.
const HOSTILE_PAGES: usize = 3000;
/// The driver's limit on a container's session token (documented on `MAX_SESSION_TOKEN_BYTES`).
const SESSION_LIMIT: usize = 64 * 1024;

/// A feed page request as the server saw it.
#[derive(Clone, Debug)]
struct Seen {
    continuation: Option<String>,
    session_token_bytes: usize,
    if_none_match: Option<String>,
    change_feed: bool,
}

/// What the server answers to one page request.
struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: Bytes,
}

impl Reply {
    fn page(body: &str, continuation: Option<&str>) -> Self {
        let mut headers = Vec::new();
        if let Some(c) = continuation {
            headers.push(("x-ms-continuation".to_owned(), c.to_owned()));
        }
        Reply {
            status: 200,
            headers,
            body: Bytes::copy_from_slice(body.as_bytes()),
        }
    }

    fn with_header(mut self, name: &str, value: String) -> Self {
        self.headers.push((name.to_owned(), value));
        self
    }
}

type Rule = dyn Fn(usize, &Seen) -> Reply + Send + Sync;

struct Server {
    url: String,
    pages: Arc<Mutex<Vec<Seen>>>,
}

impl Server {
    async fn start(rule: impl Fn(usize, &Seen) -> Reply + Send + Sync + 'static) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/", listener.local_addr().unwrap());
        let pages: Arc<Mutex<Vec<Seen>>> = Arc::default();
        let rule: Arc<Rule> = Arc::new(rule);
        let account = Bytes::from(format!(
            r#"{{"writableLocations":[{{"name":"Local","databaseAccountEndpoint":"{url}"}}],"readableLocations":[{{"name":"Local","databaseAccountEndpoint":"{url}"}}],"enableMultipleWriteLocations":false,"userConsistencyPolicy":{{"defaultConsistencyLevel":"Session"}}}}"#
        ));
        let seen = pages.clone();
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                let (rule, seen, account) = (rule.clone(), seen.clone(), account.clone());
                tokio::spawn(async move {
                    let service = service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                        let (rule, seen, account) = (rule.clone(), seen.clone(), account.clone());
                        async move {
                            let reply = answer(req, &*rule, &seen, account).await;
                            Ok::<_, Infallible>(reply)
                        }
                    });
                    let _ = http1::Builder::new()
                        .serve_connection(TokioIo::new(socket), service)
                        .await;
                });
            }
        });
        Server { url, pages }
    }

    async fn driver(&self) -> CosmosDriver {
        CosmosDriver::new(DriverOptions::new(
            self.url.clone(),
            Credential::master_key(KEY).unwrap(),
        ))
        .await
        .expect("the driver reads the account")
    }

    fn pages(&self) -> Vec<Seen> {
        self.pages.lock().unwrap().clone()
    }
}

fn header(req: &hyper::Request<hyper::body::Incoming>, name: &str) -> Option<String> {
    req.headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

async fn answer(
    req: hyper::Request<hyper::body::Incoming>,
    rule: &Rule,
    pages: &Mutex<Vec<Seen>>,
    account: Bytes,
) -> hyper::Response<Full<Bytes>> {
    let path = req.uri().path().to_owned();
    let is_plan = header(&req, "x-ms-cosmos-is-query-plan-request").is_some();
    let seen = Seen {
        continuation: header(&req, "x-ms-continuation"),
        session_token_bytes: header(&req, "x-ms-session-token").map_or(0, |t| t.len()),
        if_none_match: header(&req, "if-none-match"),
        change_feed: header(&req, "a-im").is_some(),
    };
    let _ = req.into_body().collect().await;
    let fixed = match path.as_str() {
        "/" => Some(account),
        "/dbs/db/colls/c" => Some(Bytes::from_static(
            br#"{"id":"c","partitionKey":{"paths":["/pk"],"kind":"Hash","version":2}}"#,
        )),
        "/dbs/db/colls/c/pkranges" => Some(Bytes::from_static(
            br#"{"PartitionKeyRanges":[{"id":"0","minInclusive":"","maxExclusive":"FF"}]}"#,
        )),
        "/dbs/db/colls/c/docs" if is_plan => Some(Bytes::from_static(
            br#"{"partitionedQueryExecutionInfoVersion":2,"queryInfo":{},"queryRanges":[{"min":"","max":"FF","isMinInclusive":true,"isMaxInclusive":false}]}"#,
        )),
        _ => None,
    };
    let reply = match fixed {
        Some(body) => Reply {
            status: 200,
            headers: Vec::new(),
            body,
        },
        None => {
            let n = {
                let mut pages = pages.lock().unwrap();
                pages.push(seen.clone());
                pages.len() - 1
            };
            if n < HOSTILE_PAGES {
                rule(n, &seen).with_header("x-ms-activity-id", format!("act-{n}"))
            } else {
                Reply::page(r#"{"Documents":[]}"#, None)
            }
        }
    };
    let mut response = hyper::Response::builder()
        .status(reply.status)
        .header("content-type", "application/json");
    for (name, value) in &reply.headers {
        response = response.header(name.as_str(), value.as_str());
    }
    response.body(Full::new(reply.body)).unwrap()
}

fn read_feed() -> CosmosOperation {
    CosmosOperation::read_all_items(
        DatabaseReference::new("db")
            .unwrap()
            .container("c")
            .unwrap(),
    )
}

/// Reads every page of the read feed; the error that ended it, if any, and the pages read.
async fn read_all(driver: &CosmosDriver) -> (Option<CosmosError>, usize) {
    let mut pager = driver.pages(read_feed(), OperationOptions::new());
    let mut pages = 0;
    while let Some(page) = pager.next_page().await {
        match page {
            Ok(_) => pages += 1,
            Err(e) => return (Some(e), pages),
        }
    }
    (None, pages)
}

/// Runs a query to its end; the error that ended it, if any, and the items read.
async fn query_all(driver: &CosmosDriver, scope: QueryScope) -> (Option<CosmosError>, usize) {
    let mut pages = driver
        .container("db", "c")
        .query_items_with::<Value>(Query::new("SELECT * FROM c"), scope, QueryOptions::new())
        .into_pages();
    let mut items = 0;
    while let Some(page) = pages.next().await {
        match page {
            Ok(p) => items += p.items().len(),
            Err(e) => return (Some(e), items),
        }
    }
    (None, items)
}

fn scopes() -> [QueryScope; 2] {
    [
        QueryScope::CrossPartition,
        QueryScope::PartitionKey(PartitionKey::from("p")),
    ]
}

#[tokio::test]
async fn a_page_that_cannot_be_read_is_an_error_that_says_where() {
    let cases = [
        (
            r#"{"Documents":[{"id":"a","pk":"#,
            "at Documents[0].pk: EOF while parsing",
        ),
        (
            r#"{"Documents":{"id":"a"}}"#,
            "at Documents: invalid type: map",
        ),
        ("", "the body is empty"),
        (r#"{"_rid":"x","_count":0}"#, "no \"Documents\" array"),
    ];
    for (body, needle) in cases {
        let server = Server::start(move |_, _| Reply::page(body, Some("next"))).await;
        let driver = server.driver().await;
        let check = |e: Option<CosmosError>, what: &str| {
            let e = e.unwrap_or_else(|| panic!("{what} of {body:?}: no error"));
            assert_eq!(e.kind(), ErrorKind::Deserialization, "{what}: {e}");
            let m = e.to_string();
            assert!(m.contains(needle), "{what}: {m}");
            assert!(m.contains("status 200"), "{what}: {m}");
            assert!(m.contains("activity id act-"), "{what}: {m}");
            assert_eq!(e.status(), Some(200), "{what}");
        };
        let (e, pages) = read_all(&driver).await;
        assert_eq!(pages, 0, "the read feed of {body:?}");
        check(e, "the read feed");
        for scope in scopes() {
            let what = format!("a query {scope:?}");
            let (e, items) = query_all(&driver, scope).await;
            assert_eq!(items, 0, "{what}");
            check(e, &what);
        }
        assert_eq!(
            server.pages().len(),
            3,
            "one page request each, nothing after"
        );
    }
}

#[tokio::test]
async fn a_continuation_handed_back_ends_the_feed_with_an_error() {
    let server =
        Server::start(|_, _| Reply::page(r#"{"Documents":[{"id":"a"}]}"#, Some("T"))).await;
    let driver = server.driver().await;
    let (e, pages) = read_all(&driver).await;
    let e = e.expect("the read feed ends with an error");
    assert!(
        e.to_string().contains("the continuation token it was sent"),
        "{e}"
    );
    assert_eq!(pages, 1);
    for scope in scopes() {
        let before = server.pages().len();
        let (e, _) = query_all(&driver, scope.clone()).await;
        let e = e.unwrap_or_else(|| panic!("{scope:?}: the query ends with an error"));
        assert!(
            e.to_string().contains("the continuation token it was sent"),
            "{e}"
        );
        assert_eq!(
            server.pages().len() - before,
            2,
            "{scope:?}: two page requests"
        );
    }
}

#[tokio::test]
async fn empty_pages_cycling_between_two_tokens_end_with_an_error() {
    let server = Server::start(|_, seen| {
        let next = match seen.continuation.as_deref() {
            Some("A") => "B",
            _ => "A",
        };
        Reply::page(r#"{"Documents":[]}"#, Some(next))
    })
    .await;
    let driver = server.driver().await;
    let (e, _) = read_all(&driver).await;
    let e = e.expect("the read feed ends with an error");
    assert!(e.to_string().contains("cycle"), "{e}");
    assert_eq!(server.pages().len(), 3, "None -> A, A -> B, B -> A");
    for scope in scopes() {
        let before = server.pages().len();
        let (e, items) = query_all(&driver, scope.clone()).await;
        let e = e.unwrap_or_else(|| panic!("{scope:?}: the query ends with an error"));
        assert!(e.to_string().contains("cycle"), "{scope:?}: {e}");
        assert_eq!(items, 0);
        assert_eq!(server.pages().len() - before, 3, "{scope:?}");
    }
}

#[tokio::test]
async fn endless_empty_pages_end_with_an_error() {
    let server =
        Server::start(|n, _| Reply::page(r#"{"Documents":[]}"#, Some(&format!("t{n}")))).await;
    let driver = server.driver().await;
    let (e, pages) = read_all(&driver).await;
    let e = e.expect("the read feed ends with an error");
    assert!(e.to_string().contains("1001 empty pages in a row"), "{e}");
    assert_eq!(pages, 1000);
    let (e, _) = query_all(&driver, QueryScope::CrossPartition).await;
    let e = e.expect("the query ends with an error");
    assert!(e.to_string().contains("1001 empty pages in a row"), "{e}");
    assert_eq!(server.pages().len(), 2002);
}

/// A session token naming 3,000 ranges nobody has heard of (about 40 KB), new ones on every page.
fn growing_token(page: usize) -> String {
    let mut parts = vec![format!("0:1#{page}")];
    parts.extend((0..3000).map(|i| format!("{}:1#{page:06}", 100_000 + page * 3000 + i)));
    parts.join(",")
}

#[tokio::test]
async fn session_tokens_stay_bounded_when_every_page_names_new_ranges() {
    let rule = |n: usize, _: &Seen| {
        let next = (n % 100 != 99).then(|| format!("p{}", n + 1));
        Reply::page(r#"{"Documents":[{"id":"a"}]}"#, next.as_deref())
            .with_header("x-ms-session-token", growing_token(n))
    };
    assert!(growing_token(7).len() > 40_000);

    // A query knows the container's ranges: the ones it does not have are dropped.
    let server = Server::start(rule).await;
    let driver = server.driver().await;
    let (e, items) = query_all(&driver, QueryScope::CrossPartition).await;
    assert!(e.is_none(), "{e:?}");
    assert_eq!(items, 100);
    let sent: Vec<usize> = server
        .pages()
        .iter()
        .map(|s| s.session_token_bytes)
        .collect();
    assert_eq!(sent.len(), 100);
    assert!(
        sent.iter().all(|&b| b <= SESSION_LIMIT),
        "{:?}",
        sent.iter().max()
    );
    assert!(sent[1] > 0, "the token is sent");

    // A read feed alone does not know them: the token past the limit is an error that says so.
    let server = Server::start(rule).await;
    let driver = server.driver().await;
    let (e, pages) = read_all(&driver).await;
    let e = e.expect("the read feed ends with an error");
    let m = e.to_string();
    assert!(
        m.contains("session token") && m.contains("65536 bytes per container"),
        "{m}"
    );
    assert_eq!(pages, 1);
    let sent: Vec<usize> = server
        .pages()
        .iter()
        .map(|s| s.session_token_bytes)
        .collect();
    assert_eq!(sent.len(), 2);
    assert!(sent.iter().all(|&b| b <= SESSION_LIMIT), "{sent:?}");
}

#[tokio::test]
async fn an_oversized_session_token_header_is_named_with_its_size() {
    for (bytes, needle) in [
        (
            1 << 20,
            "carries a x-ms-session-token header of 1048576 bytes, longer than the 65536 bytes",
        ),
        (
            8 << 20,
            "are longer than the 2097152 bytes the driver reads",
        ),
    ] {
        let server = Server::start(move |_, _| {
            let token = format!("0:1#5{}", "9".repeat(bytes - 5));
            Reply::page(r#"{"Documents":[{"id":"a"}]}"#, None)
                .with_header("x-ms-session-token", token)
        })
        .await;
        let driver = server.driver().await;
        let (e, _) = read_all(&driver).await;
        let e = e.expect("the read feed ends with an error");
        assert_eq!(e.kind(), ErrorKind::Transport, "{e}");
        assert!(e.to_string().contains(needle), "{bytes}: {e}");
        assert_eq!(server.pages().len(), 1, "not retried");
    }
}

#[tokio::test]
async fn change_feed_pages_must_move_past_their_changes() {
    // Changes, always at the same position.
    let server = Server::start(|_, seen| {
        assert!(seen.change_feed);
        Reply::page(r#"{"Documents":[{"id":"a"}]}"#, None).with_header("etag", "\"5\"".to_owned())
    })
    .await;
    let driver = server.driver().await;
    let mut feed = driver.container("db", "c").change_feed::<Value>(
        cosmos_driver::change_feed::ChangeFeedStart::Beginning,
        cosmos_driver::change_feed::FeedScope::Container,
    );
    let first = feed
        .next_page()
        .await
        .expect("the first page moves to \"5\"");
    assert_eq!(first.items().len(), 1);
    let e = feed.next_page().await.expect_err("the same changes again");
    assert!(e.to_string().contains("without a new position"), "{e}");
    let sent: Vec<Option<String>> = server
        .pages()
        .iter()
        .map(|s| s.if_none_match.clone())
        .collect();
    assert_eq!(sent, [None, Some("\"5\"".to_owned())]);

    // Changes that lead back to a position the range was at: a cycle.
    let server = Server::start(|_, seen| {
        let next = match seen.if_none_match.as_deref() {
            Some("\"A\"") => "\"B\"",
            _ => "\"A\"",
        };
        Reply::page(r#"{"Documents":[{"id":"a"}]}"#, None).with_header("etag", next.to_owned())
    })
    .await;
    let driver = server.driver().await;
    let mut feed = driver.container("db", "c").change_feed::<Value>(
        cosmos_driver::change_feed::ChangeFeedStart::Beginning,
        cosmos_driver::change_feed::FeedScope::Container,
    );
    assert_eq!(feed.next_page().await.expect("to A").items().len(), 1);
    assert_eq!(feed.next_page().await.expect("to B").items().len(), 1);
    let e = feed.next_page().await.expect_err("back to A");
    assert!(e.to_string().contains("cycle"), "{e}");
    assert_eq!(server.pages().len(), 3);

    // "Nothing new" at the same position is a finished poll, not an error.
    let server = Server::start(|_, _| Reply {
        status: 304,
        headers: vec![("etag".to_owned(), "\"5\"".to_owned())],
        body: Bytes::new(),
    })
    .await;
    let driver = server.driver().await;
    let mut feed = driver.container("db", "c").change_feed::<Value>(
        cosmos_driver::change_feed::ChangeFeedStart::Beginning,
        cosmos_driver::change_feed::FeedScope::Container,
    );
    for _ in 0..3 {
        let page = feed.next_page().await.expect("a poll with nothing new");
        assert!(page.items().is_empty() && page.is_caught_up());
    }

    // A change feed page that cannot be read.
    let server = Server::start(|_, _| Reply::page(r#"{"Documents":{}}"#, None)).await;
    let driver = server.driver().await;
    let mut feed = driver.container("db", "c").change_feed::<Value>(
        cosmos_driver::change_feed::ChangeFeedStart::Beginning,
        cosmos_driver::change_feed::FeedScope::Container,
    );
    let e = feed.next_page().await.expect_err("an error");
    assert_eq!(e.kind(), ErrorKind::Deserialization, "{e}");
    assert!(e.to_string().contains("activity id act-0"), "{e}");
}

#[tokio::test]
async fn read_many_queries_end_on_a_repeated_continuation() {
    let server = Server::start(|_, _| Reply::page(r#"{"Documents":[]}"#, Some("T"))).await;
    let driver = server.driver().await;
    let items: Vec<(PartitionKey, String)> = (0..3)
        .map(|i| (PartitionKey::from("p"), format!("i{i}")))
        .collect();
    let e = driver
        .container("db", "c")
        .read_many::<Value>(&items)
        .await
        .expect_err("an error");
    assert!(
        e.to_string().contains("the continuation token it was sent"),
        "{e}"
    );
    assert!(server.pages().len() <= 2, "{}", server.pages().len());
}

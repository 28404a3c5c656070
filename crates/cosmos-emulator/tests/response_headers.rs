//! The response headers of each family of answers over real HTTP, against the set the official
//! SDKs read or surface (Python `azure/cosmos/http_constants.py`, Node `@azure/cosmos`
//! `Constants.HttpHeaders`): point operations, feeds, queries, change feed, batch, offers,
//! containers and errors; none of them sends a header twice.

use crate::common;

use common::{master_auth, now_date, pk_header, start_with_container, Resp, TestClient};
use cosmos_emulator::EmulatorBuilder;
use http::Method;
use serde_json::json;

const DOCS: &str = "/dbs/db/colls/c/docs";

/// Every answer, errors included.
const COMMON: &[&str] = &[
    "x-ms-activity-id",
    "x-ms-request-charge",
    "x-ms-schemaversion",
    "x-ms-serviceversion",
    "x-ms-gatewayversion",
    "x-ms-transport-request-id",
    "x-ms-request-duration-ms",
    "content-location",
];

/// Every answer that reached one partition.
const REPLICA: &[&str] = &[
    "x-ms-session-token",
    "lsn",
    "x-ms-cosmos-llsn",
    "x-ms-global-committed-lsn",
    "x-ms-quorum-acked-lsn",
    "x-ms-cosmos-quorum-acked-llsn",
    "x-ms-current-write-quorum",
    "x-ms-current-replica-set-size",
    "x-ms-xp-role",
    "x-ms-number-of-read-regions",
    "x-ms-documentdb-partitionkeyrangeid",
];

/// Where the answer's container is (how the Python SDK files its session token).
const CONTAINER_PATHS: &[&str] = &["x-ms-alt-content-path", "x-ms-content-path"];

const ITEM: &[&str] = &["x-ms-item-lsn", "x-ms-cosmos-item-llsn"];

/// A partition's quota and usage (the backend sends them with the answers of a range).
const QUOTA: &[&str] = &["x-ms-resource-quota", "x-ms-resource-usage"];

/// What the SDKs read from a change-feed page (and its 304): the etag is the continuation.
const CHANGE_FEED: &[&str] = &["etag", "x-ms-item-count"];

/// What the service sends with an offer's read and replace (the SDKs' throughput responses).
const OFFER: &[&str] = &[
    "x-ms-offer-replace-pending",
    "x-ms-cosmos-min-throughput",
    "etag",
];

fn assert_has(family: &str, r: &Resp, sets: &[&[&str]]) {
    let missing: Vec<&str> = sets
        .iter()
        .flat_map(|s| s.iter())
        .copied()
        .filter(|name| r.header(name).is_none())
        .collect();
    assert!(
        missing.is_empty(),
        "{family} ({}) lacks {missing:?}; it has {:?}",
        r.status,
        r.headers.keys().collect::<Vec<_>>()
    );
    // Each header once: a repeated one reaches clients joined ("1, 1"), which no SDK can parse.
    let repeated: Vec<&str> = r
        .headers
        .keys()
        .filter(|name| r.headers.get_all(*name).iter().count() > 1)
        .map(|name| name.as_str())
        .collect();
    assert!(
        repeated.is_empty(),
        "{family} ({}) sends {repeated:?} more than once",
        r.status
    );
    // The server's time over the request, a number of milliseconds (SDKs parse it as one).
    if let Some(took) = r.header("x-ms-request-duration-ms") {
        let ms: f64 = took
            .parse()
            .unwrap_or_else(|_| panic!("{family}: duration {took:?} is not a number"));
        assert!((0.0..60_000.0).contains(&ms), "{family}: {ms}");
    }
}

/// `Content-Location` names the URI the request addressed, on the endpoint that served it, as the
/// service sends it (`https://account.documents.azure.com/dbs/db/colls/c/docs/a`): on reads,
/// writes, feeds, queries, deletes (204) and errors alike.
#[tokio::test]
async fn content_location_is_the_uri_the_request_addressed() {
    let (emu, c) = start_with_container(EmulatorBuilder::new().regions(["East", "West"])).await;
    let global = emu.endpoint().trim_end_matches('/').to_owned();
    let created = c
        .create_item(emu.endpoint(), "db", "c", &json!({"id": "a", "pk": "p"}))
        .await;
    assert_eq!(created.status, 201);
    assert_eq!(
        created.header("content-location"),
        Some(format!("{global}/dbs/db/colls/c/docs").as_str())
    );
    let west = emu
        .region_endpoint("West")
        .expect("a West endpoint")
        .to_owned();
    let west = west.trim_end_matches('/');
    assert_ne!(west, global);
    for (base, prefix) in [(emu.endpoint(), global.as_str()), (west, west)] {
        let read = c.read_item(base, "db", "c", "a", &json!("p"), &[]).await;
        assert_eq!(read.status, 200, "{read:?}");
        assert_eq!(
            read.header("content-location"),
            Some(format!("{prefix}/dbs/db/colls/c/docs/a").as_str())
        );
        let missing = c.read_item(base, "db", "c", "b", &json!("p"), &[]).await;
        assert_eq!(missing.status, 404);
        assert_eq!(
            missing.header("content-location"),
            Some(format!("{prefix}/dbs/db/colls/c/docs/b").as_str())
        );
        let feed = on_pk(&c, base, Method::GET, DOCS, None).await;
        assert_eq!(
            feed.header("content-location"),
            Some(format!("{prefix}{DOCS}").as_str())
        );
    }
    let deleted = on_pk(
        &c,
        emu.endpoint(),
        Method::DELETE,
        "/dbs/db/colls/c/docs/a",
        None,
    )
    .await;
    assert_eq!(deleted.status, 204, "{deleted:?}");
    assert_eq!(
        deleted.header("content-location"),
        Some(format!("{global}/dbs/db/colls/c/docs/a").as_str())
    );
}

async fn on_pk(c: &TestClient, base: &str, method: Method, path: &str, body: Option<&str>) -> Resp {
    let pk = pk_header(&json!("p"));
    let mut headers = vec![("x-ms-documentdb-partitionkey", pk.as_str())];
    if method == Method::POST
        && path.ends_with("/docs")
        && body.is_some_and(|b| b.contains("query"))
    {
        headers.push(("x-ms-documentdb-isquery", "True"));
        headers.push(("content-type", "application/query+json"));
    }
    c.send(base, method, path, &headers, body.map(str::as_bytes))
        .await
}

#[tokio::test]
async fn each_family_of_answers_carries_the_headers_sdks_read() {
    let (emu, c) = start_with_container(EmulatorBuilder::new().partitions(2)).await;
    let base = emu.endpoint();

    // Point operations.
    let created = c
        .create_item(base, "db", "c", &json!({"id": "a", "pk": "p", "n": 1}))
        .await;
    assert_eq!(created.status, 201);
    assert_has(
        "create",
        &created,
        &[COMMON, REPLICA, CONTAINER_PATHS, ITEM, &["etag"]],
    );
    assert_eq!(created.header("x-ms-item-lsn"), created.header("lsn"));
    let read = c.read_item(base, "db", "c", "a", &json!("p"), &[]).await;
    assert_eq!(read.status, 200);
    assert_has(
        "read",
        &read,
        &[COMMON, REPLICA, CONTAINER_PATHS, ITEM, &["etag"]],
    );
    let replaced = on_pk(
        &c,
        base,
        Method::PUT,
        "/dbs/db/colls/c/docs/a",
        Some(r#"{"id": "a", "pk": "p", "n": 2}"#),
    )
    .await;
    assert_eq!(replaced.status, 200, "{replaced:?}");
    assert_has(
        "replace",
        &replaced,
        &[COMMON, REPLICA, CONTAINER_PATHS, ITEM],
    );
    let missing = c.read_item(base, "db", "c", "nope", &json!("p"), &[]).await;
    assert_eq!(missing.status, 404);
    assert_has(
        "404 of an item",
        &missing,
        &[COMMON, REPLICA, CONTAINER_PATHS, &["x-ms-substatus"]],
    );

    // Feeds and queries on one partition key.
    let feed = on_pk(&c, base, Method::GET, DOCS, None).await;
    assert_eq!(feed.status, 200, "{feed:?}");
    assert_has(
        "read feed",
        &feed,
        &[COMMON, REPLICA, CONTAINER_PATHS, &["x-ms-item-count"]],
    );
    let query = on_pk(
        &c,
        base,
        Method::POST,
        DOCS,
        Some(r#"{"query": "SELECT * FROM c"}"#),
    )
    .await;
    assert_eq!(query.status, 200, "{query:?}");
    assert_has(
        "query",
        &query,
        &[COMMON, REPLICA, CONTAINER_PATHS, &["x-ms-item-count"]],
    );

    // Change feed.
    let pk = pk_header(&json!("p"));
    let changes = c
        .get(
            base,
            DOCS,
            &[
                ("a-im", "Incremental feed"),
                ("x-ms-documentdb-partitionkey", pk.as_str()),
            ],
        )
        .await;
    assert_eq!(changes.status, 200, "{changes:?}");
    assert_has(
        "change feed",
        &changes,
        &[
            COMMON,
            CONTAINER_PATHS,
            &["etag", "lsn", "x-ms-session-token"],
        ],
    );

    // Batch.
    let batch = c
        .post_json(
            base,
            DOCS,
            &[
                ("x-ms-documentdb-partitionkey", pk.as_str()),
                ("x-ms-cosmos-is-batch-request", "True"),
                ("x-ms-cosmos-batch-atomic", "True"),
            ],
            &json!([{"operationType": "Create", "resourceBody": {"id": "b", "pk": "p"}}]),
        )
        .await;
    assert_eq!(batch.status, 200, "{batch:?}");
    assert_has("batch", &batch, &[COMMON, REPLICA, CONTAINER_PATHS]);

    // Containers carry their quota and usage; offers and other metadata the common set.
    let container = c.get(base, "/dbs/db/colls/c", &[]).await;
    assert_eq!(container.status, 200);
    assert_has(
        "container",
        &container,
        &[
            COMMON,
            &["x-ms-resource-quota", "x-ms-resource-usage", "etag"],
        ],
    );
    let usage = container.header("x-ms-resource-usage").unwrap();
    assert!(usage.contains("documentsCount=2;"), "{usage}");
    let offers = c.get(base, "/offers", &[]).await;
    assert_eq!(offers.status, 200, "{offers:?}");
    assert_has("offers", &offers, &[COMMON]);

    // Errors before any partition: the common set and the sub-status.
    let unsigned = c.get_unsigned(base, DOCS).await;
    assert_eq!(unsigned.status, 401);
    assert_has("401", &unsigned, &[COMMON, &["x-ms-substatus"]]);
    let ids: Vec<&str> = [&created, &read, &feed]
        .iter()
        .map(|r| r.header("x-ms-transport-request-id").unwrap())
        .collect();
    assert!(ids[0] != ids[1] && ids[1] != ids[2], "{ids:?}");
}

/// A request on `/offers/{id}`, signed with the id alone as the resource link (as the SDKs do).
async fn on_offer(
    c: &TestClient,
    base: &str,
    method: Method,
    id: &str,
    body: Option<&[u8]>,
) -> Resp {
    let date = now_date();
    let auth = master_auth(&c.key, method.as_str(), "offers", id, &date);
    let headers = [
        ("x-ms-date", date.as_str()),
        ("authorization", auth.as_str()),
        ("x-ms-version", "2020-07-15"),
    ];
    c.send_raw(base, method, &format!("/offers/{id}/"), &headers, body)
        .await
}

#[tokio::test]
async fn change_feed_pages_and_offer_answers_carry_the_headers_sdks_read() {
    let (emu, c) = start_with_container(EmulatorBuilder::new().partitions(2)).await;
    let base = emu.endpoint();
    for i in 0..3 {
        let doc = json!({"id": format!("a{i}"), "pk": "p", "n": i});
        assert_eq!(c.create_item(base, "db", "c", &doc).await.status, 201);
    }
    let pk = pk_header(&json!("p"));
    let feed = |extra: Vec<(&'static str, String)>| {
        let pk = pk.clone();
        let c = &c;
        async move {
            let mut headers = vec![
                ("a-im", "Incremental feed".to_owned()),
                ("x-ms-documentdb-partitionkey", pk),
            ];
            headers.extend(extra);
            let headers: Vec<(&str, &str)> =
                headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
            c.get(base, DOCS, &headers).await
        }
    };

    // A page with changes, then the 304 from its etag: both carry the full set.
    let page = feed(vec![]).await;
    assert_eq!(page.status, 200, "{page:?}");
    assert_has(
        "change feed",
        &page,
        &[COMMON, REPLICA, CONTAINER_PATHS, QUOTA, CHANGE_FEED],
    );
    assert_eq!(page.header("x-ms-item-count"), Some("3"));
    assert_eq!(page.json()["Documents"].as_array().unwrap().len(), 3);
    assert_eq!(
        page.header("x-ms-alt-content-path"),
        Some("dbs/db/colls/c"),
        "the Python SDK files the session token under this path"
    );
    let usage = page.header("x-ms-resource-usage").unwrap();
    assert!(usage.contains("documentsCount=3;"), "{usage}");
    let etag = page.header("etag").unwrap().to_owned();
    let none = feed(vec![("if-none-match", etag.clone())]).await;
    assert_eq!(none.status, 304, "{none:?}");
    assert_has(
        "change feed 304",
        &none,
        &[COMMON, REPLICA, CONTAINER_PATHS, QUOTA, CHANGE_FEED],
    );
    assert_eq!(none.header("x-ms-item-count"), Some("0"));
    assert_eq!(none.header("etag"), Some(etag.as_str()));
    // The lsn is the range's, as the session token says.
    let lsn = none.header("lsn").unwrap();
    let session = none.header("x-ms-session-token").unwrap();
    assert!(
        session.ends_with(&format!("#{lsn}")),
        "{session} vs lsn {lsn}"
    );

    // After a write the etag continues with just that change.
    let doc = json!({"id": "late", "pk": "p"});
    assert_eq!(c.create_item(base, "db", "c", &doc).await.status, 201);
    let next = feed(vec![("if-none-match", etag.clone())]).await;
    assert_eq!(next.status, 200);
    assert_eq!(next.header("x-ms-item-count"), Some("1"));
    assert_ne!(next.header("etag"), Some(etag.as_str()));
    assert!(next.header("lsn").unwrap().parse::<u64>().unwrap() > lsn.parse::<u64>().unwrap());

    // All versions and deletes: the same set.
    let full = feed(vec![
        ("a-im", "Full-Fidelity Feed".to_owned()),
        ("if-none-match", etag),
        (
            "x-ms-cosmos-changefeed-wire-format-version",
            "2021-09-15".to_owned(),
        ),
    ])
    .await;
    assert_eq!(full.status, 200, "{full:?}");
    assert_has(
        "all-versions change feed",
        &full,
        &[COMMON, REPLICA, CONTAINER_PATHS, QUOTA, CHANGE_FEED],
    );

    // Offers: the feed counts them; a read and a replace carry the offer's state.
    let offers = c.get(base, "/offers", &[]).await;
    assert_eq!(offers.status, 200);
    assert_has("offers feed", &offers, &[COMMON, &["x-ms-item-count"]]);
    let offer = offers.json()["Offers"][0].clone();
    let id = offer["id"].as_str().unwrap().to_owned();
    let read = on_offer(&c, base, Method::GET, &id, None).await;
    assert_eq!(read.status, 200, "{read:?}");
    assert_has("offer read", &read, &[COMMON, OFFER]);
    assert_eq!(read.header("x-ms-offer-replace-pending"), Some("false"));
    // The minimum it announces is what a replace may ask for, and no less.
    let min: u64 = read
        .header("x-ms-cosmos-min-throughput")
        .unwrap()
        .parse()
        .unwrap();
    let mut body = read.json();
    body["content"]["offerThroughput"] = json!(min);
    let replaced = on_offer(
        &c,
        base,
        Method::PUT,
        &id,
        Some(body.to_string().as_bytes()),
    )
    .await;
    assert_eq!(replaced.status, 200, "{replaced:?}");
    assert_has("offer replace", &replaced, &[COMMON, OFFER]);
    assert_eq!(replaced.json()["content"]["offerThroughput"], json!(min));
    body["content"]["offerThroughput"] = json!(min - 100);
    let below = on_offer(
        &c,
        base,
        Method::PUT,
        &id,
        Some(body.to_string().as_bytes()),
    )
    .await;
    assert_eq!(below.status, 400, "{below:?}");
}

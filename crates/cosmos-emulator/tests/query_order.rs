//! The order of a query without ORDER BY, as the service answers it: items in creation order
//! (`_rid` order) within a partition key range, pages resuming in that order, also across writes
//! between pages and a split of the range being read.

use crate::common;

use common::{pk_header, start_with_container, TestClient};
use cosmos_emulator::EmulatorBuilder;
use http::Method;
use serde_json::{json, Value};

const DOCS: &str = "/dbs/db/colls/c/docs";

/// Every id a query answers, page by page (`page` items a page), in order; `between` runs after
/// each page.
async fn ids_in_order(
    c: &TestClient,
    base: &str,
    sql: &str,
    extra: &[(&str, &str)],
    page: &str,
    mut between: impl AsyncFnMut(usize),
) -> Vec<String> {
    let mut out = Vec::new();
    let mut token: Option<String> = None;
    for pages in 1..200 {
        let mut headers = vec![("x-ms-max-item-count", page)];
        headers.extend_from_slice(extra);
        if let Some(t) = &token {
            headers.push(("x-ms-continuation", t.as_str()));
        }
        let r = c.query(base, DOCS, &json!({"query": sql}), &headers).await;
        assert_eq!(r.status, 200, "{sql}: {}", r.message());
        for d in r.json()["Documents"].as_array().unwrap() {
            out.push(d["id"].as_str().unwrap().to_owned());
        }
        token = r.header("x-ms-continuation").map(str::to_owned);
        if token.is_none() {
            return out;
        }
        between(pages).await;
    }
    panic!("paging does not end");
}

async fn create(c: &TestClient, base: &str, id: &str, pk: &str) {
    let r = c
        .create_item(base, "db", "c", &json!({"id": id, "pk": pk}))
        .await;
    assert_eq!(r.status, 201, "{r:?}");
}

#[tokio::test]
async fn items_come_in_creation_order_within_a_partition_key_and_a_range() {
    let (emu, c) = start_with_container(EmulatorBuilder::new().partitions(1)).await;
    let base = emu.endpoint();
    // Created in an order that is neither id nor key order.
    let created = [("m", "p"), ("b", "q"), ("z", "p"), ("a", "q"), ("k", "p")];
    for (id, pk) in created {
        create(&c, base, id, pk).await;
    }
    let pk = pk_header(&json!("p"));
    let scoped = [("x-ms-documentdb-partitionkey", pk.as_str())];
    let all = |page| ids_in_order(&c, base, "SELECT * FROM c", &scoped, page, async |_| {});
    assert_eq!(all("100").await, ["m", "z", "k"]);
    assert_eq!(all("1").await, ["m", "z", "k"], "one item a page");
    let across = [("x-ms-documentdb-query-enablecrosspartition", "True")];
    let filtered = ids_in_order(
        &c,
        base,
        "SELECT * FROM c WHERE c.id != 'x'",
        &across,
        "2",
        async |_| {},
    )
    .await;
    assert_eq!(filtered, ["m", "b", "z", "a", "k"]);
    // A replace keeps the item's place; a delete and a new create puts it last.
    let r = c
        .send_with_pk(
            base,
            Method::PUT,
            &format!("{DOCS}/m"),
            &json!("p"),
            &[],
            Some(&json!({"id": "m", "pk": "p", "v": 2})),
        )
        .await;
    assert_eq!(r.status, 200);
    let r = c
        .send_with_pk(
            base,
            Method::DELETE,
            &format!("{DOCS}/z"),
            &json!("p"),
            &[],
            None,
        )
        .await;
    assert_eq!(r.status, 204);
    create(&c, base, "z", "p").await;
    assert_eq!(all("100").await, ["m", "k", "z"]);
}

#[tokio::test]
async fn pages_resume_in_creation_order_across_writes_between_them() {
    let (emu, c) = start_with_container(EmulatorBuilder::new().partitions(1)).await;
    let base = emu.endpoint();
    for id in ["d", "c", "b", "a"] {
        create(&c, base, id, "p").await;
    }
    let pk = pk_header(&json!("p"));
    let scoped = [("x-ms-documentdb-partitionkey", pk.as_str())];
    let got = ids_in_order(&c, base, "SELECT * FROM c", &scoped, "1", async |page| {
        if page == 1 {
            // Created after the first page: it comes after every older item.
            create(&c, base, "0", "p").await;
        }
    })
    .await;
    assert_eq!(got, ["d", "c", "b", "a", "0"]);
}

#[tokio::test]
async fn a_continuation_from_before_a_split_goes_on_in_each_child_in_creation_order() {
    let (emu, c) = start_with_container(EmulatorBuilder::new().partitions(1)).await;
    let base = emu.endpoint();
    let ids: Vec<String> = (0..30).map(|i| format!("i{:02}", 29 - i)).collect();
    for (n, id) in ids.iter().enumerate() {
        create(&c, base, id, &format!("k{n}")).await;
    }
    let sql = json!({"query": "SELECT * FROM c"});
    let range = |r| {
        [
            ("x-ms-documentdb-partitionkeyrangeid", r),
            ("x-ms-max-item-count", "10"),
        ]
    };
    let first = c.query(base, DOCS, &sql, &range("0")).await;
    assert_eq!(first.status, 200, "{}", first.message());
    let first_ids: Vec<String> = first.json()["Documents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(first_ids, ids[..10]);
    let token = first.header("x-ms-continuation").unwrap().to_owned();
    let r = c
        .admin(
            base,
            Method::POST,
            "/_emulator/split",
            Some(r#"{"db": "db", "container": "c", "range": "0"}"#),
        )
        .await;
    assert_eq!(r.status, 200, "{r:?}");
    create(&c, base, "new", "k-new").await;
    let mut rest = Vec::new();
    for child in ["1", "2"] {
        let mut token = Some(token.clone());
        let mut mine: Vec<String> = Vec::new();
        while let Some(t) = token {
            let [pkrange, page] = range(child);
            let headers = [pkrange, page, ("x-ms-continuation", t.as_str())];
            let r = c.query(base, DOCS, &sql, &headers).await;
            assert_eq!(r.status, 200, "{}", r.message());
            let docs = r.json()["Documents"].as_array().unwrap().clone();
            mine.extend(
                docs.iter()
                    .map(|d: &Value| d["id"].as_str().unwrap().to_owned()),
            );
            token = r.header("x-ms-continuation").map(str::to_owned);
        }
        // Each child goes on in creation order: its share of the unread items, then any item
        // created in it since.
        let mut in_order: Vec<String> = ids[10..]
            .iter()
            .filter(|id| mine.contains(id))
            .cloned()
            .collect();
        if mine.iter().any(|id| id == "new") {
            in_order.push("new".into());
        }
        assert_eq!(mine, in_order, "child {child}");
        rest.extend(mine);
    }
    let mut expected: Vec<String> = ids[10..].to_vec();
    expected.push("new".into());
    rest.sort();
    expected.sort();
    assert_eq!(
        rest, expected,
        "the unread items once each, none read again"
    );
}

/// The `-RID` continuation the service writes (`-RID:~<_rid>#RT:n#TRC:n`, bare or in the composite
/// form with its range) resumes after the item it names, in creation order; one that cannot be
/// mapped to a position is refused with 400 naming what is missing.
#[tokio::test]
async fn the_services_own_continuation_resumes_after_the_item_it_names() {
    let (emu, c) = start_with_container(EmulatorBuilder::new().partitions(1)).await;
    let base = emu.endpoint();
    let mut rids = Vec::new();
    for id in ["d", "c", "b", "a"] {
        let r = c
            .create_item(base, "db", "c", &json!({"id": id, "pk": "p"}))
            .await;
        rids.push(r.json()["_rid"].as_str().unwrap().to_owned());
    }
    let pk = pk_header(&json!("p"));
    let page = |token: String| {
        let (c, pk) = (c.clone(), pk.clone());
        async move {
            let headers = [
                ("x-ms-documentdb-partitionkey", pk.as_str()),
                ("x-ms-continuation", token.as_str()),
            ];
            c.query(base, DOCS, &json!({"query": "SELECT * FROM c"}), &headers)
                .await
        }
    };
    let ids = |r: &common::Resp| -> Vec<String> {
        r.json()["Documents"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["id"].as_str().unwrap().to_owned())
            .collect()
    };
    let bare = page(format!("-RID:~{}#RT:1#TRC:1", rids[0])).await;
    assert_eq!(bare.status, 200, "{}", bare.message());
    assert_eq!(ids(&bare), ["c", "b", "a"]);
    let composite = json!([{"token": format!("-RID:~{}#RT:2#TRC:2#ISV:2#IEO:65567", rids[1]), "range": {"min": "", "max": "FF"}}]);
    let r = page(composite.to_string()).await;
    assert_eq!(r.status, 200, "{}", r.message());
    assert_eq!(ids(&r), ["b", "a"]);
    // TRC counts the rows already answered: TOP stops after the rest of its rows.
    let token = format!("-RID:~{}#RT:1#TRC:1", rids[0]);
    let headers = [
        ("x-ms-documentdb-partitionkey", pk.as_str()),
        ("x-ms-continuation", token.as_str()),
    ];
    let top = c
        .query(
            base,
            DOCS,
            &json!({"query": "SELECT TOP 2 * FROM c"}),
            &headers,
        )
        .await;
    assert_eq!(ids(&top), ["c"]);

    let other_container = "-RID:~AAAAAAAAAAABAAAAAAAAAA==#RT:1#TRC:1";
    for (token, names) in [
        ("#RT:1#TRC:1".to_owned(), "-RID"),
        ("-RID:#RT:1".to_owned(), "-RID"),
        ("-RID:~not base64!#RT:1".to_owned(), "_rid"),
        (other_container.to_owned(), "container"),
        ("-RID:~".to_owned() + &rids[0] + "#RT:x", "RT"),
        (
            json!([{"range": {"min": "", "max": "FF"}}]).to_string(),
            "token",
        ),
        (
            json!([{"token": format!("-RID:~{}#RT:1", rids[0])}]).to_string(),
            "range",
        ),
    ] {
        let r = page(token.clone()).await;
        assert_eq!(r.status, 400, "{token}: {r:?}");
        assert!(r.message().contains(names), "{token}: {}", r.message());
    }
}

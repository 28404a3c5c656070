//! The read feed: paging with x-ms-max-item-count and x-ms-continuation, scoped by key or range.

use crate::common;

use std::collections::BTreeSet;

use common::{pk_header, start_with_container, TestClient};
use cosmos_emulator::EmulatorBuilder;
use serde_json::json;

async fn read_all(
    c: &TestClient,
    base: &str,
    page: &str,
    extra: &[(&str, &str)],
) -> (Vec<String>, usize) {
    let mut ids = Vec::new();
    let mut pages = 0;
    let mut continuation: Option<String> = None;
    loop {
        let mut headers = vec![("x-ms-max-item-count", page)];
        headers.extend_from_slice(extra);
        if let Some(token) = &continuation {
            headers.push(("x-ms-continuation", token.as_str()));
        }
        let r = c.get(base, "/dbs/db/colls/c/docs", &headers).await;
        assert_eq!(r.status, 200, "{r:?}");
        let body = r.json();
        let docs = body["Documents"].as_array().unwrap();
        assert_eq!(body["_count"], docs.len());
        assert_eq!(r.header("x-ms-item-count").unwrap(), docs.len().to_string());
        ids.extend(docs.iter().map(|d| d["id"].as_str().unwrap().to_owned()));
        pages += 1;
        continuation = r.header("x-ms-continuation").map(str::to_owned);
        if continuation.is_none() {
            return (ids, pages);
        }
        assert!(pages < 100, "paging does not end");
    }
}

#[tokio::test]
async fn pages_cover_every_item_exactly_once() {
    let (emu, c) = start_with_container(EmulatorBuilder::new().partitions(4)).await;
    let base = emu.endpoint();
    for i in 0..23 {
        let r = c
            .create_item(
                base,
                "db",
                "c",
                &json!({"id": format!("item{i}"), "pk": format!("k{}", i % 7)}),
            )
            .await;
        assert_eq!(r.status, 201);
    }
    let (ids, pages) = read_all(&c, base, "5", &[]).await;
    assert_eq!(ids.len(), 23);
    assert_eq!(
        ids.iter().collect::<BTreeSet<_>>().len(),
        23,
        "no duplicates"
    );
    assert_eq!(pages, 5);
    let (all, one_page) = read_all(&c, base, "-1", &[]).await;
    assert_eq!((all.len(), one_page), (23, 1));

    // Scoped to one partition key value.
    let pk = pk_header(&json!("k3"));
    let (scoped, _) = read_all(&c, base, "2", &[("x-ms-documentdb-partitionkey", &pk)]).await;
    assert_eq!(
        scoped.iter().collect::<BTreeSet<_>>(),
        ["item3", "item10", "item17"]
            .iter()
            .map(|s| s.to_string())
            .collect::<BTreeSet<_>>()
            .iter()
            .collect()
    );

    // Scoped to ranges: the four ranges together hold everything once.
    let mut union = Vec::new();
    for range in ["0", "1", "2", "3"] {
        union.extend(
            read_all(
                &c,
                base,
                "100",
                &[("x-ms-documentdb-partitionkeyrangeid", range)],
            )
            .await
            .0,
        );
    }
    assert_eq!(union.iter().collect::<BTreeSet<_>>().len(), 23);
    assert_eq!(union.len(), 23);
}

#[tokio::test]
async fn bad_paging_headers_are_400s() {
    let (emu, c) = start_with_container(EmulatorBuilder::new()).await;
    let r = c
        .get(
            emu.endpoint(),
            "/dbs/db/colls/c/docs",
            &[("x-ms-continuation", "not-a-token")],
        )
        .await;
    assert_eq!(r.status, 400);
    let r = c
        .get(
            emu.endpoint(),
            "/dbs/db/colls/c/docs",
            &[("x-ms-max-item-count", "many")],
        )
        .await;
    assert_eq!(r.status, 400);
}

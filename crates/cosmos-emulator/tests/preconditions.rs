//! If-Match (412 when stale) on replace, delete, upsert and patch; If-None-Match (304) on reads and
//! on the partition key ranges feed.

use crate::common;

use common::{pk_header, start_with_container};
use cosmos_emulator::EmulatorBuilder;
use http::Method;
use serde_json::json;

#[tokio::test]
async fn stale_if_match_answers_412_and_current_one_succeeds() {
    let (emu, c) = start_with_container(EmulatorBuilder::new()).await;
    let base = emu.endpoint();
    let first = c
        .create_item(base, "db", "c", &json!({"id": "a", "pk": "p", "n": 1}))
        .await;
    let stale = first.header("etag").unwrap().to_owned();
    let pk = pk_header(&json!("p"));
    let put = |etag: String| {
        let c = c.clone();
        let pk = pk.clone();
        async move {
            let h = [
                ("x-ms-documentdb-partitionkey", pk.as_str()),
                ("if-match", etag.as_str()),
            ];
            c.send(
                base,
                Method::PUT,
                "/dbs/db/colls/c/docs/a",
                &h,
                Some(json!({"id": "a", "pk": "p", "n": 2}).to_string().as_bytes()),
            )
            .await
        }
    };
    let ok = put(stale.clone()).await;
    assert_eq!(ok.status, 200);
    let current = ok.header("etag").unwrap().to_owned();
    let r = put(stale.clone()).await;
    assert_eq!(r.status, 412);
    assert_eq!(r.json()["code"], "PreconditionFailed");

    let stale_headers = [
        ("x-ms-documentdb-partitionkey", pk.as_str()),
        ("if-match", stale.as_str()),
    ];
    let upsert = [
        ("x-ms-documentdb-partitionkey", pk.as_str()),
        ("x-ms-documentdb-is-upsert", "true"),
        ("if-match", stale.as_str()),
    ];
    let r = c
        .post_json(
            base,
            "/dbs/db/colls/c/docs",
            &upsert,
            &json!({"id": "a", "pk": "p"}),
        )
        .await;
    assert_eq!(r.status, 412, "upsert");
    // An upsert of a missing item creates it whatever its If-Match says, as the service does:
    // the precondition is a replace's.
    let r = c
        .post_json(
            base,
            "/dbs/db/colls/c/docs",
            &upsert,
            &json!({"id": "fresh", "pk": "p"}),
        )
        .await;
    assert_eq!(
        r.status, 201,
        "upsert of a missing item with If-Match: {r:?}"
    );
    let read = c
        .read_item(base, "db", "c", "fresh", &json!("p"), &[])
        .await;
    assert_eq!(read.status, 200);
    let patch = json!({"operations": [{"op": "set", "path": "/n", "value": 9}]});
    let r = c
        .send(
            base,
            Method::PATCH,
            "/dbs/db/colls/c/docs/a",
            &stale_headers,
            Some(patch.to_string().as_bytes()),
        )
        .await;
    assert_eq!(r.status, 412, "patch");
    let r = c
        .send(
            base,
            Method::DELETE,
            "/dbs/db/colls/c/docs/a",
            &stale_headers,
            None,
        )
        .await;
    assert_eq!(r.status, 412, "delete");
    let good = [
        ("x-ms-documentdb-partitionkey", pk.as_str()),
        ("if-match", current.as_str()),
    ];
    assert_eq!(
        c.send(base, Method::DELETE, "/dbs/db/colls/c/docs/a", &good, None)
            .await
            .status,
        204
    );
}

#[tokio::test]
async fn if_none_match_on_reads_answers_304() {
    let (emu, c) = start_with_container(EmulatorBuilder::new()).await;
    let base = emu.endpoint();
    let created = c
        .create_item(base, "db", "c", &json!({"id": "a", "pk": "p"}))
        .await;
    let etag = created.header("etag").unwrap().to_owned();
    let r = c.read_a(base, &[("if-none-match", &etag)]).await;
    assert_eq!(r.status, 304);
    assert!(r.body.is_empty());
    assert_eq!(r.header("etag"), Some(etag.as_str()));
    let r = c.read_a(base, &[("if-none-match", "\"other\"")]).await;
    assert_eq!(r.status, 200);
}

#[tokio::test]
async fn partition_key_ranges_answer_304_for_their_etag() {
    let (emu, c) = start_with_container(EmulatorBuilder::new().partitions(3)).await;
    let base = emu.endpoint();
    let r = c.get(base, "/dbs/db/colls/c/pkranges", &[]).await;
    assert_eq!(r.status, 200);
    let feed = r.json();
    let ranges = feed["PartitionKeyRanges"].as_array().unwrap();
    assert_eq!(ranges.len(), 3);
    assert_eq!(
        ranges
            .iter()
            .map(|r| r["id"].as_str().unwrap())
            .collect::<Vec<_>>(),
        vec!["0", "1", "2"]
    );
    assert_eq!(ranges[0]["minInclusive"], "");
    assert_eq!(ranges[2]["maxExclusive"], "FF");
    let etag = r.header("etag").unwrap().to_owned();
    let again = c
        .get(
            base,
            "/dbs/db/colls/c/pkranges",
            &[("if-none-match", &etag), ("a-im", "Incremental feed")],
        )
        .await;
    assert_eq!(again.status, 304);
    assert!(again.body.is_empty());
}

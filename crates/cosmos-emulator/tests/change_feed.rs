//! The change feed over real HTTP: latest version from the beginning, from now, from a point in
//! time and from a continuation; scoped to a range, a feed range or a partition key; paging; lagging
//! regions; all versions and deletes; refused headers.

use crate::common;

use common::{east_and_lagging_west, east_west, pk_header, start_with_container, Resp, TestClient};
use cosmos_emulator::epk::{epk_hex, Epk, PartitionKeyValue};
use cosmos_emulator::EmulatorBuilder;
use http::Method;
use serde_json::{json, Value};

const DOCS: &str = "/dbs/db/colls/c/docs";
const LATEST: (&str, &str) = ("a-im", "Incremental feed");

async fn feed(c: &TestClient, base: &str, headers: &[(&str, &str)]) -> Resp {
    c.get(base, DOCS, headers).await
}

/// Reads range `range`'s latest-version feed after `etag` (None: from the beginning).
async fn range_feed(c: &TestClient, base: &str, range: &str, etag: Option<&str>) -> Resp {
    let mut headers = vec![LATEST, ("x-ms-documentdb-partitionkeyrangeid", range)];
    if let Some(tag) = etag {
        headers.push(("if-none-match", tag));
    }
    feed(c, base, &headers).await
}

/// Range 0's latest-version feed within the effective partition keys `[min, max)`.
async fn epk_feed(c: &TestClient, base: &str, min: String, max: String) -> Resp {
    let headers = [
        LATEST,
        ("x-ms-documentdb-partitionkeyrangeid", "0"),
        ("x-ms-read-key-type", "EffectivePartitionKeyRange"),
        ("x-ms-start-epk", min.as_str()),
        ("x-ms-end-epk", max.as_str()),
    ];
    feed(c, base, &headers).await
}

fn ids(r: &Resp) -> Vec<String> {
    r.json()["Documents"]
        .as_array()
        .unwrap_or_else(|| panic!("no Documents: {r:?}"))
        .iter()
        .map(|d| d["id"].as_str().unwrap().to_owned())
        .collect()
}

async fn range_ids(c: &TestClient, base: &str) -> Vec<String> {
    let r = c.get(base, "/dbs/db/colls/c/pkranges", &[]).await;
    r.json()["PartitionKeyRanges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_owned())
        .collect()
}

async fn upsert(c: &TestClient, base: &str, doc: &Value) -> Resp {
    let pk = pk_header(&doc["pk"]);
    c.post_json(
        base,
        DOCS,
        &[
            ("x-ms-documentdb-partitionkey", &pk),
            ("x-ms-documentdb-is-upsert", "true"),
        ],
        doc,
    )
    .await
}

async fn delete(c: &TestClient, base: &str, id: &str, pk: &str) -> Resp {
    c.send_with_pk(
        base,
        Method::DELETE,
        &format!("{DOCS}/{id}"),
        &json!(pk),
        &[],
        None,
    )
    .await
}

#[tokio::test]
async fn each_item_appears_once_at_its_latest_version_in_commit_order_per_range() {
    let (emu, c) = start_with_container(EmulatorBuilder::new()).await;
    let base = emu.endpoint();
    for i in 0..20 {
        upsert(
            &c,
            base,
            &json!({"id": format!("i{i}"), "pk": format!("p{i}"), "v": 1}),
        )
        .await;
    }
    // i3 changes after the others: it moves to the end of its range's feed, once, at v2.
    upsert(&c, base, &json!({"id": "i3", "pk": "p3", "v": 2})).await;
    let mut seen = Vec::new();
    for range in range_ids(&c, base).await {
        let r = range_feed(&c, base, &range, None).await;
        assert_eq!(r.status, 200, "{r:?}");
        assert_eq!(
            r.header("x-ms-documentdb-partitionkeyrangeid"),
            Some(range.as_str())
        );
        let docs = r.json()["Documents"].as_array().unwrap().clone();
        assert_eq!(
            r.header("x-ms-item-count"),
            Some(docs.len().to_string().as_str())
        );
        let lsns: Vec<u64> = docs.iter().map(|d| d["_lsn"].as_u64().unwrap()).collect();
        assert!(
            lsns.windows(2).all(|w| w[0] < w[1]),
            "not in commit order: {lsns:?}"
        );
        let got = ids(&r);
        if let Some(pos) = got.iter().position(|id| id == "i3") {
            assert_eq!(pos, got.len() - 1, "i3 is not last in {got:?}");
            assert_eq!(docs[pos]["v"], 2);
        }
        // The etag continues after everything: nothing is new.
        let again = range_feed(&c, base, &range, r.header("etag")).await;
        assert_eq!(again.status, 304, "{again:?}");
        assert_eq!(again.header("etag"), r.header("etag"));
        assert!(again.body.is_empty());
        seen.extend(got);
    }
    seen.sort();
    let mut want: Vec<String> = (0..20).map(|i| format!("i{i}")).collect();
    want.sort();
    assert_eq!(seen, want);
}

#[tokio::test]
async fn a_continuation_returns_only_what_changed_after_it_and_deletes_leave_the_feed() {
    let (emu, c) = start_with_container(EmulatorBuilder::new().partitions(1)).await;
    let base = emu.endpoint();
    upsert(&c, base, &json!({"id": "a", "pk": "p", "v": 1})).await;
    upsert(&c, base, &json!({"id": "b", "pk": "p", "v": 1})).await;
    let first = range_feed(&c, base, "0", None).await;
    assert_eq!(ids(&first), vec!["a", "b"]);
    let tag = first.header("etag").unwrap().to_owned();
    upsert(&c, base, &json!({"id": "a", "pk": "p", "v": 2})).await;
    upsert(&c, base, &json!({"id": "c", "pk": "p", "v": 1})).await;
    delete(&c, base, "b", "p").await;
    let next = range_feed(&c, base, "0", Some(&tag)).await;
    assert_eq!(ids(&next), vec!["a", "c"]);
    assert_eq!(next.json()["Documents"][0]["v"], 2);
    // The whole feed no longer holds b.
    assert_eq!(ids(&range_feed(&c, base, "0", None).await), vec!["a", "c"]);
}

#[tokio::test]
async fn pages_follow_max_item_count_without_loss_or_duplicates() {
    let (emu, c) = start_with_container(EmulatorBuilder::new().partitions(1)).await;
    let base = emu.endpoint();
    for i in 0..25 {
        upsert(&c, base, &json!({"id": format!("i{i:02}"), "pk": "p"})).await;
    }
    let mut tag: Option<String> = None;
    let mut all = Vec::new();
    let mut pages = 0;
    loop {
        let mut headers = vec![
            LATEST,
            ("x-ms-documentdb-partitionkeyrangeid", "0"),
            ("x-ms-max-item-count", "10"),
        ];
        if let Some(t) = &tag {
            headers.push(("if-none-match", t));
        }
        let r = feed(&c, base, &headers).await;
        if r.status == 304 {
            break;
        }
        assert_eq!(r.status, 200, "{r:?}");
        pages += 1;
        all.extend(ids(&r));
        tag = r.header("etag").map(str::to_owned);
        assert!(pages < 10, "the feed does not end");
    }
    assert_eq!(pages, 3);
    let want: Vec<String> = (0..25).map(|i| format!("i{i:02}")).collect();
    assert_eq!(all, want);
}

#[tokio::test]
async fn starting_now_sees_only_later_changes() {
    let (emu, c) = start_with_container(EmulatorBuilder::new().partitions(1)).await;
    let base = emu.endpoint();
    upsert(&c, base, &json!({"id": "old", "pk": "p"})).await;
    let now = feed(
        &c,
        base,
        &[
            LATEST,
            ("x-ms-documentdb-partitionkeyrangeid", "0"),
            ("if-none-match", "*"),
        ],
    )
    .await;
    assert_eq!(now.status, 304, "{now:?}");
    let tag = now.header("etag").unwrap().to_owned();
    upsert(&c, base, &json!({"id": "new", "pk": "p"})).await;
    assert_eq!(
        ids(&range_feed(&c, base, "0", Some(&tag)).await),
        vec!["new"]
    );
}

/// A point-in-time start answers its first request, as the service does, with an empty 200 whose
/// etag is the position just before the first change at or after that time; the changes follow
/// from that etag (sent with or without `If-Modified-Since`, as the SDKs do).
#[tokio::test]
async fn a_point_in_time_start_answers_a_position_first_then_the_changes() {
    let (emu, c) = start_with_container(EmulatorBuilder::new().partitions(1)).await;
    let base = emu.endpoint();
    upsert(&c, base, &json!({"id": "a", "pk": "p"})).await;
    let range = ("x-ms-documentdb-partitionkeyrangeid", "0");
    let past = httpdate::fmt_http_date(
        std::time::SystemTime::now() - std::time::Duration::from_secs(3600),
    );
    let since_past = ("if-modified-since", past.as_str());
    let first = feed(&c, base, &[LATEST, range, since_past]).await;
    assert_eq!(first.status, 200, "{first:?}");
    assert_eq!(ids(&first), Vec::<String>::new());
    assert_eq!(first.header("x-ms-item-count"), Some("0"));
    let tag = first.header("etag").expect("an etag").to_owned();
    let next = feed(
        &c,
        base,
        &[LATEST, range, since_past, ("if-none-match", &tag)],
    )
    .await;
    assert_eq!(ids(&next), vec!["a"]);
    assert_eq!(ids(&range_feed(&c, base, "0", Some(&tag)).await), vec!["a"]);

    // A time after every change: the position is the range's end, and later changes follow it.
    let future = httpdate::fmt_http_date(
        std::time::SystemTime::now() + std::time::Duration::from_secs(3600),
    );
    let first = feed(&c, base, &[LATEST, range, ("if-modified-since", &future)]).await;
    assert_eq!((first.status, ids(&first).len()), (200, 0), "{first:?}");
    let tag = first.header("etag").expect("an etag").to_owned();
    assert_eq!(range_feed(&c, base, "0", Some(&tag)).await.status, 304);
    upsert(&c, base, &json!({"id": "b", "pk": "p"})).await;
    assert_eq!(ids(&range_feed(&c, base, "0", Some(&tag)).await), vec!["b"]);
}

#[tokio::test]
async fn a_partition_key_or_a_feed_range_narrows_the_feed() {
    let (emu, c) = start_with_container(EmulatorBuilder::new().partitions(1)).await;
    let base = emu.endpoint();
    for (id, pk) in [("a", "x"), ("b", "y"), ("c", "x")] {
        upsert(&c, base, &json!({"id": id, "pk": pk})).await;
    }
    let pk = pk_header(&json!("x"));
    let r = feed(&c, base, &[LATEST, ("x-ms-documentdb-partitionkey", &pk)]).await;
    assert_eq!(ids(&r), vec!["a", "c"]);
    let whole = range_feed(&c, base, "0", None).await;
    assert_eq!(ids(&whole).len(), 3);
    // The feed range of one partition key: [epk, epk + 1).
    let epk = PartitionKeyValue::from_header(&pk).unwrap().epk();
    let point = epk_feed(
        &c,
        base,
        epk_hex(epk),
        epk_hex(Epk::single(epk.first() + 1)),
    )
    .await;
    assert_eq!(ids(&point), vec!["a", "c"]);
    // Two halves of the range hold every item once.
    let middle = "20000000000000000000000000000000".to_owned();
    let low = epk_feed(&c, base, String::new(), middle.clone()).await;
    let high = epk_feed(&c, base, middle, "FF".into()).await;
    let count = |r: &Resp| if r.status == 304 { 0 } else { ids(r).len() };
    assert_eq!(count(&low) + count(&high), 3, "{low:?} {high:?}");
}

#[tokio::test]
async fn a_lagging_region_serves_a_lagging_feed() {
    // A minute behind: the 1002 below is answered without waiting for the replica.
    let builder = east_and_lagging_west(60_000)
        .partitions(1)
        .session_wait(cosmos_emulator::SessionWait::OFF);
    let (emu, c) = start_with_container(builder).await;
    let (east, west) = east_west(&emu);
    let created = upsert(&c, east, &json!({"id": "a", "pk": "p"})).await;
    assert_eq!(ids(&range_feed(&c, east, "0", None).await), vec!["a"]);
    let lagging = range_feed(&c, west, "0", None).await;
    assert_eq!(lagging.status, 304, "{lagging:?}");
    let token = created.header("x-ms-session-token").unwrap();
    let r = feed(
        &c,
        west,
        &[
            LATEST,
            ("x-ms-documentdb-partitionkeyrangeid", "0"),
            ("x-ms-session-token", token),
        ],
    )
    .await;
    assert_eq!((r.status, r.sub_status()), (404, 1002), "{r:?}");
    // A continuation from the write region is kept, not moved back, by the lagging one.
    let ahead = range_feed(&c, east, "0", None).await;
    let tag = ahead.header("etag").unwrap().to_owned();
    let waiting = range_feed(&c, west, "0", Some(&tag)).await;
    assert_eq!(waiting.status, 304);
    assert_eq!(waiting.header("etag"), Some(tag.as_str()));
}

#[tokio::test]
async fn all_versions_and_deletes_carry_metadata_and_the_deleted_version() {
    let (emu, c) = start_with_container(EmulatorBuilder::new().partitions(1)).await;
    let base = emu.endpoint();
    let full = ("a-im", "Full-Fidelity Feed");
    let wire = ("x-ms-cosmos-changefeed-wire-format-version", "2021-09-15");
    let range = ("x-ms-documentdb-partitionkeyrangeid", "0");
    upsert(&c, base, &json!({"id": "before", "pk": "p"})).await;
    let now = feed(&c, base, &[full, wire, range, ("if-none-match", "*")]).await;
    assert_eq!(now.status, 304, "{now:?}");
    let tag = now.header("etag").unwrap().to_owned();
    upsert(&c, base, &json!({"id": "a", "pk": "p", "v": 1})).await;
    upsert(&c, base, &json!({"id": "a", "pk": "p", "v": 2})).await;
    delete(&c, base, "a", "p").await;
    let r = feed(&c, base, &[full, wire, range, ("if-none-match", &tag)]).await;
    assert_eq!(r.status, 200, "{r:?}");
    let docs = r.json()["Documents"].as_array().unwrap().clone();
    let ops: Vec<&str> = docs
        .iter()
        .map(|d| d["metadata"]["operationType"].as_str().unwrap())
        .collect();
    assert_eq!(ops, vec!["create", "replace", "delete"]);
    assert_eq!(docs[0]["current"]["v"], 1);
    assert_eq!(docs[1]["current"]["v"], 2);
    assert_eq!(
        docs[1]["metadata"]["previousImageLSN"],
        docs[0]["metadata"]["lsn"]
    );
    // A replace points back by LSN, without the previous image (no pre-image policy); a delete
    // carries an empty current, the deleted version, and was not an expiry.
    assert!(docs[1].get("previous").is_none(), "{}", docs[1]);
    assert_eq!(docs[2]["current"], json!({}));
    assert_eq!(docs[2]["previous"]["v"], 2);
    assert_eq!(docs[2]["metadata"]["timeToLiveExpired"], false);
    assert_eq!(docs[2]["metadata"]["id"], "a");
    assert_eq!(docs[2]["metadata"]["partitionKey"], json!({"pk": "p"}));
    let lsns: Vec<u64> = docs
        .iter()
        .map(|d| d["metadata"]["lsn"].as_u64().unwrap())
        .collect();
    assert!(lsns.windows(2).all(|w| w[0] < w[1]), "{lsns:?}");
    // From the beginning is not a start this mode offers.
    let r = feed(&c, base, &[full, wire, range]).await;
    assert_eq!(r.status, 400, "{r:?}");
}

#[tokio::test]
async fn unimplemented_or_malformed_change_feed_headers_are_400s() {
    let (emu, c) = start_with_container(EmulatorBuilder::new()).await;
    let base = emu.endpoint();
    let range = ("x-ms-documentdb-partitionkeyrangeid", "0");
    let cases: Vec<(Vec<(&str, &str)>, &str)> = vec![
        (vec![("a-im", "Snapshot"), range], "A-IM"),
        (
            vec![LATEST, range, ("if-none-match", "\"x\"")],
            "continuation",
        ),
        (
            vec![LATEST, range, ("if-modified-since", "soon")],
            "HTTP date",
        ),
        (vec![LATEST], "partition key range"),
        (
            vec![LATEST, range, ("x-ms-max-item-count", "many")],
            "x-ms-max-item-count",
        ),
    ];
    for (headers, reason) in cases {
        let r = feed(&c, base, &headers).await;
        assert_eq!(r.status, 400, "{headers:?}: {r:?}");
        assert!(r.message().contains(reason), "{headers:?}: {}", r.message());
    }
    let gone = feed(
        &c,
        base,
        &[LATEST, ("x-ms-documentdb-partitionkeyrangeid", "99")],
    )
    .await;
    assert_eq!((gone.status, gone.sub_status()), (410, 1002));
}

#[tokio::test]
async fn a_page_also_ends_at_about_four_megabytes() {
    let (emu, c) = start_with_container(EmulatorBuilder::new().partitions(1)).await;
    let base = emu.endpoint();
    let pad = "x".repeat(1024 * 1024);
    for i in 0..6 {
        let r = upsert(
            &c,
            base,
            &json!({"id": format!("big{i}"), "pk": "p", "pad": pad}),
        )
        .await;
        assert_eq!(r.status, 201, "{:?}", r.status);
    }
    let first = range_feed(&c, base, "0", None).await;
    let got = ids(&first);
    assert_eq!(
        got,
        vec!["big0", "big1", "big2", "big3"],
        "the page ends with the item reaching 4 MB"
    );
    let rest = range_feed(&c, base, "0", first.header("etag")).await;
    assert_eq!(ids(&rest), vec!["big4", "big5"]);
}

/// An item deleted by its time to live shows in the all-versions-and-deletes feed as a delete with
/// `timeToLiveExpired: true` (the sweep runs each second on the wall clock, so this waits for it).
#[tokio::test]
async fn a_delete_by_time_to_live_is_marked_as_expired() {
    let (emu, c) = start_with_container(EmulatorBuilder::new().partitions(1)).await;
    let base = emu.endpoint();
    let definition = json!({"id": "c", "partitionKey": {"paths": ["/pk"], "kind": "Hash", "version": 2}, "defaultTtl": -1});
    let r = c
        .send(
            base,
            Method::PUT,
            "/dbs/db/colls/c",
            &[],
            Some(definition.to_string().as_bytes()),
        )
        .await;
    assert_eq!(r.status, 200, "{r:?}");
    let full = ("a-im", "Full-Fidelity Feed");
    let range = ("x-ms-documentdb-partitionkeyrangeid", "0");
    let now = feed(&c, base, &[full, range, ("if-none-match", "*")]).await;
    let mut tag = now.header("etag").unwrap().to_owned();
    upsert(&c, base, &json!({"id": "short", "pk": "p", "ttl": 1})).await;
    let mut seen = Vec::new();
    let waited = std::time::Instant::now();
    while !seen
        .iter()
        .any(|d: &Value| d["metadata"]["operationType"] == "delete")
    {
        assert!(
            waited.elapsed() < std::time::Duration::from_secs(10),
            "no delete after 10 s: {seen:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        let r = feed(&c, base, &[full, range, ("if-none-match", &tag)]).await;
        if r.status == 200 {
            seen.extend(r.json()["Documents"].as_array().unwrap().iter().cloned());
        }
        tag = r.header("etag").unwrap().to_owned();
    }
    let deleted = seen
        .iter()
        .find(|d| d["metadata"]["operationType"] == "delete")
        .unwrap();
    assert_eq!(deleted["metadata"]["id"], "short");
    assert_eq!(deleted["metadata"]["timeToLiveExpired"], true, "{deleted}");
    assert_eq!(deleted["current"], json!({}));
}

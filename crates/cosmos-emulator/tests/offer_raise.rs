//! Raising a container's throughput past what its ranges hold (10,000 RU/s each) splits them, as
//! the service does, shortly after the replace: the offer reads `isOfferReplacePending: true`
//! (and `x-ms-offer-replace-pending: true`) until the splits are done; then the container has
//! enough ranges, every item still reads back and the change feed goes on from where it was.

use crate::common;

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use common::{master_auth, now_date, Resp, TestClient};
use cosmos_emulator::{EmulatorBuilder, WELL_KNOWN_KEY};
use http::Method;
use serde_json::{json, Value};

const DOCS: &str = "/dbs/db/colls/c/docs";

async fn range_ids(c: &TestClient, base: &str) -> Vec<String> {
    let r = c.get(base, "/dbs/db/colls/c/pkranges", &[]).await;
    assert_eq!(r.status, 200, "{r:?}");
    r.json()["PartitionKeyRanges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_owned())
        .collect()
}

/// A request on `/offers/{id}`, signed as the SDKs sign resources addressed by resource id (the
/// link is the id alone).
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

/// The container's offer.
async fn offer(c: &TestClient, base: &str) -> Resp {
    let coll = c.get(base, "/dbs/db/colls/c", &[]).await.json();
    let rid = coll["_rid"].as_str().unwrap().to_owned();
    let list = c.get(base, "/offers", &[]).await.json();
    let id = list["Offers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["offerResourceId"] == rid)
        .expect("the container's offer")["id"]
        .as_str()
        .unwrap()
        .to_owned();
    on_offer(c, base, Method::GET, &id, None).await
}

fn pending(r: &Resp) -> bool {
    let body = r.json()["content"]["isOfferReplacePending"] == json!(true);
    let header = r.header("x-ms-offer-replace-pending") == Some("true");
    assert_eq!(body, header, "the body and the header agree: {r:?}");
    body
}

async fn raise(c: &TestClient, base: &str, ru: u64) -> Resp {
    let read = offer(c, base).await;
    assert_eq!(read.status, 200, "{read:?}");
    let mut body: Value = read.json();
    body["content"]["offerThroughput"] = json!(ru);
    let id = body["id"].as_str().unwrap().to_owned();
    let r = on_offer(c, base, Method::PUT, &id, Some(body.to_string().as_bytes())).await;
    assert_eq!(r.status, 200, "{r:?}");
    r
}

/// Every change of the container since `etags` (range id → etag; none: from the start), range by
/// range, a child of the container's one first range going on from its parent's etag; answers the
/// ids and the etags to go on from.
async fn changes(
    c: &TestClient,
    base: &str,
    etags: &[(String, String)],
) -> (BTreeSet<String>, Vec<(String, String)>) {
    let mut seen = BTreeSet::new();
    let mut next = Vec::new();
    for range in range_ids(c, base).await {
        // A range not named is a child of the one range the container had: it goes on from
        // its parent's etag.
        let own = etags
            .iter()
            .find(|(r, _)| *r == range)
            .or(etags.first())
            .map(|(_, e)| e.clone());
        let mut headers = vec![
            ("a-im", "Incremental feed"),
            ("x-ms-documentdb-partitionkeyrangeid", range.as_str()),
        ];
        if let Some(t) = &own {
            headers.push(("if-none-match", t.as_str()));
        }
        let r = c.get(base, DOCS, &headers).await;
        assert!(r.status == 200 || r.status == 304, "{r:?}");
        if r.status == 200 {
            for d in r.json()["Documents"].as_array().unwrap() {
                seen.insert(d["id"].as_str().unwrap().to_owned());
            }
        }
        let etag = r.header("etag").unwrap().to_owned();
        next.push((range, etag));
    }
    (seen, next)
}

#[tokio::test]
async fn raising_throughput_past_the_ranges_splits_them_shortly_after() {
    let emu = EmulatorBuilder::new()
        .partitions_from_throughput()
        .start()
        .await
        .unwrap();
    let base = emu.endpoint();
    let c = TestClient::new(WELL_KNOWN_KEY);
    c.setup(base, "db", "c").await;
    assert_eq!(range_ids(&c, base).await.len(), 1);
    for i in 0..60 {
        let r = c
            .create_item(
                base,
                "db",
                "c",
                &json!({"id": format!("i{i}"), "pk": format!("k{i}")}),
            )
            .await;
        assert_eq!(r.status, 201);
    }
    let (first, etags) = changes(&c, base, &[]).await;
    assert_eq!(first.len(), 60);

    // 10,000 RU/s fit one range: nothing to split, nothing pending.
    let r = raise(&c, base, 10_000).await;
    assert!(!pending(&r));
    assert!(!pending(&offer(&c, base).await));
    assert_eq!(range_ids(&c, base).await.len(), 1);

    // 30,000 do not: the replace answers at once with the split pending.
    let r = raise(&c, base, 30_000).await;
    assert!(pending(&r), "{r:?}");
    assert_eq!(r.json()["content"]["offerThroughput"], 30_000);
    let started = Instant::now();
    while pending(&offer(&c, base).await) {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the split is still pending"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let ranges = range_ids(&c, base).await;
    assert!(ranges.len() >= 3, "{ranges:?}");

    // Every item reads back, by point read and by a query over every range.
    for i in 0..60 {
        let r = c
            .read_item(
                base,
                "db",
                "c",
                &format!("i{i}"),
                &json!(format!("k{i}")),
                &[],
            )
            .await;
        assert_eq!(r.status, 200, "i{i}: {r:?}");
    }
    let mut queried = BTreeSet::new();
    for range in &ranges {
        let r = c
            .query(
                base,
                DOCS,
                &json!({"query": "SELECT VALUE c.id FROM c"}),
                &[("x-ms-documentdb-partitionkeyrangeid", range.as_str())],
            )
            .await;
        assert_eq!(r.status, 200, "{r:?}");
        for id in r.json()["Documents"].as_array().unwrap() {
            assert!(
                queried.insert(id.as_str().unwrap().to_owned()),
                "{id} twice"
            );
        }
    }
    assert_eq!(queried, first);

    // The change feed goes on from before the split: only the later writes.
    for i in 60..90 {
        let r = c
            .create_item(
                base,
                "db",
                "c",
                &json!({"id": format!("i{i}"), "pk": format!("k{i}")}),
            )
            .await;
        assert_eq!(r.status, 201);
    }
    let (later, _) = changes(&c, base, &etags).await;
    let want: BTreeSet<String> = (60..90).map(|i| format!("i{i}")).collect();
    assert_eq!(later, want);
}

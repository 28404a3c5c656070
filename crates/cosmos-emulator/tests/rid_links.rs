//! Requests addressed by resource ids (`_self` links): `/dbs/{db _rid}/colls/{coll _rid}/docs/
//! {item _rid}`, signed as SDKs sign them, with the last resource id lower-cased.

use crate::common;

use common::{master_auth, now_date, pk_header, start_with_container, Resp, TestClient};
use cosmos_emulator::EmulatorBuilder;
use http::Method;
use serde_json::json;

/// Sends `method` to the `_self` link `self_link` of `link`, signed over its `resource_type` and
/// `signed_link` (the link's last resource id, lower-cased).
async fn by_rid(
    c: &TestClient,
    base: &str,
    method: Method,
    link: (&str, &str, &str),
    extra: &[(&str, &str)],
    body: Option<&[u8]>,
) -> Resp {
    let (self_link, resource_type, signed_link) = link;
    let date = now_date();
    let auth = master_auth(&c.key, method.as_str(), resource_type, signed_link, &date);
    let mut headers = vec![
        ("x-ms-date", date.as_str()),
        ("authorization", auth.as_str()),
        ("x-ms-version", "2020-07-15"),
    ];
    headers.extend_from_slice(extra);
    let path = format!("/{}", self_link.trim_matches('/'));
    c.send_raw(base, method, &path, &headers, body).await
}

#[tokio::test]
async fn resources_are_served_by_their_self_links() {
    let (emu, c) = start_with_container(EmulatorBuilder::new().partitions(2)).await;
    let base = emu.endpoint();
    let created = c
        .create_item(base, "db", "c", &json!({"id": "a", "pk": "p", "n": 1}))
        .await;
    assert_eq!(created.status, 201);
    let item = created.json();
    let item_self = item["_self"].as_str().unwrap().to_owned();
    let item_rid = item["_rid"].as_str().unwrap().to_lowercase();
    let coll = c.get(base, "/dbs/db/colls/c", &[]).await.json();
    let coll_self = coll["_self"].as_str().unwrap().to_owned();
    let coll_rid = coll["_rid"].as_str().unwrap().to_lowercase();
    let pk = pk_header(&json!("p"));
    let with_pk = [("x-ms-documentdb-partitionkey", pk.as_str())];

    let r = by_rid(
        &c,
        base,
        Method::GET,
        (&coll_self, "colls", &coll_rid),
        &[],
        None,
    )
    .await;
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(r.json()["id"], "c");

    let r = by_rid(
        &c,
        base,
        Method::GET,
        (&item_self, "docs", &item_rid),
        &with_pk,
        None,
    )
    .await;
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(r.json()["id"], "a");

    let replaced = json!({"id": "a", "pk": "p", "n": 2}).to_string();
    let r = by_rid(
        &c,
        base,
        Method::PUT,
        (&item_self, "docs", &item_rid),
        &with_pk,
        Some(replaced.as_bytes()),
    )
    .await;
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(r.json()["n"], 2);
    let r = c.read_item(base, "db", "c", "a", &json!("p"), &[]).await;
    assert_eq!(r.json()["n"], 2);

    // Signed over the resource id as it is cased: refused (SDKs lower-case it).
    let cased = item["_rid"].as_str().unwrap();
    assert_ne!(cased, item_rid);
    let r = by_rid(
        &c,
        base,
        Method::GET,
        (&item_self, "docs", cased),
        &with_pk,
        None,
    )
    .await;
    assert_eq!(r.status, 401, "{r:?}");

    let r = by_rid(
        &c,
        base,
        Method::DELETE,
        (&item_self, "docs", &item_rid),
        &with_pk,
        None,
    )
    .await;
    assert_eq!(r.status, 204, "{r:?}");
    let r = c.read_item(base, "db", "c", "a", &json!("p"), &[]).await;
    assert_eq!(r.status, 404);
    let r = by_rid(
        &c,
        base,
        Method::GET,
        (&item_self, "docs", &item_rid),
        &with_pk,
        None,
    )
    .await;
    assert_eq!(r.status, 404, "{r:?}");
}

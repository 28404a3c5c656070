//! Replacing a container's settings over real HTTP: the indexing policy and default TTL change and
//! read back; the partition key definition and unique key policy stay as created (400 otherwise);
//! the etag moves and `If-Match` is honoured; items survive a replace.

use crate::common;

use common::{start_with_container, TestClient};
use cosmos_emulator::EmulatorBuilder;
use http::Method;
use serde_json::{json, Value};

async fn put(c: &TestClient, base: &str, body: &Value, extra: &[(&str, &str)]) -> common::Resp {
    let mut headers = vec![("content-type", "application/json")];
    headers.extend_from_slice(extra);
    c.send(
        base,
        Method::PUT,
        "/dbs/db/colls/u",
        &headers,
        Some(body.to_string().as_bytes()),
    )
    .await
}

#[tokio::test]
async fn settings_change_and_fixed_ones_are_refused() {
    let (emu, c) = start_with_container(EmulatorBuilder::new()).await;
    let base = emu.endpoint();
    let definition = json!({
        "id": "u",
        "partitionKey": {"paths": ["/pk"], "kind": "Hash"},
        "uniqueKeyPolicy": {"uniqueKeys": [{"paths": ["/email"]}]},
        "defaultTtl": 3600
    });
    let created = c.post_json(base, "/dbs/db/colls", &[], &definition).await;
    assert_eq!(created.status, 201, "{created:?}");
    assert_eq!(created.json()["defaultTtl"], 3600);
    let item = c
        .create_item(
            base,
            "db",
            "u",
            &json!({"id": "a", "pk": "p", "email": "x@y"}),
        )
        .await;
    assert_eq!(item.status, 201, "{item:?}");

    let mut changed = created.json();
    changed["indexingPolicy"] = json!({"indexingMode": "consistent", "automatic": true,
        "includedPaths": [{"path": "/email/?"}], "excludedPaths": [{"path": "/*"}]});
    changed["defaultTtl"] = json!(-1);
    let etag = created.header("etag").unwrap().to_owned();
    let replaced = put(&c, base, &changed, &[("if-match", &etag)]).await;
    assert_eq!(replaced.status, 200, "{replaced:?}");
    assert_ne!(replaced.header("etag"), Some(etag.as_str()));
    let read = c.get(base, "/dbs/db/colls/u", &[]).await;
    let got = read.json();
    assert_eq!(got["defaultTtl"], -1);
    assert_eq!(
        got["indexingPolicy"]["includedPaths"][0]["path"],
        "/email/?"
    );
    assert_eq!(got["_rid"], created.json()["_rid"]);
    assert_eq!(
        got["uniqueKeyPolicy"]["uniqueKeys"][0]["paths"][0],
        "/email"
    );
    assert_eq!(read.header("etag"), replaced.header("etag"));

    // A stale etag is a 412; what cannot change is a 400 and changes nothing.
    let stale = put(&c, base, &changed, &[("if-match", &etag)]).await;
    assert_eq!(stale.status, 412, "{stale:?}");
    let mut other_pk = got.clone();
    other_pk["partitionKey"] = json!({"paths": ["/other"], "kind": "Hash"});
    let mut other_keys = got.clone();
    other_keys["uniqueKeyPolicy"] = json!({"uniqueKeys": [{"paths": ["/name"]}]});
    let mut bad_ttl = got.clone();
    bad_ttl["defaultTtl"] = json!(0);
    let mut renamed = got.clone();
    renamed["id"] = json!("v");
    for (body, needle) in [
        (other_pk, "partition key"),
        (other_keys, "unique key policy"),
        (bad_ttl, "defaultTtl"),
        (renamed, "id cannot be changed"),
    ] {
        let r = put(&c, base, &body, &[]).await;
        assert_eq!(r.status, 400, "{r:?}");
        assert!(r.message().contains(needle), "{}", r.message());
    }
    let after = c.get(base, "/dbs/db/colls/u", &[]).await;
    assert_eq!(after.header("etag"), replaced.header("etag"));
    let kept = c.read_item(base, "db", "u", "a", &json!("p"), &[]).await;
    assert_eq!(kept.status, 200, "{kept:?}");

    // A container that does not exist is a 404.
    let missing = c
        .send(
            base,
            Method::PUT,
            "/dbs/db/colls/nope",
            &[],
            Some(json!({"id": "nope"}).to_string().as_bytes()),
        )
        .await;
    assert_eq!(missing.status, 404, "{missing:?}");
}

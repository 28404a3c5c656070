//! Throughput offers over real HTTP: created with databases and containers, listed, found by the
//! SDKs' queries, read, replaced, removed with their owner; bad throughput is a 400.

use crate::common;

use common::{master_auth, now_date, start_with_container, Resp, TestClient};
use cosmos_emulator::EmulatorBuilder;
use http::Method;
use serde_json::{json, Value};

async fn offer_query(c: &TestClient, base: &str, body: &Value) -> Resp {
    c.post_json(
        base,
        "/offers",
        &[
            ("x-ms-documentdb-isquery", "True"),
            ("content-type", "application/query+json"),
        ],
        body,
    )
    .await
}

/// A request on `/offers/{id}`, signed as the SDKs sign resources addressed by resource id: the
/// link is the id alone.
async fn on_offer(
    c: &TestClient,
    base: &str,
    method: Method,
    id: &str,
    extra: &[(&str, &str)],
    body: Option<&[u8]>,
) -> Resp {
    let date = now_date();
    let auth = master_auth(&c.key, method.as_str(), "offers", id, &date);
    let mut headers = vec![
        ("x-ms-date", date.as_str()),
        ("authorization", auth.as_str()),
        ("x-ms-version", "2020-07-15"),
    ];
    headers.extend_from_slice(extra);
    c.send_raw(base, method, &format!("/offers/{id}/"), &headers, body)
        .await
}

fn offers(r: &Resp) -> Vec<Value> {
    r.json()["Offers"]
        .as_array()
        .unwrap_or_else(|| panic!("no Offers: {r:?}"))
        .clone()
}

async fn create_container(c: &TestClient, base: &str, id: &str, headers: &[(&str, &str)]) -> Resp {
    let body = json!({"id": id, "partitionKey": {"paths": ["/pk"], "kind": "Hash"}});
    c.post_json(base, "/dbs/db/colls", headers, &body).await
}

#[tokio::test]
async fn containers_get_offers_the_sdks_find_read_and_replace() {
    let (emu, c) = start_with_container(EmulatorBuilder::new()).await;
    let base = emu.endpoint();
    let created = create_container(&c, base, "manual", &[("x-ms-offer-throughput", "700")]).await;
    assert_eq!(created.status, 201, "{created:?}");
    let link = created.json()["_self"].as_str().unwrap().to_owned();
    let auto = create_container(
        &c,
        base,
        "auto",
        &[(
            "x-ms-cosmos-offer-autopilot-settings",
            r#"{"maxThroughput": 4000}"#,
        )],
    )
    .await;
    let auto_rid = auto.json()["_rid"].as_str().unwrap().to_owned();

    // The Python SDK's query, with a parameter.
    let found = offer_query(
        &c,
        base,
        &json!({"query": "SELECT * FROM root r WHERE r.resource=@link", "parameters": [{"name": "@link", "value": link}]}),
    )
    .await;
    let [offer] = offers(&found)
        .try_into()
        .unwrap_or_else(|o: Vec<Value>| panic!("{o:?}"));
    assert_eq!(offer["content"]["offerThroughput"], 700);
    assert_eq!(offer["offerResourceId"], created.json()["_rid"]);
    // The Node.js SDK's query, with the link inline; and by resource id.
    let node = offer_query(
        &c,
        base,
        &json!({"query": format!("SELECT * from root where root.resource = \"{link}\"")}),
    )
    .await;
    assert_eq!(offers(&node).len(), 1);
    let by_rid = offer_query(
        &c,
        base,
        &json!({"query": format!("SELECT * FROM root r WHERE r.offerResourceId = '{auto_rid}'")}),
    )
    .await;
    assert_eq!(
        offers(&by_rid)[0]["content"]["offerAutopilotSettings"]["maxThroughput"],
        4000
    );
    // The default container "c" got 400 RU/s; the feed lists all three.
    let all = c.get(base, "/offers", &[]).await;
    assert_eq!(offers(&all).len(), 3);

    let id = offer["id"].as_str().unwrap().to_owned();
    assert_eq!(offer["_self"], format!("offers/{id}/"));
    let read = on_offer(&c, base, Method::GET, &id, &[], None).await;
    assert_eq!(read.status, 200, "{read:?}");
    let mut changed = read.json();
    changed["content"]["offerThroughput"] = json!(1200);
    let etag = read.header("etag").unwrap().to_owned();
    let body = changed.to_string();
    let replaced = on_offer(
        &c,
        base,
        Method::PUT,
        &id,
        &[("if-match", &etag)],
        Some(body.as_bytes()),
    )
    .await;
    assert_eq!(replaced.status, 200, "{replaced:?}");
    assert_eq!(replaced.json()["content"]["offerThroughput"], 1200);
    let stale = on_offer(
        &c,
        base,
        Method::PUT,
        &id,
        &[("if-match", &etag)],
        Some(body.as_bytes()),
    )
    .await;
    assert_eq!(stale.status, 412);
    changed["content"]["offerThroughput"] = json!(450);
    let bad = on_offer(
        &c,
        base,
        Method::PUT,
        &id,
        &[],
        Some(changed.to_string().as_bytes()),
    )
    .await;
    assert_eq!(bad.status, 400, "{bad:?}");

    // Deleting the container removes its offer.
    let deleted = c
        .send(base, Method::DELETE, "/dbs/db/colls/manual", &[], None)
        .await;
    assert_eq!(deleted.status, 204);
    assert_eq!(offers(&c.get(base, "/offers", &[]).await).len(), 2);
    assert_eq!(
        on_offer(&c, base, Method::GET, &id, &[], None).await.status,
        404
    );
}

#[tokio::test]
async fn a_database_with_shared_throughput_keeps_its_containers_offerless() {
    let (emu, c) = start_with_container(EmulatorBuilder::new()).await;
    let base = emu.endpoint();
    let db = c
        .post_json(
            base,
            "/dbs",
            &[("x-ms-offer-throughput", "1000")],
            &json!({"id": "shared"}),
        )
        .await;
    assert_eq!(db.status, 201);
    let body = json!({"id": "inner", "partitionKey": {"paths": ["/pk"], "kind": "Hash"}});
    assert_eq!(
        c.post_json(base, "/dbs/shared/colls", &[], &body)
            .await
            .status,
        201
    );
    let db_link = db.json()["_self"].as_str().unwrap().to_owned();
    let found = offer_query(&c, base, &json!({"query": "SELECT * FROM root r WHERE r.resource = @l", "parameters": [{"name": "@l", "value": db_link}]})).await;
    assert_eq!(offers(&found)[0]["content"]["offerThroughput"], 1000);
    assert_eq!(
        offers(&c.get(base, "/offers", &[]).await).len(),
        2,
        "db c's default container and the shared database"
    );
    assert_eq!(
        c.send(base, Method::DELETE, "/dbs/shared", &[], None)
            .await
            .status,
        204
    );
    assert_eq!(offers(&c.get(base, "/offers", &[]).await).len(), 1);
}

#[tokio::test]
async fn bad_throughput_and_bad_offer_queries_are_400s() {
    let (emu, c) = start_with_container(EmulatorBuilder::new()).await;
    let base = emu.endpoint();
    for headers in [
        vec![("x-ms-offer-throughput", "399")],
        vec![("x-ms-offer-throughput", "many")],
        vec![(
            "x-ms-cosmos-offer-autopilot-settings",
            "{\"maxThroughput\": 10}",
        )],
        vec![
            ("x-ms-offer-throughput", "400"),
            (
                "x-ms-cosmos-offer-autopilot-settings",
                "{\"maxThroughput\": 4000}",
            ),
        ],
    ] {
        let r = create_container(&c, base, "bad", &headers).await;
        assert_eq!(r.status, 400, "{headers:?}: {r:?}");
    }
    assert_eq!(c.get(base, "/dbs/db/colls/bad", &[]).await.status, 404);
    for body in [
        json!({"query": "SELECT * FROM root r WHERE"}),
        json!({"query": "SELECT * FROM root r WHERE r.resource = @nope"}),
        json!({"q": "SELECT * FROM root"}),
    ] {
        let r = offer_query(&c, base, &body).await;
        assert_eq!(r.status, 400, "{body}: {r:?}");
    }
}

#[tokio::test]
async fn switching_manual_and_autoscale_needs_the_migration_headers() {
    let (emu, c) = start_with_container(EmulatorBuilder::new()).await;
    let base = emu.endpoint();
    let all = offers(&c.get(base, "/offers", &[]).await);
    let offer = all[0].clone();
    let id = offer["id"].as_str().unwrap().to_owned();
    let put = |content: Value, extra: Vec<(&'static str, &'static str)>| {
        let mut body = offer.clone();
        body["content"] = content;
        let c = &c;
        let id = id.clone();
        async move {
            on_offer(
                c,
                base,
                Method::PUT,
                &id,
                &extra,
                Some(body.to_string().as_bytes()),
            )
            .await
        }
    };
    let auto = json!({"offerThroughput": 400, "offerAutopilotSettings": {"maxThroughput": 4000}});
    let refused = put(auto.clone(), vec![]).await;
    assert_eq!(refused.status, 400, "{refused:?}");
    assert!(refused
        .message()
        .contains("x-ms-cosmos-migrate-offer-to-autopilot"));
    let migrated = put(
        json!({"offerThroughput": 400}),
        vec![("x-ms-cosmos-migrate-offer-to-autopilot", "true")],
    )
    .await;
    assert_eq!(migrated.status, 200, "{migrated:?}");
    assert_eq!(
        migrated.json()["content"]["offerAutopilotSettings"]["maxThroughput"],
        4000
    );
    let raised = put(
        json!({"offerThroughput": 600, "offerAutopilotSettings": {"maxThroughput": 7000}}),
        vec![],
    )
    .await;
    assert_eq!(raised.status, 200, "{raised:?}");
    let read = on_offer(&c, base, Method::GET, &id, &[], None).await;
    assert_eq!(
        read.json()["content"]["offerAutopilotSettings"]["maxThroughput"],
        7000
    );
    let to_manual = put(json!({"offerThroughput": 1000}), vec![]).await;
    assert_eq!(to_manual.status, 400, "{to_manual:?}");
    assert!(to_manual
        .message()
        .contains("x-ms-cosmos-migrate-offer-to-manual-throughput"));
    let back = put(
        read.json()["content"].clone(),
        vec![("x-ms-cosmos-migrate-offer-to-manual-throughput", "true")],
    )
    .await;
    assert_eq!(back.status, 200, "{back:?}");
    assert_eq!(back.json()["content"]["offerThroughput"], 700);
    assert!(back.json()["content"]
        .get("offerAutopilotSettings")
        .is_none());
}

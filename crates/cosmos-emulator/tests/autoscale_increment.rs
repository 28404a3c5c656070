//! Autoscale offers keep their increment percent (`autoUpgradePolicy.throughputPolicy.
//! incrementPercent`) from create and replace, and a maximum below the least is refused in the
//! service's words.

use crate::common;

use common::{master_auth, now_date, start_with_container, TestClient};
use cosmos_emulator::EmulatorBuilder;
use http::Method;
use serde_json::{json, Value};

async fn offer_of(c: &TestClient, base: &str, rid: &str) -> Value {
    let r = c
        .post_json(
            base,
            "/offers",
            &[
                ("x-ms-documentdb-isquery", "True"),
                ("content-type", "application/query+json"),
            ],
            &json!({"query": "SELECT * FROM c WHERE c.offerResourceId = @rid",
                    "parameters": [{"name": "@rid", "value": rid}]}),
        )
        .await;
    assert_eq!(r.status, 200, "{r:?}");
    r.json()["Offers"][0].clone()
}

#[tokio::test]
async fn increment_percent_is_kept_from_create_and_replace() {
    let (emu, c) = start_with_container(EmulatorBuilder::new().partitions(1)).await;
    let base = emu.endpoint();
    let settings = r#"{"maxThroughput": 5000, "autoUpgradePolicy": {"throughputPolicy": {"incrementPercent": 2}}}"#;
    let r = c
        .post_json(
            base,
            "/dbs/db/colls",
            &[("x-ms-cosmos-offer-autopilot-settings", settings)],
            &json!({"id": "auto", "partitionKey": {"paths": ["/pk"], "kind": "Hash"}}),
        )
        .await;
    assert_eq!(r.status, 201, "{r:?}");
    let rid = r.json()["_rid"].as_str().unwrap().to_owned();
    let mut offer = offer_of(&c, base, &rid).await;
    let auto = &offer["content"]["offerAutopilotSettings"];
    assert_eq!(auto["maxThroughput"], 5000);
    assert_eq!(
        auto["autoUpgradePolicy"]["throughputPolicy"]["incrementPercent"],
        2
    );

    offer["content"]["offerAutopilotSettings"] = json!({"maxThroughput": 7000,
        "autoUpgradePolicy": {"throughputPolicy": {"incrementPercent": 20}}});
    let id = offer["id"].as_str().unwrap().to_lowercase();
    let date = now_date();
    let auth = master_auth(&c.key, "PUT", "offers", &id, &date);
    let r = c
        .send_raw(
            base,
            Method::PUT,
            &format!("/offers/{id}/"),
            &[
                ("x-ms-date", date.as_str()),
                ("authorization", auth.as_str()),
                ("x-ms-version", "2020-07-15"),
            ],
            Some(offer.to_string().as_bytes()),
        )
        .await;
    assert_eq!(r.status, 200, "{r:?}");
    let offer = offer_of(&c, base, &rid).await;
    let auto = &offer["content"]["offerAutopilotSettings"];
    assert_eq!(auto["maxThroughput"], 7000);
    assert_eq!(
        auto["autoUpgradePolicy"]["throughputPolicy"]["incrementPercent"],
        20
    );

    let r = c
        .post_json(
            base,
            "/dbs/db/colls",
            &[(
                "x-ms-cosmos-offer-autopilot-settings",
                r#"{"maxThroughput": -200}"#,
            )],
            &json!({"id": "bad", "partitionKey": {"paths": ["/pk"], "kind": "Hash"}}),
        )
        .await;
    assert_eq!(r.status, 400, "{r:?}");
    assert!(
        r.message()
            .contains("Requested throughput -200 is less than required minimum throughput 1000"),
        "{r:?}"
    );
}

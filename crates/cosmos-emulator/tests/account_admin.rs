//! `POST /_emulator/account`: the account-level switches the admin API sets and `GET /` (on the
//! global and every regional endpoint) then carries: `enablePerPartitionFailoverBehavior`.

use crate::common;

use common::TestClient;
use cosmos_emulator::{EmulatorBuilder, WELL_KNOWN_KEY};
use http::Method;
use serde_json::{json, Value};

const PATH: &str = "/_emulator/account";
const SWITCH: &str = "enablePerPartitionFailoverBehavior";

#[tokio::test]
async fn the_switch_set_through_the_admin_api_is_in_the_account_document() {
    let emu = EmulatorBuilder::new()
        .regions(["East US", "West US"])
        .start()
        .await
        .unwrap();
    let c = TestClient::new(WELL_KNOWN_KEY);
    let doc = c.get(emu.endpoint(), "/", &[]).await.json();
    assert!(doc.get(SWITCH).is_none(), "unset by default: {doc}");
    assert_eq!(
        c.admin_get(emu.endpoint(), PATH).await.json()[SWITCH],
        Value::Null
    );

    for (body, want) in [
        (json!({ SWITCH: false }), json!(false)),
        (json!({ SWITCH: true }), json!(true)),
    ] {
        let r = c
            .admin(emu.endpoint(), Method::POST, PATH, Some(&body.to_string()))
            .await;
        assert_eq!(r.status, 200, "{}", r.message());
        assert_eq!(r.json()[SWITCH], want);
        for base in [emu.endpoint(), emu.region_endpoint("West US").unwrap()] {
            let doc = c.get(base, "/", &[]).await.json();
            assert_eq!(doc[SWITCH], want, "{base}");
        }
        assert_eq!(c.admin_get(emu.endpoint(), PATH).await.json()[SWITCH], want);
    }

    // null takes the property out of the document again.
    let r = c
        .admin(
            emu.endpoint(),
            Method::POST,
            PATH,
            Some(&json!({ SWITCH: null }).to_string()),
        )
        .await;
    assert_eq!(r.status, 200);
    let doc = c.get(emu.endpoint(), "/", &[]).await.json();
    assert!(doc.get(SWITCH).is_none(), "{doc}");
}

#[tokio::test]
async fn malformed_bodies_wrong_methods_and_missing_credentials_are_refused() {
    let emu = EmulatorBuilder::new().start().await.unwrap();
    let c = TestClient::new(WELL_KNOWN_KEY);
    for body in [
        "not json",
        "[1]",
        "{}",
        r#"{"enablePerPartitionFailoverBehavior": "no"}"#,
        r#"{"enablePerPartitionFailoverBehavior": 1}"#,
        r#"{"enablePerPartitionFailoverBehavior": true, "other": 1}"#,
    ] {
        let r = c
            .admin(emu.endpoint(), Method::POST, PATH, Some(body))
            .await;
        assert_eq!(r.status, 400, "{body}: {}", r.message());
    }
    let doc = c.get(emu.endpoint(), "/", &[]).await.json();
    assert!(doc.get(SWITCH).is_none(), "a refused body changes nothing");
    let r = c.admin(emu.endpoint(), Method::DELETE, PATH, None).await;
    assert_eq!(r.status, 405);
    let r = c
        .send_raw(
            emu.endpoint(),
            Method::POST,
            PATH,
            &[("content-type", "application/json")],
            Some(br#"{"enablePerPartitionFailoverBehavior": false}"#),
        )
        .await;
    assert!(r.status == 401 || r.status == 403, "{}", r.status);
    let doc = c.get(emu.endpoint(), "/", &[]).await.json();
    assert!(doc.get(SWITCH).is_none());
}

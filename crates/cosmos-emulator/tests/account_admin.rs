//! `POST /_emulator/account`: the account-level switches the admin API sets and `GET /` (on the
//! global and every regional endpoint) then carries: `disableCrossRegionalHedging` (the hedging
//! kill switch, `false` by default) and `enablePerPartitionFailoverBehavior` (left out by default).

use crate::common;

use common::TestClient;
use cosmos_emulator::{EmulatorBuilder, WELL_KNOWN_KEY};
use http::Method;
use serde_json::{json, Value};

const PATH: &str = "/_emulator/account";
const KILL_SWITCH: &str = "disableCrossRegionalHedging";
const PPAF: &str = "enablePerPartitionFailoverBehavior";

#[tokio::test]
async fn the_switches_set_through_the_admin_api_are_in_the_account_document() {
    let emu = EmulatorBuilder::new()
        .regions(["East US", "West US"])
        .start()
        .await
        .unwrap();
    let c = TestClient::new(WELL_KNOWN_KEY);
    let doc = c.get(emu.endpoint(), "/", &[]).await.json();
    assert_eq!(doc[KILL_SWITCH], json!(false), "false by default: {doc}");
    assert!(doc.get(PPAF).is_none(), "unset by default: {doc}");
    let answer = c.admin_get(emu.endpoint(), PATH).await.json();
    assert_eq!(answer, json!({ KILL_SWITCH: false, PPAF: null }));

    // Each row: the body sent, then what the document carries for both switches.
    let table = [
        (json!({ KILL_SWITCH: true }), json!(true), Value::Null),
        (json!({ PPAF: false }), json!(true), json!(false)),
        (
            json!({ KILL_SWITCH: false, PPAF: true }),
            json!(false),
            json!(true),
        ),
        (json!({ KILL_SWITCH: null }), Value::Null, json!(true)),
        (
            json!({ PPAF: null, KILL_SWITCH: true }),
            json!(true),
            Value::Null,
        ),
    ];
    for (body, kill, ppaf) in table {
        let r = c
            .admin(emu.endpoint(), Method::POST, PATH, Some(&body.to_string()))
            .await;
        assert_eq!(r.status, 200, "{body}: {}", r.message());
        assert_eq!(r.json(), json!({ KILL_SWITCH: kill, PPAF: ppaf }), "{body}");
        for base in [emu.endpoint(), emu.region_endpoint("West US").unwrap()] {
            let doc = c.get(base, "/", &[]).await.json();
            // null: left out of the document.
            assert_eq!(
                doc.get(KILL_SWITCH),
                kill.as_bool().map(Value::Bool).as_ref()
            );
            assert_eq!(doc.get(PPAF), ppaf.as_bool().map(Value::Bool).as_ref());
        }
        assert_eq!(
            c.admin_get(emu.endpoint(), PATH).await.json(),
            json!({ KILL_SWITCH: kill, PPAF: ppaf })
        );
    }
}

#[tokio::test]
async fn malformed_bodies_wrong_methods_and_missing_credentials_are_refused() {
    let emu = EmulatorBuilder::new().start().await.unwrap();
    let c = TestClient::new(WELL_KNOWN_KEY);
    for body in [
        "not json",
        "[1]",
        "{}",
        r#"{"disableCrossRegionalHedging": "yes"}"#,
        r#"{"disableCrossRegionalHedging": 1}"#,
        r#"{"enablePerPartitionFailoverBehavior": "no"}"#,
        r#"{"disableCrossRegionalHedging": true, "other": 1}"#,
        r#"{"disableCrossRegionalHedging": true, "enablePerPartitionFailoverBehavior": 0}"#,
    ] {
        let r = c
            .admin(emu.endpoint(), Method::POST, PATH, Some(body))
            .await;
        assert_eq!(r.status, 400, "{body}: {}", r.message());
    }
    let unchanged = json!({ KILL_SWITCH: false, PPAF: null });
    assert_eq!(
        c.admin_get(emu.endpoint(), PATH).await.json(),
        unchanged,
        "a refused body changes nothing, not even its valid half"
    );
    let r = c.admin(emu.endpoint(), Method::DELETE, PATH, None).await;
    assert_eq!(r.status, 405);
    let r = c
        .send_raw(
            emu.endpoint(),
            Method::POST,
            PATH,
            &[("content-type", "application/json")],
            Some(br#"{"disableCrossRegionalHedging": true}"#),
        )
        .await;
    assert!(r.status == 401 || r.status == 403, "{}", r.status);
    let doc = c.get(emu.endpoint(), "/", &[]).await.json();
    assert_eq!(doc[KILL_SWITCH], json!(false));
}

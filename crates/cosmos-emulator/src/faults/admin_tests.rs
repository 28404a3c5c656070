//! Tests of the admin API handler.

use http::Method;
use serde_json::{json, Value};

use super::admin::{handle, AdminResponse};
use super::*;

struct Emulator {
    faults: FaultInjector,
    counters: RequestCounters,
}

impl Emulator {
    fn new() -> Self {
        Emulator {
            faults: FaultInjector::new(),
            counters: RequestCounters::default(),
        }
    }

    fn call(&self, method: Method, path: &str, body: &str) -> (u16, Value) {
        let AdminResponse { status, body } =
            handle(&method, path, body.as_bytes(), &self.faults, &self.counters)
                .unwrap_or_else(|| panic!("{path} is not an admin path"));
        let body = serde_json::from_slice(&body)
            .unwrap_or_else(|e| panic!("{path} answered non-JSON: {e}"));
        (status, body)
    }
}

#[test]
fn non_admin_paths_and_failover_are_left_to_the_server() {
    let emulator = Emulator::new();
    for path in [
        "/",
        "/dbs/db",
        "/_emulator",
        "/_emulatorx/faults",
        "/_emulator/failover",
        "/_emulator/failover?to=West",
    ] {
        assert!(
            handle(
                &Method::POST,
                path,
                b"",
                &emulator.faults,
                &emulator.counters
            )
            .is_none(),
            "{path}"
        );
    }
}

#[test]
fn add_list_delete_rules() {
    let emulator = Emulator::new();
    let (status, body) = emulator.call(
        Method::POST,
        "/_emulator/faults",
        r#"{"rules":[{"name":"a","reaction":"close"},{"name":"b","ops":["read"],"reaction":{"respond":{"status":503}}}]}"#,
    );
    assert_eq!(status, 201);
    let ids: Vec<u64> = body["ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    assert_eq!(ids.len(), 2);

    emulator.faults.evaluate(&RequestFacts {
        region: "East US",
        op: OpKind::Read,
        path: "/",
        headers: None,
    });
    let (status, body) = emulator.call(Method::GET, "/_emulator/faults", "");
    assert_eq!(status, 200);
    assert_eq!(body["profile"], "local");
    assert_eq!(body["rules"][0]["name"], "a");
    assert_eq!(body["rules"][0]["hits"], 1);
    assert_eq!(body["rules"][1]["hits"], 0);
    assert_eq!(body["rules"][1]["reaction"]["respond"]["status"], 503);

    let (status, body) = emulator.call(Method::GET, &format!("/_emulator/faults/{}", ids[1]), "");
    assert_eq!((status, body["name"].clone()), (200, json!("b")));

    let (status, body) =
        emulator.call(Method::DELETE, &format!("/_emulator/faults/{}", ids[0]), "");
    assert_eq!((status, body), (200, json!({"removed": ids[0]})));
    let (status, body) =
        emulator.call(Method::DELETE, &format!("/_emulator/faults/{}", ids[0]), "");
    assert_eq!(status, 404);
    assert!(body["message"]
        .as_str()
        .unwrap()
        .contains("no fault rule with id"));
    assert_eq!(emulator.faults.rules().len(), 1);

    let (status, body) = emulator.call(Method::DELETE, "/_emulator/faults/", "");
    assert_eq!((status, body), (200, json!({"removed": 1})));
    assert!(emulator.faults.rules().is_empty());
}

#[test]
fn bad_rules_answer_400_naming_the_field() {
    let emulator = Emulator::new();
    let (status, body) = emulator.call(
        Method::POST,
        "/_emulator/faults",
        r#"{"rules":[{"reaction":"close","ops":["rread"]}]}"#,
    );
    assert_eq!(status, 400);
    assert_eq!(body["code"], "BadRequest");
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .starts_with("rules[0].ops[0]"),
        "{body}"
    );
    let (status, _) = emulator.call(Method::POST, "/_emulator/faults", "\u{0}\u{1}garbage");
    assert_eq!(status, 400);
}

#[test]
fn rules_toggle_with_patch() {
    let emulator = Emulator::new();
    let id = emulator
        .faults
        .add_persistent(FaultRule::new(Reaction::Close));
    let path = format!("/_emulator/faults/{id}");
    let (status, body) = emulator.call(Method::PATCH, &path, r#"{"enabled":false}"#);
    assert_eq!((status, body["enabled"].clone()), (200, json!(false)));
    assert_eq!(
        emulator.faults.evaluate(&RequestFacts {
            region: "A",
            op: OpKind::Read,
            path: "/",
            headers: None,
        }),
        Verdict::SERVE
    );
    assert_eq!(
        emulator.call(Method::PATCH, &path, r#"{"enabled":"no"}"#).0,
        400
    );
    assert_eq!(emulator.call(Method::PATCH, &path, "{").0, 400);
    assert_eq!(
        emulator
            .call(
                Method::PATCH,
                "/_emulator/faults/777",
                r#"{"enabled":true}"#
            )
            .0,
        404
    );
}

#[test]
fn bad_ids_and_methods() {
    let emulator = Emulator::new();
    let (status, body) = emulator.call(Method::DELETE, "/_emulator/faults/abc", "");
    assert_eq!(status, 400);
    assert!(body["message"].as_str().unwrap().contains("\"abc\""));
    assert_eq!(emulator.call(Method::PUT, "/_emulator/faults", "").0, 405);
    assert_eq!(
        emulator.call(Method::POST, "/_emulator/faults/1", "").0,
        405
    );
    assert_eq!(
        emulator.call(Method::POST, "/_emulator/counters", "").0,
        405
    );
    assert_eq!(
        emulator.call(Method::DELETE, "/_emulator/profile", "").0,
        405
    );
}

#[test]
fn unknown_admin_path_is_404_json() {
    let emulator = Emulator::new();
    let (status, body) = emulator.call(Method::GET, "/_emulator/nothing", "");
    assert_eq!(status, 404);
    assert_eq!(body["code"], "NotFound");
    assert!(body["message"]
        .as_str()
        .unwrap()
        .contains("/_emulator/nothing"));
    assert_eq!(emulator.call(Method::GET, "/_emulator/", "").0, 404);
    assert_eq!(
        emulator.call(Method::GET, "/_emulator/faults/1/2", "").0,
        404
    );
}

#[test]
fn counters_read_and_reset() {
    let emulator = Emulator::new();
    emulator.counters.record("West US", OpKind::Read);
    emulator.counters.record("West US", OpKind::Read);
    let (status, body) = emulator.call(Method::GET, "/_emulator/counters?x=1", "");
    assert_eq!((status, body["West US"]["read"].clone()), (200, json!(2)));
    let (status, _) = emulator.call(Method::DELETE, "/_emulator/counters", "");
    assert_eq!(status, 200);
    assert_eq!(emulator.counters.get("West US", OpKind::Read), 0);
}

#[test]
fn profile_get_and_put() {
    let emulator = Emulator::new();
    let regions = vec!["East US".to_owned(), "West US".to_owned()];
    let (status, body) = emulator.call(Method::PUT, "/_emulator/profile", r#"{"name":"geo"}"#);
    assert_eq!(status, 400, "no regions known yet: {body}");
    emulator.faults.set_profile("local", &regions).unwrap();
    let (status, body) = emulator.call(
        Method::PUT,
        "/_emulator/profile",
        r#"{"name":"slow-primary"}"#,
    );
    assert_eq!(
        (status, body.clone()),
        (200, json!({"name":"slow-primary","regions":regions})),
        "{body}"
    );
    assert_eq!(emulator.faults.profile_rules().len(), 3);
    let (status, body) = emulator.call(Method::GET, "/_emulator/faults", "");
    assert_eq!(
        (status, body["profile_rules"].as_array().unwrap().len()),
        (200, 3)
    );
    let (status, body) = emulator.call(
        Method::PUT,
        "/_emulator/profile",
        r#"{"name":"geo","regions":["X"]}"#,
    );
    assert_eq!((status, body), (200, json!({"name":"geo","regions":["X"]})));
    let (status, body) = emulator.call(Method::PUT, "/_emulator/profile", r#"{"name":"turbo"}"#);
    assert_eq!(status, 400);
    assert!(body["message"]
        .as_str()
        .unwrap()
        .contains("unknown latency profile"));
    assert_eq!(
        emulator
            .call(Method::PUT, "/_emulator/profile", r#"{"name":3}"#)
            .0,
        400
    );
    assert_eq!(
        emulator
            .call(
                Method::PUT,
                "/_emulator/profile",
                r#"{"name":"geo","regions":[1]}"#
            )
            .0,
        400
    );
    assert_eq!(
        emulator.call(Method::GET, "/_emulator/profile", "").1["name"],
        "geo"
    );
}

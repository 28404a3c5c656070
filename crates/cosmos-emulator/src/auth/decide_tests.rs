use serde_json::json;

use super::*;

fn grant(mode: PermissionMode, resource: &str, pk: Option<Value>) -> Grant {
    Grant {
        mode,
        resource: resource.into(),
        partition_key: pk,
    }
}

fn intent(action: Action, target: &str, keys: Keys) -> Intent {
    Intent {
        action,
        target: target
            .split('/')
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect(),
        keys,
    }
}

#[test]
fn decisions_on_a_key_scoped_container_grant() {
    use Action::*;
    let g = grant(PermissionMode::All, "dbs/d/colls/c", Some(json!(["k"])));
    let k = || Keys::Listed(vec![json!(["k"])]);
    let cases = [
        (ReadAccount, "", Keys::NoItems, Decision::Allow),
        (Route, "dbs/d/colls/c", Keys::NoItems, Decision::Allow),
        (
            Route,
            "dbs/d/colls/o",
            Keys::NoItems,
            Decision::Deny(NOT_COVERED),
        ),
        (Read, "dbs/d/colls/c", k(), Decision::Allow),
        (Write, "dbs/d/colls/c/docs/x", k(), Decision::Allow),
        (Execute, "dbs/d/colls/c/sprocs/s", k(), Decision::Allow),
        (
            Write,
            "dbs/d/colls/c",
            Keys::Listed(vec![json!(["k"]), json!(["z"])]),
            Decision::Deny(OTHER_KEY),
        ),
        (
            Write,
            "dbs/d/colls/c",
            Keys::Listed(vec![]),
            Decision::Deny(OTHER_KEY),
        ),
        (
            Read,
            "dbs/d/colls/c",
            Keys::Every,
            Decision::Deny(OTHER_KEY),
        ),
        (
            Read,
            "dbs/d/colls/c/sprocs/s",
            Keys::NoItems,
            Decision::Deny(OTHER_KEY),
        ),
        (Read, "dbs/d", Keys::NoItems, Decision::Deny(NOT_COVERED)),
        (
            Administer,
            "dbs/d/colls/c",
            k(),
            Decision::Deny(ACCOUNT_KEY_ONLY),
        ),
    ];
    for (action, target, keys, want) in cases {
        let i = intent(action, target, keys);
        assert_eq!(decide(&g, &i), want, "{i:?}");
    }
}

#[test]
fn read_grants_do_not_write_and_links_match_whole_segments() {
    let g = grant(PermissionMode::Read, "dbs/d/colls/c", None);
    let none = || Keys::NoItems;
    assert_eq!(
        decide(
            &g,
            &intent(Action::Read, "dbs/d/colls/c/docs/a", Keys::Every)
        ),
        Decision::Allow
    );
    assert_eq!(
        decide(&g, &intent(Action::Write, "dbs/d/colls/c", none())),
        Decision::Deny(READ_ONLY)
    );
    assert_eq!(
        decide(
            &g,
            &intent(Action::Execute, "dbs/d/colls/c/sprocs/s", none())
        ),
        Decision::Deny(READ_ONLY)
    );
    assert_eq!(
        decide(&g, &intent(Action::Read, "dbs/d/colls/cc", none())),
        Decision::Deny(NOT_COVERED)
    );
    let account = grant(PermissionMode::All, "dbs", None);
    assert_eq!(
        decide(&account, &intent(Action::Read, "dbs/d", none())),
        Decision::Deny(NOT_COVERED)
    );
    assert_eq!(
        decide(&account, &intent(Action::Route, "dbs/d/colls/c", none())),
        Decision::Deny(NOT_COVERED)
    );
}

#[test]
fn numbers_compare_by_value() {
    assert!(same_key(&json!([1]), &json!([1.0])));
    assert!(!same_key(&json!([1]), &json!(["1"])));
    assert!(!same_key(&json!([1, 2]), &json!([1])));
}

//! Every route × verb × client flag × partition key header × grant (mode, scope, key, by name or
//! by resource id), decided through the operation classification the dispatch uses, against an
//! expected rule written separately from HTTP facts.

use http::{HeaderMap, HeaderValue, Method};
use serde_json::{json, Value};

use super::*;
use crate::protocol::route::parse;
use crate::store::users::PermissionMode;

/// Resource ids the tests' canonical resolution knows: database `d`, container `c`, item `x`,
/// stored procedure `s`.
const RIDS: [(&str, &str); 4] = [
    ("AAAAAQ==", "d"),
    ("AAAAAYAAAAI=", "c"),
    ("AAAAAYAAAAIFAAAAAAAAAA==", "x"),
    ("AAAAAYAAAAIIAAAAAAAAAA==", "s"),
];

fn canonical(link: &[&str]) -> Vec<String> {
    link.iter()
        .map(|s| {
            RIDS.iter()
                .find(|(rid, _)| rid == s)
                .map_or(*s, |(_, name)| name)
                .to_owned()
        })
        .collect()
}

/// A number per route variant. Exhaustive: a variant added later must be given one here, and
/// then a sample path below (the coverage test fails until it has one).
fn variant(r: &Resource) -> usize {
    match r {
        Resource::Account => 0,
        Resource::Databases => 1,
        Resource::Database { .. } => 2,
        Resource::Containers { .. } => 3,
        Resource::Container { .. } => 4,
        Resource::Items { .. } => 5,
        Resource::Item { .. } => 6,
        Resource::PkRanges { .. } => 7,
        Resource::Conflicts { .. } => 8,
        Resource::Conflict { .. } => 9,
        Resource::PartitionKeyDelete { .. } => 10,
        Resource::Scripts { .. } => 11,
        Resource::Script { .. } => 12,
        Resource::Users { .. } => 13,
        Resource::User { .. } => 14,
        Resource::Permissions { .. } => 15,
        Resource::Permission { .. } => 16,
        Resource::Offers => 17,
        Resource::Offer { .. } => 18,
    }
}
const VARIANTS: usize = 19;

const PATHS: &[&str] = &[
    "/",
    "/dbs",
    "/dbs/d",
    "/dbs/AAAAAQ==",
    "/dbs/d/colls",
    "/dbs/d/colls/c",
    "/dbs/AAAAAQ==/colls/AAAAAYAAAAI=",
    "/dbs/d/colls/o",
    "/dbs/d/colls/c/docs",
    "/dbs/d/colls/o/docs",
    "/dbs/d/colls/c/docs/x",
    "/dbs/AAAAAQ==/colls/AAAAAYAAAAI=/docs/AAAAAYAAAAIFAAAAAAAAAA==",
    "/dbs/d/colls/c/docs/y",
    "/dbs/d/colls/c/pkranges",
    "/dbs/d/colls/o/pkranges",
    "/dbs/d/colls/c/conflicts",
    "/dbs/d/colls/c/conflicts/k",
    "/dbs/d/colls/c/operations/partitionkeydelete",
    "/dbs/d/colls/c/sprocs",
    "/dbs/d/colls/c/udfs",
    "/dbs/d/colls/c/triggers",
    "/dbs/d/colls/c/sprocs/s",
    "/dbs/AAAAAQ==/colls/AAAAAYAAAAI=/sprocs/AAAAAYAAAAIIAAAAAAAAAA==",
    "/dbs/d/colls/c/sprocs/t",
    "/dbs/d/colls/c/udfs/u",
    "/dbs/d/colls/c/triggers/g",
    "/dbs/d/users",
    "/dbs/d/users/u",
    "/dbs/d/users/u/permissions",
    "/dbs/d/users/u/permissions/p",
    "/offers",
    "/offers/o1",
];

const VERBS: [Method; 6] = [
    Method::GET,
    Method::POST,
    Method::PUT,
    Method::DELETE,
    Method::PATCH,
    Method::HEAD,
];

#[derive(Clone, Copy, Debug, PartialEq)]
enum Flag {
    None,
    IsQuery,
    QueryJson,
    QueryPlan,
    Batch,
    Bulk,
    Upsert,
    ChangeFeed,
    Triggers,
}
const FLAGS: [Flag; 9] = [
    Flag::None,
    Flag::IsQuery,
    Flag::QueryJson,
    Flag::QueryPlan,
    Flag::Batch,
    Flag::Bulk,
    Flag::Upsert,
    Flag::ChangeFeed,
    Flag::Triggers,
];

fn request_headers(flag: Flag, pk: Option<&Value>) -> HeaderMap {
    let mut h = HeaderMap::new();
    let mut set = |name: &'static str, value: &str| {
        h.insert(name, HeaderValue::from_str(value).unwrap());
    };
    match flag {
        Flag::None => {}
        Flag::IsQuery => set(headers::IS_QUERY, "True"),
        Flag::QueryJson => set(headers::CONTENT_TYPE, "application/query+json"),
        Flag::QueryPlan => set(headers::IS_QUERY_PLAN, "True"),
        Flag::Batch => {
            set(headers::IS_BATCH_REQUEST, "True");
            set(headers::IS_BATCH_ATOMIC, "True");
        }
        Flag::Bulk => {
            set(headers::IS_BATCH_REQUEST, "True");
            set(headers::IS_BATCH_ATOMIC, "False");
        }
        Flag::Upsert => set(headers::IS_UPSERT, "True"),
        Flag::ChangeFeed => set(headers::A_IM, "Incremental feed"),
        Flag::Triggers => set(headers::PRE_TRIGGER_INCLUDE, "t"),
    }
    if let Some(pk) = pk {
        set(headers::PARTITION_KEY, &pk.to_string());
    }
    h
}

/// A batch body: whether every operation reads, and each operation's own key (none: the
/// header's).
type Body = (bool, &'static [Option<&'static str>]);

const BODIES: [Body; 5] = [
    (true, &[Some("k")]),
    (false, &[Some("k"), Some("k")]),
    (true, &[Some("k"), Some("z")]),
    (false, &[None]),
    (true, &[]),
];

fn batch_body(reads: bool, keys: &[Option<&str>]) -> Vec<u8> {
    let ops: Vec<Value> = keys
        .iter()
        .map(|k| {
            let mut op = json!({"operationType": if reads { "Read" } else { "Upsert" }, "id": "x"});
            if let Some(k) = k {
                op["partitionKey"] = json!(json!([k]).to_string());
            }
            op
        })
        .collect();
    serde_json::to_vec(&ops).unwrap()
}

/// What a request needs, written from HTTP facts.
#[derive(Clone, Debug)]
enum Need {
    Anyone,
    AccountKey,
    /// What a client reads to route, in this container.
    Routing(Vec<String>),
    /// `write`: needs All. `keys`: `None` touches no items; `Some(keys)` (empty: every key).
    On {
        link: Vec<String>,
        write: bool,
        keys: Option<Vec<Value>>,
    },
}

fn expected_need(
    path: &str,
    method: &Method,
    flag: Flag,
    pk: Option<&Value>,
    body: Option<Body>,
) -> Need {
    let seg: Vec<String> = canonical(&path.trim_matches('/').split('/').collect::<Vec<_>>());
    let seg: Vec<String> = seg.into_iter().filter(|s| !s.is_empty()).collect();
    let container = || seg[..4.min(seg.len())].to_vec();
    let database = || seg[..2.min(seg.len())].to_vec();
    let header_keys = || Some(pk.map(|k| vec![k.clone()]).unwrap_or_default());
    let (get, post, put, delete, patch) = (
        method == Method::GET,
        method == Method::POST,
        method == Method::PUT,
        method == Method::DELETE,
        method == Method::PATCH,
    );
    let query = post && matches!(flag, Flag::IsQuery | Flag::QueryJson);
    let on =
        |link: Vec<String>, write: bool, keys: Option<Vec<Value>>| Need::On { link, write, keys };
    let kinds: Vec<&str> = seg.iter().step_by(2).map(String::as_str).collect();
    match (kinds.as_slice(), seg.len()) {
        ([], _) if get => Need::Anyone,
        (["dbs"], 2) if get => on(database(), false, None),
        (["dbs", "colls"], 3) if get || query => on(database(), false, None),
        (["dbs", "colls"], 4) if get => Need::Routing(container()),
        (["dbs", "colls", "pkranges"], 5) if get => Need::Routing(container()),
        (["dbs", "colls", "conflicts"], 5) if get || post => on(container(), false, None),
        (["dbs", "colls", "conflicts"], 6) if get || delete => on(seg.clone(), delete, None),
        (["dbs", "colls", "operations"], 6) if post => on(container(), true, header_keys()),
        (["dbs", "colls", "sprocs" | "udfs" | "triggers"], 5) if get || post => {
            on(container(), post && !query, None)
        }
        (["dbs", "colls", "sprocs"], 6) if post => on(seg.clone(), true, header_keys()),
        (["dbs", "colls", "sprocs" | "udfs" | "triggers"], 6) if get || put || delete => {
            on(seg.clone(), !get, None)
        }
        (["dbs", "colls", "docs"], 5) if post && flag == Flag::QueryPlan => {
            Need::Routing(container())
        }
        (["dbs", "colls", "docs"], 5) if query || get => on(container(), false, header_keys()),
        (["dbs", "colls", "docs"], 5) if post && matches!(flag, Flag::Batch | Flag::Bulk) => {
            let (reads, keys) = body.unwrap();
            let mut all: Vec<Value> = pk.into_iter().cloned().collect();
            let mut every = false;
            for k in keys {
                match (k, pk) {
                    (Some(k), _) => all.push(json!([k])),
                    (None, Some(_)) => {}
                    (None, None) => every = true,
                }
            }
            let write = !reads || keys.is_empty();
            on(
                container(),
                write,
                Some(if every { Vec::new() } else { all }),
            )
        }
        (["dbs", "colls", "docs"], 5) if post => on(container(), true, header_keys()),
        (["dbs", "colls", "docs"], 6) if get || put || delete || patch => {
            on(seg.clone(), !get, header_keys())
        }
        _ => Need::AccountKey,
    }
}

fn expected(need: &Need, mode: PermissionMode, granted: &[String], key: Option<&Value>) -> bool {
    let names_resource =
        granted.len() >= 2 && granted.len().is_multiple_of(2) && granted[0] == "dbs";
    let prefix = |a: &[String], b: &[String]| a.len() >= b.len() && a[..b.len()] == *b;
    match need {
        Need::Anyone => true,
        Need::AccountKey => false,
        Need::Routing(c) => names_resource && (prefix(c, granted) || prefix(granted, c)),
        Need::On { link, write, keys } => {
            names_resource
                && prefix(link, granted)
                && (!write || mode == PermissionMode::All)
                && match (key, keys) {
                    (None, _) => true,
                    (Some(_), None) => false,
                    (Some(g), Some(ks)) => !ks.is_empty() && ks.iter().all(|k| k == g),
                }
        }
    }
}

const GRANTS: &[(&str, Option<&str>)] = &[
    ("dbs", None),
    ("dbs/d", None),
    ("dbs/AAAAAQ==/", None),
    ("dbs/d/colls/c", None),
    ("dbs/AAAAAQ==/colls/AAAAAYAAAAI=/", None),
    ("dbs/d/colls/c", Some("k")),
    ("dbs/d/colls/o", None),
    ("dbs/d/colls/c/docs/x", None),
    (
        "dbs/AAAAAQ==/colls/AAAAAYAAAAI=/docs/AAAAAYAAAAIFAAAAAAAAAA==/",
        None,
    ),
    ("dbs/d/colls/c/docs/x", Some("k")),
    ("dbs/d/colls/c/sprocs/s", None),
    (
        "dbs/AAAAAQ==/colls/AAAAAYAAAAI=/sprocs/AAAAAYAAAAIIAAAAAAAAAA==",
        Some("k"),
    ),
    ("dbs/d/users/u", None),
    ("offers/o1", None),
];

#[test]
fn every_route_verb_flag_and_grant_is_decided_as_the_rules_say() {
    let mut checked = 0usize;
    let keys = [None, Some(json!(["k"])), Some(json!(["z"]))];
    for path in PATHS {
        let route = parse(path).unwrap();
        for method in &VERBS {
            for flag in FLAGS {
                for pk in &keys {
                    let headers = request_headers(flag, pk.as_ref());
                    let bodies: Vec<Option<Body>> = if matches!(flag, Flag::Batch | Flag::Bulk) {
                        BODIES.iter().map(|b| Some(*b)).collect()
                    } else {
                        vec![None]
                    };
                    for body in bodies {
                        let bytes = body.map(|(r, k)| batch_body(r, k)).unwrap_or_default();
                        let op = operation(method, &route, &headers);
                        let intent = intent_of(op, &route, &headers, &bytes, &canonical);
                        let need = expected_need(path, method, flag, pk.as_ref(), body);
                        for (link, key) in GRANTS {
                            for mode in [PermissionMode::Read, PermissionMode::All] {
                                let raw: Vec<&str> =
                                    link.split('/').filter(|s| !s.is_empty()).collect();
                                let granted = canonical(&raw);
                                let key = key.map(|k| json!([k]));
                                let grant = Grant {
                                    mode,
                                    resource: granted.join("/"),
                                    partition_key: key.clone(),
                                };
                                let got = decide(&grant, &intent) == Decision::Allow;
                                let want = expected(&need, mode, &granted, key.as_ref());
                                assert_eq!(
                                    got, want,
                                    "{method} {path} {flag:?} pk={pk:?} body={body:?} grant={mode:?} {link} {key:?}: {intent:?} / {need:?}"
                                );
                                checked += 1;
                            }
                        }
                    }
                }
            }
        }
    }
    assert!(checked > 50_000, "{checked}");
}

#[test]
fn the_sample_paths_cover_every_route_variant() {
    let mut seen = [false; VARIANTS];
    for path in PATHS {
        seen[variant(&parse(path).unwrap().resource)] = true;
    }
    let missing: Vec<usize> = (0..VARIANTS).filter(|i| !seen[*i]).collect();
    assert!(
        missing.is_empty(),
        "route variants without a sample path: {missing:?}"
    );
}

/// Every route × verb the dispatch serves has an operation kind (and so an authorization rule):
/// a verb without one answers 405 from the dispatch, so no handler runs unauthorized.
#[test]
fn served_verbs_have_an_operation_and_unserved_ones_are_administration() {
    let served: &[(&str, &[Method])] = &[
        ("/", &[Method::GET]),
        ("/dbs", &[Method::GET, Method::POST]),
        ("/dbs/d", &[Method::GET, Method::DELETE]),
        ("/dbs/d/colls", &[Method::GET, Method::POST]),
        (
            "/dbs/d/colls/c",
            &[Method::GET, Method::PUT, Method::DELETE],
        ),
        ("/dbs/d/colls/c/docs", &[Method::GET, Method::POST]),
        (
            "/dbs/d/colls/c/docs/x",
            &[Method::GET, Method::PUT, Method::DELETE, Method::PATCH],
        ),
        ("/dbs/d/colls/c/pkranges", &[Method::GET]),
        ("/dbs/d/colls/c/conflicts", &[Method::GET, Method::POST]),
        ("/dbs/d/colls/c/conflicts/k", &[Method::GET, Method::DELETE]),
        (
            "/dbs/d/colls/c/operations/partitionkeydelete",
            &[Method::POST],
        ),
        ("/dbs/d/colls/c/udfs", &[Method::GET, Method::POST]),
        (
            "/dbs/d/colls/c/sprocs/s",
            &[Method::GET, Method::POST, Method::PUT, Method::DELETE],
        ),
        (
            "/dbs/d/colls/c/udfs/u",
            &[Method::GET, Method::PUT, Method::DELETE],
        ),
        ("/dbs/d/users", &[Method::GET, Method::POST]),
        (
            "/dbs/d/users/u",
            &[Method::GET, Method::PUT, Method::DELETE],
        ),
        ("/dbs/d/users/u/permissions", &[Method::GET, Method::POST]),
        (
            "/dbs/d/users/u/permissions/p",
            &[Method::GET, Method::PUT, Method::DELETE],
        ),
        ("/offers", &[Method::GET]),
        ("/offers/o1", &[Method::GET, Method::PUT]),
    ];
    let plain = HeaderMap::new();
    for (path, verbs) in served {
        let route = parse(path).unwrap();
        for method in &VERBS {
            let op = operation(method, &route, &plain);
            assert_eq!(op.is_some(), verbs.contains(method), "{method} {path}");
            if op.is_none() {
                let intent = intent_of(op, &route, &plain, b"", &canonical);
                assert_eq!(intent.action, Action::Administer, "{method} {path}");
            }
        }
    }
}

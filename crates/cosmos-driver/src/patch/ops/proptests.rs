//! Property tests: any operation list on any document never panics, leaves the document
//! untouched on error, and fails exactly at the operation it names.

use proptest::prelude::*;
use serde_json::{json, Map, Value};

use super::super::instructions::{CosmosNumber, PatchOperation};
use super::{apply_patch_ops, JsonPointer};

/// Member names shared by documents and paths, so that paths often hit something.
const KEYS: &[&str] = &["a", "b", "c", "", "a/b", "m~n", "-", "0"];
/// Tokens for paths: the member names plus array positions, good and bad.
const TOKENS: &[&str] = &[
    "a", "b", "c", "", "a/b", "m~n", "-", "0", "1", "2", "5", "01", "x",
];

fn number() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<i64>().prop_map(Value::from),
        prop::sample::select(vec![0i64, 1, -1, i64::MAX, i64::MIN]).prop_map(Value::from),
        prop::sample::select(vec![u64::MAX, 1 << 63]).prop_map(Value::from),
        (-1e6f64..1e6).prop_map(|f| json!(f)),
        Just(json!(f64::MAX)),
    ]
}

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        number(),
        "[a-z]{0,3}".prop_map(Value::String),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((prop::sample::select(KEYS), inner), 0..5).prop_map(|members| {
                let mut map = Map::new();
                for (k, v) in members {
                    map.insert(k.to_owned(), v);
                }
                Value::Object(map)
            }),
        ]
    })
}

fn document() -> impl Strategy<Value = Value> {
    prop::collection::vec((prop::sample::select(KEYS), value()), 0..6).prop_map(|members| {
        let mut map = Map::new();
        for (k, v) in members {
            map.insert(k.to_owned(), v);
        }
        Value::Object(map)
    })
}

/// Any path, mostly well formed: 1 to 3 tokens, rarely the root or a malformed pointer.
fn any_path() -> impl Strategy<Value = String> {
    prop_oneof![
        12 => prop::collection::vec(prop::sample::select(TOKENS), 1..4)
            .prop_map(|tokens| JsonPointer::from_tokens(tokens).as_str().to_owned()),
        1 => prop::sample::select(vec!["", "a", "/~2", "/a~", "//", "/a/~1~0"]).prop_map(str::to_owned),
    ]
}

/// Pointers to every value in `doc` (except the root), and for every container one pointer to
/// a fresh child (`/-` or a new member name).
fn paths_in(doc: &Value) -> (Vec<String>, Vec<String>) {
    fn walk(
        value: &Value,
        tokens: &mut Vec<String>,
        existing: &mut Vec<String>,
        fresh: &mut Vec<String>,
    ) {
        let child = |token: String, tokens: &mut Vec<String>| {
            tokens.push(token);
            JsonPointer::from_tokens(tokens.iter().map(String::as_str))
                .as_str()
                .to_owned()
        };
        match value {
            Value::Object(map) => {
                fresh.push(child("new".into(), tokens));
                tokens.pop();
                for (key, member) in map {
                    existing.push(child(key.clone(), tokens));
                    walk(member, tokens, existing, fresh);
                    tokens.pop();
                }
            }
            Value::Array(items) => {
                fresh.push(child("-".into(), tokens));
                tokens.pop();
                for (i, item) in items.iter().enumerate() {
                    existing.push(child(i.to_string(), tokens));
                    walk(item, tokens, existing, fresh);
                    tokens.pop();
                }
            }
            _ => {}
        }
    }
    let (mut existing, mut fresh) = (Vec::new(), Vec::new());
    walk(doc, &mut Vec::new(), &mut existing, &mut fresh);
    (existing, fresh)
}

/// A path biased towards `doc`: usually an existing value, sometimes a fresh child of an existing
/// container, sometimes anything.
fn path(existing: Vec<String>, fresh: Vec<String>) -> BoxedStrategy<String> {
    let mut choices: Vec<(u32, BoxedStrategy<String>)> = vec![(2, any_path().boxed())];
    if !existing.is_empty() {
        choices.push((6, prop::sample::select(existing).boxed()));
    }
    if !fresh.is_empty() {
        choices.push((2, prop::sample::select(fresh).boxed()));
    }
    prop::strategy::Union::new_weighted(choices).boxed()
}

fn amount() -> impl Strategy<Value = CosmosNumber> {
    prop_oneof![
        any::<i64>().prop_map(CosmosNumber::Int),
        prop::sample::select(vec![1i64, -1, i64::MAX, i64::MIN]).prop_map(CosmosNumber::Int),
        (-1e3f64..1e3).prop_map(CosmosNumber::Float),
        prop::sample::select(vec![f64::NAN, f64::INFINITY, f64::MAX]).prop_map(CosmosNumber::Float),
    ]
}

fn operation(doc: &Value) -> impl Strategy<Value = PatchOperation> {
    let (existing, fresh) = paths_in(doc);
    let path = move || path(existing.clone(), fresh.clone());
    prop_oneof![
        (path(), value()).prop_map(|(path, value)| PatchOperation::Add { path, value }),
        (path(), value()).prop_map(|(path, value)| PatchOperation::Set { path, value }),
        (path(), value()).prop_map(|(path, value)| PatchOperation::Replace { path, value }),
        path().prop_map(|path| PatchOperation::Remove { path }),
        (path(), amount()).prop_map(|(path, value)| PatchOperation::Increment { path, value }),
        (path(), path()).prop_map(|(from, path)| PatchOperation::Move { from, path }),
    ]
}

/// A document and a list of operations aimed mostly at it.
fn case() -> impl Strategy<Value = (Value, Vec<PatchOperation>)> {
    document().prop_flat_map(|doc| {
        let ops = prop::collection::vec(operation(&doc), 0..8);
        (Just(doc), ops)
    })
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 2000,
        // Failing inputs are printed; no regression files are written into the source tree.
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn never_panics_and_is_atomic((doc, ops) in case()) {
        let before = serde_json::to_string(&doc).unwrap();
        let mut patched = doc.clone();
        match apply_patch_ops(&mut patched, &ops) {
            Ok(()) => {
                // The result is always serializable JSON (no NaN or infinity slipped in).
                let text = serde_json::to_string(&patched).unwrap();
                prop_assert!(serde_json::from_str::<Value>(&text).is_ok());
            }
            Err(err) => {
                prop_assert_eq!(serde_json::to_string(&patched).unwrap(), before.clone());
                prop_assert!(err.index < ops.len());
                prop_assert_eq!(err.kind, ops[err.index].kind());
                // Every operation before the failing one applies on its own, and the failing
                // one then fails for the same reason.
                let mut prefix = doc.clone();
                prop_assert!(apply_patch_ops(&mut prefix, &ops[..err.index]).is_ok());
                let again = apply_patch_ops(&mut prefix, &ops[err.index..=err.index]).unwrap_err();
                prop_assert_eq!(again.reason, err.reason);
            }
        }
    }

    #[test]
    fn one_by_one_equals_all_at_once((doc, ops) in case()) {
        let mut all = doc.clone();
        if apply_patch_ops(&mut all, &ops).is_ok() {
            let mut stepwise = doc;
            for op in &ops {
                prop_assert!(apply_patch_ops(&mut stepwise, std::slice::from_ref(op)).is_ok());
            }
            prop_assert_eq!(serde_json::to_string(&stepwise).unwrap(), serde_json::to_string(&all).unwrap());
        }
    }

    #[test]
    fn pointers_round_trip(tokens in prop::collection::vec("[a-z~/0-9-]{0,4}", 0..5)) {
        let pointer = JsonPointer::from_tokens(tokens.clone());
        let parsed = JsonPointer::parse(pointer.as_str()).unwrap();
        prop_assert_eq!(parsed.tokens(), &tokens[..]);
    }

    #[test]
    fn pointer_parsing_never_panics(text in "\\PC{0,12}") {
        let _ = JsonPointer::parse(&text);
    }
}

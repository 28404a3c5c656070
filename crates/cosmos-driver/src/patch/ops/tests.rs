//! Table-driven tests of every operation and its edge cases.
//!
//! Documents are compared by their serialized text, so member order is checked too (map
//! equality alone ignores order).

use serde_json::{json, Value};

use super::super::instructions::{PatchInstructions, PatchOperation};
use super::{apply_patch_ops, PatchFailure, PathRole, PointerError};

enum Expect {
    Doc(Value),
    Fails(usize, PatchFailure),
}

struct Case {
    name: &'static str,
    doc: Value,
    patch: PatchInstructions,
    expect: Expect,
}

fn ok(name: &'static str, doc: Value, patch: PatchInstructions, after: Value) -> Case {
    Case {
        name,
        doc,
        patch,
        expect: Expect::Doc(after),
    }
}

fn fails(
    name: &'static str,
    doc: Value,
    patch: PatchInstructions,
    index: usize,
    reason: PatchFailure,
) -> Case {
    Case {
        name,
        doc,
        patch,
        expect: Expect::Fails(index, reason),
    }
}

fn p() -> PatchInstructions {
    PatchInstructions::new()
}

fn missing(path: &str) -> PatchFailure {
    PatchFailure::ParentMissing {
        missing: path.to_owned(),
    }
}

const TARGET_MISSING: PatchFailure = PatchFailure::TargetMissing {
    role: PathRole::Path,
};
const FROM_MISSING: PatchFailure = PatchFailure::TargetMissing {
    role: PathRole::From,
};

fn run(cases: Vec<Case>) {
    for case in cases {
        let before = serde_json::to_string(&case.doc).unwrap();
        let mut doc = case.doc;
        let result = apply_patch_ops(&mut doc, &case.patch.operations);
        match case.expect {
            Expect::Doc(after) => {
                assert!(result.is_ok(), "{}: {}", case.name, result.unwrap_err());
                assert_eq!(
                    serde_json::to_string(&doc).unwrap(),
                    serde_json::to_string(&after).unwrap(),
                    "{}",
                    case.name
                );
            }
            Expect::Fails(index, reason) => {
                let err = result
                    .err()
                    .unwrap_or_else(|| panic!("{}: succeeded with {doc}", case.name));
                assert_eq!((err.index, &err.reason), (index, &reason), "{}", case.name);
                assert_eq!(
                    serde_json::to_string(&doc).unwrap(),
                    before,
                    "{}: document changed on error",
                    case.name
                );
            }
        }
    }
}

#[test]
#[rustfmt::skip]
fn add() {
    run(vec![
        ok("new member goes last", json!({"a": 1, "b": 2}), p().add("/c", json!(3)), json!({"a": 1, "b": 2, "c": 3})),
        ok("existing member replaced in place", json!({"a": 1, "b": 2}), p().add("/a", json!({"x": 1})), json!({"a": {"x": 1}, "b": 2})),
        ok("nested member", json!({"o": {"k": 1}}), p().add("/o/n", json!(null)), json!({"o": {"k": 1, "n": null}})),
        ok("insert shifts right", json!({"t": [1, 2, 3]}), p().add("/t/1", json!(9)), json!({"t": [1, 9, 2, 3]})),
        ok("insert at 0", json!({"t": [1]}), p().add("/t/0", json!(0)), json!({"t": [0, 1]})),
        ok("index == len appends", json!({"t": [1, 2]}), p().add("/t/2", json!(3)), json!({"t": [1, 2, 3]})),
        ok("dash appends", json!({"t": [1]}), p().add("/t/-", json!(2)), json!({"t": [1, 2]})),
        ok("dash on empty array", json!({"t": []}), p().add("/t/-", json!("x")), json!({"t": ["x"]})),
        ok("member named dash on object", json!({"o": {}}), p().add("/o/-", json!(1)), json!({"o": {"-": 1}})),
        ok("member named 01 on object", json!({}), p().add("/01", json!(1)), json!({"01": 1})),
        ok("empty member name", json!({"a": 1}), p().add("/", json!(2)), json!({"a": 1, "": 2})),
        ok("escaped slash", json!({"a/b": 1}), p().add("/a~1b", json!(2)), json!({"a/b": 2})),
        ok("escaped tilde", json!({}), p().add("/m~0n", json!(1)), json!({"m~n": 1})),
        ok("into array element object", json!({"t": [{"a": 1}]}), p().add("/t/0/b", json!(2)), json!({"t": [{"a": 1, "b": 2}]})),
        fails("index > len", json!({"t": [1]}), p().add("/t/2", json!(0)), 0, PatchFailure::IndexOutOfBounds { index: 2, len: 1 }),
        fails("leading zero index", json!({"t": [1]}), p().add("/t/01", json!(0)), 0, PatchFailure::NotAnArrayIndex { token: "01".into() }),
        fails("word on array", json!({"t": [1]}), p().add("/t/x", json!(0)), 0, PatchFailure::NotAnArrayIndex { token: "x".into() }),
        fails("negative index", json!({"t": [1]}), p().add("/t/-1", json!(0)), 0, PatchFailure::NotAnArrayIndex { token: "-1".into() }),
        fails("missing parent", json!({}), p().add("/a/b", json!(1)), 0, missing("/a")),
        fails("missing grandparent", json!({"a": {}}), p().add("/a/b/c", json!(1)), 0, missing("/a/b")),
        fails("dash on missing array", json!({}), p().add("/Products/-", json!(1)), 0, missing("/Products")),
        fails("scalar parent", json!({"s": "x"}), p().add("/s/k", json!(1)), 0, PatchFailure::NotAContainer { at: "/s".into(), found: "string" }),
        fails("null parent", json!({"n": null}), p().add("/n/k", json!(1)), 0, PatchFailure::NotAContainer { at: "/n".into(), found: "null" }),
        fails("root", json!({}), p().add("", json!({})), 0, PatchFailure::RootTarget { role: PathRole::Path }),
        fails("no leading slash", json!({}), p().add("a", json!(1)), 0, PatchFailure::InvalidPointer { role: PathRole::Path, error: PointerError::MissingLeadingSlash }),
        fails("bad escape", json!({}), p().add("/a~2", json!(1)), 0, PatchFailure::InvalidPointer { role: PathRole::Path, error: PointerError::BadEscape { position: 2 } }),
    ]);
}

#[test]
#[rustfmt::skip]
fn set() {
    run(vec![
        ok("new member", json!({"a": 1}), p().set("/b", json!(2)), json!({"a": 1, "b": 2})),
        ok("existing member in place", json!({"a": 1, "b": 2}), p().set("/a", json!([])), json!({"a": [], "b": 2})),
        ok("array index overwrites", json!({"t": [1, 2, 3]}), p().set("/t/1", json!(9)), json!({"t": [1, 9, 3]})),
        fails("index == len", json!({"t": [1]}), p().set("/t/1", json!(2)), 0, PatchFailure::IndexOutOfBounds { index: 1, len: 1 }),
        fails("dash", json!({"t": [1]}), p().set("/t/-", json!(2)), 0, TARGET_MISSING),
        ok("set a whole array", json!({"t": [1]}), p().set("/t", json!([5, 6])), json!({"t": [5, 6]})),
        ok("nested in array", json!({"P": [{"F": "a"}, {"F": null}]}), p().set("/P/0/F", json!("Bob")), json!({"P": [{"F": "Bob"}, {"F": null}]})),
        fails("empty array", json!({"t": []}), p().set("/t/0", json!(0)), 0, PatchFailure::IndexOutOfBounds { index: 0, len: 0 }),
        fails("missing parent", json!({}), p().set("/a/b", json!(1)), 0, missing("/a")),
        fails("root", json!({}), p().set("", json!(1)), 0, PatchFailure::RootTarget { role: PathRole::Path }),
    ]);
}

#[test]
#[rustfmt::skip]
fn replace() {
    run(vec![
        ok("existing member in place", json!({"a": 1, "b": 2}), p().replace("/a", json!("x")), json!({"a": "x", "b": 2})),
        ok("member holding null", json!({"a": null}), p().replace("/a", json!(1)), json!({"a": 1})),
        ok("array element", json!({"t": [1, 2]}), p().replace("/t/1", json!(3)), json!({"t": [1, 3]})),
        fails("missing member", json!({"a": 1}), p().replace("/b", json!(1)), 0, TARGET_MISSING),
        fails("index == len", json!({"t": [1]}), p().replace("/t/1", json!(1)), 0, PatchFailure::IndexOutOfBounds { index: 1, len: 1 }),
        fails("dash", json!({"t": [1]}), p().replace("/t/-", json!(1)), 0, TARGET_MISSING),
        fails("missing parent", json!({}), p().replace("/a/b", json!(1)), 0, missing("/a")),
        fails("root", json!({}), p().replace("", json!(1)), 0, PatchFailure::RootTarget { role: PathRole::Path }),
    ]);
}

#[test]
#[rustfmt::skip]
fn remove() {
    run(vec![
        ok("member keeps the others' order", json!({"a": 1, "b": 2, "c": 3}), p().remove("/a"), json!({"b": 2, "c": 3})),
        ok("middle member", json!({"a": 1, "b": 2, "c": 3}), p().remove("/b"), json!({"a": 1, "c": 3})),
        ok("array element shifts left", json!({"t": [1, 2, 3]}), p().remove("/t/0"), json!({"t": [2, 3]})),
        ok("last element", json!({"t": [1, 2]}), p().remove("/t/1"), json!({"t": [1]})),
        ok("escaped member", json!({"a/b": 1, "c": 2}), p().remove("/a~1b"), json!({"c": 2})),
        fails("missing member", json!({"a": 1}), p().remove("/b"), 0, TARGET_MISSING),
        fails("index == len", json!({"t": [1]}), p().remove("/t/1"), 0, PatchFailure::IndexOutOfBounds { index: 1, len: 1 }),
        fails("dash", json!({"t": [1]}), p().remove("/t/-"), 0, TARGET_MISSING),
        fails("root", json!({"a": 1}), p().remove(""), 0, PatchFailure::RootTarget { role: PathRole::Path }),
        fails("missing parent", json!({}), p().remove("/a/b"), 0, missing("/a")),
        fails("twice", json!({"a": 1}), p().remove("/a").remove("/a"), 1, TARGET_MISSING),
    ]);
}

#[test]
#[rustfmt::skip]
fn increment() {
    run(vec![
        ok("integer", json!({"n": 1}), p().increment("/n", 2), json!({"n": 3})),
        ok("negative", json!({"n": 1}), p().increment("/n", -5), json!({"n": -4})),
        ok("missing member created", json!({"a": 1}), p().increment("/n", 7), json!({"a": 1, "n": 7})),
        ok("missing member created as float", json!({}), p().increment("/n", 0.5), json!({"n": 0.5})),
        ok("int + float is float", json!({"n": 1}), p().increment("/n", 0.5), json!({"n": 1.5})),
        ok("float + int is float", json!({"n": 0.5}), p().increment("/n", 1), json!({"n": 1.5})),
        ok("array element", json!({"t": [1, 2]}), p().increment("/t/1", 10), json!({"t": [1, 12]})),
        ok("stays exact above 2^53", json!({"n": 9_007_199_254_740_992_i64}), p().increment("/n", 1), json!({"n": 9_007_199_254_740_993_i64})),
        ok("nested", json!({"inv": {"q": 15}}), p().increment("/inv/q", 10), json!({"inv": {"q": 25}})),
        fails("i64 overflow", json!({"n": i64::MAX}), p().increment("/n", 1), 0, PatchFailure::IntegerOverflow),
        fails("i64 underflow", json!({"n": i64::MIN}), p().increment("/n", -1), 0, PatchFailure::IntegerOverflow),
        fails("string", json!({"n": "1"}), p().increment("/n", 1), 0, PatchFailure::NotANumber { found: "string" }),
        fails("null", json!({"n": null}), p().increment("/n", 1), 0, PatchFailure::NotANumber { found: "null" }),
        fails("object", json!({"n": {}}), p().increment("/n", 1), 0, PatchFailure::NotANumber { found: "object" }),
        fails("nan amount", json!({"n": 1}), p().increment("/n", f64::NAN), 0, PatchFailure::NotFinite),
        fails("nan amount on missing", json!({}), p().increment("/n", f64::INFINITY), 0, PatchFailure::NotFinite),
        fails("float overflow", json!({"n": f64::MAX}), p().increment("/n", f64::MAX), 0, PatchFailure::NotFinite),
        fails("array dash", json!({"t": [1]}), p().increment("/t/-", 1), 0, TARGET_MISSING),
        fails("array index == len", json!({"t": [1]}), p().increment("/t/1", 1), 0, PatchFailure::IndexOutOfBounds { index: 1, len: 1 }),
        fails("null is not a number in an array", json!({"t": [null]}), p().increment("/t/0", 1), 0, PatchFailure::NotANumber { found: "null" }),
        fails("array element not a number", json!({"t": ["x"]}), p().increment("/t/0", 1), 0, PatchFailure::NotANumber { found: "string" }),
        fails("missing parent", json!({}), p().increment("/a/n", 1), 0, missing("/a")),
        fails("root", json!({}), p().increment("", 1), 0, PatchFailure::RootTarget { role: PathRole::Path }),
    ]);
}

#[test]
#[rustfmt::skip]
fn move_op() {
    run(vec![
        ok("rename member", json!({"a": 1, "b": 2}), p().move_from("/a", "/c"), json!({"b": 2, "c": 1})),
        ok("onto existing member", json!({"a": 1, "b": 2, "c": 3}), p().move_from("/a", "/c"), json!({"b": 2, "c": 1})),
        ok("into nested object", json!({"color": "silver", "inv": {"q": 1}}), p().move_from("/color", "/inv/color"), json!({"inv": {"q": 1, "color": "silver"}})),
        ok("within array", json!({"t": [1, 2, 3]}), p().move_from("/t/0", "/t/-"), json!({"t": [2, 3, 1]})),
        ok("onto an array position inserts", json!({"t": [1, 2, 3]}), p().move_from("/t/0", "/t/1"), json!({"t": [2, 1, 3]})),
        ok("into another array at index == len", json!({"t": [1], "u": [2]}), p().move_from("/t/0", "/u/1"), json!({"t": [], "u": [2, 1]})),
        ok("array element into object", json!({"t": [{"a": 1}], "o": {}}), p().move_from("/t/0", "/o/x"), json!({"t": [], "o": {"x": {"a": 1}}})),
        ok("array to member", json!({"t": [1, 2]}), p().move_from("/t/1", "/x"), json!({"t": [1], "x": 2})),
        ok("subtree", json!({"a": {"b": [1]}, "c": {}}), p().move_from("/a/b", "/c/b"), json!({"a": {}, "c": {"b": [1]}})),
        ok("onto own ancestor", json!({"a": {"b": 5}}), p().move_from("/a/b", "/a"), json!({"a": 5})),
        ok("same place is a no-op", json!({"a": 1, "b": 2}), p().move_from("/a", "/a"), json!({"a": 1, "b": 2})),
        fails("into own child", json!({"a": {"b": 1}}), p().move_from("/a", "/a/b"), 0, PatchFailure::MoveIntoDescendant),
        fails("into own grandchild", json!({"a": {}}), p().move_from("/a", "/a/x/y"), 0, PatchFailure::MoveIntoDescendant),
        fails("missing source", json!({"a": 1}), p().move_from("/z", "/b"), 0, FROM_MISSING),
        fails("missing source, same place", json!({}), p().move_from("/z", "/z"), 0, FROM_MISSING),
        fails("source dash", json!({"t": [1]}), p().move_from("/t/-", "/x"), 0, FROM_MISSING),
        fails("destination parent missing, source restored", json!({"a": 1, "b": 2}), p().move_from("/a", "/x/y"), 0, missing("/x")),
        fails("destination index out of bounds after removal", json!({"t": [1, 2]}), p().move_from("/t/0", "/t/2"), 0, PatchFailure::IndexOutOfBounds { index: 2, len: 1 }),
        fails("root source", json!({"a": 1}), p().move_from("", "/a"), 0, PatchFailure::RootTarget { role: PathRole::From }),
        fails("root destination", json!({"a": 1}), p().move_from("/a", ""), 0, PatchFailure::RootTarget { role: PathRole::Path }),
        fails("bad source pointer", json!({"a": 1}), p().move_from("a", "/b"), 0, PatchFailure::InvalidPointer { role: PathRole::From, error: PointerError::MissingLeadingSlash }),
    ]);
}

#[test]
#[rustfmt::skip]
fn sequences_are_all_or_nothing() {
    run(vec![
        ok(
            "documentation example",
            json!({"id": "e1", "name": "R-410", "price": 455.95, "inventory": {"quantity": 15}, "used": false, "categoryId": "road-bikes", "tags": ["r-series"]}),
            p().add("/color", json!("silver")).remove("/used").set("/price", json!(355.45)).increment("/inventory/quantity", 10).add("/tags/-", json!("featured-bikes")).move_from("/color", "/inventory/color"),
            json!({"id": "e1", "name": "R-410", "price": 355.45, "inventory": {"quantity": 25, "color": "silver"}, "categoryId": "road-bikes", "tags": ["r-series", "featured-bikes"]}),
        ),
        ok("later ops see earlier ones", json!({}), p().add("/a", json!({})).add("/a/b", json!([])).add("/a/b/-", json!(1)).increment("/a/b/0", 1), json!({"a": {"b": [2]}})),
        fails(
            "failure undoes every earlier op",
            json!({"a": 1, "b": [1, 2], "c": {"d": 4}, "n": 5}),
            p().remove("/a").add("/b/0", json!(0)).set("/b/2", json!(9)).move_from("/c/d", "/e").add("/a", json!("back")).increment("/n", 1).replace("/missing", json!(1)),
            6,
            TARGET_MISSING,
        ),
        fails("undo of a removal restores order", json!({"x": 1, "y": 2, "z": 3}), p().remove("/y").remove("/x").remove("/nope"), 2, TARGET_MISSING),
        fails("undo of an overwrite", json!({"a": {"b": 1}}), p().set("/a", json!(5)).add("/a/c", json!(1)), 1, PatchFailure::NotAContainer { at: "/a".into(), found: "number" }),
    ]);
}

#[test]
#[rustfmt::skip]
fn errors_name_the_operation_and_the_reason() {
    let mut doc = json!({"n": "text"});
    let ops = [PatchOperation::Set { path: "/a".into(), value: json!(1) }, PatchOperation::Increment { path: "/n".into(), value: 1.into() }];
    let err = apply_patch_ops(&mut doc, &ops).unwrap_err();
    assert_eq!(err.to_string(), "patch operation #1 (increment at \"/n\") failed: the target is a string, not a number");

    let ops = [PatchOperation::Move { from: "/a".into(), path: "/a/b".into() }];
    let err = apply_patch_ops(&mut json!({"a": {}}), &ops).unwrap_err();
    assert_eq!(
        err.to_string(),
        "patch operation #0 (move from \"/a\" to \"/a/b\") failed: the destination lies inside the source; a value cannot move into itself"
    );

    let ops = [PatchOperation::Add { path: "/x/y".into(), value: json!(1) }];
    let err = apply_patch_ops(&mut json!({}), &ops).unwrap_err();
    assert!(err.to_string().contains("\"/x\" does not exist"), "{err}");
}

#[test]
#[rustfmt::skip]
fn an_empty_list_changes_nothing() {
    let mut doc = json!({"b": 1, "a": 2});
    apply_patch_ops(&mut doc, &[]).unwrap();
    assert_eq!(doc.to_string(), r#"{"b":1,"a":2}"#);
}

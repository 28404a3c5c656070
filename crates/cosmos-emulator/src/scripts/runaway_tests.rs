//! The surveyed built-in attacks, each in a stored procedure and in a UDF: every one ends within
//! the time limit, stopped as a `while (true) {}` is (or at the heap cap, or with a throw where
//! the built-in refuses at once); and the guarded built-ins still do their work on ordinary input.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::engine::{Bounds, Failure, Input, Role, Run};
use super::isolation::Isolation;
use super::udf::Udfs;
use super::Script;
use crate::protocol::ScriptKind;
use crate::scripts::definition::{check, seal};
use crate::sql::udf_hook::UdfCaller;

/// How an attack must end.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Ends {
    /// Stopped as out of time, as `while (true) {}` is.
    TimedOut,
    /// Stopped at the heap cap (its work allocates).
    Stopped,
    /// The built-in throws at once.
    Throws,
}

const LIMIT: Duration = Duration::from_millis(400);

/// When an attack must have been answered: one stopped as out of time, by the runtime itself
/// (well before its caller would give up on the thread and leave it running); one stopped at the
/// heap cap or that throws, within the time limit and the slack its caller allows.
fn answered_by(ends: Ends) -> Duration {
    match ends {
        Ends::TimedOut => LIMIT + super::watch::SLACK / 2,
        Ends::Stopped | Ends::Throws => LIMIT + super::watch::SLACK + Duration::from_millis(100),
    }
}

/// A small heap, so that the attacks stopped at the cap get there quickly in a debug build.
/// Runs a script on a thread of this process.
fn run(source: &str, input: &Input, bounds: Bounds, host: &mut dyn FnMut(&str) -> String) -> Run {
    super::isolation::run(source, input, bounds, &Isolation::Thread, host)
}

fn bounds() -> Bounds {
    Bounds {
        time: LIMIT,
        memory_bytes: 8 * 1024 * 1024,
        stack_bytes: 256 * 1024,
    }
}

/// A chain of 20,000 empty objects, as an expression.
const DEEP: &str = "(function () { var p = {}; for (var i = 0; i < 20000; i++) p = Object.create(p); return p; })()";

fn attacks() -> Vec<(&'static str, String, Ends)> {
    let t = Ends::TimedOut;
    let mut table: Vec<(&str, String, Ends)> = [
        ("while(true)", "while (true) {}", t),
        ("copyWithin", "Array.prototype.copyWithin.call({length: 1e15}, 0, 1)", t),
        ("join", "new Array(2 ** 32 - 1).join('')", t),
        ("fill", "Array.prototype.fill.call({length: 1e15}, 0)", t),
        ("toString", "new Array(2 ** 32 - 1).toString()", t),
        ("toLocaleString", "new Array(2 ** 32 - 1).toLocaleString()", t),
        ("indexOf", "Array.prototype.indexOf.call({length: 1e15}, 1)", t),
        ("lastIndexOf", "Array.prototype.lastIndexOf.call({length: 1e15}, 1)", t),
        ("includes", "Array.prototype.includes.call({length: 1e15}, 1)", t),
        ("reverse", "Array.prototype.reverse.call({length: 1e15})", t),
        ("splice", "Array.prototype.splice.call({length: 2 ** 53 - 1}, 0, 1)", t),
        ("slice", "Array.prototype.slice.call({length: 2 ** 32 - 1})", t),
        ("concat", "[].concat({length: 1e15, [Symbol.isConcatSpreadable]: true})", t),
        ("concat of a getter-spreadable", "var n = 0; [].concat({length: 1e15, get [Symbol.isConcatSpreadable]() { return n++ > 0; }})", t),
        ("sort", "Array.prototype.sort.call({length: 1e15})", t),
        ("every", "Array.prototype.every.call({length: 1e15}, function () { return true; })", t),
        ("some", "Array.prototype.some.call({length: 1e15}, function () { return false; })", t),
        ("forEach", "Array.prototype.forEach.call({length: 1e15}, function () {})", t),
        ("map", "Array.prototype.map.call({length: 2 ** 32 - 1}, function (x) { return x; })", t),
        ("filter", "Array.prototype.filter.call({length: 1e15}, function () { return true; })", t),
        ("reduce", "Array.prototype.reduce.call({length: 1e15}, function (a) { return a; }, 0)", t),
        ("reduceRight", "Array.prototype.reduceRight.call({length: 1e15}, function (a) { return a; }, 0)", t),
        ("find", "Array.prototype.find.call({length: 1e15}, function () { return false; })", t),
        ("findIndex", "Array.prototype.findIndex.call({length: 1e15}, function () { return false; })", t),
        ("findLast", "Array.prototype.findLast.call({length: 1e15}, function () { return false; })", t),
        ("findLastIndex", "Array.prototype.findLastIndex.call({length: 1e15}, function () { return false; })", t),
        ("flat", "[new Array(2 ** 32 - 1)].flat()", t),
        ("flatMap", "[1].flatMap(function () { return new Array(2 ** 32 - 1); })", t),
        ("Array.from", "Array.from({length: 2 ** 32 - 1})", t),
        ("with", "Array.prototype.with.call({length: 2 ** 32 - 1}, 0, 1)", t),
        ("toReversed", "Array.prototype.toReversed.call({length: 2 ** 32 - 1})", t),
        ("toSorted", "Array.prototype.toSorted.call({length: 2 ** 32 - 1})", t),
        ("toSpliced", "Array.prototype.toSpliced.call({length: 2 ** 32 - 1}, 0, 1)", t),
        ("shift", "Array.prototype.shift.call({length: 1e15})", t),
        ("unshift", "Array.prototype.unshift.call({length: 2 ** 53 - 2}, 1)", t),
        ("join on a primitive's prototype length", "Number.prototype.length = 2 ** 32 - 1; Array.prototype.join.call(5)", t),
        ("Reflect.apply", "Reflect.apply(Array.prototype.copyWithin, {length: 1e15}, [0, 1])", t),
        ("call.bind", "Function.prototype.call.bind(Array.prototype.join)(new Array(2 ** 32 - 1))", t),
        ("descriptor", "Object.getOwnPropertyDescriptor(Array.prototype, 'join').value.call(new Array(2 ** 32 - 1))", t),
        ("restored original", "try { Object.defineProperty(Array.prototype, 'join', {value: function () {}}); } catch (e) {} new Array(2 ** 32 - 1).join('')", t),
        ("getter length", "var n = 0; Array.prototype.join.call({get length() { return n++ > 0 ? 2 ** 32 - 1 : 1; }})", t),
        ("object length", "var n = 0; Array.prototype.join.call({length: {valueOf: function () { return n++ > 0 ? 2 ** 32 - 1 : 1; }}})", t),
        ("proxy", "var n = 0; Array.prototype.join.call(new Proxy({length: 1}, {get: function (o, k) { return k === 'length' ? (n++ > 0 ? 2 ** 32 - 1 : 1) : undefined; }}))", t),
        ("proxy on the chain", "var o = Object.create(new Proxy({}, {})); o.length = 2 ** 32 - 1; Array.prototype.join.call(o)", t),
        ("caught refusal", "try { new Array(2 ** 32 - 1).join(''); } catch (e) {}", t),
        ("regex backtracking", "/(a+)+$/.test('a'.repeat(40) + 'b')", t),
        ("iterator drop", "[].values.call({length: 1e15}).drop(1e15 - 1).next()", t),
        ("repeat", "'ab'.repeat(2 ** 28)", Ends::Stopped),
        ("padStart", "'a'.padStart(2 ** 29, 'bc')", Ends::Stopped),
        ("padEnd", "'a'.padEnd(2 ** 29, 'bc')", Ends::Stopped),
        ("typed array", "new Float64Array(2 ** 24).fill(1)", Ends::Stopped),
        ("iterator toArray", "Array.prototype.keys.call({length: 1e15}).toArray()", t),
        ("JSON.stringify of holes", "JSON.stringify(new Array(2 ** 32 - 1), null, 1e9)", t),
        ("Atomics.wait", "Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0)", Ends::Throws),
        ("apply of a huge array-like", "Math.max.apply(null, {length: 1e15})", t),
        ("apply of a long array", "Math.max.apply(null, new Array(1e5))", Ends::Throws),
    ]
    .into_iter()
    .map(|(n, s, e)| (n, s.to_owned(), e))
    .collect();
    table.push((
        "deep prototype chain",
        format!("var o = Object.create({DEEP}); o.length = 1e6; Array.prototype.join.call(o)"),
        t,
    ));
    for (name, attack) in [
        (
            "apply over a deep chain",
            "Math.max.apply(null, Object.assign(Object.create(D), {length: 65535}))",
        ),
        (
            "Reflect.apply over a deep chain",
            "Reflect.apply(Math.max, null, Object.assign(Object.create(D), {length: 65535}))",
        ),
        (
            "Reflect.construct over a deep chain",
            "Reflect.construct(Object, Object.assign(Object.create(D), {length: 65535}))",
        ),
        (
            "TypedArray.from over a deep chain",
            "Uint8Array.from(Object.assign(Object.create(D), {length: 1e6}))",
        ),
        (
            "a typed array from a deep chain",
            "new Float64Array(Object.assign(Object.create(D), {length: 1e6}))",
        ),
        (
            "a subclassed typed array from a deep chain",
            "class U extends Uint8Array {}; new U(Object.assign(Object.create(D), {length: 1e6}))",
        ),
        (
            "TypedArray set from a deep chain",
            "new Uint8Array(1e6).set(Object.assign(Object.create(D), {length: 1e6}))",
        ),
        (
            "String.raw over a deep chain",
            "String.raw({raw: Object.assign(Object.create(D), {length: 1e6})})",
        ),
        (
            "JSON.stringify of holes over a deep chain",
            "var a = []; a.length = 1e5; Object.setPrototypeOf(a, D); JSON.stringify(a)",
        ),
        (
            "String.raw with a getter",
            "var n = 0; String.raw({get raw() { return n++ > 0 ? {length: 1e15} : []; }})",
        ),
    ] {
        table.push((name, format!("var D = {DEEP}; {attack}"), t));
    }
    table.push((
        "a getter lengthening the chain mid-walk",
        format!("var deep = {DEEP}; var a = new Array(1e6); Object.defineProperty(a, 0, {{get: function () {{ Object.setPrototypeOf(a, deep); return 0; }}}}); a.join('')"),
        Ends::Throws,
    ));
    table.push((
        "a __proto__ setter mid-walk",
        format!("var deep = {DEEP}; var a = new Array(1e6); Object.defineProperty(a, 0, {{get: function () {{ a.__proto__ = deep; return 0; }}}}); a.join('')"),
        Ends::Throws,
    ));
    table
}

fn input() -> Input {
    Input {
        kind: Role::Sproc,
        args: Vec::new(),
        request_body: Value::Null,
        has_response_body: false,
        response_body: Value::Null,
        operation: String::new(),
        self_link: "dbs/a/colls/b/".into(),
        alt_link: "dbs/d/colls/c".into(),
        logging: false,
        max_response_bytes: 1 << 20,
    }
}

fn udf(id: &str, body: &str) -> Arc<Script> {
    let map = match json!({"id": id, "body": body}) {
        Value::Object(m) => m,
        _ => unreachable!(),
    };
    let checked = check(ScriptKind::UserDefinedFunction, &map).unwrap();
    Arc::new(seal(
        ScriptKind::UserDefinedFunction,
        map,
        checked,
        [0; 16],
        String::new(),
    ))
}

fn no_host(_: &str) -> String {
    r#"{"accepted":false}"#.into()
}

/// How a stored procedure failure reads as [`Ends`].
fn sproc_ends(f: &Failure) -> Option<Ends> {
    match f {
        Failure::TimedOut => Some(Ends::TimedOut),
        Failure::OutOfMemory => Some(Ends::Stopped),
        Failure::Thrown(_) => Some(Ends::Throws),
        Failure::Busy(_) => None,
    }
}

/// How a UDF failure reads as [`Ends`].
fn udf_ends(message: &str) -> Ends {
    if message.contains("ran past") {
        Ends::TimedOut
    } else if message.contains("memory") {
        Ends::Stopped
    } else {
        Ends::Throws
    }
}

#[test]
fn every_surveyed_attack_ends_within_the_limit_in_a_procedure() {
    let mut wrong = Vec::new();
    for (name, attack, ends) in attacks() {
        let started = Instant::now();
        let run = run(
            &format!("function () {{ {attack}; }}"),
            &input(),
            bounds(),
            &mut no_host,
        );
        let took = started.elapsed();
        let got = run.result.as_ref().err().and_then(sproc_ends);
        if got != Some(ends) || took > answered_by(ends) {
            wrong.push(format!("{name}: {:?} after {took:?}", run.result));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn every_surveyed_attack_ends_within_the_limit_in_a_udf() {
    let mut wrong = Vec::new();
    for (name, attack, ends) in attacks() {
        // A fresh request (runtime) for each: the time limit is a request's.
        let mut udfs = Udfs::new(
            vec![udf(
                "attack",
                &format!("function () {{ {attack}; return 1; }}"),
            )],
            bounds(),
            Isolation::Thread,
        );
        let started = Instant::now();
        let mut units = 0;
        let got = udfs.call("attack", &[], &mut units);
        let took = started.elapsed();
        let class = got.as_ref().err().map(|m| udf_ends(m));
        if class != Some(ends) || took > answered_by(ends) {
            wrong.push(format!("{name}: {got:?} after {took:?}"));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn the_guarded_built_ins_still_work_on_ordinary_input() {
    let cases: &[(&str, Value)] = &[
        ("[1, 2, 3].join('-')", json!("1-2-3")),
        ("[1, [2, 3]].toString()", json!("1,2,3")),
        ("[1, 2, 3, 4, 5].copyWithin(0, 3)", json!([4, 5, 3, 4, 5])),
        ("Array.prototype.copyWithin.call({length: 3, 0: 'a', 2: 'c'}, 0, 2)", json!({"length": 3, "0": "c", "2": "c"})),
        ("[3, 1, 10, 2].sort(function (a, b) { return a - b; })", json!([1, 2, 3, 10])),
        ("[3, 1, 10, 2].sort()", json!([1, 10, 2, 3])),
        ("new Array(3).fill(7)", json!([7, 7, 7])),
        ("[1, 2, 3].reverse()", json!([3, 2, 1])),
        ("(function () { var a = [1, 2, 3, 4]; var r = a.splice(1, 2, 'x'); return [a, r]; })()", json!([[1, "x", 4], [2, 3]])),
        ("[1, 2, 3, 4].slice(1, 3)", json!([2, 3])),
        ("[1].concat([2, 3], 4, {length: 1, 0: 5, [Symbol.isConcatSpreadable]: true})", json!([1, 2, 3, 4, 5])),
        ("[1, [2, [3, [4]]]].flat(2)", json!([1, 2, 3, [4]])),
        ("[1, , 3].flat()", json!([1, 3])),
        ("[1, 2].flatMap(function (x, i) { return [x, i * 10]; })", json!([1, 0, 2, 10])),
        ("Array.from({length: 3}, function (_, i) { return i * i; })", json!([0, 1, 4])),
        ("Array.from('héllo')", json!(["h", "é", "l", "l", "o"])),
        ("Array.from(new Set([1, 2]))", json!([1, 2])),
        ("(function () { var s = 0; for (var x of [1, 2, 3]) s += x; return [s, [...'ab'], Array.from([1, 2].entries()), [...[5].keys()]]; })()", json!([6, ["a", "b"], [[0, 1], [1, 2]], [0]])),
        ("Array.prototype[Symbol.iterator] === Array.prototype.values", json!(true)),
        ("Math.max.apply(null, [1, 5, 2]) + Reflect.apply(Math.min, null, [4, 3]) + Reflect.construct(Number, ['7']).valueOf()", json!(15)),
        ("(function () { var a = new Uint8Array([1, 2, 3]); var b = Uint8Array.from({length: 2, 0: 9, 1: 8}); var c = new Float64Array(2); c.set([0.5, 1.5]); return [Array.from(a), Array.from(b), Array.from(c), a instanceof Uint8Array, a.constructor === Uint8Array, Uint8Array.BYTES_PER_ELEMENT, Uint8Array.name, Object.getPrototypeOf(Uint8Array) === Object.getPrototypeOf(Int8Array), Array.from(a.slice(1)), a.slice(1) instanceof Uint8Array]; })()", json!([[1, 2, 3], [9, 8], [0.5, 1.5], true, true, 1, "Uint8Array", true, [2, 3], true])),
        ("(function () { class U extends Uint8Array { first() { return this[0]; } } var u = new U([7, 8]); return [u.first(), u instanceof Uint8Array, u.map(function (x) { return x + 1; }) instanceof U]; })()", json!([7, true, true])),
        ("(function () { try { Uint8Array(2); } catch (e) { return e instanceof TypeError; } })()", json!(true)),
        ("JSON.parse(JSON.stringify({a: [1, , 'x', undefined, function () {}], b: undefined, c: {toJSON: function (k) { return k + '!'; }}, d: new Number(3), e: new String('s'), f: true, g: null, n: -0, nested: {x: [[1]]}}))", json!({"a": [1, null, "x", null, null], "c": "c!", "d": 3, "e": "s", "f": true, "g": null, "n": 0, "nested": {"x": [[1]]}})),
        ("JSON.stringify({a: 1, b: [1, 2], c: 3}, ['a', 'b', new String('b')]) + JSON.stringify([1, 2], function (k, v) { return typeof v === 'number' ? v * 10 : v; }) + JSON.stringify({a: [1]}, null, 1)", json!("{\"a\":1,\"b\":[1,2]}[10,20]{\n \"a\": [\n  1\n ]\n}")),
        ("(function () { var o = {}; o.self = o; try { JSON.stringify(o); } catch (e) { return [e instanceof TypeError, JSON.stringify(undefined) === undefined, JSON.stringify('q'), JSON.stringify(Object.create({inherited: 1}))]; } })()", json!([true, true, "\"q\"", "{}"])),
        ("String.raw({raw: ['a', 'b', 'c']}, 1, 2) + String.raw`x${1}y`", json!("a1b2cx1y")),
        ("new Uint8Array(new ArrayBuffer(8), 2, 3).length + new Uint8Array(4).length", json!(7)),
        ("(function () { var p = {x: 1}; var o = Object.setPrototypeOf({}, p); var q = {}; q.__proto__ = o; return [q.x, Reflect.setPrototypeOf(q, null), Object.getPrototypeOf(q)]; })()", json!([1, true, null])),
        ("[1, 2].map(function (x) { return Object.getPrototypeOf(Object.setPrototypeOf({}, null)) === null ? x : 0; })", json!([1, 2])),
        ("(function () { try { [{toString: function () { Object.setPrototypeOf({}, null); }}].join(); } catch (e) { return e instanceof TypeError; } })()", json!(true)),
        ("(function () { return [...arguments]; })(1, 2)", json!([1, 2])),
        ("[1, 2, 3].indexOf(3) + [1, 2, 3].lastIndexOf(1) + ([1, 2].includes(2) ? 10 : 0)", json!(12)),
        ("[1, 2, 3].map(function (x) { return x * 2; }).filter(function (x) { return x > 2; })", json!([4, 6])),
        ("[1, 2, 3].reduce(function (a, b) { return a + b; }, 0)", json!(6)),
        ("[1, 2, 3].toReversed().concat([1, 2, 3].with(0, 9), [3, 1, 2].toSorted(), [1, 2, 3].toSpliced(0, 1))", json!([3, 2, 1, 9, 2, 3, 1, 2, 3, 2, 3])),
        ("(function () { var a = [2, 3]; a.unshift(1); var s = a.shift(); return [s, a]; })()", json!([1, [2, 3]])),
        ("Array.prototype.join.call('abc', '+')", json!("a+b+c")),
        ("Array.prototype.join.call(new Uint8Array([1, 2]), '+')", json!("1+2")),
        ("(function () { return Array.prototype.slice.call(arguments, 1); })(1, 2, 3)", json!([2, 3])),
        ("[Array.prototype.join.name, Array.prototype.join.length, Array.prototype.flat.length, Array.from.length]", json!(["join", 1, 0, 1])),
        ("new Array(1000000).join('').length", json!(0)),
        ("(function () { 'use strict'; try { Array.prototype.join = null; return 'replaced'; } catch (e) { return e instanceof TypeError; } })()", json!(true)),
    ];
    let mut wrong = Vec::new();
    for (expr, want) in cases {
        let run = run(
            &format!("function () {{ getContext().getResponse().setBody({expr}); }}"),
            &input(),
            Bounds {
                time: Duration::from_secs(5),
                ..bounds()
            },
            &mut no_host,
        );
        match run.result {
            Ok(done) if done.body.as_ref() == Some(want) => {}
            other => wrong.push(format!("{expr}: {other:?}")),
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

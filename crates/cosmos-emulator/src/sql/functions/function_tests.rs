//! Table tests of the built-in functions through whole queries.

use std::collections::HashMap;

use serde_json::{json, Value};

use crate::sql::collect::run;
use crate::sql::parse_query;

fn value_of(expr: &str) -> Option<Value> {
    let doc = json!({"s": "Hello World", "n": -2.5, "i": 7, "arr": [1, 2, {"a": 1, "b": 2}], "o": {"k": 1}});
    let q = parse_query(&format!("SELECT VALUE {expr} FROM c"))
        .unwrap_or_else(|e| panic!("{expr}: {e}"));
    let out = run(&q, &[doc], &HashMap::new()).unwrap_or_else(|e| panic!("{expr}: {e}"));
    out.into_iter().next()
}

#[test]
fn functions_answer_a_table_of_calls() {
    let table: &[(&str, Option<Value>)] = &[
        ("IS_DEFINED(c.s)", Some(json!(true))),
        ("IS_DEFINED(c.nope)", Some(json!(false))),
        ("IS_NULL(null)", Some(json!(true))),
        ("IS_PRIMITIVE(c.o)", Some(json!(false))),
        ("IS_NUMBER(c.i)", Some(json!(true))),
        ("CONCAT(c.s, '!', 'x')", Some(json!("Hello World!x"))),
        ("CONCAT(c.s, 1)", None),
        ("CONTAINS(c.s, 'world')", Some(json!(false))),
        ("CONTAINS(c.s, 'world', true)", Some(json!(true))),
        ("STARTSWITH(c.s, 'he', true)", Some(json!(true))),
        ("ENDSWITH(c.s, 'World')", Some(json!(true))),
        ("LOWER(c.s)", Some(json!("hello world"))),
        ("UPPER('a')", Some(json!("A"))),
        ("LENGTH(c.s)", Some(json!(11))),
        ("SUBSTRING(c.s, 6, 3)", Some(json!("Wor"))),
        ("INDEX_OF(c.s, 'o')", Some(json!(4))),
        ("INDEX_OF(c.s, 'o', 5)", Some(json!(7))),
        ("INDEX_OF(c.s, 'z')", Some(json!(-1))),
        ("REPLACE(c.s, 'l', 'L')", Some(json!("HeLLo WorLd"))),
        ("TRIM('  a ')", Some(json!("a"))),
        ("LTRIM('  a ')", Some(json!("a "))),
        ("RTRIM('  a ')", Some(json!("  a"))),
        ("LEFT(c.s, 2)", Some(json!("He"))),
        ("RIGHT(c.s, 2)", Some(json!("ld"))),
        ("REVERSE('abc')", Some(json!("cba"))),
        ("TOSTRING(c.i)", Some(json!("7"))),
        ("TOSTRING(c.o)", Some(json!("{\"k\":1}"))),
        ("STRINGEQUALS('a', 'A', true)", Some(json!(true))),
        ("REGEXMATCH(c.s, '^h.*d$', 'i')", Some(json!(true))),
        ("REGEXMATCH(c.s, 'xyz')", Some(json!(false))),
        ("ABS(c.n)", Some(json!(2.5))),
        ("ABS(-7)", Some(json!(7))),
        ("CEILING(c.n)", Some(json!(-2))),
        ("FLOOR(c.n)", Some(json!(-3))),
        ("ROUND(c.n)", Some(json!(-3))),
        ("ROUND(2.4)", Some(json!(2))),
        ("TRUNC(c.n)", Some(json!(-2))),
        ("SQRT(16)", Some(json!(4))),
        ("SQRT(-1)", None),
        ("POWER(2, 10)", Some(json!(1024))),
        ("LOG(EXP(1))", Some(json!(1))),
        ("LOG(8, 2)", Some(json!(3))),
        ("SIGN(c.n)", Some(json!(-1))),
        ("ABS('x')", None),
        ("ARRAY_CONTAINS(c.arr, 2)", Some(json!(true))),
        ("ARRAY_CONTAINS(c.arr, {\"a\": 1})", Some(json!(false))),
        ("ARRAY_CONTAINS(c.arr, {\"a\": 1}, true)", Some(json!(true))),
        ("ARRAY_LENGTH(c.arr)", Some(json!(3))),
        ("ARRAY_SLICE(c.arr, 1, 1)", Some(json!([2]))),
        ("ARRAY_SLICE(c.arr, -2)", Some(json!([2, {"a": 1, "b": 2}]))),
        ("ARRAY_CONCAT([1], [2, 3])", Some(json!([1, 2, 3]))),
        ("ARRAY_CONCAT([1], 2)", None),
        ("LENGTH(GetCurrentDateTime())", Some(json!(28))),
    ];
    for (expr, want) in table {
        assert_eq!(&value_of(expr), want, "{expr}");
    }
}

#[test]
fn unknown_functions_and_wrong_argument_counts_are_refused_with_positions() {
    let err = parse_query("SELECT VALUE FROB(c.a) FROM c").unwrap_err();
    assert_eq!(err.position, Some(13));
    assert!(err.message.contains("FROB"), "{err}");
    let err = parse_query("SELECT VALUE LOWER(c.a, c.b) FROM c").unwrap_err();
    assert!(err.message.contains("takes 1 argument"), "{err}");
    let err = parse_query("SELECT VALUE REGEXMATCH(c.a) FROM c").unwrap_err();
    assert!(err.message.contains("2 to 3"), "{err}");
}

//! Table tests of whole queries over a small set of documents: clauses, type rules, ordering
//! across types, aggregates, JOIN and subqueries.

use std::collections::HashMap;

use serde_json::{json, Value};

use super::collect::run;
use super::parse_query;

fn docs() -> Vec<Value> {
    vec![
        json!({"id": "a", "pk": "p1", "n": 1, "s": "x", "tags": ["red", "blue"], "kids": [{"age": 3}, {"age": 9}]}),
        json!({"id": "b", "pk": "p1", "n": 2.5, "s": "y", "tags": ["red"], "big": 9007199254740993i64}),
        json!({"id": "c", "pk": "p2", "n": "3", "tags": [], "big": 9007199254740992i64}),
        json!({"id": "d", "pk": "p2", "n": null}),
        json!({"id": "e", "pk": "p3", "n": true, "s": "x"}),
    ]
}

fn query(text: &str) -> Vec<Value> {
    let mut params = HashMap::new();
    params.insert("@p".to_owned(), json!("p1"));
    params.insert("@two".to_owned(), json!(2));
    let q = parse_query(text).unwrap_or_else(|e| panic!("{text}: {e}"));
    run(&q, &docs(), &params).unwrap_or_else(|e| panic!("{text}: {e}"))
}

#[test]
fn queries_answer_a_table() {
    let table: &[(&str, Value)] = &[
        ("SELECT VALUE c.id FROM c WHERE c.n = 1", json!(["a"])),
        ("SELECT VALUE c.id FROM c WHERE c.n > 1", json!(["b"])),
        ("SELECT VALUE c.id FROM c WHERE c.n = null", json!(["d"])),
        ("SELECT VALUE c.id FROM c WHERE c.n != 1", json!(["b"])),
        ("SELECT VALUE c.id FROM c WHERE NOT (c.n = 1)", json!(["b"])),
        ("SELECT VALUE c.id FROM c WHERE c.nope = null", json!([])),
        ("SELECT VALUE c.id FROM c WHERE c.pk = @p", json!(["a", "b"])),
        ("SELECT VALUE c.id FROM c WHERE c.big > 9007199254740992", json!(["b"])),
        ("SELECT VALUE c.id FROM c WHERE c.n BETWEEN 1 AND 2.5", json!(["a", "b"])),
        ("SELECT VALUE c.id FROM c WHERE c.id IN ('a', 'e', 'z')", json!(["a", "e"])),
        ("SELECT VALUE c.id FROM c WHERE c.id NOT IN ('a', 'e')", json!(["b", "c", "d"])),
        ("SELECT VALUE c.id FROM c WHERE c.id LIKE '_'", json!(["a", "b", "c", "d", "e"])),
        ("SELECT VALUE c.id FROM c WHERE c.s LIKE 'x%'", json!(["a", "e"])),
        ("SELECT VALUE 'a%' LIKE 'a!%' ESCAPE '!'", json!([true])),
        ("SELECT VALUE c.s ?? 'none' FROM c WHERE c.pk = 'p2'", json!(["none", "none"])),
        ("SELECT VALUE (c.n = 1 ? 'one' : 'other') FROM c WHERE c.pk = 'p1'", json!(["one", "other"])),
        ("SELECT c.id, c.n * 2 AS twice FROM c WHERE c.id = 'b'", json!([{"id": "b", "twice": 5}])),
        ("SELECT c.id, c.missing FROM c WHERE c.id = 'a'", json!([{"id": "a"}])),
        ("SELECT c.id, c.n + 1 FROM c WHERE c.id = 'a'", json!([{"id": "a", "$1": 2}])),
        ("SELECT VALUE {\"k\": c.id, \"l\": [c.n, c.nope]} FROM c WHERE c.id = 'a'", json!([{"k": "a", "l": [1]}])),
        ("SELECT VALUE c.kids[1].age FROM c WHERE c.id = 'a'", json!([9])),
        ("SELECT VALUE c['tags'][0] FROM c WHERE c.id = 'a'", json!(["red"])),
        ("SELECT TOP 2 VALUE c.id FROM c", json!(["a", "b"])),
        ("SELECT TOP @two VALUE c.id FROM c", json!(["a", "b"])),
        ("SELECT VALUE c.id FROM c OFFSET 1 LIMIT 2", json!(["b", "c"])),
        ("SELECT VALUE c.id FROM c ORDER BY c.id DESC", json!(["e", "d", "c", "b", "a"])),
        ("SELECT VALUE c.id FROM c ORDER BY c.n", json!(["d", "e", "a", "b", "c"])),
        ("SELECT VALUE c.id FROM c ORDER BY c.s, c.id DESC", json!(["d", "c", "e", "a", "b"])),
        ("SELECT DISTINCT VALUE c.pk FROM c", json!(["p1", "p2", "p3"])),
        ("SELECT DISTINCT c.s FROM c", json!([{"s": "x"}, {"s": "y"}, {}])),
        ("SELECT VALUE COUNT(1) FROM c", json!([5])),
        ("SELECT VALUE SUM(c.n) FROM c WHERE IS_NUMBER(c.n)", json!([3.5])),
        ("SELECT VALUE SUM(c.n) FROM c", json!([])),
        ("SELECT VALUE AVG(c.n) FROM c WHERE IS_NUMBER(c.n)", json!([1.75])),
        ("SELECT VALUE MAX(c.n) FROM c", json!(["3"])),
        ("SELECT VALUE MIN(c.n) FROM c", json!([null])),
        ("SELECT VALUE MAX(c.n) FROM c WHERE false", json!([])),
        ("SELECT VALUE COUNT(1) FROM c WHERE false", json!([0])),
        ("SELECT COUNT(1) AS n, MIN(c.id) AS first FROM c", json!([{"n": 5, "first": "a"}])),
        ("SELECT c.pk, COUNT(1) AS n FROM c GROUP BY c.pk", json!([{"pk": "p1", "n": 2}, {"pk": "p2", "n": 2}, {"pk": "p3", "n": 1}])),
        ("SELECT VALUE t FROM c JOIN t IN c.tags", json!(["red", "blue", "red"])),
        ("SELECT c.id, t AS tag FROM c JOIN t IN c.tags WHERE t = 'blue'", json!([{"id": "a", "tag": "blue"}])),
        ("SELECT VALUE [k.age, t] FROM c JOIN k IN c.kids JOIN t IN c.tags", json!([[3, "red"], [3, "blue"], [9, "red"], [9, "blue"]])),
        ("SELECT VALUE t FROM t IN c.tags", json!(["red", "blue", "red"])),
        ("SELECT VALUE k.age FROM c.kids k JOIN x IN k", json!([])),
        ("SELECT VALUE c.id FROM c WHERE EXISTS(SELECT VALUE t FROM t IN c.tags WHERE t = 'blue')", json!(["a"])),
        ("SELECT VALUE ARRAY(SELECT VALUE k.age FROM k IN c.kids WHERE k.age > 5) FROM c WHERE c.id = 'a'", json!([[9]])),
        ("SELECT VALUE (SELECT VALUE COUNT(1) FROM t IN c.tags) FROM c", json!([2, 1, 0, 0, 0])),
        ("SELECT VALUE 7 / 2", json!([3.5])),
        ("SELECT VALUE 7 % 4", json!([3])),
        ("SELECT VALUE 9007199254740993 + 1", json!([9007199254740994i64])),
        ("SELECT VALUE 'a' || 'b'", json!(["ab"])),
        ("SELECT VALUE 1 + 'a'", json!([])),
        ("SELECT VALUE 5 & 3 | 8", json!([9])),
        ("SELECT VALUE -1 >>> 28", json!([15])),
        ("SELECT VALUE undefined", json!([])),
        ("SELECT * FROM c WHERE c.id = 'd'", json!([{"id": "d", "pk": "p2", "n": null}])),
    ];
    for (text, want) in table {
        assert_eq!(&Value::Array(query(text)), want, "{text}");
    }
}

#[test]
fn syntax_errors_name_the_position() {
    for (text, position) in [
        ("SELECT FROM c", 7),
        ("SELECT * FROM c WHERE", 21),
        ("SELECT * FROM c WHERE c.a = = 1", 28),
        ("SELECT * FROM c ORDER c.a", 22),
        ("SELECT VALUE COUNT(1) FROM c WHERE COUNT(1) > 1", 35),
    ] {
        let err = parse_query(text).unwrap_err();
        assert_eq!(err.position, Some(position), "{text}: {err}");
    }
    assert!(parse_query("SELECT * FROM c JOIN t IN c.tags").is_err());
    assert!(parse_query("SELECT * FROM c WHERE @").is_err());
}

#[test]
fn nesting_and_operator_limits_are_enforced_without_deep_recursion() {
    let deep = format!("SELECT VALUE {}1{}", "[".repeat(100), "]".repeat(100));
    assert!(parse_query(&deep).unwrap_err().message.contains("limit"));
    let nots = format!("SELECT VALUE {}true", "NOT ".repeat(10_000));
    assert!(parse_query(&nots).unwrap_err().message.contains("limit"));
    let subqueries = format!(
        "SELECT VALUE {}1{}",
        "(SELECT VALUE ".repeat(80),
        ")".repeat(80)
    );
    assert!(parse_query(&subqueries)
        .unwrap_err()
        .message
        .contains("limit"));
    let long_and = format!(
        "SELECT VALUE c.id FROM c WHERE {}",
        vec!["c.n = 1"; 4000].join(" AND ")
    );
    assert_eq!(query(&long_and), vec![json!("a")]);
    let unlimited = vec!["1 = 1"; 60_000].join(" OR ");
    let err = parse_query(&format!("SELECT VALUE c.id FROM c WHERE {unlimited}")).unwrap_err();
    assert!(err.message.contains("limit"), "{err}");
}

/// The deepest texts the limits allow, parsed, run and dropped on a thread with the 2 MiB stack
/// of a tokio worker.
#[test]
fn the_deepest_allowed_queries_fit_a_worker_stack() {
    let d = super::limits::MAX_DEPTH - 2;
    let texts = vec![
        format!("SELECT VALUE {}1{} FROM c", "(".repeat(d), ")".repeat(d)),
        format!("SELECT VALUE {}1{} FROM c", "[".repeat(d), "]".repeat(d)),
        format!(
            "SELECT VALUE {}c.n{} FROM c",
            "ABS(".repeat(d),
            ")".repeat(d)
        ),
        format!("SELECT VALUE {}true FROM c", "NOT ".repeat(d)),
        format!(
            "SELECT VALUE {}1{} FROM c",
            "{\"a\": ".repeat(d),
            "}".repeat(d)
        ),
        format!("SELECT VALUE {}1 FROM c", "1 + ".repeat(d)),
        format!(
            "SELECT VALUE {}1{} FROM c",
            "(SELECT VALUE ".repeat(d / 2),
            ")".repeat(d / 2)
        ),
        format!(
            "SELECT VALUE {}c.n{} FROM c",
            "(1 + (1 * -(ARRAY_LENGTH([".repeat(d / 6),
            "]))))".repeat(d / 6)
        ),
    ];
    let ok = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || {
            for text in texts {
                let q = parse_query(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
                let out = run(&q, &docs(), &HashMap::new());
                assert!(out.is_ok(), "{text}: {out:?}");
                drop(q);
            }
        })
        .unwrap()
        .join();
    assert!(ok.is_ok());
}

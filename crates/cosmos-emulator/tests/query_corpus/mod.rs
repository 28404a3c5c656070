//! A generated corpus for the differential query test: documents with mixed types, missing fields
//! and nested arrays, and at least 500 queries built from templates over them.

use serde_json::{json, Value};

/// The documents (all in partition "p").
pub fn documents() -> Vec<Value> {
    let ns = [
        json!(1),
        json!(2.5),
        json!("3"),
        json!(true),
        json!(null),
        json!(-4),
        json!(10),
        json!(0),
        json!(7.25),
    ];
    let ss = [
        json!("apple"),
        json!("Banana"),
        json!("cab"),
        json!(""),
        json!(5),
        json!("a%b"),
        json!("zz top"),
    ];
    let arrs = [
        json!([1, 2, 3]),
        json!(["a", "b"]),
        json!([[1, 2], [3]]),
        json!([{"k": 1}, {"k": 2, "j": "x"}]),
        json!([]),
        json!([1, "a", null, true]),
    ];
    (0..60)
        .map(|i: usize| {
            let mut doc = json!({"id": format!("d{i:02}"), "pk": "p"});
            let map = doc.as_object_mut().unwrap();
            if i % 11 != 3 {
                map.insert("n".into(), ns[i % ns.len()].clone());
            }
            if i % 7 != 2 {
                map.insert("s".into(), ss[i % ss.len()].clone());
            }
            if i % 5 != 4 {
                map.insert("arr".into(), arrs[i % arrs.len()].clone());
            }
            if i % 3 != 1 {
                let mut o = json!({"a": (i % 6) as i64 - 2, "b": ss[(i + 3) % ss.len()].clone()});
                if i % 4 == 0 {
                    o["c"] = json!({"d": [i, {"e": i % 2 == 0}]});
                }
                map.insert("o".into(), o);
            }
            if i % 2 == 0 {
                map.insert("b".into(), json!(i % 4 == 0));
            }
            doc
        })
        .collect()
}

/// One query of the corpus and whether its result order is defined (ORDER BY; such queries
/// select the sort key as `k`, since the order of ties is not defined).
pub struct CorpusQuery {
    pub text: String,
    pub ordered: bool,
}

/// The queries.
pub fn queries() -> Vec<CorpusQuery> {
    let mut out = Vec::new();
    let mut add = |text: String| {
        let ordered = text.contains("ORDER BY");
        out.push(CorpusQuery { text, ordered });
    };
    let fields = ["c.n", "c.s", "c.b", "c.o.a", "c.arr[0]"];
    let ops = ["=", "!=", "<", "<=", ">", ">="];
    let literals = ["1", "2.5", "0", "'apple'", "'3'", "'cab'", "true", "null"];
    for f in fields {
        for op in ops {
            for lit in literals {
                add(format!("SELECT VALUE c.id FROM c WHERE {f} {op} {lit}"));
            }
        }
    }
    let checks = [
        "IS_DEFINED",
        "IS_NULL",
        "IS_NUMBER",
        "IS_STRING",
        "IS_BOOL",
        "IS_ARRAY",
        "IS_OBJECT",
        "IS_PRIMITIVE",
    ];
    for check in checks {
        for f in ["c.n", "c.s", "c.arr", "c.o", "c.b", "c.missing"] {
            add(format!("SELECT VALUE c.id FROM c WHERE {check}({f})"));
        }
    }
    let exprs = [
        "c.n + 1",
        "c.n - 2",
        "c.n * 2",
        "c.n / 2",
        "c.n % 3",
        "-c.n",
        "c.s || '!'",
        "UPPER(c.s)",
        "LOWER(c.s)",
        "LENGTH(c.s)",
        "SUBSTRING(c.s, 1, 2)",
        "CONCAT(c.s, '-', c.s)",
        "CONTAINS(c.s, 'a')",
        "STARTSWITH(c.s, 'a')",
        "ENDSWITH(c.s, 'b')",
        "INDEX_OF(c.s, 'b')",
        "REPLACE(c.s, 'a', 'z')",
        "LEFT(c.s, 2)",
        "RIGHT(c.s, 2)",
        "REVERSE(c.s)",
        "TRIM(c.s)",
        "ABS(c.n)",
        "CEILING(c.n)",
        "FLOOR(c.n)",
        "ROUND(c.n)",
        "SQRT(ABS(c.n))",
        "POWER(c.n, 2)",
        "SIGN(c.n)",
        "ARRAY_LENGTH(c.arr)",
        "ARRAY_CONTAINS(c.arr, 1)",
        "ARRAY_SLICE(c.arr, 1)",
        "c.arr[1]",
        "c.o.a",
        "c.o['b']",
        "IS_DEFINED(c.o.c)",
        "c.o.c.d[1].e",
        "c.n ?? 'none'",
        "(c.b ? 1 : 2)",
        "[c.n, c.s]",
        "{\"x\": c.n, \"y\": c.missing}",
        "c.n BETWEEN 1 AND 5",
        "c.s IN ('apple', 'cab')",
        "c.s LIKE 'a%'",
        "TOSTRING(c.n)",
        "NOT c.b",
        "c.n = c.o.a",
    ];
    for e in exprs {
        add(format!("SELECT VALUE {e} FROM c"));
        add(format!("SELECT c.id, {e} AS v FROM c"));
    }
    for f in ["c.n", "c.s", "c.b", "c.o.a", "c.id"] {
        for dir in ["ASC", "DESC"] {
            add(format!("SELECT c.id, {f} AS k FROM c ORDER BY {f} {dir}"));
            add(format!(
                "SELECT TOP 7 c.id, {f} AS k FROM c ORDER BY {f} {dir}"
            ));
            add(format!(
                "SELECT c.id, {f} AS k FROM c WHERE IS_NUMBER({f}) ORDER BY {f} {dir}"
            ));
            add(format!(
                "SELECT c.id, {f} AS k FROM c WHERE IS_STRING({f}) ORDER BY {f} {dir}"
            ));
            add(format!(
                "SELECT c.id, {f} AS k FROM c ORDER BY {f} {dir} OFFSET 3 LIMIT 5"
            ));
        }
    }
    for agg in ["COUNT", "SUM", "AVG", "MIN", "MAX"] {
        for f in ["c.n", "c.s", "c.o.a", "c.b", "c.missing"] {
            add(format!("SELECT VALUE {agg}({f}) FROM c"));
            add(format!(
                "SELECT VALUE {agg}({f}) FROM c WHERE IS_NUMBER(c.n)"
            ));
        }
    }
    for op in ops {
        for lit in ["1", "'a'", "2"] {
            add(format!(
                "SELECT c.id, a FROM c JOIN a IN c.arr WHERE a {op} {lit}"
            ));
        }
    }
    add("SELECT VALUE COUNT(1) FROM c JOIN a IN c.arr".into());
    add("SELECT c.id, a.k FROM c JOIN a IN c.arr WHERE IS_DEFINED(a.k)".into());
    add("SELECT VALUE [x, y] FROM c JOIN x IN c.arr JOIN y IN c.arr WHERE c.id = 'd00'".into());
    for f in ["c.n", "c.s", "c.b", "c.o.a", "c.arr", "c.o"] {
        add(format!("SELECT DISTINCT VALUE {f} FROM c"));
    }
    for f in ["c.n", "c.s", "c.b", "c.o.a"] {
        add(format!(
            "SELECT {f} AS k, COUNT(1) AS n FROM c GROUP BY {f}"
        ));
    }
    let conds = [
        "c.n > 0 AND c.s = 'apple'",
        "c.n > 0 OR c.s = 'apple'",
        "NOT (c.n > 0)",
        "NOT (c.n > 0) OR c.b",
        "c.n > 0 AND NOT c.b",
        "(c.n = 1 OR c.n = 10) AND IS_DEFINED(c.o)",
        "c.o.a >= 0 AND c.o.a < 2",
        "c.s > 'b' AND c.s < 'z'",
        "c.b = true OR c.b = false",
        "c.n IN (1, 10, '3', true)",
        "c.n NOT IN (1, 10)",
        "c.s NOT LIKE '%a%'",
        "c.n NOT BETWEEN 0 AND 5",
        "ARRAY_CONTAINS(c.arr, {\"k\": 2}, true)",
        "ARRAY_CONTAINS(c.arr, [1, 2])",
        "c.arr = [1, 2, 3]",
        "c.o = {\"a\": -2, \"b\": \"cab\"}",
        "c.missing = null",
        "c.n = null OR c.missing = null",
        "c.b",
    ];
    for cond in conds {
        add(format!("SELECT VALUE c.id FROM c WHERE {cond}"));
    }
    for sub in [
        "EXISTS(SELECT VALUE a FROM a IN c.arr WHERE a = 1)",
        "EXISTS(SELECT VALUE a FROM a IN c.arr WHERE a.k = 2)",
        "ARRAY_LENGTH(ARRAY(SELECT VALUE a FROM a IN c.arr WHERE IS_NUMBER(a))) > 1",
    ] {
        add(format!("SELECT VALUE c.id FROM c WHERE {sub}"));
    }
    add("SELECT VALUE ARRAY(SELECT VALUE a FROM a IN c.arr WHERE IS_STRING(a)) FROM c".into());
    add("SELECT TOP 10 * FROM c".into());
    add("SELECT * FROM c WHERE c.id = 'd07'".into());
    add("SELECT c.id, c.o.c FROM c WHERE IS_DEFINED(c.o.c)".into());
    out
}

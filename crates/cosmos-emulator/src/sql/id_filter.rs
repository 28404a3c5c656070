//! The ids a query's WHERE clause can let through when it is a disjunction of id equalities, as
//! the SDKs' read-many queries are (`c.id IN (...)`, `(c.id = @id0 AND c.pk = @pk0) OR ...`): a
//! document whose id is not among them fails the filter, so a scan need not read it.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::ast::{BinaryOp, Expr, Query, Source};

/// The ids that can pass `q`'s WHERE clause, when every OR term of it is `c.id = v`, an AND with
/// such a term, or `c.id IN (v, ...)` (`c` the FROM alias, no JOIN, values literals or
/// parameters); `None` when the clause has another shape. A value that is not a string matches
/// no id (ids are strings and comparing different types is undefined).
pub(crate) fn candidate_ids(q: &Query, params: &HashMap<String, Value>) -> Option<HashSet<String>> {
    let from = q.from.as_ref()?;
    if !from.joins.is_empty() {
        return None;
    }
    let Source::Container { alias, path, .. } = &from.source else {
        return None;
    };
    if !path.is_empty() {
        return None;
    }
    let terms: Vec<&Expr> = match q.filter.as_ref()? {
        Expr::Or(items) => items.iter().collect(),
        other => vec![other],
    };
    let is_id = |e: &Expr| {
        e.plain_path()
            .is_some_and(|(root, steps)| root == alias && steps == ["id"])
    };
    let value = |e: &Expr| -> Option<Option<String>> {
        let v = match e {
            Expr::Literal(v) => Some(v),
            Expr::Param(name) => params.get(name),
            _ => return None,
        };
        Some(v.and_then(Value::as_str).map(str::to_owned))
    };
    // The ids one term lets through (`None`: the term has another shape).
    let equality = |e: &Expr| -> Option<Option<String>> {
        match e {
            Expr::Binary(BinaryOp::Eq, a, b) if is_id(a) => value(b),
            Expr::Binary(BinaryOp::Eq, a, b) if is_id(b) => value(a),
            _ => None,
        }
    };
    let mut ids = HashSet::new();
    for term in terms {
        match term {
            Expr::And(parts) => ids.extend(parts.iter().find_map(equality)?),
            Expr::In {
                expr,
                list,
                negated: false,
            } if is_id(expr) => {
                for item in list {
                    ids.extend(value(item)?);
                }
            }
            other => ids.extend(equality(other)?),
        }
    }
    Some(ids)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::parse_query;
    use serde_json::json;

    #[test]
    fn read_many_shapes_give_their_ids_and_other_filters_none() {
        let params: HashMap<String, Value> = [
            ("@id0", json!("a")),
            ("@id1", json!("b")),
            ("@pk0", json!("p")),
            ("@n", json!(5)),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
        let set = |ids: &[&str]| Some(ids.iter().map(|s| s.to_string()).collect::<HashSet<_>>());
        let table = [
            ("SELECT * FROM c WHERE c.id = 'a'", set(&["a"])),
            ("SELECT * FROM c WHERE c.id IN ('a', @id1, 'c')", set(&["a", "b", "c"])),
            (
                "SELECT * FROM c WHERE (c.id = @id0 AND c.pk = @pk0) OR (c['pk'] = 'q' AND c.id = @id1)",
                set(&["a", "b"]),
            ),
            ("SELECT * FROM r WHERE r.id = @id0 OR 'z' = r.id", set(&["a", "z"])),
            // Not a string, or a missing parameter: matches no id.
            ("SELECT * FROM c WHERE c.id = @n OR c.id = @missing OR c.id = 'a'", set(&["a"])),
            ("SELECT * FROM c WHERE c.id IN (1, 2)", set(&[])),
            ("SELECT * FROM c WHERE c.id = 'a' OR c.n = 1", None),
            ("SELECT * FROM c WHERE c.pk = 'a'", None),
            ("SELECT * FROM c WHERE c.id != 'a'", None),
            ("SELECT * FROM c WHERE c.id NOT IN ('a')", None),
            ("SELECT * FROM c WHERE c.id = c.other", None),
            ("SELECT * FROM c WHERE c.x.id = 'a'", None),
            ("SELECT * FROM c WHERE NOT (c.id = 'a')", None),
            ("SELECT c.id FROM c JOIN t IN c.tags WHERE c.id = 'a'", None),
            ("SELECT * FROM c IN c.kids WHERE c.id = 'a'", None),
            ("SELECT * FROM c", None),
        ];
        for (text, want) in table {
            let q = parse_query(text).unwrap();
            assert_eq!(candidate_ids(&q, &params), want, "{text}");
        }
    }
}

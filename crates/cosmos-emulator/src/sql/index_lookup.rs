//! How many index lookups answer a query's WHERE clause, when the index can answer it: the
//! service serves an equality, a range, a BETWEEN or an IN on a property path from its index, and
//! loads only the documents the lookups find. The emulator scans instead, but charges a query as
//! the index would have served it ([`crate::protocol::charge`]): the documents that pass the filter
//! and one lookup per term. Pure: a parsed query and its parameters in, a count out.
//!
//! A clause is served by the index when it is a comparison of a path of the FROM alias with a
//! constant (a literal or a parameter), a conjunction holding at least one such comparison (the
//! other terms are checked on the documents the lookups loaded), or a disjunction whose every term
//! is served (one set of lookups per term). Anything else (a function of a path, NOT, `!=`, a
//! comparison of two paths) needs every document read.

use std::collections::HashMap;

use serde_json::Value;

use super::ast::{BinaryOp, Expr, Query};

/// The lookups that answer `q`'s WHERE clause, or `None` when the index cannot answer it (no
/// filter, no FROM, or a clause of another shape).
pub(crate) fn lookups(q: &Query, params: &HashMap<String, Value>) -> Option<usize> {
    let from = q.from.as_ref()?;
    let alias = from.source.alias();
    let filter = q.filter.as_ref()?;
    let term = |e: &Expr| served_term(e, alias, params);
    match filter {
        Expr::Or(parts) => parts
            .iter()
            .map(|p| conjunction(p, &term))
            .sum::<Option<usize>>(),
        other => conjunction(other, &term),
    }
}

/// The lookups of a conjunction (or of one term): those of its served terms, at least one.
fn conjunction(e: &Expr, term: &impl Fn(&Expr) -> Option<usize>) -> Option<usize> {
    match e {
        Expr::And(parts) => {
            let n: usize = parts.iter().filter_map(term).sum();
            (n > 0).then_some(n)
        }
        other => term(other),
    }
}

/// The lookups of one comparison of a path of `alias` with constants (one per value of an IN).
fn served_term(e: &Expr, alias: &str, params: &HashMap<String, Value>) -> Option<usize> {
    let is_path = |e: &Expr| e.plain_path().is_some_and(|(root, _)| root == alias);
    let constant = |e: &Expr| match e {
        Expr::Literal(_) => true,
        Expr::Param(name) => params.contains_key(name),
        _ => false,
    };
    match e {
        Expr::Binary(op, a, b) if compares(*op) => {
            ((is_path(a) && constant(b)) || (is_path(b) && constant(a))).then_some(1)
        }
        Expr::Between {
            expr,
            low,
            high,
            negated: false,
        } => (is_path(expr) && constant(low) && constant(high)).then_some(1),
        Expr::In {
            expr,
            list,
            negated: false,
        } => (is_path(expr) && !list.is_empty() && list.iter().all(constant)).then_some(list.len()),
        _ => None,
    }
}

/// Whether `op` is one the index answers (equality and ranges; `!=` is not).
fn compares(op: BinaryOp) -> bool {
    matches!(
        op,
        BinaryOp::Eq | BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge
    )
}

#[cfg(test)]
mod tests {
    use super::lookups;
    use crate::sql::parse_query;
    use serde_json::{json, Value};
    use std::collections::HashMap;

    #[test]
    fn served_clauses_count_their_lookups_and_others_none() {
        let params: HashMap<String, Value> = [("@a", json!("x")), ("@b", json!(2))]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect();
        let table = [
            ("SELECT * FROM c", None),
            ("SELECT * FROM c WHERE c.n = 1", Some(1)),
            ("SELECT * FROM c WHERE 1 = c.n", Some(1)),
            ("SELECT * FROM c WHERE c.a.b >= @b", Some(1)),
            ("SELECT * FROM c WHERE c.n BETWEEN 1 AND 5", Some(1)),
            ("SELECT * FROM c WHERE c.id IN ('a', 'b', @a)", Some(3)),
            (
                "SELECT * FROM c WHERE c.n = 1 AND LOWER(c.s) = 'x'",
                Some(1),
            ),
            ("SELECT * FROM c WHERE c.n = 1 AND c.m < 3", Some(2)),
            (
                "SELECT * FROM c WHERE (c.id = @a AND c.pk = 'p') OR (c.id = 'b' AND c.pk = 'q')",
                Some(4),
            ),
            ("SELECT * FROM c WHERE c.n = 1 OR LOWER(c.s) = 'x'", None),
            ("SELECT * FROM c WHERE LOWER(c.s) = 'x'", None),
            ("SELECT * FROM c WHERE c.n != 1", None),
            ("SELECT * FROM c WHERE NOT (c.n = 1)", None),
            ("SELECT * FROM c WHERE c.n = c.m", None),
            ("SELECT * FROM c WHERE c.n = @missing", None),
            ("SELECT * FROM c WHERE c.n NOT IN (1, 2)", None),
            ("SELECT * FROM c WHERE true", None),
            ("SELECT c.id FROM c JOIN t IN c.tags WHERE t.n = 1", None),
            ("SELECT * FROM c ORDER BY c.n", None),
        ];
        for (text, expected) in table {
            let q = parse_query(text).unwrap();
            assert_eq!(lookups(&q, &params), expected, "{text}");
        }
    }
}

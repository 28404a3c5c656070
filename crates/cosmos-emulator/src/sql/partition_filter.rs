//! Whether a query's WHERE clause pins the partition key to one value (`c.pk = 'x'` as one of
//! its top-level AND terms), so it can run on one partition without a plan.

use serde_json::Value;

use super::ast::{BinaryOp, Expr, Query, Source};

/// The value the WHERE clause fixes the partition key at (`pk_path` are the key path's
/// property names), resolving parameters from `params`.
pub(crate) fn pinned_key(
    q: &Query,
    pk_path: &[String],
    params: &std::collections::HashMap<String, Value>,
) -> Option<Value> {
    let from = q.from.as_ref()?;
    let Source::Container { alias, path, .. } = &from.source else {
        return None;
    };
    if !path.is_empty() {
        return None;
    }
    let filter = q.filter.as_ref()?;
    let terms: Vec<&Expr> = match filter {
        Expr::And(items) => items.iter().collect(),
        other => vec![other],
    };
    terms.into_iter().find_map(|term| {
        let Expr::Binary(BinaryOp::Eq, a, b) = term else {
            return None;
        };
        let is_key = |e: &Expr| {
            e.plain_path().is_some_and(|(root, steps)| {
                root == alias
                    && steps.len() == pk_path.len()
                    && steps.iter().zip(pk_path).all(|(s, p)| s == p)
            })
        };
        let value = |e: &Expr| match e {
            Expr::Literal(v) => Some(v.clone()),
            Expr::Param(name) => params.get(name).cloned(),
            _ => None,
        };
        if is_key(a) {
            value(b)
        } else if is_key(b) {
            value(a)
        } else {
            None
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::parse_query;
    use serde_json::json;

    #[test]
    fn finds_a_pinned_partition_key() {
        let mut params = std::collections::HashMap::new();
        params.insert("@k".to_owned(), json!("p9"));
        let pk = vec!["pk".to_owned()];
        let table = [
            ("SELECT * FROM c WHERE c.pk = 'a'", Some(json!("a"))),
            (
                "SELECT * FROM c WHERE 'a' = c.pk AND c.n > 1",
                Some(json!("a")),
            ),
            (
                "SELECT * FROM c WHERE c.n > 1 AND c.pk = @k",
                Some(json!("p9")),
            ),
            ("SELECT * FROM r WHERE r['pk'] = 5", Some(json!(5))),
            ("SELECT * FROM c WHERE c.pk = 'a' OR c.pk = 'b'", None),
            ("SELECT * FROM c WHERE c.other = 'a'", None),
            ("SELECT * FROM c WHERE c.pk.x = 'a'", None),
            ("SELECT * FROM c", None),
        ];
        for (text, want) in table {
            let q = parse_query(text).unwrap();
            assert_eq!(pinned_key(&q, &pk, &params), want, "{text}");
        }
    }
}

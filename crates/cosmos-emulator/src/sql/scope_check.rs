//! Name resolution when a query is compiled: every identifier must name a source the query (or
//! an enclosing query) binds where it is used, so `SELECT * FROM c WHERE d.x = 1` is refused
//! before any document is read, as the service refuses it (its message: "Identifier 'd' could
//! not be resolved."), even when the container is empty.
//!
//! The scopes are the ones the evaluator uses: a top-level `FROM` names the container with any
//! word; a JOIN sees the sources before it; the WHERE, select list, GROUP BY, ORDER BY and
//! aggregate arguments see every source; a subquery also sees its enclosing query's names; TOP,
//! OFFSET and LIMIT see none. Recursion follows subqueries, whose nesting the parser bounds.

use super::ast::{Expr, Projection, Query, Source, Step};
use super::sql_error::SqlError;
use super::walk::children;

/// `Ok` when every identifier of `q` resolves.
pub(super) fn check_names(q: &Query) -> Result<(), SqlError> {
    check_query(q, &[], true)
}

fn unresolved(name: &str, at: Option<usize>) -> SqlError {
    let message = format!("Identifier '{name}' could not be resolved.");
    match at {
        Some(at) => SqlError::at(at, message),
        None => SqlError::new(message),
    }
}

fn check_query(q: &Query, outer: &[&str], top: bool) -> Result<(), SqlError> {
    let mut names: Vec<&str> = outer.to_vec();
    if let Some(from) = &q.from {
        let from_at = q.spans.from.map(|s| s.0);
        match &from.source {
            Source::Container {
                container, path, ..
            } => {
                if !top && !names.contains(&container.as_str()) {
                    return Err(unresolved(container, from_at));
                }
                check_steps(path, &names)?;
            }
            Source::In { expr, .. } => {
                let mut visible = names.clone();
                if top {
                    if let Some(root) = root_ident(expr) {
                        visible.push(root);
                    }
                }
                check_expr(expr, &visible)?;
            }
        }
        names.push(from.source.alias());
        for join in &from.joins {
            match join {
                Source::In { expr, .. } => check_expr(expr, &names)?,
                Source::Container {
                    container, path, ..
                } => {
                    if !names.contains(&container.as_str()) {
                        return Err(unresolved(container, from_at));
                    }
                    check_steps(path, &names)?;
                }
            }
            names.push(join.alias());
        }
    }
    match &q.projection {
        Projection::Star => {}
        Projection::Value(e) => check_expr(e, &names)?,
        Projection::Items(items) => {
            for item in items {
                check_expr(&item.expr, &names)?;
            }
        }
    }
    for e in q
        .filter
        .iter()
        .chain(q.group_by.iter())
        .chain(q.order_by.iter().map(|k| &k.expr))
        .chain(q.aggregates.iter().map(|a| &a.arg))
    {
        check_expr(e, &names)?;
    }
    for e in q.top.iter().chain(q.offset.iter()).chain(q.limit.iter()) {
        check_expr(e, &[])?;
    }
    Ok(())
}

fn check_steps(path: &[Step], names: &[&str]) -> Result<(), SqlError> {
    for step in path {
        if let Step::Index(e) = step {
            check_expr(e, names)?;
        }
    }
    Ok(())
}

/// Checks `expr` without recursion, except into subqueries.
fn check_expr(expr: &Expr, names: &[&str]) -> Result<(), SqlError> {
    let mut stack = vec![expr];
    while let Some(e) = stack.pop() {
        match e {
            Expr::Ident(name, at) => {
                if !names.contains(&name.as_str()) {
                    return Err(unresolved(name, Some(*at)));
                }
            }
            Expr::Exists(q) | Expr::ArrayQuery(q) | Expr::Scalar(q) => {
                check_query(q, names, false)?;
            }
            other => stack.extend(children(other)),
        }
    }
    Ok(())
}

/// The name at the root of a path (`c` of `c.a[0].b`).
fn root_ident(expr: &Expr) -> Option<&str> {
    let mut e = expr;
    loop {
        match e {
            Expr::Ident(n, _) => return Some(n),
            Expr::Path(base, _) => e = base,
            _ => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::parse_query;

    /// Each query with the unresolved name and its position (None: the query is accepted).
    #[test]
    fn names_resolve_in_the_scopes_the_evaluator_uses() {
        let table: &[(&str, Option<(&str, usize)>)] = &[
            ("SELECT * FROM c WHERE c.x = 1", None),
            ("SELECT * FROM c WHERE d.x = 1", Some(("d", 22))),
            ("SELECT d.x FROM c", Some(("d", 7))),
            ("SELECT VALUE d FROM c", Some(("d", 13))),
            ("SELECT * FROM root r WHERE r.a > 1", None),
            ("SELECT * FROM root r WHERE root.a > 1", Some(("root", 27))),
            ("SELECT * FROM c ORDER BY x.a", Some(("x", 25))),
            ("SELECT c.a FROM c GROUP BY z.a", Some(("z", 27))),
            ("SELECT COUNT(q) FROM c", Some(("q", 13))),
            ("SELECT c FROM c JOIN t IN c.tags WHERE t = 'a'", None),
            ("SELECT c FROM c JOIN t IN u.tags", Some(("u", 26))),
            ("SELECT c FROM c JOIN t IN t.tags", Some(("t", 26))),
            ("SELECT b FROM c JOIN a IN c.x JOIN b IN a.y", None),
            ("SELECT * FROM t IN c.tags", None),
            ("SELECT * FROM t IN c.tags WHERE c.id = 1", Some(("c", 32))),
            ("SELECT VALUE t FROM t IN c.tags", None),
            (
                "SELECT * FROM c WHERE EXISTS(SELECT VALUE t FROM t IN c.tags WHERE t = c.id)",
                None,
            ),
            (
                "SELECT * FROM c WHERE EXISTS(SELECT VALUE t FROM t IN e.tags)",
                Some(("e", 54)),
            ),
            ("SELECT ARRAY(SELECT VALUE x FROM x IN c.a) FROM c", None),
            (
                "SELECT (SELECT VALUE y FROM x IN c.a) FROM c",
                Some(("y", 21)),
            ),
            ("SELECT * FROM c WHERE ARRAY_CONTAINS(c.a, @p)", None),
            ("SELECT * FROM c WHERE c[k] = 1", Some(("k", 24))),
            ("SELECT 1 AS one", None),
            ("SELECT x", Some(("x", 7))),
            ("SELECT c.a AS n FROM c WHERE n = 1", Some(("n", 29))),
        ];
        for (text, expected) in table {
            let got = parse_query(text);
            match expected {
                None => assert!(got.is_ok(), "{text}: {got:?}"),
                Some((name, at)) => {
                    let e = got.expect_err(text);
                    assert_eq!(
                        e.message,
                        format!("Identifier '{name}' could not be resolved."),
                        "{text}"
                    );
                    assert_eq!(e.position, Some(*at), "{text}");
                }
            }
        }
    }
}

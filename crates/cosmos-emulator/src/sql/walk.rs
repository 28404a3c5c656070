//! Walking expression trees without recursion: children of a node, and a tree's height.

use super::ast::{Expr, Projection, Query, Source, Step};

/// The direct sub-expressions of `expr`, subqueries' expressions included.
pub(super) fn children(expr: &Expr) -> Vec<&Expr> {
    match expr {
        Expr::Literal(_)
        | Expr::Undefined
        | Expr::Param(_)
        | Expr::Ident(..)
        | Expr::Aggregate(_) => Vec::new(),
        Expr::Path(base, steps) => {
            let mut out = vec![base.as_ref()];
            out.extend(steps.iter().filter_map(|s| match s {
                Step::Index(e) => Some(e),
                Step::Name(_) => None,
            }));
            out
        }
        Expr::Array(items)
        | Expr::And(items)
        | Expr::Or(items)
        | Expr::Call(_, items)
        | Expr::Udf(_, items) => items.iter().collect(),
        Expr::Object(fields) => fields.iter().map(|(_, e)| e).collect(),
        Expr::Unary(_, e) => vec![e.as_ref()],
        Expr::Binary(_, a, b) => vec![a.as_ref(), b.as_ref()],
        Expr::Between {
            expr, low, high, ..
        } => vec![expr.as_ref(), low.as_ref(), high.as_ref()],
        Expr::In { expr, list, .. } => {
            let mut out = vec![expr.as_ref()];
            out.extend(list.iter());
            out
        }
        Expr::Like {
            expr,
            pattern,
            escape,
            ..
        } => {
            let mut out = vec![expr.as_ref(), pattern.as_ref()];
            out.extend(escape.as_deref());
            out
        }
        Expr::Ternary(a, b, c) => vec![a.as_ref(), b.as_ref(), c.as_ref()],
        Expr::Exists(q) | Expr::ArrayQuery(q) | Expr::Scalar(q) => query_expressions(q),
    }
}

/// Every top-level expression of a query (select list, sources, filter, keys, aggregates).
pub(crate) fn query_expressions(q: &Query) -> Vec<&Expr> {
    let mut out = Vec::new();
    match &q.projection {
        Projection::Star => {}
        Projection::Value(e) => out.push(e),
        Projection::Items(items) => out.extend(items.iter().map(|i| &i.expr)),
    }
    if let Some(from) = &q.from {
        for source in std::iter::once(&from.source).chain(from.joins.iter()) {
            match source {
                Source::In { expr, .. } => out.push(expr),
                Source::Container { path, .. } => out.extend(path.iter().filter_map(|s| match s {
                    Step::Index(e) => Some(e),
                    Step::Name(_) => None,
                })),
            }
        }
    }
    out.extend(q.filter.iter());
    out.extend(q.group_by.iter());
    out.extend(q.order_by.iter().map(|k| &k.expr));
    out.extend(q.aggregates.iter().map(|a| &a.arg));
    out.extend(q.top.iter().chain(q.offset.iter()).chain(q.limit.iter()));
    out
}

/// The number of levels of `expr` (a leaf is 1), computed with an explicit stack.
pub(super) fn height(expr: &Expr) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(expr, 1usize)];
    while let Some((e, depth)) = stack.pop() {
        deepest = deepest.max(depth);
        stack.extend(children(e).into_iter().map(|c| (c, depth + 1)));
    }
    deepest
}

/// Whether any expression under `expr` (subqueries excluded) satisfies `pred`.
pub(crate) fn any_in(expr: &Expr, pred: &dyn Fn(&Expr) -> bool) -> bool {
    let mut stack = vec![expr];
    while let Some(e) = stack.pop() {
        if pred(e) {
            return true;
        }
        if !matches!(e, Expr::Exists(_) | Expr::ArrayQuery(_) | Expr::Scalar(_)) {
            stack.extend(children(e));
        }
    }
    false
}

//! Query plans: what an SDK needs to run a query across partition key ranges (the service's
//! `partitionedQueryExecutionInfoVersion` 2 shape), including the query it sends to each range.
//!
//! Rewritten per-range queries:
//! - ORDER BY: `SELECT [TOP k] c._rid, [{"item": key}, ...] AS orderByItems, <payload> AS payload
//!   FROM ... WHERE ({documentdb-formattableorderbyquery-filter}) [AND (<filter>)] ORDER BY ...`
//!   (the SDK replaces the placeholder; k is TOP, or OFFSET + LIMIT, and no TOP under DISTINCT);
//! - `SELECT VALUE <aggregate>`: `SELECT VALUE [{"item": <aggregate>}] FROM ...`, AVG as
//!   `{"sum": SUM(x), "count": COUNT(x)}`;
//! - `SELECT VALUE <aggregate> ... ORDER BY`: `SELECT [{}, ...] AS orderByItems,
//!   [{"item": <aggregate>}] AS payload FROM ... WHERE ({documentdb-formattableorderbyquery-filter})
//!   [AND (<filter>)] ORDER BY ...` with undefined keys (`{}`): one row per range, which the
//!   client merges as ORDER BY rows and then aggregates; ORDER BY with GROUP BY is refused, as the
//!   service refuses it;
//! - GROUP BY and aggregates without VALUE: `SELECT [{"item": g}, ...] AS groupByItems,
//!   {"alias": expr | {"item": <aggregate>}, ...} AS payload FROM ... GROUP BY ...`;
//! - OFFSET n LIMIT m alone: the query with `OFFSET 0 LIMIT n+m`;
//! - anything else runs unchanged on each range (`rewrittenQuery` empty).

use std::collections::HashMap;

use serde::Serialize;
use serde_json::{Map, Value};

use super::ast::{AggregateKind, Expr, Projection, Query, Source, Span};
use super::eval::Ctx;
use super::exec::count_of;
use super::query_info::QueryInfo;
use super::sql_error::SqlError;

/// The plan answered to `x-ms-cosmos-is-query-plan-request: True`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct QueryPlan {
    pub partitioned_query_execution_info_version: u32,
    pub query_info: QueryInfo,
    pub query_ranges: Vec<QueryRange>,
    /// For a query ranked by `ORDER BY RANK` (see [`super::search`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hybrid_search_query_info: Option<super::search::HybridSearchQueryInfo>,
}

/// A range of effective partition keys the query reads.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct QueryRange {
    pub min: String,
    pub max: String,
    pub is_min_inclusive: bool,
    pub is_max_inclusive: bool,
}

/// The text of `span`, trimmed.
fn slice(text: &[char], span: Span) -> String {
    text.get(span.0..span.1.min(text.len()))
        .unwrap_or_default()
        .iter()
        .collect::<String>()
        .trim()
        .to_owned()
}

/// How a range reports its part of `MIN`/`MAX`: the value itself (what the Python SDK combines),
/// or `{"min"|"max": value, "count": n}` for clients that declare the `NonValueAggregate` query
/// feature (the Node.js SDK combines that form).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MinMaxParts {
    Plain,
    WithCount,
}

/// Builds the plan of `q` (parsed from `text`); `pinned` is the range of effective partition keys
/// a WHERE clause fixes (one key, or a hierarchical prefix's keys), if any.
pub(crate) fn plan(
    q: &Query,
    text: &str,
    params: &HashMap<String, Value>,
    pinned: Option<QueryRange>,
    min_max: MinMaxParts,
) -> Result<QueryPlan, SqlError> {
    let chars: Vec<char> = text.chars().collect();
    let work = super::meter::Meter::unlimited();
    let ctx = Ctx {
        params,
        aggregates: None,
        work: &work,
        subquery: crate::sql::collect::run_subquery,
    };
    let window = Paging {
        top: count_of(q.top.as_ref(), &ctx)?,
        offset: count_of(q.offset.as_ref(), &ctx)?,
        limit: count_of(q.limit.as_ref(), &ctx)?,
    };
    let mut info = query_info(q, &chars, &window);
    let from = q.spans.from.map(|s| slice(&chars, s)).unwrap_or_default();
    if super::search::is_ranked(q) {
        return ranked_plan(q, &chars, &window, info, pinned, params);
    }
    info.has_non_streaming_order_by = super::search::is_vector_search(q);
    let filter = q.spans.filter.map(|s| slice(&chars, s));
    let where_clause = filter
        .as_ref()
        .map(|f| format!(" WHERE {f}"))
        .unwrap_or_default();
    let clauses = Clauses {
        chars: &chars,
        from: &from,
        filter: filter.as_deref(),
        where_clause: &where_clause,
    };
    if !q.aggregates.is_empty() || !q.group_by.is_empty() {
        aggregate_rewrite(q, &clauses, min_max, &mut info)?;
    } else if !q.order_by.is_empty() {
        order_by_rewrite(q, &clauses, &window, &mut info)?;
    } else if let (Some(o), Some(l), Some(at)) = (window.offset, window.limit, q.spans.offset_at) {
        let head = slice(&chars, (0, at));
        info.rewritten_query = format!("{head} OFFSET 0 LIMIT {}", o.saturating_add(l));
    }
    let query_ranges = vec![pinned.unwrap_or_else(whole_range)];
    Ok(QueryPlan {
        partitioned_query_execution_info_version: 2,
        query_info: info,
        query_ranges,
        hybrid_search_query_info: None,
    })
}

/// TOP, OFFSET and LIMIT of a query, as numbers.
struct Paging {
    top: Option<u64>,
    offset: Option<u64>,
    limit: Option<u64>,
}

/// The query's text pieces a rewrite is made of.
struct Clauses<'a> {
    chars: &'a [char],
    from: &'a str,
    filter: Option<&'a str>,
    /// ` WHERE <filter>`, or empty.
    where_clause: &'a str,
}

/// The plan's description of `q` before any rewrite.
fn query_info(q: &Query, chars: &[char], window: &Paging) -> QueryInfo {
    QueryInfo {
        distinct_type: match (q.distinct, q.order_by.is_empty()) {
            (false, _) => "None",
            (true, false) => "Ordered",
            (true, true) => "Unordered",
        },
        top: window.top,
        offset: window.offset,
        limit: window.limit,
        order_by: q
            .order_by
            .iter()
            .map(|k| {
                if k.descending {
                    "Descending"
                } else {
                    "Ascending"
                }
            })
            .collect(),
        order_by_expressions: q.spans.order_by.iter().map(|s| slice(chars, *s)).collect(),
        group_by_expressions: q.spans.group_by.iter().map(|s| slice(chars, *s)).collect(),
        group_by_aliases: Vec::new(),
        aggregates: Vec::new(),
        group_by_alias_to_aggregate_type: Map::new(),
        rewritten_query: String::new(),
        has_select_value: matches!(q.projection, Projection::Value(_)),
        has_non_streaming_order_by: false,
    }
}

/// The plan of a ranked (full-text or hybrid) query: its hybrid search info, no paging of its own.
fn ranked_plan(
    q: &Query,
    chars: &[char],
    window: &Paging,
    info: QueryInfo,
    pinned: Option<QueryRange>,
    params: &HashMap<String, Value>,
) -> Result<QueryPlan, SqlError> {
    let root = q
        .from
        .as_ref()
        .map(|f| f.source.alias().to_owned())
        .unwrap_or_default();
    let take = window.top.or(window.limit);
    let hybrid = super::search::hybrid_info(
        q,
        chars,
        window.offset,
        take,
        &payload(q, chars, &root),
        params,
    )?;
    let info = QueryInfo {
        top: None,
        offset: None,
        limit: None,
        order_by: Vec::new(),
        order_by_expressions: Vec::new(),
        ..info
    };
    Ok(QueryPlan {
        partitioned_query_execution_info_version: 2,
        query_info: info,
        query_ranges: vec![pinned.unwrap_or_else(whole_range)],
        hybrid_search_query_info: hybrid,
    })
}

/// The per-range query of an aggregating query (aggregates or GROUP BY).
fn aggregate_rewrite(
    q: &Query,
    c: &Clauses<'_>,
    min_max: MinMaxParts,
    info: &mut QueryInfo,
) -> Result<(), SqlError> {
    let (chars, from) = (c.chars, c.from);
    if !q.order_by.is_empty() && !q.group_by.is_empty() {
        // The service does not serve this either.
        return Err(SqlError::new(
            "'ORDER BY' is not supported in presence of GROUP BY.",
        ));
    }
    match (&q.projection, q.group_by.is_empty()) {
        (Projection::Value(Expr::Aggregate(i)), true) if !q.order_by.is_empty() => {
            // One row per range in the ORDER BY row form, its payload the range's part of the
            // aggregate as `SELECT VALUE` aggregates send it: `[{"item": <part>}]`. An
            // aggregate's row stands for all the rows it read, so its sort keys are undefined
            // (`{}`): the client's merge then keeps the ranges' order, and the aggregate does
            // not depend on it.
            let call = &q.aggregates[*i];
            info.aggregates.push(call.kind.plan_name());
            let part = aggregate_text(call.kind, &slice(chars, call.span), min_max);
            let keys = vec!["{}"; info.order_by.len()].join(", ");
            info.rewritten_query = format!(
                "SELECT [{keys}] AS orderByItems, [{{\"item\": {part}}}] AS payload FROM {from} WHERE {} ORDER BY {}",
                order_by_filter(c.filter),
                order_by_keys(info)
            );
        }
        (Projection::Value(Expr::Aggregate(i)), true) => {
            let call = &q.aggregates[*i];
            info.aggregates.push(call.kind.plan_name());
            info.rewritten_query = format!(
                "SELECT VALUE [{{\"item\": {}}}] FROM {from}{}",
                aggregate_text(call.kind, &slice(chars, call.span), min_max),
                c.where_clause
            );
        }
        _ if !q.order_by.is_empty() => {
            return Err(SqlError::new(
                "Across partitions, ORDER BY with aggregates is served for SELECT VALUE with one aggregate alone (e.g. SELECT VALUE COUNT(1) FROM c ORDER BY c.k); this query's aggregates are not of that form.",
            ))
        }
        (Projection::Value(_), true) => {
            return Err(SqlError::new(
                "Across partitions, SELECT VALUE with an aggregate must be the aggregate alone, e.g. SELECT VALUE COUNT(1).",
            ))
        }
        _ => group_by_rewrite(q, chars, from, c.where_clause, min_max, info)?,
    }
    Ok(())
}

/// The per-range query of an ORDER BY query: each row's sort keys and payload.
fn order_by_rewrite(
    q: &Query,
    c: &Clauses<'_>,
    window: &Paging,
    info: &mut QueryInfo,
) -> Result<(), SqlError> {
    let root = match q.from.as_ref().map(|f| &f.source) {
        Some(Source::Container { alias, .. }) | Some(Source::In { alias, .. }) => alias.clone(),
        None => return Err(SqlError::new("ORDER BY needs a FROM clause.")),
    };
    // Each range may stop after the rows the client can use, except under DISTINCT: the
    // client drops duplicates after merging, so the first k rows of a range can hold fewer
    // than k distinct values, and a range cut at k would lose rows the answer needs.
    let take = match (window.top, window.offset, window.limit, q.distinct) {
        (_, _, _, true) => String::new(),
        (Some(t), _, _, false) => format!("TOP {t} "),
        (None, Some(o), Some(l), false) => format!("TOP {} ", o.saturating_add(l)),
        _ => String::new(),
    };
    info.rewritten_query = format!(
        "SELECT {take}{root}._rid, {} AS orderByItems, {} AS payload FROM {} WHERE {} ORDER BY {}",
        order_by_items(info),
        payload(q, c.chars, &root),
        c.from,
        order_by_filter(c.filter),
        order_by_keys(info)
    );
    Ok(())
}

/// `[{"item": key}, ...]`: an ORDER BY row's sort keys.
fn order_by_items(info: &QueryInfo) -> String {
    let items: Vec<String> = info
        .order_by_expressions
        .iter()
        .map(|e| format!("{{\"item\": {e}}}"))
        .collect();
    format!("[{}]", items.join(", "))
}

/// The ORDER BY clause of a range's query.
fn order_by_keys(info: &QueryInfo) -> String {
    let keys: Vec<String> = info
        .order_by_expressions
        .iter()
        .zip(&info.order_by)
        .map(|(e, d)| {
            // VectorDistance sorts closest first by itself, and refuses a direction.
            if info.has_non_streaming_order_by {
                e.clone()
            } else {
                format!("{e} {}", if *d == "Descending" { "DESC" } else { "ASC" })
            }
        })
        .collect();
    keys.join(", ")
}

/// The WHERE clause of an ORDER BY range query: the placeholder a client replaces with its
/// resumption filter, and the query's own filter.
fn order_by_filter(filter: Option<&str>) -> String {
    match filter {
        Some(f) => format!("({{documentdb-formattableorderbyquery-filter}}) AND ({f})"),
        None => "({documentdb-formattableorderbyquery-filter})".to_owned(),
    }
}

/// Every effective partition key.
fn whole_range() -> QueryRange {
    QueryRange {
        min: String::new(),
        max: "FF".to_owned(),
        is_min_inclusive: true,
        is_max_inclusive: false,
    }
}

/// An aggregate as a range computes its part: AVG as its sum and count, MIN/MAX with their
/// count when the client combines that form.
fn aggregate_text(kind: AggregateKind, arg: &str, min_max: MinMaxParts) -> String {
    match (kind, min_max) {
        (AggregateKind::Avg, _) => format!("{{\"sum\": SUM({arg}), \"count\": COUNT({arg})}}"),
        (AggregateKind::Min, MinMaxParts::WithCount) => {
            format!("{{\"min\": MIN({arg}), \"count\": COUNT({arg})}}")
        }
        (AggregateKind::Max, MinMaxParts::WithCount) => {
            format!("{{\"max\": MAX({arg}), \"count\": COUNT({arg})}}")
        }
        (other, _) => format!("{}({arg})", other.sql_name()),
    }
}

/// The payload of an ORDER BY row: what the original query selects.
fn payload(q: &Query, chars: &[char], root: &str) -> String {
    match &q.projection {
        Projection::Star => root.to_owned(),
        Projection::Value(_) => q
            .spans
            .items
            .first()
            .map(|s| slice(chars, *s))
            .unwrap_or_default(),
        Projection::Items(items) => {
            let mut unnamed = 0;
            let fields: Vec<String> = items
                .iter()
                .zip(&q.spans.items)
                .map(|(item, span)| {
                    let name = item_name(item, &mut unnamed);
                    format!("{}: {}", Value::from(name), slice(chars, *span))
                })
                .collect();
            format!("{{{}}}", fields.join(", "))
        }
    }
}

fn item_name(item: &super::ast::SelectItem, unnamed: &mut usize) -> String {
    match &item.alias {
        Some(a) => a.clone(),
        None => match item.expr.plain_path() {
            Some((root, steps)) => steps.last().copied().unwrap_or(root).to_owned(),
            None => {
                *unnamed += 1;
                format!("${unnamed}")
            }
        },
    }
}

fn group_by_rewrite(
    q: &Query,
    chars: &[char],
    from: &str,
    where_clause: &str,
    min_max: MinMaxParts,
    info: &mut QueryInfo,
) -> Result<(), SqlError> {
    let Projection::Items(items) = &q.projection else {
        return Err(SqlError::new(
            "Across partitions, GROUP BY needs a select list of named items.",
        ));
    };
    let mut unnamed = 0;
    let mut fields = Vec::new();
    for (item, span) in items.iter().zip(&q.spans.items) {
        let name = item_name(item, &mut unnamed);
        let kind = match &item.expr {
            Expr::Aggregate(i) => {
                let call = &q.aggregates[*i];
                fields.push(format!(
                    "{}: {{\"item\": {}}}",
                    Value::from(name.clone()),
                    aggregate_text(call.kind, &slice(chars, call.span), min_max)
                ));
                Value::from(call.kind.plan_name())
            }
            other if super::walk::any_in(other, &|e| matches!(e, Expr::Aggregate(_))) => {
                return Err(SqlError::new(
                    "Across partitions, an aggregate must be a select item of its own.",
                ))
            }
            _ => {
                fields.push(format!(
                    "{}: {}",
                    Value::from(name.clone()),
                    slice(chars, *span)
                ));
                Value::Null
            }
        };
        info.group_by_aliases.push(name.clone());
        info.group_by_alias_to_aggregate_type.insert(name, kind);
    }
    let group_items: Vec<String> = info
        .group_by_expressions
        .iter()
        .map(|e| format!("{{\"item\": {e}}}"))
        .collect();
    let group_by = if info.group_by_expressions.is_empty() {
        String::new()
    } else {
        format!(" GROUP BY {}", info.group_by_expressions.join(", "))
    };
    info.rewritten_query = format!(
        "SELECT [{}] AS groupByItems, {{{}}} AS payload FROM {from}{where_clause}{group_by}",
        group_items.join(", "),
        fields.join(", ")
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::collect::run;
    use crate::sql::parse_query;
    use serde_json::json;

    fn plan_of(text: &str) -> QueryInfo {
        plan(
            &parse_query(text).unwrap(),
            text,
            &HashMap::new(),
            None,
            MinMaxParts::Plain,
        )
        .unwrap()
        .query_info
    }

    #[test]
    fn plans_name_what_the_sdk_must_do() {
        let p = plan_of("SELECT DISTINCT TOP 5 c.a FROM c WHERE c.b > 1 ORDER BY c.a DESC, c.b");
        assert_eq!(p.distinct_type, "Ordered");
        assert_eq!(p.top, Some(5));
        assert_eq!(p.order_by, vec!["Descending", "Ascending"]);
        assert_eq!(p.order_by_expressions, vec!["c.a", "c.b"]);
        assert_eq!(
            p.rewritten_query,
            "SELECT c._rid, [{\"item\": c.a}, {\"item\": c.b}] AS orderByItems, {\"a\": c.a} AS payload FROM c WHERE ({documentdb-formattableorderbyquery-filter}) AND (c.b > 1) ORDER BY c.a DESC, c.b ASC"
        );
        let p = plan_of("SELECT VALUE AVG(c.n) FROM c WHERE c.k = 1");
        assert_eq!(p.aggregates, vec!["Average"]);
        assert!(p.has_select_value);
        assert_eq!(
            p.rewritten_query,
            "SELECT VALUE [{\"item\": {\"sum\": SUM(c.n), \"count\": COUNT(c.n)}}] FROM c WHERE c.k = 1"
        );
        let p = plan_of("SELECT c.k, COUNT(1) AS n FROM c GROUP BY c.k");
        assert_eq!(p.group_by_expressions, vec!["c.k"]);
        assert_eq!(p.group_by_aliases, vec!["k", "n"]);
        assert_eq!(
            p.group_by_alias_to_aggregate_type,
            json!({"k": null, "n": "Count"})
                .as_object()
                .unwrap()
                .clone()
        );
        let p = plan_of("SELECT VALUE SUM(c.n) FROM c WHERE c.k > 1 ORDER BY c.k DESC");
        assert_eq!(p.aggregates, vec!["Sum"]);
        assert_eq!(p.order_by, vec!["Descending"]);
        assert_eq!(p.order_by_expressions, vec!["c.k"]);
        assert_eq!(
            p.rewritten_query,
            "SELECT [{}] AS orderByItems, [{\"item\": SUM(c.n)}] AS payload FROM c WHERE ({documentdb-formattableorderbyquery-filter}) AND (c.k > 1) ORDER BY c.k DESC"
        );
        let p = plan_of("SELECT * FROM c OFFSET 3 LIMIT 4");
        assert_eq!((p.offset, p.limit), (Some(3), Some(4)));
        assert_eq!(p.rewritten_query, "SELECT * FROM c OFFSET 0 LIMIT 7");
        assert_eq!(
            plan_of("SELECT DISTINCT VALUE c.a FROM c").distinct_type,
            "Unordered"
        );
        // DISTINCT keeps every row of each range: the client counts distinct values after merging.
        for text in [
            "SELECT DISTINCT c.v FROM c ORDER BY c.pk OFFSET 0 LIMIT 2",
            "SELECT DISTINCT TOP 2 VALUE c.v FROM c ORDER BY c.v",
        ] {
            let p = plan_of(text);
            assert!(
                p.rewritten_query.starts_with("SELECT c._rid,"),
                "{text}: {}",
                p.rewritten_query
            );
        }
        let p = plan_of("SELECT c.v FROM c ORDER BY c.pk OFFSET 2 LIMIT 2");
        assert!(
            p.rewritten_query.starts_with("SELECT TOP 4 c._rid,"),
            "{}",
            p.rewritten_query
        );
        assert_eq!(plan_of("SELECT * FROM c").rewritten_query, "");
    }

    #[test]
    fn order_by_is_planned_with_a_value_aggregate_only() {
        let refused = |text: &str| {
            plan(
                &parse_query(text).unwrap(),
                text,
                &HashMap::new(),
                None,
                MinMaxParts::Plain,
            )
            .unwrap_err()
            .to_string()
        };
        assert!(
            refused("SELECT c.k, COUNT(1) AS n FROM c GROUP BY c.k ORDER BY c.k")
                .contains("'ORDER BY' is not supported in presence of GROUP BY")
        );
        assert!(refused("SELECT COUNT(1) AS n FROM c ORDER BY c.k").contains("SELECT VALUE"));
        assert!(refused("SELECT VALUE COUNT(1) + 1 FROM c ORDER BY c.k").contains("SELECT VALUE"));
    }

    #[test]
    fn rewritten_queries_run_and_give_the_shapes_sdks_read() {
        let docs = vec![
            json!({"id": "x", "_rid": "r1", "a": 2, "k": "p"}),
            json!({"id": "y", "_rid": "r2", "k": "p"}),
        ];
        let run_text = |text: &str| {
            let info = plan_of(text);
            let rewritten = info
                .rewritten_query
                .replace("{documentdb-formattableorderbyquery-filter}", "true");
            run(&parse_query(&rewritten).unwrap(), &docs, &HashMap::new()).unwrap()
        };
        assert_eq!(
            run_text("SELECT c.id FROM c ORDER BY c.a"),
            vec![
                json!({"_rid": "r2", "orderByItems": [{}], "payload": {"id": "y"}}),
                json!({"_rid": "r1", "orderByItems": [{"item": 2}], "payload": {"id": "x"}}),
            ]
        );
        assert_eq!(
            run_text("SELECT VALUE COUNT(1) FROM c"),
            vec![json!([{"item": 2}])]
        );
        assert_eq!(
            run_text("SELECT VALUE AVG(c.a) FROM c"),
            vec![json!([{"item": {"sum": 2, "count": 1}}])]
        );
        assert_eq!(
            run_text("SELECT VALUE AVG(c.a) FROM c ORDER BY c.k"),
            vec![json!({"orderByItems": [{}], "payload": [{"item": {"sum": 2, "count": 1}}]})]
        );
        assert_eq!(
            run_text("SELECT VALUE COUNT(1) FROM c WHERE c.a > 5 ORDER BY c.a"),
            vec![json!({"orderByItems": [{}], "payload": [{"item": 0}]})]
        );
        assert_eq!(
            run_text("SELECT c.k, MAX(c.a) AS m FROM c GROUP BY c.k"),
            vec![json!({"groupByItems": [{"item": "p"}], "payload": {"k": "p", "m": {"item": 2}}})]
        );
    }
}

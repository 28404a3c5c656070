//! Vector, full-text and hybrid search in a query: the pass that readies a parsed query against
//! the container's vector embedding policy, and the hybrid search part of a query plan.
//!
//! [`prepare`] runs on every parsed item query before it is planned or executed:
//! - each `VectorDistance` (and `_VectorScore`) call gets an explicit options object naming its
//!   distance function and data type: the call's own options first, then the policy's entry for
//!   the path it measures, then cosine over float32;
//! - `ORDER BY VectorDistance(...)` sorts closest first (descending for cosine and dot product,
//!   ascending for Euclidean); a written ASC or DESC there is refused, as the service refuses it;
//! - `ORDER BY RANK` takes `FullTextScore(...)` or `RRF(...)` alone, without ASC or DESC;
//!   `FullTextScore` and `RRF` anywhere else are refused;
//! - each full-text call (`FullTextContains`, `FullTextContainsAll`, `FullTextContainsAny`,
//!   `_FullTextWordCount`, `_FullTextScore`) is marked with the language it tokenizes: that of
//!   the full-text path its first argument names (a property path of the query's source equal
//!   to one of the policy's `fullTextPaths`), else the policy's default language, else English
//!   ([`super::fulltext::marked`]).
//!
//! A query ranked by `ORDER BY RANK` is answered through its plan ([`hybrid_info`]): the client
//! gathers the container's full-text statistics with the global statistics query, runs one
//! component query per ranking function on each partition key range (each ordered by its score,
//! cut at a depth of [`COMPONENT_DEPTH_FACTOR`] times the results wanted), and fuses the
//! rankings by reciprocal rank fusion (`1 / (60 + rank)` per component, times its weight).

use serde::Serialize;
use serde_json::Value;

use super::ast::{constant, Expr, Projection, Query, Source, Step};
use super::fulltext_language::Language;
use super::sql_error::SqlError;
use super::vector::{options_value, read_options, DataType, Distance, Resolved};

/// How many candidates each component query returns per range, per result wanted.
pub(crate) const COMPONENT_DEPTH_FACTOR: u64 = 12;
/// Most components one `RRF` may fuse.
pub(crate) const MAX_COMPONENTS: usize = 16;
/// Longest query text a ranked query's plan may hold (its statistics query, each component
/// query): the query text limit less room for the statistics the client writes into its
/// placeholders (a hit count per term of every component's score), so every planned query
/// parses once filled.
pub(crate) const MAX_PLANNED_BYTES: usize = super::limits::MAX_QUERY_BYTES - 64 * 1024;

/// One entry of a container's vector embedding policy.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct VectorPath {
    /// The property path's names (`/embedding` is `["embedding"]`).
    pub path: Vec<String>,
    pub distance: Distance,
    pub data_type: DataType,
    pub dimensions: u32,
}

/// The languages of a container's full-text policy.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct TextLanguages {
    /// The policy's `defaultLanguage` (English without one, or without a policy).
    pub default: Language,
    /// Each full-text path's names and language (its own, or the default).
    pub paths: Vec<(Vec<String>, Language)>,
}

impl TextLanguages {
    /// The language of the property at `steps` (names from the document's root).
    pub(crate) fn of_path(&self, steps: &[&str]) -> Language {
        self.paths
            .iter()
            .find(|(path, _)| path.iter().map(String::as_str).eq(steps.iter().copied()))
            .map_or(self.default, |(_, language)| *language)
    }
}

/// What of a container's policies a query needs.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct SearchPolicy {
    pub vectors: Vec<VectorPath>,
    pub full_text: TextLanguages,
}

fn call_name(e: &Expr) -> Option<&str> {
    match e {
        Expr::Call(name, _) => Some(name),
        _ => None,
    }
}

/// Readies `q` for planning and execution under `policy` (see the module docs); `params` are the
/// request's parameters (an options object may be one).
pub(crate) fn prepare(
    q: &mut Query,
    policy: &SearchPolicy,
    params: &std::collections::HashMap<String, Value>,
) -> Result<(), SqlError> {
    prepare_level(q, policy, params, true)
}

fn prepare_level(
    q: &mut Query,
    policy: &SearchPolicy,
    params: &std::collections::HashMap<String, Value>,
    top_level: bool,
) -> Result<(), SqlError> {
    let root = q.from.as_ref().map(|f| f.source.alias().to_owned());
    check_rank(q, top_level)?;
    check_ranking_functions(q)?;
    // Resolve every vector call, subqueries included.
    let mut failure = None;
    for e in q_exprs_mut(q) {
        for_each_mut(e, &mut |x| {
            let done = match x {
                Expr::Call(name, args) if name == "VECTORDISTANCE" || name == "_VECTORSCORE" => {
                    resolve_call(
                        name == "VECTORDISTANCE",
                        args,
                        root.as_deref(),
                        policy,
                        params,
                    )
                }
                Expr::Exists(sub) | Expr::ArrayQuery(sub) | Expr::Scalar(sub) => {
                    prepare_level(sub, policy, params, false)
                }
                Expr::Call(name, args) => super::search_limits::check_call(name, args, params)
                    .map(|()| mark_language(name, args, root.as_deref(), policy)),
                _ => Ok(()),
            };
            if let Err(err) = done {
                failure.get_or_insert(err);
            }
        });
    }
    if let Some(err) = failure {
        return Err(err);
    }
    for key in &mut q.order_by {
        if key.rank {
            continue;
        }
        if let Some(resolved) = vector_call(&key.expr) {
            key.descending = resolved.distance.larger_is_closer();
        }
    }
    Ok(())
}

/// An `ORDER BY RANK` clause's own rules: top level only, one key, no sort order, a ranking
/// function, and no DISTINCT, GROUP BY or aggregates beside it.
fn check_rank(q: &Query, top_level: bool) -> Result<(), SqlError> {
    if q.order_by.iter().any(|k| k.rank) {
        if !top_level {
            return Err(SqlError::new("ORDER BY RANK is not allowed in a subquery."));
        }
        if q.order_by.len() != 1 {
            return Err(SqlError::new("ORDER BY RANK takes one ranking function."));
        }
        let key = &q.order_by[0];
        if key.explicit {
            return Err(SqlError::new(
                "Specifying a sort order (ASC or DESC) in the ORDER BY RANK clause is not allowed.",
            ));
        }
        if !matches!(call_name(&key.expr), Some("FULLTEXTSCORE" | "RRF")) {
            return Err(SqlError::new(
                "ORDER BY RANK takes FullTextScore(...) or RRF(...).",
            ));
        }
        if q.distinct || !q.group_by.is_empty() || !q.aggregates.is_empty() {
            return Err(SqlError::new(
                "ORDER BY RANK cannot be combined with DISTINCT, GROUP BY or aggregates.",
            ));
        }
    }
    Ok(())
}

/// Where the ranking functions may stand: only in the RANK key (RRF's components included); and
/// no sort order after VectorDistance.
fn check_ranking_functions(q: &Query) -> Result<(), SqlError> {
    // Ranking functions live only in the RANK key (RRF's components included).
    for (i, key) in q.order_by.iter().enumerate() {
        let allowed_top = key.rank && i == 0;
        let mut stack: Vec<(&Expr, bool)> = vec![(&key.expr, allowed_top)];
        while let Some((e, allowed)) = stack.pop() {
            match call_name(e) {
                Some("RRF")
                    if !allowed
                        || call_name(&key.expr) != Some("RRF")
                        || !std::ptr::eq(e, &key.expr) =>
                {
                    return Err(SqlError::new(
                        "RRF is only allowed as the ORDER BY RANK function.",
                    ))
                }
                Some("FULLTEXTSCORE") if !allowed => {
                    return Err(SqlError::new(
                        "FullTextScore is only allowed in an ORDER BY RANK clause.",
                    ))
                }
                _ => {}
            }
            let inner = allowed && call_name(e) == Some("RRF");
            for c in super::walk::children(e) {
                stack.push((c, inner));
            }
        }
    }
    for e in q_exprs_outside_order(q) {
        if super::walk::any_in(e, &|x| {
            matches!(call_name(x), Some("FULLTEXTSCORE" | "RRF"))
        }) {
            return Err(SqlError::new(
                "FullTextScore and RRF are only allowed in an ORDER BY RANK clause.",
            ));
        }
    }
    for key in &q.order_by {
        if !key.rank && call_name(&key.expr) == Some("VECTORDISTANCE") && key.explicit {
            return Err(SqlError::new(
                "Specifying a sorting order (ASC or DESC) with VectorDistance function is not supported.",
            ));
        }
    }
    Ok(())
}

/// Marks the full-text call `name(args)` with the language it tokenizes (see the module docs);
/// other calls, and calls already marked, are left as they are.
fn mark_language(name: &mut String, args: &[Expr], root: Option<&str>, policy: &SearchPolicy) {
    let language = args
        .first()
        .and_then(|a| a.plain_path())
        .filter(|(base, _)| Some(*base) == root)
        .map_or(policy.full_text.default, |(_, steps)| {
            policy.full_text.of_path(&steps)
        });
    if let Some(marked) = super::fulltext::marked(name, language) {
        *name = marked;
    }
}

/// The distance function and type of a resolved `VectorDistance` / `_VectorScore` call.
pub(crate) fn vector_call(e: &Expr) -> Option<Resolved> {
    let Expr::Call(name, args) = e else {
        return None;
    };
    let at = match name.as_str() {
        "VECTORDISTANCE" => 3,
        "_VECTORSCORE" => 2,
        _ => return None,
    };
    let Some(Expr::Literal(options)) = args.get(at) else {
        return None;
    };
    let (distance, data_type) = read_options(Some(options)).ok()?;
    Some(Resolved {
        distance: distance?,
        data_type: data_type?,
    })
}

/// Whether the query is ordered by one `VectorDistance` (a vector search).
pub(crate) fn is_vector_search(q: &Query) -> bool {
    q.order_by.len() == 1
        && !q.order_by[0].rank
        && call_name(&q.order_by[0].expr) == Some("VECTORDISTANCE")
}

/// Whether the query is ranked by `ORDER BY RANK` (answered only through its plan).
pub(crate) fn is_ranked(q: &Query) -> bool {
    q.order_by.iter().any(|k| k.rank)
}

fn resolve_call(
    is_distance: bool,
    args: &mut Vec<Expr>,
    root: Option<&str>,
    policy: &SearchPolicy,
    params: &std::collections::HashMap<String, Value>,
) -> Result<(), SqlError> {
    let at = if is_distance { 3 } else { 2 };
    let given = match args.get(at) {
        None => None,
        Some(Expr::Literal(v)) => Some(v.clone()),
        Some(Expr::Param(p)) => Some(
            params
                .get(p)
                .cloned()
                .ok_or_else(|| SqlError::new(format!("The parameter {p} is not defined.")))?,
        ),
        Some(e @ Expr::Object(_)) => Some(constant(e).ok_or_else(|| {
            SqlError::new("The VectorDistance options must be a constant object.")
        })?),
        Some(_) => {
            return Err(SqlError::new(
                "The VectorDistance options must be an object literal or a parameter.",
            ))
        }
    };
    let (distance, data_type) = read_options(given.as_ref())?;
    let entry = args
        .first()
        .and_then(|a| a.plain_path())
        .and_then(|(base, steps)| {
            (Some(base) == root).then_some(())?;
            policy
                .vectors
                .iter()
                .find(|v| v.path.iter().map(String::as_str).eq(steps.iter().copied()))
        });
    let resolved = Resolved {
        distance: distance
            .or(entry.map(|e| e.distance))
            .unwrap_or(Distance::Cosine),
        data_type: data_type
            .or(entry.map(|e| e.data_type))
            .unwrap_or(DataType::Float32),
    };
    if is_distance && args.len() < 3 {
        args.push(Expr::Literal(Value::Bool(false)));
    }
    let options = Expr::Literal(options_value(resolved));
    if args.len() > at {
        args[at] = options;
    } else {
        args.push(options);
    }
    Ok(())
}

/// The query's top-level expressions other than its ORDER BY keys.
fn q_exprs_outside_order(q: &Query) -> Vec<&Expr> {
    let mut out = Vec::new();
    match &q.projection {
        Projection::Star => {}
        Projection::Value(e) => out.push(e),
        Projection::Items(items) => out.extend(items.iter().map(|i| &i.expr)),
    }
    out.extend(q.filter.iter());
    out.extend(q.group_by.iter());
    out.extend(q.aggregates.iter().map(|a| &a.arg));
    if let Some(from) = &q.from {
        for s in std::iter::once(&from.source).chain(&from.joins) {
            if let Source::In { expr, .. } = s {
                out.push(expr);
            }
        }
    }
    out
}

/// Every top-level expression of `q`, mutable.
fn q_exprs_mut(q: &mut Query) -> Vec<&mut Expr> {
    let mut out: Vec<&mut Expr> = Vec::new();
    match &mut q.projection {
        Projection::Star => {}
        Projection::Value(e) => out.push(e),
        Projection::Items(items) => out.extend(items.iter_mut().map(|i| &mut i.expr)),
    }
    if let Some(from) = &mut q.from {
        for s in std::iter::once(&mut from.source).chain(from.joins.iter_mut()) {
            match s {
                Source::In { expr, .. } => out.push(expr),
                Source::Container { path, .. } => {
                    out.extend(path.iter_mut().filter_map(|s| match s {
                        Step::Index(e) => Some(e),
                        Step::Name(_) => None,
                    }))
                }
            }
        }
    }
    out.extend(q.filter.iter_mut());
    out.extend(q.group_by.iter_mut());
    out.extend(q.order_by.iter_mut().map(|k| &mut k.expr));
    out.extend(q.aggregates.iter_mut().map(|a| &mut a.arg));
    out
}

/// Calls `f` on `root` and every expression under it (not into subqueries, which `f` sees as
/// nodes), with an explicit stack.
fn for_each_mut(root: &mut Expr, f: &mut dyn FnMut(&mut Expr)) {
    let mut stack: Vec<&mut Expr> = vec![root];
    while let Some(e) = stack.pop() {
        f(e);
        match e {
            Expr::Path(base, steps) => {
                stack.push(base);
                stack.extend(steps.iter_mut().filter_map(|s| match s {
                    Step::Index(x) => Some(x),
                    Step::Name(_) => None,
                }));
            }
            Expr::Array(items) | Expr::And(items) | Expr::Or(items) | Expr::Call(_, items) => {
                stack.extend(items.iter_mut())
            }
            Expr::Object(fields) => stack.extend(fields.iter_mut().map(|(_, x)| x)),
            Expr::Unary(_, x) => stack.push(x),
            Expr::Binary(_, a, b) => {
                stack.push(a);
                stack.push(b);
            }
            Expr::Between {
                expr, low, high, ..
            } => {
                stack.push(expr);
                stack.push(low);
                stack.push(high);
            }
            Expr::In { expr, list, .. } => {
                stack.push(expr);
                stack.extend(list.iter_mut());
            }
            Expr::Like {
                expr,
                pattern,
                escape,
                ..
            } => {
                stack.push(expr);
                stack.push(pattern);
                if let Some(x) = escape {
                    stack.push(x);
                }
            }
            Expr::Ternary(a, b, c) => {
                stack.push(a);
                stack.push(b);
                stack.push(c);
            }
            _ => {}
        }
    }
}

/// The text of an argument the plan writes into its queries: a property path of the query's
/// source, a literal, or a parameter; anything else cannot be planned.
fn text_of(e: &Expr) -> Result<String, SqlError> {
    if let Some(v) = constant(e) {
        return Ok(v.to_string());
    }
    match e {
        Expr::Literal(v) => Ok(v.to_string()),
        Expr::Param(p) => Ok(p.clone()),
        Expr::Ident(name, _) => Ok(name.clone()),
        Expr::Path(base, steps) => {
            let mut out = text_of(base)?;
            for s in steps {
                match s {
                    Step::Name(n) => out.push_str(&format!("[{}]", Value::from(n.as_str()))),
                    Step::Index(Expr::Literal(v)) => out.push_str(&format!("[{v}]")),
                    Step::Index(_) => {
                        return Err(SqlError::new(
                            "A ranking function's path must not use computed indexes.",
                        ))
                    }
                }
            }
            Ok(out)
        }
        _ => Err(SqlError::new(
            "A ranking function's arguments must be paths, literals or parameters.",
        )),
    }
}

/// The hybrid search part of a query plan, as the service writes it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct HybridSearchQueryInfo {
    pub global_statistics_query: String,
    pub component_query_infos: Vec<super::query_info::QueryInfo>,
    pub component_without_payload_query_infos: Vec<super::query_info::QueryInfo>,
    pub projection_query_info: Option<super::query_info::QueryInfo>,
    pub component_weights: Vec<f64>,
    pub skip: Option<u64>,
    pub take: Option<u64>,
    pub requires_global_statistics: bool,
}

/// One ranking function of a RANK clause.
struct Component {
    /// Its score's text, with the plan's placeholders for the statistics.
    score: String,
    descending: bool,
    /// What a row without a score ranks as.
    missing: &'static str,
    /// The full-text path and terms (for the statistics query).
    full_text: Option<(String, Vec<String>)>,
}

const TOTAL_DOCS: &str = "{documentdb-formattablehybridsearchquery-totaldocumentcount}";

fn component(e: &Expr, index: usize, weight_negative: bool) -> Result<Component, SqlError> {
    let Expr::Call(name, args) = e else {
        return Err(SqlError::new(
            "RRF's components must be FullTextScore or VectorDistance calls.",
        ));
    };
    let (score, larger_is_better, full_text) = match name.as_str() {
        "FULLTEXTSCORE" => {
            let path = text_of(&args[0])?;
            let terms: Vec<String> = match args.get(1) {
                Some(Expr::Array(items)) if args.len() == 2 => {
                    items.iter().map(text_of).collect::<Result<_, _>>()?
                }
                _ => args[1..].iter().map(text_of).collect::<Result<_, _>>()?,
            };
            let score = format!(
                "_FullTextScore({path}, [{}], {TOTAL_DOCS}, {{documentdb-formattablehybridsearchquery-totalwordcount-{index}}}, {{documentdb-formattablehybridsearchquery-hitcountsarray-{index}}})",
                terms.join(", ")
            );
            (score, true, Some((path, terms)))
        }
        "VECTORDISTANCE" => {
            let resolved = vector_call(e)
                .ok_or_else(|| SqlError::new("A VectorDistance call was not resolved."))?;
            let score = format!(
                "_VectorScore({}, {}, {})",
                text_of(&args[0])?,
                text_of(&args[1])?,
                options_value(resolved)
            );
            (score, resolved.distance.larger_is_closer(), None)
        }
        other => {
            return Err(SqlError::new(format!(
                "RRF's components must be FullTextScore or VectorDistance calls, not {other}."
            )))
        }
    };
    let descending = larger_is_better != weight_negative;
    let missing = match (full_text.is_some(), descending) {
        (true, true) => "-1",
        (false, true) => "-1.79769e+308",
        (_, false) => "1.79769e+308",
    };
    Ok(Component {
        score,
        descending,
        missing,
        full_text,
    })
}

/// The plan of a query ranked by `ORDER BY RANK` (prepared by [`prepare`]); `chars` is its text,
/// `skip`/`take` its OFFSET and TOP or LIMIT. `None` for a query without RANK.
pub(crate) fn hybrid_info(
    q: &Query,
    chars: &[char],
    skip: Option<u64>,
    take: Option<u64>,
    payload: &str,
    params: &std::collections::HashMap<String, Value>,
) -> Result<Option<HybridSearchQueryInfo>, SqlError> {
    let Some(key) = q.order_by.first().filter(|k| k.rank) else {
        return Ok(None);
    };
    let Expr::Call(name, args) = &key.expr else {
        return Ok(None);
    };
    let (parts, weights) = if name == "RRF" {
        fused_parts(args, params)?
    } else {
        (vec![&key.expr], None)
    };
    if parts.len() > MAX_COMPONENTS {
        return Err(SqlError::new(format!(
            "RRF fuses at most {MAX_COMPONENTS} components."
        )));
    }
    let components: Vec<Component> = parts
        .iter()
        .enumerate()
        .map(|(i, e)| component(e, i, weights.as_ref().is_some_and(|w| w[i] < 0.0)))
        .collect::<Result<_, _>>()?;
    let root = q
        .from
        .as_ref()
        .map(|f| f.source.alias().to_owned())
        .ok_or_else(|| SqlError::new("ORDER BY RANK needs a FROM clause."))?;
    let slice = |s: (usize, usize)| -> String {
        chars
            .get(s.0..s.1.min(chars.len()))
            .unwrap_or_default()
            .iter()
            .collect::<String>()
            .trim()
            .to_owned()
    };
    let from = q.spans.from.map(slice).unwrap_or_default();
    let filter = q.spans.filter.map(slice);
    let (global_statistics_query, requires_global_statistics) =
        statistics_query(&components, &from);
    let wanted = skip.unwrap_or(0).saturating_add(take.unwrap_or(0));
    let depth = wanted.saturating_mul(COMPONENT_DEPTH_FACTOR).max(1);
    let scores: Vec<String> = components
        .iter()
        .map(|c| format!("({} ?? {})", c.score, c.missing))
        .collect();
    let where_clause = match &filter {
        Some(f) => format!("({{documentdb-formattableorderbyquery-filter}}) AND ({f})"),
        None => "({documentdb-formattableorderbyquery-filter})".to_owned(),
    };
    let component_query = ComponentQuery {
        depth,
        root: &root,
        payload,
        from: &from,
        where_clause: &where_clause,
        scores: &scores.join(", "),
        has_select_value: matches!(q.projection, Projection::Value(_)),
    };
    let infos: Vec<super::query_info::QueryInfo> =
        components.iter().map(|c| component_query.info(c)).collect();
    let longest = infos
        .iter()
        .map(|i| i.rewritten_query.len())
        .chain([global_statistics_query.len()])
        .max()
        .unwrap_or(0);
    if longest > MAX_PLANNED_BYTES {
        return Err(SqlError::new(format!(
            "The ranked query's planned queries would be {longest} bytes, more than the {MAX_PLANNED_BYTES} bytes a planned query may be (the query text limit less room for the statistics written into it): use fewer or shorter search terms and paths."
        )));
    }
    Ok(Some(HybridSearchQueryInfo {
        global_statistics_query,
        component_query_infos: infos,
        component_without_payload_query_infos: Vec::new(),
        projection_query_info: None,
        component_weights: weights
            .map(|w| w.iter().map(|x| x.abs()).collect())
            .unwrap_or_default(),
        skip,
        take,
        requires_global_statistics,
    }))
}

/// The components RRF fuses and their weights, when its last argument is an array of weights
/// (a constant or a parameter).
fn fused_parts<'q>(
    args: &'q [Expr],
    params: &std::collections::HashMap<String, Value>,
) -> Result<(Vec<&'q Expr>, Option<Vec<f64>>), SqlError> {
    let weights_of = |e: &Expr| -> Option<Option<Value>> {
        match e {
            Expr::Array(_) => Some(constant(e)),
            Expr::Param(p) => Some(params.get(p).cloned()),
            _ => None,
        }
    };
    Ok(match args.split_last() {
        Some((last, rest)) if !rest.is_empty() && weights_of(last).is_some() => {
            let weights = match weights_of(last).flatten() {
                Some(Value::Array(items)) => items
                    .iter()
                    .map(Value::as_f64)
                    .collect::<Option<Vec<f64>>>(),
                _ => None,
            }
            .ok_or_else(|| SqlError::new("RRF's weights must be an array of numbers."))?;
            if weights.len() != rest.len() {
                return Err(SqlError::new(format!(
                    "RRF has {} components but {} weights.",
                    rest.len(),
                    weights.len()
                )));
            }
            (rest.iter().collect(), Some(weights))
        }
        _ => (args.iter().collect(), None),
    })
}

/// The global statistics query of the full-text components (document count, and per component
/// its total word count and each term's hit count), and whether any component needs it.
fn statistics_query(components: &[Component], from: &str) -> (String, bool) {
    let statistics: Vec<String> = components
        .iter()
        .filter_map(|c| c.full_text.as_ref())
        .map(|(path, terms)| {
            let hits: Vec<String> = terms
                .iter()
                .map(|t| format!("SUM(FullTextContains({path}, {t}) ? 1 : 0)"))
                .collect();
            format!(
                "{{\"totalWordCount\": SUM(_FullTextWordCount({path})), \"hitCounts\": [{}]}}",
                hits.join(", ")
            )
        })
        .collect();
    let query = format!(
        "SELECT COUNT(1) AS documentCount, [{}] AS fullTextStatistics FROM {from}",
        statistics.join(", ")
    );
    (query, !statistics.is_empty())
}

/// What every component's query shares.
struct ComponentQuery<'a> {
    /// Rows each component query reads.
    depth: u64,
    root: &'a str,
    payload: &'a str,
    from: &'a str,
    where_clause: &'a str,
    /// Every component's score (or its stand-in when missing), comma-separated.
    scores: &'a str,
    has_select_value: bool,
}

impl ComponentQuery<'_> {
    /// The query info of component `c`: its rows in score order, each with every score.
    fn info(&self, c: &Component) -> super::query_info::QueryInfo {
        let direction = if c.descending { "DESC" } else { "ASC" };
        let (depth, root, payload, from, where_clause) = (
            self.depth,
            self.root,
            self.payload,
            self.from,
            self.where_clause,
        );
        super::query_info::QueryInfo {
            distinct_type: "None",
            top: Some(depth),
            offset: None,
            limit: None,
            order_by: vec![if c.descending { "Descending" } else { "Ascending" }],
            order_by_expressions: vec![c.score.clone()],
            group_by_expressions: Vec::new(),
            group_by_aliases: Vec::new(),
            aggregates: Vec::new(),
            group_by_alias_to_aggregate_type: Default::default(),
            rewritten_query: format!(
                "SELECT TOP {depth} {root}._rid, [{{\"item\": {}}}] AS orderByItems, {{\"payload\": {payload}, \"componentScores\": [{}]}} AS payload FROM {from} WHERE {where_clause} ORDER BY {} {direction}",
                c.score,
                self.scores,
                c.score
            ),
            has_select_value: self.has_select_value,
            has_non_streaming_order_by: true,
        }
    }
}

#[cfg(test)]
#[path = "search_tests.rs"]
mod search_tests;

//! Hybrid search (`ORDER BY RANK FullTextScore(...)` or `ORDER BY RANK RRF(...)`) on the client,
//! as the plan's `hybridSearchQueryInfo` describes it:
//! 1. when the plan needs them, the global statistics: the plan's statistics query on every range
//!    of the container, summed (documents, and per full-text component its total word count and
//!    each term's hit count);
//! 2. each component query, its placeholders filled with those statistics, on every range the
//!    query reads, each range drained;
//! 3. reciprocal rank fusion: rows coalesced by `_rid`, each component's scores ranked in its
//!    direction (equal scores share a rank, ranks from 1), each row scored
//!    `sum(weight / (60 + rank))`, sorted by that score (ties in `_rid` order), then the plan's
//!    skip and take, and each row's payload answered.
//!
//! The fusion is pure data ([`GlobalStatistics`], [`fill_placeholders`], [`fuse`]); [`run`] reads
//! the pages through the query's page source, so each is retried, routed and hedged like every
//! query page. A hybrid search is answered whole; its pages carry no continuation.

use std::cmp::Ordering;

use bytes::Bytes;
use serde::Deserialize;
use serde_json::Value;

use super::merge::range_merge::TargetRange;
use super::merge::value_order::compare_values;
use super::page_source::{PageSettings, PageTarget, QueryPageSource};
use super::plan::query_plan::{QueryInfo, SortOrder};
use crate::diagnostics::DiagnosticsContext;
use crate::error::{CosmosError, ErrorKind};

/// The constant of reciprocal rank fusion.
pub(crate) const RRF_K: f64 = 60.0;
/// Most results a hybrid search may ask for (as the official SDKs bound it by default).
pub(crate) const MAX_TAKE: u64 = 1000;
/// Most rows the component queries may return together before fusion.
pub(crate) const MAX_FUSED_ROWS: usize = 200_000;
/// Most pages one range may answer for one sub-query.
const MAX_PAGES_PER_RANGE: usize = 10_000;

const ORDER_BY_FILTER: &str = "{documentdb-formattableorderbyquery-filter}";
const TOTAL_DOCUMENTS: &str = "{documentdb-formattablehybridsearchquery-totaldocumentcount}";

/// The plan's `hybridSearchQueryInfo`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub(crate) struct HybridSearchInfo {
    /// The query each range answers its statistics with.
    #[serde(default)]
    pub global_statistics_query: String,
    /// One query per ranking function.
    pub component_query_infos: Vec<QueryInfo>,
    /// Each component's weight (empty: 1 each).
    #[serde(default)]
    pub component_weights: Vec<f64>,
    /// Results passed over (OFFSET).
    #[serde(default)]
    pub skip: Option<u64>,
    /// Results answered (TOP or LIMIT).
    #[serde(default)]
    pub take: Option<u64>,
    /// Whether the statistics query must run first.
    #[serde(default)]
    pub requires_global_statistics: bool,
}

impl HybridSearchInfo {
    /// Reads the plan's value: an error names what does not fit.
    pub(crate) fn from_plan(value: &Value) -> Result<HybridSearchInfo, String> {
        let info: HybridSearchInfo = serde_json::from_value(value.clone())
            .map_err(|e| format!("the hybrid search plan cannot be read: {e}"))?;
        let take = info
            .take
            .ok_or("a hybrid search needs TOP or LIMIT (its cost is unbounded otherwise)")?;
        if take > MAX_TAKE {
            return Err(format!(
                "a hybrid search may ask for at most {MAX_TAKE} results, not {take}"
            ));
        }
        if info.component_query_infos.is_empty() {
            return Err("the hybrid search plan has no component query".into());
        }
        if !info.component_weights.is_empty()
            && info.component_weights.len() != info.component_query_infos.len()
        {
            return Err(
                "the hybrid search plan has a weight count unlike its component count".into(),
            );
        }
        if info
            .component_query_infos
            .iter()
            .any(|c| c.order_by.len() != 1 || c.rewritten_query.is_empty())
        {
            return Err("a hybrid search component has no single order or no query".into());
        }
        Ok(info)
    }
}

/// The statistics of one full-text component.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub(crate) struct FullTextStatistics {
    /// Tokens in the component's text property, over all documents.
    #[serde(default)]
    pub total_word_count: u64,
    /// Per term, the documents whose text contains it.
    #[serde(default)]
    pub hit_counts: Vec<u64>,
}

/// The container's statistics, summed over its ranges.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub(crate) struct GlobalStatistics {
    /// Documents in the container.
    #[serde(default)]
    pub document_count: u64,
    /// Per full-text component, its word and hit counts.
    #[serde(default)]
    pub full_text_statistics: Vec<FullTextStatistics>,
}

impl GlobalStatistics {
    /// Adds one range's row (a range without documents adds nothing); a row of another shape is
    /// an error.
    pub(crate) fn add(&mut self, row: Value, first: bool) -> Result<(), String> {
        let part: GlobalStatistics = serde_json::from_value(row)
            .map_err(|e| format!("a global statistics row cannot be read: {e}"))?;
        if part.document_count == 0 {
            return Ok(());
        }
        if first || self.document_count == 0 {
            *self = part;
            return Ok(());
        }
        if part.full_text_statistics.len() != self.full_text_statistics.len() {
            return Err("the ranges' global statistics have different shapes".into());
        }
        self.document_count += part.document_count;
        for (sum, p) in self
            .full_text_statistics
            .iter_mut()
            .zip(part.full_text_statistics)
        {
            if sum.hit_counts.len() != p.hit_counts.len() {
                return Err("the ranges' hit counts have different lengths".into());
            }
            sum.total_word_count += p.total_word_count;
            for (a, b) in sum.hit_counts.iter_mut().zip(p.hit_counts) {
                *a += b;
            }
        }
        Ok(())
    }
}

/// A component query's text with its placeholders filled: the resume filter is `true`, and each
/// full-text component's statistics (numbered by component, taken in order) are written in.
pub(crate) fn fill_placeholders(
    text: &str,
    stats: Option<&GlobalStatistics>,
    components: usize,
) -> String {
    let mut out = text.replace(ORDER_BY_FILTER, "true");
    let Some(stats) = stats else { return out };
    out = out.replace(TOTAL_DOCUMENTS, &stats.document_count.to_string());
    let mut next = stats.full_text_statistics.iter();
    for i in 0..components {
        let words = format!("{{documentdb-formattablehybridsearchquery-totalwordcount-{i}}}");
        if !out.contains(&words) {
            continue;
        }
        let Some(s) = next.next() else { break };
        let hits = format!("{{documentdb-formattablehybridsearchquery-hitcountsarray-{i}}}");
        let list: Vec<String> = s.hit_counts.iter().map(u64::to_string).collect();
        out = out
            .replace(&words, &s.total_word_count.to_string())
            .replace(&hits, &format!("[{}]", list.join(",")));
    }
    out
}

/// One component row: `{"_rid", "payload": {"payload": ..., "componentScores": [...]}}`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
pub(crate) struct ComponentRow {
    /// The row's resource id (rows of one document coalesce).
    #[serde(rename = "_rid")]
    pub rid: String,
    /// What the row carries.
    pub payload: ComponentPayload,
}

/// A component row's payload: what the query selects and every component's score.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ComponentPayload {
    /// What the query selects for this row.
    #[serde(default)]
    pub payload: Option<Value>,
    /// Each component's score of the row.
    #[serde(default)]
    pub component_scores: Vec<Value>,
}

/// Fuses the component rows by reciprocal rank fusion (see the module docs); `orders` is each
/// component's direction, `weights` each one's weight (empty: 1 each).
pub(crate) fn fuse(
    mut rows: Vec<ComponentRow>,
    orders: &[SortOrder],
    weights: &[f64],
    skip: u64,
    take: u64,
) -> Result<Vec<Value>, String> {
    rows.sort_by(|a, b| a.rid.cmp(&b.rid));
    rows.dedup_by(|a, b| a.rid == b.rid);
    let n = orders.len();
    if let Some(bad) = rows.iter().find(|r| r.payload.component_scores.len() != n) {
        return Err(format!(
            "a hybrid search row has {} component scores, the plan {n} components",
            bad.payload.component_scores.len()
        ));
    }
    let mut fused = vec![0.0f64; rows.len()];
    for (c, order) in orders.iter().enumerate() {
        let score = |i: usize| Some(&rows[i].payload.component_scores[c]);
        let mut by_score: Vec<usize> = (0..rows.len()).collect();
        by_score.sort_by(|&a, &b| {
            let o = compare_values(score(a), score(b));
            match order {
                SortOrder::Descending => o.reverse(),
                SortOrder::Ascending => o,
            }
        });
        let weight = weights.get(c).copied().unwrap_or(1.0);
        let mut rank = 0u64;
        for (pos, &i) in by_score.iter().enumerate() {
            if pos == 0 || compare_values(score(i), score(by_score[pos - 1])) != Ordering::Equal {
                rank += 1;
            }
            fused[i] += weight / (RRF_K + rank as f64);
        }
    }
    let mut order: Vec<usize> = (0..rows.len()).collect();
    order.sort_by(|&a, &b| fused[b].total_cmp(&fused[a]));
    Ok(order
        .into_iter()
        .skip(usize::try_from(skip).unwrap_or(usize::MAX))
        .take(usize::try_from(take).unwrap_or(usize::MAX))
        .map(|i| rows[i].payload.payload.clone().unwrap_or(Value::Null))
        .collect())
}

/// What running a hybrid search cost.
#[derive(Debug, Default)]
pub(crate) struct HybridRun {
    /// The fused result.
    pub values: Vec<Value>,
    /// Service pages read.
    pub pages: u64,
    /// Their request units.
    pub request_charge: f64,
    /// The session token of the last page.
    pub session_token: Option<String>,
    /// Each page's diagnostics.
    pub diagnostics: Vec<DiagnosticsContext>,
}

/// Every row `body` answers on `range`, page after page.
async fn drain(
    source: &dyn QueryPageSource,
    body: &Bytes,
    range: &TargetRange,
    settings: &PageSettings,
    out: &mut HybridRun,
) -> Result<Vec<Value>, CosmosError> {
    let mut rows = Vec::new();
    let mut continuation: Option<String> = None;
    for _ in 0..MAX_PAGES_PER_RANGE {
        let page = source
            .page(
                body.clone(),
                PageTarget::Range(range.clone()),
                continuation.clone(),
                settings,
            )
            .await
            .map_err(|e| e.with_context(format!("a hybrid search page of range {}", range.id)))?;
        out.pages += 1;
        out.request_charge += page.headers.request_charge();
        if let Some(s) = page.headers.session_token() {
            out.session_token = Some(s.to_owned());
        }
        out.diagnostics.push(page.diagnostics);
        rows.extend(page.documents);
        if rows.len() > MAX_FUSED_ROWS {
            return Err(CosmosError::new(
                ErrorKind::Deserialization,
                format!("a hybrid search component returned more than {MAX_FUSED_ROWS} rows"),
            ));
        }
        match page.continuation {
            None => return Ok(rows),
            Some(next) if Some(&next) == continuation.as_ref() => {
                return Err(CosmosError::new(
                    ErrorKind::Deserialization,
                    format!("range {} answered the same continuation twice", range.id),
                ))
            }
            next => continuation = next,
        }
    }
    Err(CosmosError::new(
        ErrorKind::Deserialization,
        format!(
            "range {} answered more than {MAX_PAGES_PER_RANGE} pages",
            range.id
        ),
    ))
}

/// Runs a hybrid search: `with_text` turns a query text into a request body with the query's
/// parameters; `all_ranges` are the container's ranges (for the statistics) and `ranges` those
/// the query reads.
pub(crate) async fn run(
    source: &dyn QueryPageSource,
    info: &HybridSearchInfo,
    with_text: &(dyn Fn(&str) -> Result<Bytes, CosmosError> + Sync),
    all_ranges: &[TargetRange],
    ranges: &[TargetRange],
    settings: &PageSettings,
) -> Result<HybridRun, CosmosError> {
    let bad = |m: String| CosmosError::new(ErrorKind::Deserialization, m);
    let mut out = HybridRun::default();
    let stats = if info.requires_global_statistics {
        let body = with_text(&info.global_statistics_query)?;
        let mut stats = GlobalStatistics::default();
        let mut first = true;
        for range in all_ranges {
            for row in drain(source, &body, range, settings, &mut out).await? {
                stats.add(row, first).map_err(bad)?;
                first = false;
            }
        }
        if stats.document_count == 0 {
            // No range holds a document: nothing to rank (and no statistics to write in).
            return Ok(out);
        }
        Some(stats)
    } else {
        None
    };
    let count = info.component_query_infos.len();
    let mut rows: Vec<ComponentRow> = Vec::new();
    for component in &info.component_query_infos {
        let text = fill_placeholders(&component.rewritten_query, stats.as_ref(), count);
        let body = with_text(&text)?;
        for range in ranges {
            for row in drain(source, &body, range, settings, &mut out).await? {
                rows.push(
                    serde_json::from_value(row)
                        .map_err(|e| bad(format!("a hybrid search row cannot be read: {e}")))?,
                );
                if rows.len() > MAX_FUSED_ROWS {
                    return Err(bad(format!(
                        "the hybrid search components returned more than {MAX_FUSED_ROWS} rows"
                    )));
                }
            }
        }
    }
    let orders: Vec<SortOrder> = info
        .component_query_infos
        .iter()
        .map(|c| c.order_by[0])
        .collect();
    out.values = fuse(
        rows,
        &orders,
        &info.component_weights,
        info.skip.unwrap_or(0),
        info.take.unwrap_or(0),
    )
    .map_err(bad)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn row(rid: &str, id: u32, scores: &[f64]) -> ComponentRow {
        serde_json::from_value(json!({
            "_rid": rid, "orderByItems": [{"item": 0}],
            "payload": {"payload": {"id": id}, "componentScores": scores}
        }))
        .unwrap()
    }

    fn ids(values: Vec<Value>) -> Vec<u64> {
        values.iter().map(|v| v["id"].as_u64().unwrap()).collect()
    }

    #[test]
    fn statistics_sum_over_ranges_and_fill_the_component_text() {
        let mut s = GlobalStatistics::default();
        s.add(json!({"documentCount": 3, "fullTextStatistics": [{"totalWordCount": 10, "hitCounts": [1, 2]}]}), true).unwrap();
        s.add(json!({"documentCount": 2, "fullTextStatistics": [{"totalWordCount": 5, "hitCounts": [0, 1]}]}), false).unwrap();
        assert_eq!(s.document_count, 5);
        assert_eq!(s.full_text_statistics[0].hit_counts, [1, 3]);
        assert!(s
            .add(json!({"documentCount": 1, "fullTextStatistics": []}), false)
            .is_err());
        // An empty range (its sums undefined) adds nothing.
        s.add(
            json!({"documentCount": 0, "fullTextStatistics": [{"hitCounts": []}]}),
            false,
        )
        .unwrap();
        assert_eq!(s.document_count, 5);
        let text = "SELECT _FullTextScore(c.t, [\"a\", \"b\"], {documentdb-formattablehybridsearchquery-totaldocumentcount}, {documentdb-formattablehybridsearchquery-totalwordcount-1}, {documentdb-formattablehybridsearchquery-hitcountsarray-1}) FROM c WHERE ({documentdb-formattableorderbyquery-filter})";
        assert_eq!(
            fill_placeholders(text, Some(&s), 2),
            "SELECT _FullTextScore(c.t, [\"a\", \"b\"], 5, 15, [1,3]) FROM c WHERE (true)"
        );
    }

    #[test]
    fn reciprocal_rank_fusion_ranks_with_ties_weights_and_directions() {
        // Component 0 descending, component 1 ascending (a distance).
        let rows = vec![
            row("r1", 1, &[3.0, 0.9]),
            row("r2", 2, &[2.0, 0.1]),
            row("r3", 3, &[2.0, 0.5]),
            row("r3", 3, &[2.0, 0.5]),
        ];
        let orders = [SortOrder::Descending, SortOrder::Ascending];
        // Ranks: c0: r1=1, r2=r3=2; c1: r2=1, r3=2, r1=3.
        // Scores: r1 = 1/61 + 1/63, r2 = 1/62 + 1/61, r3 = 1/62 + 1/62.
        assert_eq!(
            ids(fuse(rows.clone(), &orders, &[], 0, 10).unwrap()),
            [2, 1, 3]
        );
        assert_eq!(ids(fuse(rows.clone(), &orders, &[], 1, 1).unwrap()), [1]);
        // Weighting the first component up puts r1 first.
        assert_eq!(
            ids(fuse(rows.clone(), &orders, &[10.0, 1.0], 0, 1).unwrap()),
            [1]
        );
        let bad = vec![row("r9", 9, &[1.0])];
        assert!(fuse(bad, &orders, &[], 0, 1).is_err());
    }

    #[test]
    fn plans_without_a_bound_or_with_mismatched_weights_are_refused() {
        let component = json!({"orderBy": ["Descending"], "rewrittenQuery": "SELECT 1"});
        let ok = json!({"componentQueryInfos": [component], "take": 5});
        assert!(HybridSearchInfo::from_plan(&ok).is_ok());
        for bad in [
            json!({"componentQueryInfos": [component]}),
            json!({"componentQueryInfos": [component], "take": 5000}),
            json!({"componentQueryInfos": [], "take": 5}),
            json!({"componentQueryInfos": [component], "take": 5, "componentWeights": [1, 2]}),
        ] {
            assert!(HybridSearchInfo::from_plan(&bad).is_err(), "{bad}");
        }
    }
}

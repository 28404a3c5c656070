//! Reciprocal rank fusion of a ranked query's component rows, for a query ranked by `ORDER BY
//! RANK` that the emulator answers whole (within one partition key), as the query plan tells a
//! client to do it across partitions:
//! 1. the plan's global statistics query answers the documents, and per full-text component its
//!    total word count and each term's hit count; rows of several ranges are summed
//!    ([`Statistics::add`]);
//! 2. each component query is run with those statistics written into its placeholders
//!    ([`Statistics::fill`]);
//! 3. its rows are coalesced by `_rid`, each component's scores ranked in its direction (equal
//!    scores share a rank, ranks from 1), each row scored `sum(weight / (60 + rank))`, sorted by
//!    that score (ties in `_rid` order), then skip and take, and each row's payload answered
//!    ([`fuse`]).

use serde::Deserialize;
use serde_json::Value;

/// The constant of reciprocal rank fusion.
pub(crate) const RRF_K: f64 = 60.0;

const ORDER_BY_FILTER: &str = "{documentdb-formattableorderbyquery-filter}";
const TOTAL_DOCUMENTS: &str = "{documentdb-formattablehybridsearchquery-totaldocumentcount}";

/// One full-text component's statistics.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub(crate) struct FullTextStatistics {
    #[serde(default)]
    pub total_word_count: f64,
    #[serde(default)]
    pub hit_counts: Vec<f64>,
}

/// What the global statistics query answers, summed over its rows.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Statistics {
    #[serde(default)]
    pub document_count: f64,
    #[serde(default)]
    pub full_text_statistics: Vec<FullTextStatistics>,
}

fn number(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 9.0e15 {
        format!("{}", x as i64)
    } else {
        format!("{x}")
    }
}

impl Statistics {
    /// Adds one row of the statistics query.
    pub(crate) fn add(&mut self, row: &Value) -> Result<(), String> {
        let row: Statistics = serde_json::from_value(row.clone())
            .map_err(|e| format!("a full-text statistics row cannot be read: {e}"))?;
        self.document_count += row.document_count;
        if self.full_text_statistics.is_empty() {
            self.full_text_statistics = row.full_text_statistics;
            return Ok(());
        }
        if row.full_text_statistics.len() != self.full_text_statistics.len() {
            return Err("full-text statistics rows differ in their components".into());
        }
        for (all, one) in self
            .full_text_statistics
            .iter_mut()
            .zip(row.full_text_statistics)
        {
            if one.hit_counts.len() != all.hit_counts.len() {
                return Err("full-text statistics rows differ in their terms".into());
            }
            all.total_word_count += one.total_word_count;
            for (a, b) in all.hit_counts.iter_mut().zip(one.hit_counts) {
                *a += b;
            }
        }
        Ok(())
    }

    /// A component query's text with its placeholders filled: the filter as `true`, the
    /// document count, and for the `i`-th of the `components` that has full-text placeholders
    /// the `i`-th full-text statistics.
    pub(crate) fn fill(&self, text: &str, components: usize) -> String {
        let mut out = text
            .replace(ORDER_BY_FILTER, "true")
            .replace(TOTAL_DOCUMENTS, &number(self.document_count));
        let mut next = self.full_text_statistics.iter();
        for c in 0..components {
            let words = format!("{{documentdb-formattablehybridsearchquery-totalwordcount-{c}}}");
            if !out.contains(&words) {
                continue;
            }
            let Some(s) = next.next() else { break };
            let hits = format!("{{documentdb-formattablehybridsearchquery-hitcountsarray-{c}}}");
            let list: Vec<String> = s.hit_counts.iter().map(|h| number(*h)).collect();
            out = out
                .replace(&words, &number(s.total_word_count))
                .replace(&hits, &format!("[{}]", list.join(",")));
        }
        out
    }
}

/// One component row: `{"_rid", "payload": {"payload": ..., "componentScores": [...]}}`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
pub(crate) struct ComponentRow {
    #[serde(rename = "_rid")]
    pub rid: String,
    pub payload: ComponentPayload,
}

/// What a component row carries: the query's projection and every component's score.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ComponentPayload {
    #[serde(default)]
    pub payload: Option<Value>,
    #[serde(default)]
    pub component_scores: Vec<f64>,
}

/// Fuses the component rows (see the module docs); `descending[c]` tells component `c`'s
/// direction, `weights` each one's weight (empty: 1 each). Rows without a projection (undefined)
/// answer nothing.
pub(crate) fn fuse(
    mut rows: Vec<ComponentRow>,
    descending: &[bool],
    weights: &[f64],
    skip: u64,
    take: u64,
) -> Result<Vec<Value>, String> {
    rows.sort_by(|a, b| a.rid.cmp(&b.rid));
    rows.dedup_by(|a, b| a.rid == b.rid);
    let n = descending.len();
    if let Some(bad) = rows.iter().find(|r| r.payload.component_scores.len() != n) {
        return Err(format!(
            "a ranked row has {} component scores, the query {n} components",
            bad.payload.component_scores.len()
        ));
    }
    let mut fused = vec![0.0f64; rows.len()];
    for (c, &desc) in descending.iter().enumerate() {
        let score = |i: usize| rows[i].payload.component_scores[c];
        let mut by_score: Vec<usize> = (0..rows.len()).collect();
        by_score.sort_by(|&a, &b| {
            let o = score(a).total_cmp(&score(b));
            if desc {
                o.reverse()
            } else {
                o
            }
        });
        let weight = weights.get(c).copied().unwrap_or(1.0);
        let mut rank = 0u64;
        for (pos, &i) in by_score.iter().enumerate() {
            if pos == 0 || score(i) != score(by_score[pos - 1]) {
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
        .filter_map(|i| rows[i].payload.payload.clone())
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn row(rid: &str, id: &str, scores: &[f64]) -> ComponentRow {
        serde_json::from_value(json!({
            "_rid": rid, "orderByItems": [{"item": scores[0]}],
            "payload": {"payload": {"id": id}, "componentScores": scores}
        }))
        .unwrap()
    }

    fn ids(values: &[Value]) -> Vec<&str> {
        values.iter().map(|v| v["id"].as_str().unwrap()).collect()
    }

    #[test]
    fn statistics_sum_over_rows_and_fill_their_components() {
        let mut s = Statistics::default();
        s.add(&json!({"documentCount": 3, "fullTextStatistics": [{"totalWordCount": 10, "hitCounts": [1, 2]}]})).unwrap();
        s.add(&json!({"documentCount": 2, "fullTextStatistics": [{"totalWordCount": 5, "hitCounts": [0, 1]}]})).unwrap();
        assert_eq!(s.document_count, 5.0);
        assert_eq!(s.full_text_statistics[0].hit_counts, [1.0, 3.0]);
        let text = "SELECT x FROM c WHERE ({documentdb-formattableorderbyquery-filter}) ORDER BY \
            _FullTextScore(c.t, ['a', 'b'], {documentdb-formattablehybridsearchquery-totaldocumentcount}, \
            {documentdb-formattablehybridsearchquery-totalwordcount-1}, {documentdb-formattablehybridsearchquery-hitcountsarray-1})";
        assert_eq!(
            s.fill(text, 2),
            "SELECT x FROM c WHERE (true) ORDER BY _FullTextScore(c.t, ['a', 'b'], 5, 15, [1,3])"
        );
        assert!(s
            .add(&json!({"documentCount": 1, "fullTextStatistics": []}))
            .is_err());
        assert!(s.add(&json!({"documentCount": "x"})).is_err());
    }

    #[test]
    fn fusion_ranks_each_component_and_breaks_ties_by_rid() {
        // Component 0 descending (a text score), component 1 ascending (a distance).
        let rows = vec![
            row("C", "c", &[2.0, 0.9]),
            row("A", "a", &[1.0, 0.1]),
            row("B", "b", &[1.0, 0.5]),
            row("D", "d", &[0.0, 0.5]),
            row("A", "a", &[1.0, 0.1]),
        ];
        let out = fuse(rows.clone(), &[true, false], &[], 0, 10).unwrap();
        // Ranks: c 1+3, a 2+1, b 2+2, d 3+2.
        assert_eq!(ids(&out), ["a", "c", "b", "d"]);
        // Weights move the ranking; skip and take cut it.
        let out = fuse(rows.clone(), &[true, false], &[10.0, 1.0], 1, 2).unwrap();
        assert_eq!(ids(&out), ["a", "b"]);
        // Equal fused scores keep `_rid` order.
        let tied = vec![row("Z", "z", &[1.0]), row("Y", "y", &[1.0])];
        assert_eq!(ids(&fuse(tied, &[true], &[], 0, 5).unwrap()), ["y", "z"]);
        assert!(
            fuse(rows, &[true], &[], 0, 5).is_err(),
            "two scores, one component"
        );
    }
}

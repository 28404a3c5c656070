//! The diagnostics a query page answers when asked: `x-ms-documentdb-query-metrics` (with
//! `x-ms-documentdb-populatequerymetrics: true`), semicolon-separated `name=value` pairs as the
//! service writes them, and `x-ms-cosmos-index-utilization` (with
//! `x-ms-cosmos-populateindexmetrics: true`), base64 of a JSON object listing the indexes used.
//!
//! The figures are the page's own: the documents it read and their size, the results it returned
//! and the time it took. A `COUNT` of a constant over a partition with no filter is what the
//! service answers from its index alone, so such a page reports no documents retrieved.

use std::time::Duration;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use serde::Serialize;

use crate::sql::ast::{AggregateKind, Expr, Projection, Query};

/// What one query page read and returned.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct PageFigures {
    pub retrieved_docs: usize,
    pub retrieved_bytes: usize,
    pub output_docs: usize,
    pub output_bytes: usize,
    pub elapsed: Duration,
}

/// Whether the service answers `q` from its index without loading documents: `COUNT` of a
/// constant (`SELECT VALUE COUNT(1)`, `SELECT COUNT(1) AS n`) over one source with no filter,
/// grouping, DISTINCT or JOIN (the partition comes from the request's scope).
pub(crate) fn index_only(q: &Query) -> bool {
    let Some(from) = &q.from else {
        return false;
    };
    if !from.joins.is_empty()
        || q.filter.is_some()
        || !q.group_by.is_empty()
        || q.distinct
        || q.aggregates.is_empty()
    {
        return false;
    }
    let counts_constant = q
        .aggregates
        .iter()
        .all(|a| a.kind == AggregateKind::Count && matches!(a.arg, Expr::Literal(_)));
    let selects_only_aggregates = match &q.projection {
        Projection::Star => false,
        Projection::Value(e) => matches!(e, Expr::Aggregate(_)),
        Projection::Items(items) => items.iter().all(|i| matches!(i.expr, Expr::Aggregate(_))),
    };
    counts_constant && selects_only_aggregates
}

/// Whether each result of `q` stands for one matching document (no JOIN, aggregate, GROUP BY or
/// DISTINCT), so that results over documents read is the share the index would have served.
fn one_result_per_document(q: &Query) -> bool {
    q.from.as_ref().is_some_and(|f| f.joins.is_empty())
        && q.aggregates.is_empty()
        && q.group_by.is_empty()
        && !q.distinct
}

/// The `x-ms-documentdb-query-metrics` value of a page of `q`.
pub(crate) fn query_metrics_header(q: &Query, figures: &PageFigures) -> String {
    let index_only = index_only(q);
    let (retrieved_docs, retrieved_bytes) = if index_only {
        (0, 0)
    } else {
        (figures.retrieved_docs, figures.retrieved_bytes)
    };
    let mut pairs = vec![
        format!(
            "totalExecutionTimeInMs={:.2}",
            figures.elapsed.as_secs_f64() * 1000.0
        ),
        format!("retrievedDocumentCount={retrieved_docs}"),
        format!("retrievedDocumentSize={retrieved_bytes}"),
        format!("outputDocumentCount={}", figures.output_docs),
        format!("outputDocumentSize={}", figures.output_bytes),
    ];
    let ratio = if index_only || retrieved_docs == 0 {
        Some(1.0)
    } else if one_result_per_document(q) {
        Some((figures.output_docs as f64 / retrieved_docs as f64).min(1.0))
    } else {
        None
    };
    if let Some(ratio) = ratio {
        pairs.push(format!("indexUtilizationRatio={ratio:.2}"));
    }
    pairs.join(";")
}

/// One index in the index-utilization report.
#[derive(Serialize, Debug, PartialEq)]
#[serde(rename_all = "PascalCase")]
struct SingleIndex {
    filter_expression: String,
    index_spec: String,
    filter_precise_set: bool,
    index_precise_set: bool,
    index_impact_score: &'static str,
}

/// The index-utilization report.
#[derive(Serialize, Debug, PartialEq)]
#[serde(rename_all = "PascalCase")]
struct IndexUtilization {
    utilized_single_indexes: Vec<SingleIndex>,
    potential_single_indexes: Vec<SingleIndex>,
    utilized_composite_indexes: Vec<SingleIndex>,
    potential_composite_indexes: Vec<SingleIndex>,
}

/// The `x-ms-cosmos-index-utilization` value of a query: base64 of the JSON report. A query
/// scoped to partition key values (`key_paths`, each a list of path segments) used the key's
/// paths' indexes, with no filter expression of the query's own.
pub(crate) fn index_utilization_header(key_paths: &[Vec<String>], scoped_by_key: bool) -> String {
    let utilized = if scoped_by_key {
        key_paths
            .iter()
            .map(|segments| SingleIndex {
                filter_expression: String::new(),
                index_spec: format!("/{}/?", segments.join("/")),
                filter_precise_set: true,
                index_precise_set: true,
                index_impact_score: "High",
            })
            .collect()
    } else {
        Vec::new()
    };
    let report = IndexUtilization {
        utilized_single_indexes: utilized,
        potential_single_indexes: Vec::new(),
        utilized_composite_indexes: Vec::new(),
        potential_composite_indexes: Vec::new(),
    };
    STANDARD.encode(serde_json::to_vec(&report).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::parse_query;

    fn figures(retrieved: usize, output: usize) -> PageFigures {
        PageFigures {
            retrieved_docs: retrieved,
            retrieved_bytes: retrieved * 100,
            output_docs: output,
            output_bytes: output * 90,
            elapsed: Duration::from_micros(1500),
        }
    }

    #[test]
    fn index_only_queries() {
        let cases = [
            ("SELECT VALUE COUNT(1) FROM c", true),
            ("SELECT COUNT(1) AS n FROM c", true),
            ("SELECT VALUE COUNT(c.x) FROM c", false),
            ("SELECT VALUE COUNT(1) FROM c WHERE c.x = 1", false),
            ("SELECT VALUE SUM(1) FROM c", false),
            ("SELECT VALUE COUNT(1) FROM c JOIN t IN c.tags", false),
            ("SELECT COUNT(1) AS n, c.k FROM c GROUP BY c.k", false),
            ("SELECT * FROM c", false),
        ];
        for (text, expected) in cases {
            assert_eq!(index_only(&parse_query(text).unwrap()), expected, "{text}");
        }
    }

    #[test]
    fn metrics_header_pairs() {
        let cases = [
            (
                "SELECT * FROM c",
                figures(4, 2),
                "totalExecutionTimeInMs=1.50;retrievedDocumentCount=4;retrievedDocumentSize=400;outputDocumentCount=2;outputDocumentSize=180;indexUtilizationRatio=0.50",
            ),
            (
                "SELECT VALUE COUNT(1) FROM c",
                figures(25, 1),
                "totalExecutionTimeInMs=1.50;retrievedDocumentCount=0;retrievedDocumentSize=0;outputDocumentCount=1;outputDocumentSize=90;indexUtilizationRatio=1.00",
            ),
            (
                "SELECT VALUE SUM(c.x) FROM c",
                figures(3, 1),
                "totalExecutionTimeInMs=1.50;retrievedDocumentCount=3;retrievedDocumentSize=300;outputDocumentCount=1;outputDocumentSize=90",
            ),
            (
                "SELECT * FROM c",
                figures(0, 0),
                "totalExecutionTimeInMs=1.50;retrievedDocumentCount=0;retrievedDocumentSize=0;outputDocumentCount=0;outputDocumentSize=0;indexUtilizationRatio=1.00",
            ),
        ];
        for (text, figures, expected) in cases {
            let q = parse_query(text).unwrap();
            assert_eq!(query_metrics_header(&q, &figures), expected, "{text}");
        }
    }

    #[test]
    fn index_utilization_report() {
        let decoded = |v: String| -> serde_json::Value {
            serde_json::from_slice(&STANDARD.decode(v).unwrap()).unwrap()
        };
        let scoped = decoded(index_utilization_header(&[vec!["pk".into()]], true));
        assert_eq!(
            scoped,
            serde_json::json!({
                "UtilizedSingleIndexes": [{"FilterExpression": "", "IndexSpec": "/pk/?",
                    "FilterPreciseSet": true, "IndexPreciseSet": true, "IndexImpactScore": "High"}],
                "PotentialSingleIndexes": [], "UtilizedCompositeIndexes": [],
                "PotentialCompositeIndexes": []
            })
        );
        let whole = decoded(index_utilization_header(
            &[vec!["a".into(), "b".into()]],
            false,
        ));
        assert_eq!(whole["UtilizedSingleIndexes"], serde_json::json!([]));
    }
}

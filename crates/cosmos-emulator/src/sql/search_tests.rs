use std::collections::HashMap;

use serde_json::{json, Value};

use super::*;
use crate::sql::collect::run;
use crate::sql::parse_query;
use crate::sql::plan::{plan, MinMaxParts};

fn policy(distance: Distance) -> SearchPolicy {
    SearchPolicy {
        vectors: vec![VectorPath {
            path: vec!["v".into()],
            distance,
            data_type: DataType::Float32,
            dimensions: 2,
        }],
        full_text: TextLanguages::default(),
    }
}

fn prepared(text: &str, distance: Distance) -> Result<Query, SqlError> {
    let mut q = parse_query(text)?;
    prepare(&mut q, &policy(distance), &HashMap::new())?;
    Ok(q)
}

fn docs() -> Vec<Value> {
    vec![
        json!({"id": "a", "_rid": "1", "v": [1.0, 0.0], "t": "red fox"}),
        json!({"id": "b", "_rid": "2", "v": [0.7, 0.7], "t": "red dog"}),
        json!({"id": "c", "_rid": "3", "v": [0.0, 1.0], "t": "blue fox fox"}),
    ]
}

fn ids(text: &str, distance: Distance) -> Vec<Value> {
    let q = prepared(text, distance).unwrap();
    run(&q, &docs(), &HashMap::new()).unwrap()
}

#[test]
fn order_by_vector_distance_is_closest_first_per_function() {
    let text = "SELECT TOP 3 VALUE c.id FROM c ORDER BY VectorDistance(c.v, [1, 0.1])";
    // Cosine from the policy: a (most similar) first.
    assert_eq!(
        ids(text, Distance::Cosine),
        [json!("a"), json!("b"), json!("c")]
    );
    // Euclidean: smallest distance first, also a.
    assert_eq!(
        ids(text, Distance::Euclidean),
        [json!("a"), json!("b"), json!("c")]
    );
    // Options override the policy: dot product with [0, 1] puts c first.
    let text = "SELECT TOP 2 VALUE c.id FROM c ORDER BY VectorDistance(c.v, [0, 1], false, {'distanceFunction': 'dotproduct'})";
    assert_eq!(ids(text, Distance::Euclidean), [json!("c"), json!("b")]);
    // The projected value is the function's own.
    let text = "SELECT VALUE VectorDistance(c.v, [3, 4]) FROM c WHERE c.id = 'a'";
    assert_eq!(ids(text, Distance::Euclidean), [json!(20f64.sqrt())]);
}

#[test]
fn misuses_are_refused_with_the_services_words() {
    let cases = [
        (
            "SELECT TOP 1 c.id FROM c ORDER BY VectorDistance(c.v, [1, 0]) DESC",
            "sorting order",
        ),
        (
            "SELECT TOP 1 c.id FROM c ORDER BY RANK FullTextScore(c.t, 'fox') DESC",
            "ORDER BY RANK clause is not allowed",
        ),
        (
            "SELECT c.id, FullTextScore(c.t, 'fox') AS s FROM c",
            "only allowed",
        ),
        (
            "SELECT c.id FROM c WHERE RRF(FullTextScore(c.t, 'fox')) > 1",
            "only allowed",
        ),
        (
            "SELECT TOP 1 c.id FROM c ORDER BY RANK c.id",
            "FullTextScore(...) or RRF(...)",
        ),
        (
            "SELECT TOP 1 c.id FROM c ORDER BY RANK RRF(RRF(FullTextScore(c.t, 'a')))",
            "RRF",
        ),
        (
            "SELECT TOP 1 VALUE COUNT(1) FROM c ORDER BY RANK FullTextScore(c.t, 'a')",
            "aggregates",
        ),
    ];
    for (text, needle) in cases {
        let e = prepared(text, Distance::Cosine).unwrap_err();
        assert!(e.message.contains(needle), "{text}: {e}");
    }
}

fn plan_of(text: &str) -> crate::sql::plan::QueryPlan {
    let q = prepared(text, Distance::Cosine).unwrap();
    plan(&q, text, &HashMap::new(), None, MinMaxParts::Plain).unwrap()
}

#[test]
fn vector_search_plans_are_non_streaming_order_by() {
    let p = plan_of("SELECT TOP 5 c.id FROM c ORDER BY VectorDistance(c.v, [1, 2])");
    assert!(p.query_info.has_non_streaming_order_by);
    assert_eq!(p.query_info.order_by, ["Descending"]);
    assert_eq!(p.query_info.top, Some(5));
    assert!(p.hybrid_search_query_info.is_none());
    // The rewritten query names no direction (VectorDistance refuses one) and runs.
    let rewritten = p
        .query_info
        .rewritten_query
        .replace("{documentdb-formattableorderbyquery-filter}", "true");
    assert!(
        rewritten.ends_with("ORDER BY VectorDistance(c.v, [1, 2])"),
        "{rewritten}"
    );
    let out = ids(&rewritten, Distance::Cosine);
    assert_eq!(out.len(), 3);
    assert_eq!(out[0]["payload"], json!({"id": "b"}));
}

#[test]
fn hybrid_plans_carry_statistics_and_component_queries_that_run() {
    let p = plan_of(
        "SELECT TOP 2 c.id FROM c WHERE c.id != 'z' ORDER BY RANK RRF(FullTextScore(c.t, 'fox'), VectorDistance(c.v, [1, 0]), [2, -1])",
    );
    let h = p.hybrid_search_query_info.unwrap();
    assert!(p.query_info.order_by.is_empty());
    assert_eq!(h.take, Some(2));
    assert_eq!(h.skip, None);
    assert_eq!(h.component_weights, [2.0, 1.0]);
    assert!(h.requires_global_statistics);
    assert_eq!(h.component_query_infos.len(), 2);
    assert_eq!(h.component_query_infos[0].order_by, ["Descending"]);
    // A negative weight reverses the component's order.
    assert_eq!(h.component_query_infos[1].order_by, ["Ascending"]);
    assert_eq!(
        h.component_query_infos[0].top,
        Some(2 * COMPONENT_DEPTH_FACTOR)
    );
    // The statistics query runs and counts what BM25 needs.
    let stats = ids(&h.global_statistics_query, Distance::Cosine);
    assert_eq!(
        stats,
        [
            json!({"documentCount": 3, "fullTextStatistics": [{"totalWordCount": 7, "hitCounts": [2]}]})
        ]
    );
    // A component query, its placeholders filled as the client fills them, ranks by its score.
    let text = h.component_query_infos[0]
        .rewritten_query
        .replace("{documentdb-formattableorderbyquery-filter}", "true")
        .replace(
            "{documentdb-formattablehybridsearchquery-totaldocumentcount}",
            "3",
        )
        .replace(
            "{documentdb-formattablehybridsearchquery-totalwordcount-0}",
            "7",
        )
        .replace(
            "{documentdb-formattablehybridsearchquery-hitcountsarray-0}",
            "[2]",
        );
    let rows = ids(&text, Distance::Cosine);
    let order: Vec<&Value> = rows
        .iter()
        .map(|r| &r["payload"]["payload"]["id"])
        .collect();
    assert_eq!(order, [&json!("c"), &json!("a"), &json!("b")]);
    // Each row carries every component's score; a row without a text match scores 0.
    assert_eq!(rows[2]["payload"]["componentScores"][0], json!(0.0));
    assert_eq!(
        rows[0]["payload"]["componentScores"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

#[test]
fn rrf_weights_and_terms_may_be_parameters() {
    let text = "SELECT TOP 3 c.id FROM c ORDER BY RANK RRF(FullTextScore(c.t, @term), VectorDistance(c.v, @probe), @w)";
    let params: HashMap<String, Value> = [
        ("@term".to_owned(), json!("fox")),
        ("@probe".to_owned(), json!([1, 0])),
        ("@w".to_owned(), json!([1, -2])),
    ]
    .into_iter()
    .collect();
    let mut q = parse_query(text).unwrap();
    prepare(&mut q, &policy(Distance::Cosine), &params).unwrap();
    let p = plan(&q, text, &params, None, MinMaxParts::Plain).unwrap();
    let h = p.hybrid_search_query_info.unwrap();
    assert_eq!(h.component_weights, [1.0, 2.0]);
    assert_eq!(h.component_query_infos[1].order_by, ["Ascending"]);
    assert!(
        h.global_statistics_query
            .contains("FullTextContains(c[\"t\"], @term)"),
        "{}",
        h.global_statistics_query
    );
    let bad: HashMap<String, Value> = [("@w".to_owned(), json!("heavy"))].into_iter().collect();
    let text = "SELECT TOP 3 c.id FROM c ORDER BY RANK RRF(FullTextScore(c.t, 'a'), FullTextScore(c.t, 'b'), @w)";
    let q = prepared(text, Distance::Cosine).unwrap();
    assert!(plan(&q, text, &bad, None, MinMaxParts::Plain).is_err());
}

/// A container whose `/de` path is German and `/en` path English, German by default.
fn text_policy() -> SearchPolicy {
    SearchPolicy {
        vectors: Vec::new(),
        full_text: TextLanguages {
            default: Language::German,
            paths: vec![
                (vec!["de".into()], Language::German),
                (vec!["en".into()], Language::English),
            ],
        },
    }
}

fn text_ids(text: &str) -> Vec<Value> {
    let docs = vec![
        json!({"id": "a", "de": "Die Häuser", "en": "Die Häuser", "other": "Die Häuser", "n": {"de": "Häuser"}}),
        json!({"id": "b", "de": "Ein Hund", "en": "The houses", "other": "Ein Haus"}),
        json!({"id": "c", "de": "Der Läufer läuft", "en": "She runs", "other": "running"}),
    ];
    let mut q = parse_query(text).unwrap();
    prepare(&mut q, &text_policy(), &HashMap::new()).unwrap();
    run(&q, &docs, &HashMap::new()).unwrap()
}

#[test]
fn each_full_text_path_tokenizes_in_its_language() {
    let cases = [
        // German stems "Häuser" to "haus"; English does not.
        ("SELECT VALUE c.id FROM c WHERE FullTextContains(c.de, 'Haus')", json!(["a"])),
        ("SELECT VALUE c.id FROM c WHERE FullTextContains(c.en, 'Haus')", json!([])),
        // English stems "houses" and "house" alike, and "runs" as "running".
        ("SELECT VALUE c.id FROM c WHERE FullTextContains(c.en, 'house')", json!(["b"])),
        ("SELECT VALUE c.id FROM c WHERE FullTextContains(c.en, 'running')", json!(["c"])),
        ("SELECT VALUE c.id FROM c WHERE FullTextContains(c[\"de\"], 'Haus')", json!(["a"])),
        // A path outside the policy takes the default language (German here).
        ("SELECT VALUE c.id FROM c WHERE FullTextContainsAny(c.other, 'Haus')", json!(["a", "b"])),
        ("SELECT VALUE c.id FROM c WHERE FullTextContainsAll(c.n.de, 'Haus')", json!(["a"])),
        // In a subquery, a path of the outer source is not the subquery's: the default language.
        (
            "SELECT VALUE c.id FROM c WHERE EXISTS(SELECT VALUE 1 FROM x IN [1] WHERE FullTextContains(c.en, 'Haus'))",
            json!(["a"]),
        ),
        // "Die" and "Der" are German stop words; English keeps "die".
        ("SELECT VALUE [_FullTextWordCount(c.de), _FullTextWordCount(c.en)] FROM c WHERE c.id = 'a'", json!([[1, 2]])),
        ("SELECT VALUE _FullTextWordCount(c.de) FROM c WHERE c.id = 'c'", json!([2])),
    ];
    for (text, want) in cases {
        assert_eq!(Value::Array(text_ids(text)), want, "{text}");
    }
}

#[test]
fn the_language_mark_cannot_be_written_by_a_query() {
    // The marked name is not an identifier the parser reads.
    assert!(parse_query("SELECT VALUE FULLTEXTCONTAINS:en-US(c.de, 'x') FROM c").is_err());
    // A trailing argument is a search term, not a language: the path's language stays German.
    assert_eq!(
        text_ids("SELECT VALUE c.id FROM c WHERE FullTextContainsAll(c.de, 'Haus', 'en-US')"),
        Vec::<Value>::new()
    );
    assert_eq!(
        text_ids("SELECT VALUE c.id FROM c WHERE FullTextContainsAny(c.de, 'Haus', 'en-US')"),
        [json!("a")]
    );
    // Preparing twice marks once.
    let mut q = parse_query("SELECT VALUE c.id FROM c WHERE FullTextContains(c.en, 'x')").unwrap();
    prepare(&mut q, &text_policy(), &HashMap::new()).unwrap();
    prepare(&mut q, &text_policy(), &HashMap::new()).unwrap();
    let Some(Expr::Call(name, args)) = &q.filter else {
        panic!("{:?}", q.filter)
    };
    assert_eq!((name.as_str(), args.len()), ("FULLTEXTCONTAINS:en-US", 2));
}

#[test]
fn the_plan_queries_are_marked_when_they_are_prepared() {
    // The plan writes bracketed paths into its statistics and component queries.
    let mut q = parse_query(
        "SELECT COUNT(1) AS n, [{\"w\": SUM(_FullTextWordCount(c[\"de\"])), \"h\": [SUM(FullTextContains(c[\"en\"], 'x') ? 1 : 0)]}] AS s FROM c",
    )
    .unwrap();
    prepare(&mut q, &text_policy(), &HashMap::new()).unwrap();
    let mut names = Vec::new();
    let mut stack: Vec<&Expr> = q.aggregates.iter().map(|a| &a.arg).collect();
    while let Some(e) = stack.pop() {
        if let Expr::Call(name, _) = e {
            names.push(name.clone());
        }
        stack.extend(super::super::walk::children(e));
    }
    names.sort();
    assert_eq!(
        names,
        ["FULLTEXTCONTAINS:en-US", "_FULLTEXTWORDCOUNT:de-DE"]
    );
    let mut q = parse_query(
        "SELECT c.id FROM c ORDER BY _FullTextScore(c[\"de\"], ['haus'], 3, 9, [1]) DESC",
    )
    .unwrap();
    prepare(&mut q, &text_policy(), &HashMap::new()).unwrap();
    assert!(matches!(&q.order_by[0].expr, Expr::Call(name, _) if name == "_FULLTEXTSCORE:de-DE"));
}

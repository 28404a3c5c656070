use super::*;
use crate::query::plan::query_features::GroupedAggregation;
use crate::query::plan::query_plan::AggregateKind::{self, *};
use serde_json::json;

fn row(v: Value) -> RangeRow {
    RangeRow::plain(v)
}

fn values(kinds: &[AggregateKind]) -> Aggregation {
    Aggregation::Value(kinds.to_vec())
}

fn grouped(cols: &[(&str, Option<AggregateKind>)]) -> Aggregation {
    Aggregation::Grouped(GroupedAggregation {
        select_value: None,
        aliases: cols
            .iter()
            .map(|(a, k)| (a.to_string(), k.clone()))
            .collect(),
    })
}

/// Feeds `rows`, builds the result and hands it all out.
fn run(stage: &mut BlockingStage, rows: &[Value]) -> Vec<Value> {
    for r in rows {
        stage.absorb(row(r.clone())).unwrap();
    }
    stage.finish();
    std::iter::from_fn(|| stage.next_output()).collect()
}

/// The state through its JSON text and back, resumed for `aggregation`.
fn carried(stage: &BlockingStage, aggregation: &Aggregation) -> BlockingStage {
    let state = stage.state(usize::MAX).unwrap();
    let text = serde_json::to_string(&state).unwrap();
    let back: BlockingState = serde_json::from_str(&text).unwrap();
    assert_eq!(back, state, "{text}");
    BlockingStage::resume(aggregation, back).unwrap()
}

/// Value aggregates and groups, each with its range rows: every kind, mixed types, undefined
/// partials, no rows at all.
fn cases() -> Vec<(Aggregation, Vec<Value>)> {
    vec![
        (
            values(&[Count, Sum, Min, Max, Average]),
            vec![
                json!([{"item": 2}, {"item": 5}, {"item": 3}, {"item": "z"}, {"item": {"sum": 5, "count": 2}}]),
                json!([{"item": 0}, {}, {}, {}, {"item": {"sum": null, "count": 0}}]),
                json!([{"item": 4}, {"item": 1.5}, {"item": null}, {"item": true}, {"item": {"sum": 1.5, "count": 1}}]),
                json!([{"item": 1}, {"item": -7}, {"item": "a"}, {"item": 9}, {"item": {"sum": -7, "count": 1}}]),
            ],
        ),
        (values(&[Sum]), vec![json!([{"item": 1}]), json!([{}])]),
        (values(&[Max]), vec![json!([{}]), json!([{}])]),
        (values(&[Count, Average]), vec![]),
        (
            values(&[Min]),
            vec![
                json!([{"item": {"min": 4, "count": 2}}]),
                json!([{"item": {"min": null, "count": 0}}]),
            ],
        ),
        (
            grouped(&[
                ("k", None),
                ("n", Some(Count)),
                ("avg", Some(Average)),
                ("hi", Some(Max)),
            ]),
            vec![
                json!({"groupByItems": [{"item": "a"}], "payload": {"k": "a", "n": {"item": 2}, "avg": {"item": {"sum": 4, "count": 2}}, "hi": {"item": 1}}}),
                json!({"groupByItems": [{"item": {"x": [1]}}], "payload": {"k": {"x": [1]}, "n": {"item": 1}, "avg": {"item": {"sum": 9, "count": 1}}, "hi": {"item": "s"}}}),
                json!({"groupByItems": [{}], "payload": {"n": {"item": 1}, "avg": {"item": {"sum": 2, "count": 1}}, "hi": {}}}),
                json!({"groupByItems": [{"item": "a"}], "payload": {"k": "a", "n": {"item": 3}, "avg": {"item": {"sum": 1, "count": 3}}, "hi": {"item": null}}}),
                json!({"groupByItems": [{"item": null}], "payload": {"k": null, "n": {"item": 1}, "avg": {}, "hi": {"item": false}}}),
                json!({"groupByItems": [{"item": {"x": [1.0]}}], "payload": {"k": {"x": [1.0]}, "n": {"item": 4}, "avg": {"item": {"sum": 1, "count": 1}}, "hi": {"item": 7}}}),
            ],
        ),
        (
            Aggregation::Grouped(GroupedAggregation {
                select_value: Some(Some(Sum)),
                aliases: vec![],
            }),
            vec![
                json!({"groupByItems": [{"item": 1}], "payload": [{"item": 5}]}),
                json!({"groupByItems": [{"item": 2}], "payload": [{"item": 1}]}),
                json!({"groupByItems": [{"item": 1}], "payload": [{"item": 2.5}]}),
            ],
        ),
        (grouped(&[("k", None), ("n", Some(Count))]), vec![]),
    ]
}

#[test]
fn state_carried_at_every_row_and_output_resumes_to_the_same_result() {
    for (aggregation, rows) in cases() {
        let whole = run(
            &mut BlockingStage::new(&aggregation).unwrap().unwrap(),
            &rows,
        );
        // Part-way through the ranges.
        for cut in 0..=rows.len() {
            let mut first = BlockingStage::new(&aggregation).unwrap().unwrap();
            for r in &rows[..cut] {
                first.absorb(row(r.clone())).unwrap();
            }
            assert!(first.is_draining());
            let mut second = carried(&first, &aggregation);
            assert!(second.is_draining());
            assert_eq!(
                run(&mut second, &rows[cut..]),
                whole,
                "{aggregation:?} cut {cut}"
            );
        }
        // Part-way through the built result.
        for taken in 0..=whole.len() {
            let mut first = BlockingStage::new(&aggregation).unwrap().unwrap();
            for r in &rows {
                first.absorb(row(r.clone())).unwrap();
            }
            first.finish();
            let mut got = Vec::new();
            for _ in 0..taken {
                got.push(first.next_output().unwrap());
            }
            assert_eq!(first.is_exhausted(), taken == whole.len());
            let mut second = carried(&first, &aggregation);
            assert!(!second.is_draining());
            got.extend(std::iter::from_fn(|| second.next_output()));
            assert_eq!(got, whole, "{aggregation:?} taken {taken}");
        }
    }
}

#[test]
fn a_state_that_does_not_fit_the_plan_is_refused() {
    let counted = grouped(&[("k", None), ("n", Some(Count))]);
    let mut g = BlockingStage::new(&counted).unwrap().unwrap();
    g.absorb(row(
        json!({"groupByItems": [{"item": "a"}], "payload": {"k": "a", "n": {"item": 2}}}),
    ))
    .unwrap();
    let groups = g.state(usize::MAX).unwrap();
    let vals = BlockingStage::new(&values(&[Count]))
        .unwrap()
        .unwrap()
        .state(usize::MAX)
        .unwrap();
    let BlockingState::Groups(table) = groups.clone() else {
        panic!("a group table")
    };
    let repeated = BlockingState::Groups(vec![table[0].clone(), table[0].clone()]);
    let table_cases: Vec<(Aggregation, BlockingState, &str)> = vec![
        (values(&[Count]), groups.clone(), "groups differently"),
        (counted.clone(), vals.clone(), "groups differently"),
        (values(&[Sum]), vals.clone(), "aggregates differ"),
        (values(&[Count, Count]), vals.clone(), "aggregates differ"),
        (
            grouped(&[("k", None), ("n", Some(Sum))]),
            groups.clone(),
            "columns",
        ),
        (grouped(&[("n", Some(Count))]), groups.clone(), "columns"),
        (counted.clone(), repeated, "repeats a group"),
        (Aggregation::None, vals, "aggregates nothing"),
    ];
    for (aggregation, state, why) in table_cases {
        let e = BlockingStage::resume(&aggregation, state).unwrap_err();
        assert!(e.contains(why), "{why}: {e}");
        assert!(e.starts_with("its aggregate state does not fit this query"));
    }
    assert!(BlockingStage::resume(&counted, groups).is_ok());
}

#[test]
fn a_state_too_large_for_a_token_says_why_and_what_to_do() {
    let counted = grouped(&[("k", None), ("n", Some(Count))]);
    let mut g = BlockingStage::new(&counted).unwrap().unwrap();
    for i in 0..200 {
        let k = format!("key-{i:04}-{}", "x".repeat(40));
        g.absorb(row(
            json!({"groupByItems": [{"item": k}], "payload": {"k": k, "n": {"item": 1}}}),
        ))
        .unwrap();
    }
    for stage in [&g, &{
        let mut out = BlockingStage::new(&counted).unwrap().unwrap();
        out.absorb(row(json!({"groupByItems": [{"item": "a"}], "payload": {"k": "x".repeat(5000), "n": {"item": 1}}})))
            .unwrap();
        out.finish();
        out
    }] {
        let e = stage.state(1000).unwrap_err();
        assert!(e.contains("read the result in one go"), "{e}");
        assert!(e.contains("narrow the query"), "{e}");
        assert!(stage.state(1_000_000).is_ok());
    }
    assert!(g.state(1000).unwrap_err().contains("200 groups"));
}

use super::*;
use crate::query::plan::query_features::check_plan;
use crate::query::QueryPlan;
use serde_json::json;
use std::collections::HashMap;

fn target(id: &str, min: &str, max: &str) -> TargetRange {
    TargetRange {
        id: id.into(),
        min: min.into(),
        max: max.into(),
    }
}

/// Ranges as the service would serve a rewritten query: each range's rows in its own order; a
/// continuation is the position of the next row.
struct FakeService {
    rows: HashMap<String, Vec<Value>>,
    page: usize,
}

impl FakeService {
    fn serve(&self, req: &PageRequest) -> (Vec<Value>, Option<String>) {
        let rows = &self.rows[&req.range.id];
        let at: usize = req
            .continuation
            .as_deref()
            .map(|t| t.parse().unwrap())
            .unwrap_or(0);
        let at = at.min(rows.len());
        let end = (at + self.page).min(rows.len());
        (
            rows[at..end].to_vec(),
            (end < rows.len()).then(|| end.to_string()),
        )
    }
}

fn drive(exec: &mut QueryExecution, svc: &FakeService, limit: usize) -> Vec<Value> {
    let mut out = Vec::new();
    while out.len() < limit {
        match exec.step().unwrap() {
            Next::Value(v) => out.push(v),
            Next::Done => break,
            Next::Fetch(reqs) => {
                for r in reqs {
                    let (docs, next) = svc.serve(&r);
                    exec.fill(&r, docs, next).unwrap();
                }
            }
        }
    }
    out
}

fn ranges3() -> Vec<TargetRange> {
    vec![
        target("0", "", "55"),
        target("1", "55", "AA"),
        target("2", "AA", "FF"),
    ]
}

fn plan(query_info: &str) -> ExecutionPlan {
    let body = format!(
        r#"{{"queryInfo":{query_info},"queryRanges":[{{"min":"","max":"FF","isMinInclusive":true,"isMaxInclusive":false}}]}}"#
    );
    check_plan(&QueryPlan::from_body(body.as_bytes()).unwrap()).unwrap()
}

fn fresh(plan: &ExecutionPlan, ranges: &[TargetRange]) -> QueryExecution {
    let cursors = overlapping_ranges(&plan.ranges, ranges)
        .into_iter()
        .map(|r| RangeCursor::new(r, None, 0))
        .collect();
    QueryExecution::new(plan, "fp".into(), "cross".into(), cursors, None).unwrap()
}

/// Three ranges of ORDER BY rows over c.n (ascending within each range), ids unique.
fn order_by_service(page: usize) -> FakeService {
    let data: [(&str, Vec<i64>); 3] = [
        ("0", vec![1, 3, 3, 8, 10]),
        ("1", vec![2, 3, 5, 5, 9, 11]),
        ("2", vec![]),
    ];
    let mut rows = HashMap::new();
    let mut id = 0;
    for (r, ns) in data {
        let v: Vec<Value> = ns
            .iter()
            .map(|n| {
                id += 1;
                json!({"_rid": format!("rid{id}"), "orderByItems": [{"item": n}], "payload": {"id": id, "n": n}})
            })
            .collect();
        rows.insert(r.to_string(), v);
    }
    FakeService { rows, page }
}

const ORDER_BY_N: &str =
    r#"{"orderBy":["Ascending"],"orderByExpressions":["c.n"],"rewrittenQuery":"SELECT ..."}"#;

#[test]
fn order_by_across_ranges_merges_in_order() {
    let svc = order_by_service(2);
    let p = plan(ORDER_BY_N);
    let mut exec = fresh(&p, &ranges3());
    let ns: Vec<i64> = drive(&mut exec, &svc, usize::MAX)
        .iter()
        .map(|v| v["n"].as_i64().unwrap())
        .collect();
    assert_eq!(ns, vec![1, 2, 3, 3, 3, 5, 5, 8, 9, 10, 11]);
    assert_eq!(exec.continuation().unwrap(), None);
}

#[test]
fn top_stops_reading_once_reached() {
    let svc = order_by_service(1);
    let p = plan(r#"{"orderBy":["Ascending"],"orderByExpressions":["c.n"],"top":3}"#);
    let mut exec = fresh(&p, &ranges3());
    let ns: Vec<i64> = drive(&mut exec, &svc, usize::MAX)
        .iter()
        .map(|v| v["n"].as_i64().unwrap())
        .collect();
    assert_eq!(ns, vec![1, 2, 3]);
    assert_eq!(exec.step().unwrap(), Next::Done);
}

#[test]
fn every_value_boundary_resumes_exactly() {
    let shapes = [
        ORDER_BY_N.to_string(),
        r#"{"orderBy":["Ascending"],"orderByExpressions":["c.n"],"offset":2,"limit":6}"#
            .to_string(),
        r#"{"orderBy":["Ascending"],"orderByExpressions":["c.n"],"distinctType":"Ordered"}"#
            .to_string(),
    ];
    for shape in shapes {
        for page in 1..4 {
            let svc = order_by_service(page);
            let p = plan(&shape);
            let whole = drive(&mut fresh(&p, &ranges3()), &svc, usize::MAX);
            for cut in 0..=whole.len() {
                let mut first = fresh(&p, &ranges3());
                let mut got = drive(&mut first, &svc, cut);
                if let Some(text) = first.continuation().unwrap() {
                    let token = QueryContinuation::decode(&text, "fp", "cross").unwrap();
                    let cursors = resume_cursors(&token.ranges, &ranges3()).unwrap();
                    let mut second =
                        QueryExecution::new(&p, "fp".into(), "cross".into(), cursors, Some(&token))
                            .unwrap();
                    got.extend(drive(&mut second, &svc, usize::MAX));
                }
                assert_eq!(got, whole, "{shape} page {page} cut {cut}");
            }
        }
    }
}

#[test]
fn a_token_resumes_on_the_children_of_a_range_split_since() {
    let svc = order_by_service(2);
    let p = plan(ORDER_BY_N);
    let whole = drive(&mut fresh(&p, &ranges3()), &svc, usize::MAX);
    let mut first = fresh(&p, &ranges3());
    let mut got = drive(&mut first, &svc, 4);
    let token =
        QueryContinuation::decode(&first.continuation().unwrap().unwrap(), "fp", "cross").unwrap();
    // Range 1 split into 3 (which holds all its rows) and 4 (none); range 2 was drained.
    let mut split_rows = svc.rows.clone();
    let parent = split_rows.remove("1").unwrap();
    let now = vec![
        target("0", "", "55"),
        target("3", "55", "80"),
        target("4", "80", "AA"),
        target("2", "AA", "FF"),
    ];
    let cursors = resume_cursors(&token.ranges, &now).unwrap();
    let ids: Vec<&str> = cursors.iter().map(|c| c.range.id.as_str()).collect();
    assert_eq!(ids, vec!["0", "3", "4"]);
    split_rows.insert("3".into(), parent);
    split_rows.insert("4".into(), vec![]);
    let svc2 = FakeService {
        rows: split_rows,
        page: 2,
    };
    let mut second =
        QueryExecution::new(&p, "fp".into(), "cross".into(), cursors, Some(&token)).unwrap();
    got.extend(drive(&mut second, &svc2, usize::MAX));
    assert_eq!(got, whole);
}

#[test]
fn a_split_while_running_continues_on_the_children() {
    let svc = order_by_service(2);
    let p = plan(ORDER_BY_N);
    let whole = drive(&mut fresh(&p, &ranges3()), &svc, usize::MAX);
    let mut exec = fresh(&p, &ranges3());
    let mut got = drive(&mut exec, &svc, 5);
    // The next fetch of range 1 answers 410/1002; its children are 3 (all its rows) and 4 (none).
    let mut rows = svc.rows.clone();
    rows.insert("3".into(), rows["1"].clone());
    rows.insert("4".into(), vec![]);
    let svc2 = FakeService { rows, page: 2 };
    let mut split_done = false;
    loop {
        match exec.step().unwrap() {
            Next::Value(v) => got.push(v),
            Next::Done => break,
            Next::Fetch(reqs) => {
                for r in reqs {
                    if r.range.id == "1" && !split_done {
                        split_done = true;
                        exec.split(&r, vec![target("3", "55", "80"), target("4", "80", "AA")])
                            .unwrap();
                        continue;
                    }
                    let (docs, next) = svc2.serve(&r);
                    exec.fill(&r, docs, next).unwrap();
                }
            }
        }
    }
    assert!(split_done);
    assert_eq!(got, whole);
}

#[test]
fn value_aggregates_combine_every_range() {
    let mut rows = HashMap::new();
    rows.insert(
        "0".to_string(),
        vec![json!([{"item": {"sum": 10, "count": 4}}])],
    );
    rows.insert(
        "1".to_string(),
        vec![json!([{"item": {"sum": 2, "count": 1}}])],
    );
    rows.insert("2".to_string(), vec![json!([{}])]);
    let svc = FakeService { rows, page: 10 };
    let p = plan(r#"{"aggregates":["Average"],"hasSelectValue":true}"#);
    let mut exec = fresh(&p, &ranges3());
    assert_eq!(drive(&mut exec, &svc, usize::MAX), vec![json!(2.4)]);

    let mut rows = HashMap::new();
    for r in ["0", "1", "2"] {
        rows.insert(r.to_string(), vec![json!([{}])]);
    }
    let svc = FakeService { rows, page: 10 };
    let p = plan(r#"{"aggregates":["Max"],"hasSelectValue":true}"#);
    assert_eq!(
        drive(&mut fresh(&p, &ranges3()), &svc, usize::MAX),
        Vec::<Value>::new()
    );
}

#[test]
fn group_by_combines_groups_then_shapes() {
    let mut rows = HashMap::new();
    rows.insert(
        "0".to_string(),
        vec![
            json!({"groupByItems": [{"item": "a"}], "payload": {"k": "a", "n": {"item": 2}}}),
            json!({"groupByItems": [{"item": "b"}], "payload": {"k": "b", "n": {"item": 1}}}),
        ],
    );
    rows.insert(
        "1".to_string(),
        vec![json!({"groupByItems": [{"item": "a"}], "payload": {"k": "a", "n": {"item": 5}}})],
    );
    rows.insert(
        "2".to_string(),
        vec![json!({"groupByItems": [{"item": "c"}], "payload": {"k": "c", "n": {"item": 1}}})],
    );
    let svc = FakeService { rows, page: 1 };
    let p = plan(
        r#"{"groupByExpressions":["c.k"],"groupByAliases":["k","n"],"groupByAliasToAggregateType":{"k":null,"n":"Count"},"offset":1,"limit":5}"#,
    );
    let whole = drive(&mut fresh(&p, &ranges3()), &svc, usize::MAX);
    assert_eq!(
        whole,
        vec![json!({"k": "b", "n": 1}), json!({"k": "c", "n": 1})]
    );
    // Part-way through the built result: the token carries the rest.
    let mut first = fresh(&p, &ranges3());
    let mut got = drive(&mut first, &svc, 1);
    let token = resume(&p, &first.continuation().unwrap().unwrap());
    assert!(token.ranges.is_empty());
    let mut second = resumed(&p, &token, &ranges3());
    got.extend(drive(&mut second, &svc, usize::MAX));
    assert_eq!(got, whole);
}

fn resume(p: &ExecutionPlan, text: &str) -> QueryContinuation {
    let _ = p;
    QueryContinuation::decode(text, "fp", "cross").unwrap()
}

fn resumed(p: &ExecutionPlan, token: &QueryContinuation, ranges: &[TargetRange]) -> QueryExecution {
    let cursors = resume_cursors(&token.ranges, ranges).unwrap();
    QueryExecution::new(p, "fp".into(), "cross".into(), cursors, Some(token)).unwrap()
}

/// Runs at most `steps` steps (a value, or feeding the pages asked for); the values produced and
/// whether the result is complete.
fn drive_steps(exec: &mut QueryExecution, svc: &FakeService, steps: usize) -> (Vec<Value>, bool) {
    let mut out = Vec::new();
    for _ in 0..steps {
        match exec.step().unwrap() {
            Next::Value(v) => out.push(v),
            Next::Done => return (out, true),
            Next::Fetch(reqs) => {
                for r in reqs {
                    let (docs, next) = svc.serve(&r);
                    exec.fill(&r, docs, next).unwrap();
                }
            }
        }
    }
    (out, false)
}

/// Resumes from a token after every `cuts[i]` steps until the result is complete. A cut of one
/// step only fetches a page again, so every cut is at least two steps.
fn drive_resuming(p: &ExecutionPlan, svc: &FakeService, cuts: &[usize]) -> Vec<Value> {
    let mut exec = fresh(p, &ranges3());
    let mut out = Vec::new();
    for round in 0..10_000 {
        let steps = cuts[round % cuts.len()].max(2);
        let (values, done) = drive_steps(&mut exec, svc, steps);
        out.extend(values);
        if done {
            return out;
        }
        match exec.continuation().unwrap() {
            Some(text) => exec = resumed(p, &resume(p, &text), &ranges3()),
            None => return out,
        }
    }
    panic!("the query makes no progress across resumptions")
}

fn blocking_service(page: usize) -> FakeService {
    let mut rows = HashMap::new();
    let g = |k: Value, n: i64, s: Value, lo: Value| {
        let item = |v: &Value| {
            if v.is_null() {
                json!({})
            } else {
                json!({"item": v})
            }
        };
        json!({"groupByItems": [item(&k)], "payload": {"k": k, "n": {"item": n}, "s": item(&s), "lo": item(&lo), "avg": {"item": {"sum": n * 2, "count": n}}}})
    };
    rows.insert(
        "0".to_string(),
        vec![
            g(json!("a"), 2, json!(3), json!("x")),
            g(json!("b"), 1, json!(1.5), json!(4)),
            g(json!("c"), 3, json!(-2), json!(null)),
        ],
    );
    rows.insert(
        "1".to_string(),
        vec![
            g(json!("b"), 2, json!(2), json!(true)),
            g(json!("a"), 1, Value::Null, json!(-1)),
            g(json!("d"), 5, json!(7), json!("y")),
            g(json!("a"), 1, json!(4), json!(0.5)),
        ],
    );
    rows.insert("2".to_string(), vec![g(json!("e"), 1, json!(1), json!(9))]);
    FakeService { rows, page }
}

const GROUPED: &str = r#"{"groupByExpressions":["c.k"],"groupByAliases":["k","n","s","lo","avg"],"groupByAliasToAggregateType":{"k":null,"n":"Count","s":"Sum","lo":"Min","avg":"Average"}"#;

/// GROUP BY with DISTINCT, OFFSET/LIMIT and TOP, and value aggregates: a token taken after any
/// step (reading ranges, or handing out the result) resumes to the uninterrupted result.
#[test]
fn aggregates_and_groups_resume_exactly_from_any_step() {
    let shapes = [
        format!("{GROUPED}}}"),
        format!(r#"{GROUPED},"offset":1,"limit":3}}"#),
        format!(r#"{GROUPED},"top":2}}"#),
        format!(r#"{GROUPED},"distinctType":"Unordered"}}"#),
        r#"{"groupByExpressions":["c.k"],"groupByAliases":["k"],"groupByAliasToAggregateType":{"k":null},"distinctType":"Unordered","top":4}"#.to_string(),
    ];
    for shape in &shapes {
        let p = plan(shape);
        for page in 1..4 {
            let svc = blocking_service(page);
            let whole = drive(&mut fresh(&p, &ranges3()), &svc, usize::MAX);
            assert!(!whole.is_empty(), "{shape}");
            for steps in 2..12 {
                assert_eq!(
                    drive_resuming(&p, &svc, &[steps]),
                    whole,
                    "{shape} page {page} every {steps} steps"
                );
            }
        }
    }
    let mut rows = HashMap::new();
    rows.insert(
        "0".into(),
        vec![
            json!([{"item": 3}, {"item": 2}, {"item": {"sum": 2, "count": 1}}]),
            json!([{"item": 1}, {}, {"item": {"sum": 1, "count": 1}}]),
        ],
    );
    rows.insert("1".into(), vec![]);
    rows.insert("2".into(), vec![json!([{"item": 0}, {"item": "z"}, {}])]);
    let p = plan(r#"{"aggregates":["Count","Max","Average"],"hasSelectValue":false}"#);
    for page in 1..3 {
        let svc = FakeService {
            rows: rows.clone(),
            page,
        };
        let whole = drive(&mut fresh(&p, &ranges3()), &svc, usize::MAX);
        assert_eq!(whole, vec![json!(4), json!("z"), json!(1.5)]);
        for steps in 2..8 {
            assert_eq!(
                drive_resuming(&p, &svc, &[steps]),
                whole,
                "page {page} every {steps}"
            );
        }
    }
}

/// A token from before a split resumes an aggregate on the children.
#[test]
fn an_aggregate_token_resumes_on_the_children_of_a_split() {
    let svc = blocking_service(1);
    let p = plan(&format!("{GROUPED}}}"));
    let whole = drive(&mut fresh(&p, &ranges3()), &svc, usize::MAX);
    for steps in 1..6 {
        let mut first = fresh(&p, &ranges3());
        let (got, done) = drive_steps(&mut first, &svc, steps);
        assert!(!done && got.is_empty());
        let token = resume(&p, &first.continuation().unwrap().unwrap());
        let now = vec![
            target("0", "", "55"),
            target("3", "55", "80"),
            target("4", "80", "AA"),
            target("2", "AA", "FF"),
        ];
        let mut rows = svc.rows.clone();
        rows.insert("3".into(), rows["1"].clone());
        rows.insert("4".into(), vec![]);
        let svc2 = FakeService { rows, page: 1 };
        let mut second = resumed(&p, &token, &now);
        assert_eq!(
            drive(&mut second, &svc2, usize::MAX),
            whole,
            "after {steps} steps"
        );
    }
}

#[test]
fn sequential_query_reads_only_the_overlapping_ranges() {
    let mut rows = HashMap::new();
    rows.insert("0".to_string(), vec![json!(1), json!(2)]);
    rows.insert("1".to_string(), vec![json!(3)]);
    rows.insert("2".to_string(), vec![json!(4)]);
    let svc = FakeService { rows, page: 1 };
    let body = r#"{"queryInfo":{},"queryRanges":[{"min":"60","max":"60","isMinInclusive":true,"isMaxInclusive":true}]}"#;
    let p = check_plan(&QueryPlan::from_body(body.as_bytes()).unwrap()).unwrap();
    let got = drive(&mut fresh(&p, &ranges3()), &svc, usize::MAX);
    assert_eq!(got, vec![json!(3)]);
    let all = plan("{}");
    assert_eq!(
        drive(&mut fresh(&all, &ranges3()), &svc, usize::MAX),
        vec![json!(1), json!(2), json!(3), json!(4)]
    );
}

#[test]
fn malformed_rows_and_unknown_ranges_are_errors() {
    let p = plan(ORDER_BY_N);
    let mut exec = fresh(&p, &ranges3());
    let Next::Fetch(reqs) = exec.step().unwrap() else {
        panic!("first step fetches")
    };
    assert!(exec
        .fill(&reqs[0], vec![json!({"payload": 1})], None)
        .unwrap_err()
        .contains("malformed"));
    let stranger = PageRequest {
        index: 9,
        range: target("9", "0", "1"),
        continuation: None,
    };
    assert!(exec
        .fill(&stranger, vec![], None)
        .unwrap_err()
        .contains("no range 9"));
    assert!(resume_cursors(
        &[RangePosition {
            min: "".into(),
            max: "FF".into(),
            token: None,
            skip: 0
        }],
        &[]
    )
    .unwrap_err()
    .contains("no partition key range covers"));
}

mod random_splits {
    use super::*;
    use proptest::prelude::*;

    /// One partial cell: a number (integer or not), a string, a boolean, null, or undefined.
    fn cell() -> impl Strategy<Value = Value> {
        prop_oneof![
            (-50i64..50).prop_map(|n| json!({"item": n})),
            (-50i64..50).prop_map(|n| json!({"item": n as f64 / 4.0})),
            "[a-c]".prop_map(|s| json!({"item": s})),
            any::<bool>().prop_map(|b| json!({"item": b})),
            Just(json!({"item": null})),
            Just(json!({})),
        ]
    }

    /// A partial SUM: a number, or undefined (a range that summed a non-number).
    fn sum_cell() -> impl Strategy<Value = Value> {
        prop_oneof![
            (-50i64..50).prop_map(|n| json!({"item": n})),
            (-50i64..50).prop_map(|n| json!({"item": n as f64 / 4.0})),
            Just(json!({})),
        ]
    }

    fn group_row() -> impl Strategy<Value = Value> {
        (0u8..5, 0i64..4, sum_cell(), cell(), -9i64..9, 0i64..3).prop_map(|(k, n, s, lo, sum, count)| {
            let key = if k == 4 { json!({}) } else { json!({"item": format!("k{k}")}) };
            let mut payload = json!({"n": {"item": n}, "s": s, "lo": lo, "avg": {"item": {"sum": sum, "count": count}}});
            if k < 4 {
                payload["k"] = json!(format!("k{k}"));
            }
            json!({"groupByItems": [key], "payload": payload})
        })
    }

    fn value_row() -> impl Strategy<Value = Value> {
        ((0i64..5), sum_cell(), cell(), cell())
            .prop_map(|(n, s, lo, hi)| json!([{"item": n}, s, lo, hi]))
    }

    fn service(rows: Vec<Vec<Value>>, page: usize) -> FakeService {
        FakeService {
            rows: rows
                .into_iter()
                .enumerate()
                .map(|(i, r)| (i.to_string(), r))
                .collect(),
            page,
        }
    }

    const SHAPES: [&str; 4] = [
        r#"{"groupByExpressions":["c.k"],"groupByAliases":["k","n","s","lo","avg"],"groupByAliasToAggregateType":{"k":null,"n":"Count","s":"Sum","lo":"Min","avg":"Average"}}"#,
        r#"{"groupByExpressions":["c.k"],"groupByAliases":["k","n","s","lo","avg"],"groupByAliasToAggregateType":{"k":null,"n":"Count","s":"Sum","lo":"Min","avg":"Average"},"offset":1,"limit":2}"#,
        r#"{"groupByExpressions":["c.k"],"groupByAliases":["k","n","s","lo","avg"],"groupByAliasToAggregateType":{"k":null,"n":"Count","s":"Sum","lo":"Min","avg":"Average"},"top":3,"distinctType":"Unordered"}"#,
        r#"{"aggregates":["Count","Sum","Min","Max"]}"#,
    ];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(96))]

        /// Random partial rows on three ranges, served in random page sizes and resumed from
        /// tokens taken at random steps, give the uninterrupted result.
        #[test]
        fn random_rows_resumed_at_random_steps_equal_one_go(
            groups in proptest::collection::vec(proptest::collection::vec(group_row(), 0..7), 3),
            values in proptest::collection::vec(proptest::collection::vec(value_row(), 0..4), 3),
            page in 1usize..4,
            shape in 0usize..4,
            cuts in proptest::collection::vec(2usize..9, 1..5),
        ) {
            let rows = if shape == 3 { values } else { groups };
            let svc = service(rows, page);
            let p = plan(SHAPES[shape]);
            let whole = drive(&mut fresh(&p, &ranges3()), &svc, usize::MAX);
            prop_assert_eq!(drive_resuming(&p, &svc, &cuts), whole);
        }
    }
}

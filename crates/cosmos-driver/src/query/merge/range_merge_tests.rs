use super::*;
use proptest::prelude::*;
use serde_json::json;

fn range(min: &str, max: &str) -> TargetRange {
    TargetRange {
        id: format!("r{min}"),
        min: min.into(),
        max: max.into(),
    }
}

/// A range as the service serves it: rows in the range's order; a token is the position of the
/// next row in `rows`; `owner` limits what a child range (after a split) returns.
struct FakeRange {
    rows: Vec<RangeRow>,
    page: usize,
}

impl FakeRange {
    fn page_at(
        &self,
        token: Option<&str>,
        owner: Option<usize>,
    ) -> (Vec<RangeRow>, Option<String>) {
        let mut at: usize = token.map(|t| t.parse().unwrap()).unwrap_or(0);
        let mut out = Vec::new();
        while at < self.rows.len() && out.len() < self.page {
            let row = &self.rows[at];
            let mine = match owner {
                None => true,
                Some(child) => row_child(row) == child,
            };
            if mine {
                out.push(row.clone());
            }
            at += 1;
        }
        let next = (at < self.rows.len()).then(|| at.to_string());
        (out, next)
    }
}

fn row_child(row: &RangeRow) -> usize {
    row.payload.as_ref().unwrap()["child"].as_u64().unwrap() as usize
}

fn row(key: Value, id: usize, child: usize) -> RangeRow {
    RangeRow {
        keys: vec![Some(key)],
        rid: Some(format!("r{id}")),
        payload: Some(json!({"id": id, "child": child})),
    }
}

/// Drives a merge to the end against fake ranges, resolving each cursor to its fake by the
/// range's `min`. `split_at`: after that many rows, range 0 splits into two children.
fn drain(
    merge: &mut RangeMerge,
    fakes: &[(String, FakeRange)],
    limit: usize,
    mut split_at: Option<usize>,
) -> Vec<RangeRow> {
    let mut out = Vec::new();
    loop {
        if out.len() >= limit {
            return out;
        }
        match merge.next_step() {
            MergeStep::Done => return out,
            MergeStep::Row(r, _) => out.push(r),
            MergeStep::NeedPages(ids) => {
                // The unsplit first range answers 410/1002 once `split_at` rows are out.
                let first = ids.iter().copied().find(|&i| {
                    let c = &merge.cursors()[i];
                    c.range.min.is_empty() && c.range.max != "020"
                });
                if let (Some(i), Some(at)) = (first, split_at) {
                    if out.len() >= at {
                        split_at = None;
                        assert!(merge.split(i, vec![range("", "020"), range("020", "040")]));
                        continue;
                    }
                }
                for i in ids {
                    let c = &merge.cursors()[i];
                    let (fake, owner) = match c.range.min.as_str() {
                        "" if c.range.max == "020" => (&fakes[0].1, Some(0)),
                        "020" => (&fakes[0].1, Some(1)),
                        m => (&fakes.iter().find(|(k, _)| k == m).unwrap().1, None),
                    };
                    let (rows, next) = fake.page_at(c.fetch_token(), owner);
                    merge.fill(i, rows, next);
                }
            }
        }
    }
}

fn fakes_from(ranges: &[Vec<i64>], page: usize, orders: &[SortOrder]) -> Vec<(String, FakeRange)> {
    let mut id = 0;
    ranges
        .iter()
        .enumerate()
        .map(|(ri, keys)| {
            let mut rows: Vec<RangeRow> = keys
                .iter()
                .map(|k| {
                    id += 1;
                    row(json!(k), id, id % 2)
                })
                .collect();
            rows.sort_by(|a, b| compare_keys(&a.keys, &b.keys, orders));
            (format!("{:03}", ri * 40), FakeRange { rows, page })
        })
        .collect()
}

fn cursors_for(fakes: &[(String, FakeRange)]) -> Vec<RangeCursor> {
    fakes
        .iter()
        .enumerate()
        .map(|(i, (min, _))| {
            let max = format!("{:03}", (i + 1) * 40);
            RangeCursor::new(range(if i == 0 { "" } else { min }, &max), None, 0)
        })
        .collect()
}

fn expected(fakes: &[(String, FakeRange)], orders: &[SortOrder]) -> Vec<Value> {
    let mut all: Vec<(usize, &RangeRow)> = fakes
        .iter()
        .enumerate()
        .flat_map(|(i, (_, f))| f.rows.iter().map(move |r| (i, r)))
        .collect();
    // Stable: equal keys keep range order, then position within the range.
    all.sort_by(|a, b| compare_keys(&a.1.keys, &b.1.keys, orders));
    all.into_iter()
        .map(|(_, r)| r.payload.clone().unwrap())
        .collect()
}

fn payloads(rows: Vec<RangeRow>) -> Vec<Value> {
    rows.into_iter().map(|r| r.payload.unwrap()).collect()
}

fn fix_first(fakes: &mut [(String, FakeRange)]) {
    fakes[0].0 = String::new();
}

#[test]
fn sorted_merge_of_three_ranges_interleaves_by_key_and_breaks_ties_by_range() {
    let orders = vec![SortOrder::Ascending];
    let mut fakes = fakes_from(&[vec![1, 4, 4, 9], vec![2, 4, 8], vec![]], 2, &orders);
    fix_first(&mut fakes);
    let mut merge = RangeMerge::new(MergeOrder::Sorted(orders.clone()), cursors_for(&fakes));
    let got = drain(&mut merge, &fakes, usize::MAX, None);
    let keys: Vec<i64> = got
        .iter()
        .map(|r| r.keys[0].as_ref().unwrap().as_i64().unwrap())
        .collect();
    assert_eq!(keys, vec![1, 2, 4, 4, 4, 8, 9]);
    assert_eq!(payloads(got), expected(&fakes, &orders));
}

#[test]
fn sorted_merge_buffers_at_most_one_page_per_range() {
    let orders = vec![SortOrder::Descending];
    let big: Vec<Vec<i64>> = (0..4)
        .map(|r| (0..500).map(|i| i * 4 + r).collect())
        .collect();
    let mut fakes = fakes_from(&big, 7, &orders);
    fix_first(&mut fakes);
    let mut merge = RangeMerge::new(MergeOrder::Sorted(orders.clone()), cursors_for(&fakes));
    let mut seen = 0;
    loop {
        let buffered: usize = merge.cursors().iter().map(|c| c.buffered.len()).sum();
        assert!(buffered <= 4 * 7, "{buffered} rows buffered");
        match merge.next_step() {
            MergeStep::Done => break,
            MergeStep::Row(..) => seen += 1,
            MergeStep::NeedPages(ids) => {
                for i in ids {
                    let c = &merge.cursors()[i];
                    let (rows, next) = fakes[i].1.page_at(c.fetch_token(), None);
                    merge.fill(i, rows, next);
                }
            }
        }
    }
    assert_eq!(seen, 2000);
}

#[test]
fn sequential_merge_reads_range_after_range() {
    let mut fakes = fakes_from(&[vec![3, 1], vec![], vec![2, 5, 4]], 1, &[]);
    fix_first(&mut fakes);
    let mut merge = RangeMerge::new(MergeOrder::Sequential, cursors_for(&fakes));
    let got: Vec<i64> = drain(&mut merge, &fakes, usize::MAX, None)
        .iter()
        .map(|r| r.keys[0].as_ref().unwrap().as_i64().unwrap())
        .collect();
    assert_eq!(got, vec![3, 1, 2, 5, 4]);
}

#[test]
fn empty_pages_with_a_continuation_are_read_past() {
    let mut merge = RangeMerge::new(
        MergeOrder::Sorted(vec![SortOrder::Ascending]),
        vec![RangeCursor::new(range("", "FF"), None, 0)],
    );
    assert_eq!(merge.next_step(), MergeStep::NeedPages(vec![0]));
    merge.fill(0, vec![], Some("t1".into()));
    assert_eq!(merge.next_step(), MergeStep::NeedPages(vec![0]));
    assert_eq!(merge.cursors()[0].fetch_token(), Some("t1"));
    merge.fill(0, vec![row(json!(1), 1, 0)], None);
    assert!(matches!(merge.next_step(), MergeStep::Row(..)));
    assert_eq!(merge.next_step(), MergeStep::Done);
}

#[test]
fn order_by_rows_parse_keys_and_keep_undefined_apart_from_null() {
    let r = RangeRow::order_by(
        json!({"_rid": "a", "orderByItems": [{"item": null}, {}], "payload": {"id": 1}}),
        2,
    )
    .unwrap();
    assert_eq!(r.keys, vec![Some(Value::Null), None]);
    assert_eq!(r.rid.as_deref(), Some("a"));
    assert!(RangeRow::order_by(json!({"orderByItems": [{}]}), 2)
        .unwrap_err()
        .contains("2"));
    assert!(RangeRow::order_by(json!([1]), 1)
        .unwrap_err()
        .contains("malformed"));
    assert_eq!(
        RangeRow::order_by(json!({"orderByItems": []}), 0)
            .unwrap()
            .payload,
        None
    );
}

/// Resumes a merge from its cursors' resume points and last key, as a continuation token does.
fn resumed(merge: &RangeMerge, order: MergeOrder) -> RangeMerge {
    let cursors = merge
        .cursors()
        .iter()
        .filter(|c| !c.is_done())
        .map(|c| {
            let (token, skip) = c.resume_point();
            RangeCursor::new(c.range.clone(), token.map(str::to_owned), skip)
        })
        .collect();
    let m = RangeMerge::new(order, cursors);
    match merge.last_key() {
        Some((k, rid)) => m.with_last_key(k.clone(), rid.clone()),
        None => m,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn merge_equals_a_stable_sort_and_resumes_exactly_anywhere(
        ranges in prop::collection::vec(prop::collection::vec(-20i64..20, 0..12), 1..5),
        page in 1usize..5,
        descending in any::<bool>(),
        stop in 0usize..40,
        again in 0usize..20,
        split in prop::option::of(1usize..30),
        sorted in any::<bool>(),
    ) {
        let orders = vec![if descending { SortOrder::Descending } else { SortOrder::Ascending }];
        let order = if sorted { MergeOrder::Sorted(orders.clone()) } else { MergeOrder::Sequential };
        let key_orders: Vec<SortOrder> = if sorted { orders.clone() } else { vec![] };
        let mut fakes = fakes_from(&ranges, page, &key_orders);
        fix_first(&mut fakes);
        let mut whole = RangeMerge::new(order.clone(), cursors_for(&fakes));
        let all = payloads(drain(&mut whole, &fakes, usize::MAX, None));
        if sorted {
            prop_assert_eq!(&all, &expected(&fakes, &orders));
        } else {
            let in_range_order: Vec<Value> = fakes.iter().flat_map(|(_, f)| f.rows.iter().map(|r| r.payload.clone().unwrap())).collect();
            prop_assert_eq!(&all, &in_range_order);
        }

        // Stop after `stop` rows (maybe after a split), resume, stop again after `again` more,
        // resume from the resumed merge's own point, finish.
        let mut first = RangeMerge::new(order.clone(), cursors_for(&fakes));
        let mut got = payloads(drain(&mut first, &fakes, stop, split));
        let mut second = resumed(&first, order.clone());
        got.extend(payloads(drain(&mut second, &fakes, again, None)));
        let mut third = resumed(&second, order);
        got.extend(payloads(drain(&mut third, &fakes, usize::MAX, None)));
        let mut got_ids: Vec<u64> = got.iter().map(|p| p["id"].as_u64().unwrap()).collect();
        let mut all_ids: Vec<u64> = all.iter().map(|p| p["id"].as_u64().unwrap()).collect();
        if split.is_none() {
            prop_assert_eq!(&got, &all);
        }
        // A split changes the order of rows that compare equal (and, without ORDER BY, the order
        // of the children's rows); no row is lost or repeated.
        got_ids.sort_unstable();
        all_ids.sort_unstable();
        prop_assert_eq!(got_ids, all_ids);
    }
}

#[test]
fn a_split_mid_query_continues_on_the_children_without_loss_or_repeat() {
    let orders = vec![SortOrder::Ascending];
    let mut fakes = fakes_from(&[(0..10).collect(), vec![3, 7]], 2, &orders);
    fix_first(&mut fakes);
    let mut merge = RangeMerge::new(MergeOrder::Sorted(orders.clone()), cursors_for(&fakes));
    let rows = drain(&mut merge, &fakes, usize::MAX, Some(3));
    assert_eq!(merge.cursors().len(), 3, "the first range was split in two");
    let keys: Vec<i64> = rows
        .iter()
        .map(|r| r.keys[0].as_ref().unwrap().as_i64().unwrap())
        .collect();
    assert!(keys.windows(2).all(|w| w[0] <= w[1]), "{keys:?}");
    let mut ids: Vec<u64> = payloads(rows)
        .iter()
        .map(|p| p["id"].as_u64().unwrap())
        .collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 12);
}

#[test]
fn a_range_with_rows_buffered_is_not_split() {
    let mut merge = RangeMerge::new(
        MergeOrder::Sequential,
        vec![RangeCursor::new(range("", "FF"), None, 0)],
    );
    merge.fill(
        0,
        vec![RangeRow::plain(json!(1)), RangeRow::plain(json!(2))],
        Some("t".into()),
    );
    assert!(matches!(merge.next_step(), MergeStep::Row(..)));
    assert!(!merge.split(0, vec![range("", "80"), range("80", "FF")]));
    assert_eq!(merge.cursors()[0].resume_point(), (None, 1));
}

#[test]
fn a_resumed_merge_issues_tokens_that_count_every_row_already_returned() {
    let orders = vec![SortOrder::Ascending];
    let keys = |r: &RangeRow| r.keys[0].as_ref().unwrap().as_i64().unwrap();
    let page: Vec<RangeRow> = (1..=4).map(|k| row(json!(k), k as usize, 0)).collect();
    let serve = |m: &mut RangeMerge| {
        if let MergeStep::NeedPages(ids) = m.next_step() {
            for i in ids {
                m.fill(i, page.clone(), None);
            }
        }
    };
    let mut first = RangeMerge::new(
        MergeOrder::Sorted(orders.clone()),
        vec![RangeCursor::new(range("", "FF"), None, 0)],
    );
    serve(&mut first);
    let mut out = Vec::new();
    for _ in 0..2 {
        if let MergeStep::Row(r, _) = first.next_step() {
            out.push(keys(&r));
        }
    }
    // Resume twice in a row, one row each time: each token must count every row returned.
    let mut second = resumed(&first, MergeOrder::Sorted(orders.clone()));
    serve(&mut second);
    if let MergeStep::Row(r, _) = second.next_step() {
        out.push(keys(&r));
    }
    assert_eq!(second.cursors()[0].resume_point(), (None, 3));
    let mut third = resumed(&second, MergeOrder::Sorted(orders));
    serve(&mut third);
    if let MergeStep::Row(r, _) = third.next_step() {
        out.push(keys(&r));
    }
    assert_eq!(out, vec![1, 2, 3, 4]);
}

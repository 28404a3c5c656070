//! Cross-partition queries carried out as the SDKs carry them out (ask for the plan, run its
//! rewritten query on every range, merge, then DISTINCT, OFFSET and LIMIT on the client), and the
//! plans refused to a client that did not declare a feature the query needs.

use crate::common;

use common::{start_with_container, Resp, TestClient};
use cosmos_emulator::EmulatorBuilder;
use http::Method;
use serde_json::{json, Value};

const DOCS: &str = "/dbs/db/colls/c/docs";

/// What the Python SDK 4.17 declares on its plan requests.
const PYTHON_FEATURES: &str = "Aggregate,CompositeAggregate,Distinct,MultipleOrderBy,OffsetAndLimit,OrderBy,Top,NonStreamingOrderBy,HybridSearch,CountIf,WeightedRankFusion";

async fn plan(c: &TestClient, base: &str, text: &str, features: &str) -> Resp {
    c.send(
        base,
        Method::POST,
        DOCS,
        &[
            ("x-ms-cosmos-is-query-plan-request", "True"),
            ("content-type", "application/query+json"),
            ("x-ms-cosmos-supported-query-features", features),
        ],
        Some(json!({"query": text}).to_string().as_bytes()),
    )
    .await
}

/// Every row of `text` on range `range`, page after page.
async fn range_rows(c: &TestClient, base: &str, text: &str, range: &str) -> Vec<Value> {
    let mut rows = Vec::new();
    let mut continuation: Option<String> = None;
    loop {
        let mut headers = vec![
            ("x-ms-documentdb-partitionkeyrangeid", range),
            ("x-ms-max-item-count", "2"),
        ];
        if let Some(t) = &continuation {
            headers.push(("x-ms-continuation", t.as_str()));
        }
        let r = c.query(base, DOCS, &json!({"query": text}), &headers).await;
        assert_eq!(r.status, 200, "{text} on {range}: {}", r.message());
        rows.extend(r.json()["Documents"].as_array().unwrap().iter().cloned());
        continuation = r.header("x-ms-continuation").map(str::to_owned);
        if continuation.is_none() {
            return rows;
        }
    }
}

/// `text` run as the Python SDK runs an ORDER BY query whose key is a number: the plan, the
/// rewritten query on each range, the rows merged by their key, then the plan's DISTINCT,
/// OFFSET and LIMIT (or TOP) applied in that order.
async fn as_the_sdk_runs_it(c: &TestClient, base: &str, text: &str, ranges: usize) -> Vec<Value> {
    let r = plan(c, base, text, PYTHON_FEATURES).await;
    assert_eq!(r.status, 200, "{text}: {}", r.message());
    let info = r.json()["queryInfo"].clone();
    let rewritten = info["rewrittenQuery"]
        .as_str()
        .unwrap()
        .replace("{documentdb-formattableorderbyquery-filter}", "true");
    let mut rows = Vec::new();
    for range in 0..ranges {
        rows.extend(range_rows(c, base, &rewritten, &range.to_string()).await);
    }
    rows.sort_by(|a, b| {
        let key = |r: &Value| r["orderByItems"][0]["item"].as_f64().unwrap();
        key(a).total_cmp(&key(b))
    });
    let mut payloads: Vec<Value> = rows.into_iter().map(|r| r["payload"].clone()).collect();
    if info["distinctType"] == "Ordered" {
        payloads.dedup();
    }
    let offset = info["offset"].as_u64().unwrap_or(0) as usize;
    let take = info["limit"]
        .as_u64()
        .or(info["top"].as_u64())
        .map_or(usize::MAX, |n| n as usize);
    payloads.into_iter().skip(offset).take(take).collect()
}

#[tokio::test]
async fn distinct_with_order_by_and_offset_limit_across_ranges_answers_as_in_one_partition() {
    let (emu, c) = start_with_container(EmulatorBuilder::new().partitions(4)).await;
    let base = emu.endpoint();
    // The Python SDK's own test: pk i, value i / 3.
    for i in 0..10 {
        let doc = json!({"id": format!("d{i}"), "pk": i, "value": i / 3});
        assert_eq!(c.create_item(base, "db", "c", &doc).await.status, 201);
    }
    let values = |rows: Vec<Value>| -> Vec<i64> {
        rows.iter().map(|r| r["value"].as_i64().unwrap()).collect()
    };
    for (text, want) in [
        (
            "SELECT DISTINCT c[\"value\"] from c ORDER BY c.pk OFFSET 0 LIMIT 2",
            vec![0, 1],
        ),
        (
            "SELECT DISTINCT c[\"value\"] from c ORDER BY c.pk OFFSET 2 LIMIT 2",
            vec![2, 3],
        ),
        (
            "SELECT DISTINCT c[\"value\"] from c ORDER BY c.pk OFFSET 4 LIMIT 3",
            vec![],
        ),
        (
            "SELECT DISTINCT TOP 3 c[\"value\"] from c ORDER BY c.pk",
            vec![0, 1, 2],
        ),
    ] {
        assert_eq!(
            values(as_the_sdk_runs_it(&c, base, text, 4).await),
            want,
            "{text}"
        );
    }
    // Without DISTINCT each range still stops after OFFSET + LIMIT rows.
    let r = plan(
        &c,
        base,
        "SELECT * FROM c ORDER BY c.pk OFFSET 5 LIMIT 3",
        PYTHON_FEATURES,
    )
    .await;
    let rewritten = r.json()["queryInfo"]["rewrittenQuery"].clone();
    assert!(
        rewritten.as_str().unwrap().starts_with("SELECT TOP 8 "),
        "{rewritten}"
    );
    let pks: Vec<i64> = as_the_sdk_runs_it(
        &c,
        base,
        "SELECT * FROM c ORDER BY c.pk OFFSET 5 LIMIT 3",
        4,
    )
    .await
    .iter()
    .map(|r| r["pk"].as_i64().unwrap())
    .collect();
    assert_eq!(pks, vec![5, 6, 7]);
}

#[tokio::test]
async fn an_aggregate_without_value_is_planned_only_for_clients_that_combine_it() {
    let (emu, c) = start_with_container(EmulatorBuilder::new().partitions(3)).await;
    let base = emu.endpoint();
    for i in 0..7 {
        let doc = json!({"id": format!("d{i}"), "pk": format!("k{i}")});
        assert_eq!(c.create_item(base, "db", "c", &doc).await.status, 201);
    }
    // Sent without a plan, the query needs one (400/1004); the plan is refused to a client that
    // does not declare NonValueAggregate, as the service refuses it, naming the feature.
    let cross = [("x-ms-documentdb-query-enablecrosspartition", "True")];
    let r = c
        .query(
            base,
            DOCS,
            &json!({"query": "SELECT COUNT(1) FROM c"}),
            &cross,
        )
        .await;
    assert_eq!((r.status, r.sub_status()), (400, 1004), "{r:?}");
    let r = plan(&c, base, "SELECT COUNT(1) FROM c", PYTHON_FEATURES).await;
    assert_eq!(r.status, 400, "{r:?}");
    assert!(
        r.message().contains(
            "Query contained NonValueAggregate, which the calling client does not support."
        ),
        "{}",
        r.message()
    );
    // The same client's SELECT VALUE COUNT(1) is planned.
    let r = plan(&c, base, "SELECT VALUE COUNT(1) FROM c", PYTHON_FEATURES).await;
    assert_eq!(r.status, 200, "{}", r.message());
    assert_eq!(r.json()["queryInfo"]["aggregates"], json!(["Count"]));
    // A client that declares it gets the grouped rewrite; its ranges' counts add up.
    let r = plan(
        &c,
        base,
        "SELECT COUNT(1) FROM c",
        "Aggregate,NonValueAggregate,GroupBy",
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.message());
    let info = r.json()["queryInfo"].clone();
    assert_eq!(info["groupByAliasToAggregateType"], json!({"$1": "Count"}));
    let rewritten = info["rewrittenQuery"].as_str().unwrap().to_owned();
    let mut total = 0;
    for range in ["0", "1", "2"] {
        for row in range_rows(&c, base, &rewritten, range).await {
            total += row["payload"]["$1"]["item"].as_i64().unwrap();
        }
    }
    assert_eq!(total, 7);
    // GROUP BY names both features it needs.
    let r = plan(
        &c,
        base,
        "SELECT c.pk, COUNT(1) AS n FROM c GROUP BY c.pk",
        PYTHON_FEATURES,
    )
    .await;
    assert_eq!(r.status, 400);
    assert!(
        r.message().contains("Query contained GroupBy"),
        "{}",
        r.message()
    );
    assert!(
        r.message().contains("Query contained NonValueAggregate"),
        "{}",
        r.message()
    );
}

/// On a container of one range too, a cross-partition query that needs a plan asks for one (as
/// the service's gateway does); run on that range, as an SDK does with the plan, it answers its
/// row.
#[tokio::test]
async fn on_one_range_an_aggregate_without_value_needs_a_plan_and_answers_its_row_there() {
    let (emu, c) = start_with_container(EmulatorBuilder::new().partitions(1)).await;
    let base = emu.endpoint();
    for i in 0..5 {
        let doc = json!({"id": format!("d{i}"), "pk": format!("k{i}")});
        assert_eq!(c.create_item(base, "db", "c", &doc).await.status, 201);
    }
    let cross = [("x-ms-documentdb-query-enablecrosspartition", "True")];
    let r = c
        .query(
            base,
            DOCS,
            &json!({"query": "SELECT COUNT(1) FROM c"}),
            &cross,
        )
        .await;
    assert_eq!((r.status, r.sub_status()), (400, 1004), "{r:?}");
    let r = c
        .query(
            base,
            DOCS,
            &json!({"query": "SELECT COUNT(1) FROM c"}),
            &[("x-ms-documentdb-partitionkeyrangeid", "0")],
        )
        .await;
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(r.json()["Documents"], json!([{"$1": 5}]));
}

/// `SELECT VALUE <aggregate> ... ORDER BY` across ranges (the Python SDK's aggregate tests): the
/// plan names the aggregate and the ORDER BY; each range answers one ORDER BY row whose payload
/// is `[{"item": <its part>}]`, and the parts combine into what one partition answers.
#[tokio::test]
async fn a_value_aggregate_with_order_by_is_planned_as_order_by_rows_of_each_ranges_part() {
    let (emu, c) = start_with_container(EmulatorBuilder::new().partitions(4)).await;
    let (one, c1) = start_with_container(EmulatorBuilder::new().partitions(1)).await;
    let base = emu.endpoint();
    // Keys of every type, and twelve numbers 1..=12 (sum 78).
    let mut keys = vec![
        json!(null),
        json!(false),
        json!(true),
        json!("abc"),
        json!("xyz"),
    ];
    keys.extend((1..=12).map(|i| json!(i)));
    for (i, key) in keys.iter().enumerate() {
        let doc = json!({"id": format!("d{i}"), "pk": format!("p{i}"), "key": key});
        assert_eq!(c.create_item(base, "db", "c", &doc).await.status, 201);
        assert_eq!(
            c1.create_item(one.endpoint(), "db", "c", &doc).await.status,
            201
        );
    }
    let cross = [("x-ms-documentdb-query-enablecrosspartition", "True")];
    for (text, kind, want) in [
        (
            "SELECT VALUE COUNT(r.key) FROM r WHERE true ORDER BY r.key",
            "Count",
            json!(17),
        ),
        (
            "SELECT VALUE SUM(r.key) FROM r WHERE IS_NUMBER(r.key) ORDER BY r.key",
            "Sum",
            json!(78),
        ),
        (
            "SELECT VALUE AVG(r.key) FROM r WHERE IS_NUMBER(r.key) ORDER BY r.key DESC",
            "Average",
            json!(6.5),
        ),
        (
            "SELECT VALUE MAX(r.key) FROM r WHERE IS_NUMBER(r.key) ORDER BY r.key",
            "Max",
            json!(12),
        ),
    ] {
        // One range answers the query itself.
        let r = c1
            .query(
                one.endpoint(),
                DOCS,
                &json!({"query": text}),
                &[("x-ms-documentdb-partitionkeyrangeid", "0")],
            )
            .await;
        assert_eq!(r.status, 200, "{text}: {}", r.message());
        assert_eq!(
            r.json()["Documents"],
            json!([want]),
            "{text} in one partition"
        );
        // Across four ranges: asked for without a plan it needs one; the plan is served.
        let r = c.query(base, DOCS, &json!({"query": text}), &cross).await;
        assert_eq!((r.status, r.sub_status()), (400, 1004), "{text}: {r:?}");
        let r = plan(&c, base, text, PYTHON_FEATURES).await;
        assert_eq!(r.status, 200, "{text}: {}", r.message());
        let info = r.json()["queryInfo"].clone();
        assert_eq!(info["aggregates"], json!([kind]), "{text}");
        assert_eq!(info["orderByExpressions"], json!(["r.key"]), "{text}");
        assert_eq!(info["hasSelectValue"], json!(true), "{text}");
        let rewritten = info["rewrittenQuery"]
            .as_str()
            .unwrap()
            .replace("{documentdb-formattableorderbyquery-filter}", "true");
        let mut parts = Vec::new();
        for range in 0..4 {
            let rows = range_rows(&c, base, &rewritten, &range.to_string()).await;
            assert_eq!(rows.len(), 1, "{text} on range {range}: {rows:?}");
            assert_eq!(rows[0]["orderByItems"].as_array().map(Vec::len), Some(1));
            let payload = rows[0]["payload"].as_array().unwrap().clone();
            assert_eq!(payload.len(), 1, "{text}: {payload:?}");
            parts.push(payload[0]["item"].clone());
        }
        let numbers = |key: &str| -> Vec<f64> {
            parts
                .iter()
                .filter_map(|p| {
                    if key.is_empty() {
                        p.as_f64()
                    } else {
                        p[key].as_f64()
                    }
                })
                .collect()
        };
        let got = match kind {
            "Count" | "Sum" => json!(numbers("").iter().sum::<f64>()),
            "Average" => {
                json!(numbers("sum").iter().sum::<f64>() / numbers("count").iter().sum::<f64>())
            }
            _ => json!(numbers("").into_iter().fold(f64::MIN, f64::max)),
        };
        assert_eq!(got.as_f64(), want.as_f64(), "{text}: parts {parts:?}");
    }
}

#[tokio::test]
async fn order_by_with_group_by_or_a_non_value_aggregate_is_refused_across_ranges() {
    let (emu, c) = start_with_container(EmulatorBuilder::new().partitions(2)).await;
    let base = emu.endpoint();
    let all = "Aggregate,NonValueAggregate,GroupBy,MultipleAggregates,OrderBy,MultipleOrderBy,Top,Distinct,OffsetAndLimit";
    let r = plan(
        &c,
        base,
        "SELECT c.pk, COUNT(1) AS n FROM c GROUP BY c.pk ORDER BY c.pk",
        all,
    )
    .await;
    assert_eq!(r.status, 400, "{r:?}");
    assert!(
        r.message()
            .contains("'ORDER BY' is not supported in presence of GROUP BY."),
        "{}",
        r.message()
    );
    let r = plan(&c, base, "SELECT COUNT(1) AS n FROM c ORDER BY c.pk", all).await;
    assert_eq!(r.status, 400, "{r:?}");
    assert!(r.message().contains("SELECT VALUE"), "{}", r.message());
}

/// Whether a query needs a plan is decided by the request's partition key header, not by its
/// WHERE clause nor by the number of ranges: a query that fixes the key in WHERE but needs a plan
/// answers 400/1004 (so the Python SDK refuses a cross-partition aggregate without VALUE there,
/// as its aggregate tests expect); one the gateway serves is read from the key's range alone.
#[tokio::test]
async fn a_query_pinned_by_its_where_clause_still_needs_a_plan_when_it_aggregates() {
    let (emu, c) = start_with_container(EmulatorBuilder::new().partitions(3)).await;
    let (one, c1) = start_with_container(EmulatorBuilder::new().partitions(1)).await;
    for i in 0..6 {
        let doc = json!({"id": format!("d{i}"), "pk": if i < 4 { "u" } else { "v" }, "n": i});
        assert_eq!(
            c.create_item(emu.endpoint(), "db", "c", &doc).await.status,
            201
        );
        assert_eq!(
            c1.create_item(one.endpoint(), "db", "c", &doc).await.status,
            201
        );
    }
    let cross = [("x-ms-documentdb-query-enablecrosspartition", "True")];
    for text in [
        "SELECT AVG(c.n) FROM c WHERE c.pk = 'u'",
        "SELECT VALUE COUNT(1) FROM c WHERE c.pk = 'u'",
        "SELECT * FROM c WHERE c.pk = 'u' ORDER BY c.n",
    ] {
        let r = c
            .query(emu.endpoint(), DOCS, &json!({"query": text}), &cross)
            .await;
        assert_eq!((r.status, r.sub_status()), (400, 1004), "{text}: {r:?}");
        // The plan still names the one key's range.
        let r = plan(
            &c,
            emu.endpoint(),
            text,
            "Aggregate,NonValueAggregate,OrderBy",
        )
        .await;
        assert_eq!(r.status, 200, "{text}: {}", r.message());
        let ranges = r.json()["queryRanges"].clone();
        assert_eq!(ranges.as_array().map(Vec::len), Some(1), "{text}");
        assert_eq!(ranges[0]["min"], ranges[0]["max"], "{text}");
        // With the partition key header, the query runs in that key.
        let r = c
            .query(
                emu.endpoint(),
                DOCS,
                &json!({"query": text}),
                &[("x-ms-documentdb-partitionkey", "[\"u\"]")],
            )
            .await;
        assert_eq!(r.status, 200, "{text}: {}", r.message());
        // A container of one range asks for a plan as well, as the service's gateway does.
        let r = c1
            .query(one.endpoint(), DOCS, &json!({"query": text}), &cross)
            .await;
        assert_eq!((r.status, r.sub_status()), (400, 1004), "{text}: {r:?}");
        // Run on its one range, as an SDK does with the plan, it is served.
        let r = c1
            .query(
                one.endpoint(),
                DOCS,
                &json!({"query": text}),
                &[("x-ms-documentdb-partitionkeyrangeid", "0")],
            )
            .await;
        assert_eq!(r.status, 200, "{text}: {}", r.message());
    }
    // A query the gateway serves is answered, from the key's range.
    let r = c
        .query(
            emu.endpoint(),
            DOCS,
            &json!({"query": "SELECT VALUE c.n FROM c WHERE c.pk = 'v'"}),
            &cross,
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.message());
    let mut got: Vec<i64> = r.json()["Documents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_i64().unwrap())
        .collect();
    got.sort();
    assert_eq!(got, vec![4, 5]);
}

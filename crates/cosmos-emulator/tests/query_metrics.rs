//! Query diagnostics when asked: `x-ms-documentdb-query-metrics` (semicolon-separated
//! `name=value` pairs) with `x-ms-documentdb-populatequerymetrics: true`, and
//! `x-ms-cosmos-index-utilization` (base64 JSON) with `x-ms-cosmos-populateindexmetrics: true`.

use crate::common;

use std::collections::HashMap;

use base64::Engine;
use common::start_with_container;
use cosmos_emulator::EmulatorBuilder;
use serde_json::json;

fn pairs(header: &str) -> HashMap<String, String> {
    header
        .split(';')
        .map(|pair| {
            let (name, value) = pair.split_once('=').expect("name=value");
            (name.to_owned(), value.to_owned())
        })
        .collect()
}

#[tokio::test]
async fn query_metrics_count_what_the_page_read_and_returned() {
    let (emu, c) = start_with_container(EmulatorBuilder::new().partitions(1)).await;
    let base = emu.endpoint();
    for i in 0..5 {
        let doc = json!({"id": format!("d{i}"), "pk": "p", "n": i});
        assert_eq!(c.create_item(base, "db", "c", &doc).await.status, 201);
    }
    let pk = common::pk_header(&json!("p"));
    let query = json!({"query": "SELECT * FROM c WHERE c.n >= 3"});
    let asked = [
        ("x-ms-documentdb-partitionkey", pk.as_str()),
        ("x-ms-documentdb-populatequerymetrics", "True"),
    ];
    let r = c.query(base, "/dbs/db/colls/c/docs", &query, &asked).await;
    assert_eq!(r.status, 200, "{r:?}");
    let metrics = pairs(r.header("x-ms-documentdb-query-metrics").expect("metrics"));
    assert_eq!(metrics["retrievedDocumentCount"], "5");
    assert_eq!(metrics["outputDocumentCount"], "2");
    assert_eq!(metrics["indexUtilizationRatio"], "0.40");
    assert!(metrics["retrievedDocumentSize"].parse::<u64>().unwrap() > 0);
    assert!(metrics["outputDocumentSize"].parse::<u64>().unwrap() > 0);
    assert!(metrics["totalExecutionTimeInMs"].parse::<f64>().is_ok());

    // Not asked: not sent.
    let plain = [("x-ms-documentdb-partitionkey", pk.as_str())];
    let r = c.query(base, "/dbs/db/colls/c/docs", &query, &plain).await;
    assert_eq!(r.status, 200);
    assert!(r.header("x-ms-documentdb-query-metrics").is_none());
    assert!(r.header("x-ms-cosmos-index-utilization").is_none());

    // A count of a constant over the partition is answered from the index.
    let count = json!({"query": "SELECT VALUE COUNT(1) FROM c"});
    let r = c.query(base, "/dbs/db/colls/c/docs", &count, &asked).await;
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(r.json()["Documents"], json!([5]));
    let metrics = pairs(r.header("x-ms-documentdb-query-metrics").expect("metrics"));
    assert_eq!(metrics["retrievedDocumentCount"], "0");
    assert_eq!(metrics["retrievedDocumentSize"], "0");
    assert_eq!(metrics["indexUtilizationRatio"], "1.00");
}

#[tokio::test]
async fn index_utilization_names_the_partition_key_index() {
    let (emu, c) = start_with_container(EmulatorBuilder::new()).await;
    let base = emu.endpoint();
    let doc = json!({"id": "a", "pk": "p"});
    assert_eq!(c.create_item(base, "db", "c", &doc).await.status, 201);
    let pk = common::pk_header(&json!("p"));
    let r = c
        .query(
            base,
            "/dbs/db/colls/c/docs",
            &json!({"query": "SELECT * FROM c"}),
            &[
                ("x-ms-documentdb-partitionkey", pk.as_str()),
                ("x-ms-cosmos-populateindexmetrics", "true"),
            ],
        )
        .await;
    assert_eq!(r.status, 200, "{r:?}");
    let raw = r
        .header("x-ms-cosmos-index-utilization")
        .expect("index metrics");
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(raw)
        .expect("base64");
    let report: serde_json::Value = serde_json::from_slice(&decoded).expect("JSON");
    assert_eq!(
        report["UtilizedSingleIndexes"],
        json!([{"FilterExpression": "", "IndexSpec": "/pk/?", "FilterPreciseSet": true,
                "IndexPreciseSet": true, "IndexImpactScore": "High"}])
    );
    for list in [
        "PotentialSingleIndexes",
        "UtilizedCompositeIndexes",
        "PotentialCompositeIndexes",
    ] {
        assert_eq!(report[list], json!([]), "{list}");
    }
}

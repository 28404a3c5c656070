//! A container read with `x-ms-documentdb-populatepartitionstatistics: true` carries per-range
//! `statistics`; with `x-ms-documentdb-populatequotainfo: true`, the index transformation
//! progress header. Neither without asking.

use crate::common;

use common::start_with_container;
use cosmos_emulator::EmulatorBuilder;
use serde_json::json;

#[tokio::test]
async fn statistics_and_index_progress_when_asked() {
    let (emu, c) = start_with_container(EmulatorBuilder::new().partitions(2)).await;
    let base = emu.endpoint();
    for i in 0..10 {
        let doc = json!({"id": format!("d{i}"), "pk": format!("p{}", i % 5)});
        assert_eq!(c.create_item(base, "db", "c", &doc).await.status, 201);
    }
    let plain = c.get(base, "/dbs/db/colls/c", &[]).await;
    assert_eq!(plain.status, 200);
    assert!(plain.json().get("statistics").is_none());
    assert!(plain
        .header("x-ms-documentdb-collection-index-transformation-progress")
        .is_none());

    let r = c
        .get(
            base,
            "/dbs/db/colls/c",
            &[
                ("x-ms-documentdb-populatepartitionstatistics", "true"),
                ("x-ms-documentdb-populatequotainfo", "true"),
            ],
        )
        .await;
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(
        r.header("x-ms-documentdb-collection-index-transformation-progress"),
        Some("100")
    );
    let stats = r.json()["statistics"].as_array().unwrap().clone();
    assert_eq!(stats.len(), 2);
    let ids: Vec<&str> = stats.iter().map(|s| s["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["0", "1"]);
    let docs: u64 = stats
        .iter()
        .map(|s| s["documentCount"].as_u64().unwrap())
        .sum();
    assert_eq!(docs, 10);
    let keys: u64 = stats
        .iter()
        .map(|s| s["sampledDistinctPartitionKeyCount"].as_u64().unwrap())
        .sum();
    assert_eq!(keys, 5);
    assert!(stats.iter().all(|s| s["sizeInKB"].is_u64()));
}

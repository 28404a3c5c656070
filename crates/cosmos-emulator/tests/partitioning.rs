//! Items land in the partition key range their effective partition key (hash V2) falls in.

use crate::common;

use common::start_with_container;
use cosmos_emulator::EmulatorBuilder;
use serde_json::{json, Value};

/// (partition key value, its published V2 EPK).
fn vectors() -> Vec<(Value, &'static str)> {
    vec![
        (json!("partitionKey"), "013AEFCF77FA271571CF665A58C933F1"),
        (json!(""), "32E9366E637A71B4E710384B2F4970A0"),
        (json!(true), "0E711127C5B5A8E4726AC6DD306A3E59"),
        (json!(false), "2FE1BE91E90A3439635E0E9E37361EF2"),
        (json!(null), "378867E4430E67857ACE5C908374FE16"),
        (
            json!(-9223372036854775808i64),
            "23D5C6395512BDFEAFADAD15328AD2BB",
        ),
        (json!(2147483647), "2D9349D64712AEB5EB1406E2F0BE2725"),
    ]
}

#[tokio::test]
async fn each_item_lands_in_the_range_holding_its_epk() {
    let (emu, c) = start_with_container(EmulatorBuilder::new().partitions(4)).await;
    let base = emu.endpoint();
    let feed = c.get(base, "/dbs/db/colls/c/pkranges", &[]).await.json();
    let ranges: Vec<(String, String, String)> = feed["PartitionKeyRanges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["id"].as_str().unwrap().into(),
                r["minInclusive"].as_str().unwrap().into(),
                r["maxExclusive"].as_str().unwrap().into(),
            )
        })
        .collect();
    let mut used = std::collections::BTreeSet::new();
    for (i, (pk, epk)) in vectors().into_iter().enumerate() {
        let id = format!("item{i}");
        let r = c
            .create_item(base, "db", "c", &json!({"id": id, "pk": pk}))
            .await;
        assert_eq!(r.status, 201, "{pk}: {r:?}");
        let range_id = r
            .header("x-ms-documentdb-partitionkeyrangeid")
            .unwrap()
            .to_owned();
        let (_, min, max) = ranges.iter().find(|(rid, _, _)| *rid == range_id).unwrap();
        assert!(
            min.as_str() <= epk && epk < max.as_str(),
            "{pk}: EPK {epk} is not in range {range_id} [{min}, {max})"
        );
        let listed = c
            .get(
                base,
                "/dbs/db/colls/c/docs",
                &[("x-ms-documentdb-partitionkeyrangeid", &range_id)],
            )
            .await
            .json();
        assert!(
            listed["Documents"]
                .as_array()
                .unwrap()
                .iter()
                .any(|d| d["id"] == id.as_str()),
            "{id} not listed in range {range_id}"
        );
        used.insert(range_id);
    }
    assert_eq!(
        used.len(),
        3,
        "the vectors spread over ranges 0, 2 and 3 (none of them hashes into 1)"
    );
}

#[tokio::test]
async fn items_without_the_key_property_use_the_undefined_key() {
    let (emu, c) = start_with_container(EmulatorBuilder::new()).await;
    let base = emu.endpoint();
    let headers = [("x-ms-documentdb-partitionkey", "[{}]")];
    let r = c
        .post_json(
            base,
            "/dbs/db/colls/c/docs",
            &headers,
            &json!({"id": "nokey"}),
        )
        .await;
    assert_eq!(r.status, 201, "{r:?}");
    // The undefined key's EPK 11622DAA... falls in range 1 of 4.
    assert_eq!(r.header("x-ms-documentdb-partitionkeyrangeid"), Some("1"));
    assert_eq!(
        c.get(base, "/dbs/db/colls/c/docs/nokey", &headers)
            .await
            .status,
        200
    );
}

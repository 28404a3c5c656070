//! Hash V1 containers through the driver, against the embedded emulator: bulk writes routed by
//! partition key range with V1 keys, read many finding every item across the ranges (and after
//! a split), point reads by key, and the driver's V1 effective partition key equal to the
//! emulator's.

use crate::common;

use std::collections::BTreeSet;

use cosmos_driver::bulk::BulkOperation;
use cosmos_driver::protocol::{effective_partition_key_for, HashVersion, PartitionKeyValue};
use cosmos_driver::query::{Query, QueryScope};
use cosmos_driver::{
    ContainerClient, CosmosDriver, CosmosOperation, DatabaseReference, OperationOptions,
    PartitionKey, PartitionKeyDefinition,
};
use cosmos_emulator::EmulatorBuilder;
use futures::TryStreamExt;
use serde::Deserialize;
use serde_json::json;

#[derive(Debug, Deserialize, Clone, PartialEq)]
struct Doc {
    id: String,
    pk: String,
    n: usize,
}

fn pk_of(i: usize) -> String {
    format!("k{}", i % 50)
}

/// Creates database `db` and a hash V1 container `c` (partition key `/pk`).
async fn v1_container(driver: &CosmosDriver, db: &str, c: &str) -> ContainerClient {
    let none = OperationOptions::new();
    let dbr = DatabaseReference::new(db).unwrap();
    driver
        .execute(CosmosOperation::create_database(dbr.clone()), &none)
        .await
        .expect("create database");
    let body = json!({"id": c, "partitionKey": {"paths": ["/pk"], "kind": "Hash", "version": 1}});
    let created = driver
        .execute(
            CosmosOperation::create_container(
                dbr.container(c).unwrap(),
                PartitionKeyDefinition::new("/pk").unwrap(),
            )
            .with_body(body.to_string()),
            &none,
        )
        .await
        .expect("create container");
    let read: serde_json::Value = created.json().unwrap();
    assert_eq!(read["partitionKey"]["version"], 1, "{read}");
    driver.container(db, c)
}

#[tokio::test]
async fn v1_items_written_in_bulk_are_read_back_by_key_across_ranges() {
    const N: usize = 300;
    let emu = common::start(EmulatorBuilder::new().partitions(4)).await;
    let driver = common::driver(common::options(&emu)).await;
    let c = v1_container(&driver, "db", "v1").await;

    let ops = (0..N).map(|i| {
        BulkOperation::create(
            pk_of(i),
            &json!({"id": format!("d{i}"), "pk": pk_of(i), "n": i}),
        )
        .unwrap()
    });
    let response = c.bulk().run_iter(ops).await.expect("the run starts");
    let stats = response.stats().clone();
    // 50 keys over 4 ranges: routed by range, a handful of batches (by key it would be 50+).
    assert!(stats.batches <= 12, "V1 keys go by range: {stats:?}");
    for (i, r) in response.into_results().iter().enumerate() {
        let r = r.as_ref().unwrap_or_else(|e| panic!("operation {i}: {e}"));
        assert_eq!(r.status.status, 201, "operation {i}: {:?}", r.message);
    }

    // Read many: every item, in the order asked; a right id under another key is not found.
    let mut asked: Vec<(PartitionKey, String)> = (0..N)
        .rev()
        .map(|i| (PartitionKey::from(pk_of(i)), format!("d{i}")))
        .collect();
    asked.push((PartitionKey::from("elsewhere"), "d0".to_owned()));
    let answer = c.read_many::<Doc>(&asked).await.unwrap();
    let got: Vec<usize> = answer.items().iter().map(|d| d.n).collect();
    assert_eq!(got, (0..N).rev().collect::<Vec<_>>());
    assert!(answer.items().iter().all(|d| d.pk == pk_of(d.n)));

    // Point reads by key, and a cross-partition query over every range.
    for i in [0, 7, 149, 299] {
        let doc: Doc = c
            .read_item(pk_of(i).as_str(), &format!("d{i}"), None)
            .await
            .unwrap()
            .into_item()
            .unwrap();
        assert_eq!(doc.n, i);
    }
    let ids: BTreeSet<String> = c
        .query_items::<Doc>(Query::new("SELECT * FROM c"), QueryScope::CrossPartition)
        .map_ok(|d| d.id)
        .try_collect()
        .await
        .unwrap();
    assert_eq!(ids.len(), N);

    // After a split the driver finds the children and still reads everything.
    common::split_range(&emu, "db", "v1", "1").await;
    let answer = c.read_many::<Doc>(&asked).await.unwrap();
    assert_eq!(answer.items().len(), N);
    let more = (N..N + 100).map(|i| {
        BulkOperation::create(
            pk_of(i),
            &json!({"id": format!("d{i}"), "pk": pk_of(i), "n": i}),
        )
        .unwrap()
    });
    let response = c.bulk().run_iter(more).await.expect("the run starts");
    assert!(response
        .into_results()
        .iter()
        .all(|r| r.as_ref().is_ok_and(|r| r.status.status == 201)));
    let all: Vec<(PartitionKey, String)> = (0..N + 100)
        .map(|i| (PartitionKey::from(pk_of(i)), format!("d{i}")))
        .collect();
    assert_eq!(
        c.read_many::<Doc>(&all).await.unwrap().items().len(),
        N + 100
    );
}

#[test]
fn the_drivers_v1_effective_partition_key_is_the_emulators() {
    let body = json!({"partitionKey": {"paths": ["/pk"], "kind": "Hash", "version": 1}});
    let serde_json::Value::Object(mut map) = body else {
        unreachable!()
    };
    let definition = cosmos_emulator::epk::PkDefinition::from_container_body(&mut map).unwrap();
    let long = "é".repeat(150);
    let values: Vec<(PartitionKeyValue, String)> = vec![
        (PartitionKeyValue::from(""), json!([""]).to_string()),
        (PartitionKeyValue::from("a"), json!(["a"]).to_string()),
        (
            PartitionKeyValue::from(long.as_str()),
            json!([long]).to_string(),
        ),
        (PartitionKeyValue::Number(-2.5), "[-2.5]".to_owned()),
        (PartitionKeyValue::Number(42.0), "[42]".to_owned()),
        (PartitionKeyValue::Bool(true), "[true]".to_owned()),
        (PartitionKeyValue::Null, "[null]".to_owned()),
    ];
    for (value, header) in values {
        let key = PartitionKey::hierarchical([value]).unwrap();
        let ours = effective_partition_key_for(&key, 1, HashVersion::V1);
        let theirs = cosmos_emulator::epk::PartitionKeyValue::from_header(&header).unwrap();
        assert_eq!(ours, definition.epk_text(&theirs), "{header}");
    }
}

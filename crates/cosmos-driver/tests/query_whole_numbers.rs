//! Aggregates merged by the driver across partitions keep the service's JSON form of numbers: a
//! whole result is an integer (`4`, not `4.0`), so it reads into an integer type. Against the
//! embedded emulator with four partitions.

use crate::common;

use cosmos_driver::prelude::*;
use cosmos_emulator::EmulatorBuilder;
use serde_json::{json, Value};

async fn seeded() -> (cosmos_emulator::Emulator, ContainerClient) {
    let emu = common::start(EmulatorBuilder::new().partitions(4)).await;
    let driver = common::driver(common::options(&emu)).await;
    common::container(&driver, "db", "c").await;
    let c = driver.container("db", "c");
    // m: 2, 6, 3, 5 (average 4, sum 16); f: 1.5 and 2.5 (sum 4, a whole sum of fractions).
    let docs = [
        json!({"id": "1", "pk": "a", "m": 2, "g": "x", "f": 1.5}),
        json!({"id": "2", "pk": "b", "m": 6, "g": "x", "f": 2.5}),
        json!({"id": "3", "pk": "c", "m": 3, "g": "y"}),
        json!({"id": "4", "pk": "d", "m": 5, "g": "y"}),
    ];
    for d in docs {
        let pk = d["pk"].as_str().unwrap().to_owned();
        c.create_item(pk.as_str(), &d, None).await.unwrap();
    }
    (emu, c)
}

async fn values<T: serde::de::DeserializeOwned>(c: &ContainerClient, q: &str) -> Vec<T> {
    c.query_items::<T>(Query::new(q), QueryScope::CrossPartition)
        .try_collect()
        .await
        .unwrap()
}

#[tokio::test]
async fn a_whole_cross_partition_average_reads_as_an_integer() {
    let (_emu, c) = seeded().await;
    let avg: Vec<i64> = values(&c, "SELECT VALUE AVG(c.m) FROM c").await;
    assert_eq!(avg, [4]);
    // A fractional one stays a double.
    let avg: Vec<Value> = values(&c, "SELECT VALUE AVG(c.m) FROM c WHERE c.m > 2").await;
    assert_eq!(avg, [json!(14.0 / 3.0)]);
}

#[tokio::test]
async fn a_cross_partition_sum_keeps_the_form_of_its_parts() {
    let (_emu, c) = seeded().await;
    // Integers sum to an integer; a sum of doubles stays a double even when whole, as the Python
    // SDK merges it (the differential test holds the driver to it).
    let sum: Vec<i64> = values(&c, "SELECT VALUE SUM(c.m) FROM c").await;
    assert_eq!(sum, [16]);
    let sum: Vec<serde_json::Value> = values(&c, "SELECT VALUE SUM(c.f) FROM c").await;
    assert_eq!(sum, [json!(4.0)]);
}

#[tokio::test]
async fn group_by_averages_that_are_whole_read_as_integers() {
    let (_emu, c) = seeded().await;
    #[derive(serde::Deserialize, Debug, PartialEq)]
    struct Row {
        g: String,
        a: i64,
    }
    let mut rows: Vec<Row> = values(&c, "SELECT c.g AS g, AVG(c.m) AS a FROM c GROUP BY c.g").await;
    rows.sort_by(|x, y| x.g.cmp(&y.g));
    assert_eq!(
        rows,
        [
            Row {
                g: "x".into(),
                a: 4
            },
            Row {
                g: "y".into(),
                a: 4
            }
        ]
    );
}

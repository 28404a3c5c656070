//! Physical partitions sized from throughput as the service sizes them (one per 6,000 RU/s of
//! manual throughput begun, one per 10,000 RU/s of an autoscale maximum; a container sharing its
//! database's throughput from the database's), and a fixed count that overrides it.

use crate::common;

use common::TestClient;
use cosmos_emulator::{EmulatorBuilder, WELL_KNOWN_KEY};
use serde_json::json;

async fn ranges(c: &TestClient, base: &str, db: &str, coll: &str) -> usize {
    let r = c
        .get(base, &format!("/dbs/{db}/colls/{coll}/pkranges"), &[])
        .await;
    assert_eq!(r.status, 200, "{r:?}");
    r.json()["PartitionKeyRanges"].as_array().unwrap().len()
}

async fn create(c: &TestClient, base: &str, db: &str, coll: &str, extra: &[(&str, &str)]) {
    let body =
        json!({"id": coll, "partitionKey": {"paths": ["/pk"], "kind": "Hash", "version": 2}});
    let r = c
        .post_json(base, &format!("/dbs/{db}/colls"), extra, &body)
        .await;
    assert_eq!(r.status, 201, "{r:?}");
}

#[tokio::test]
async fn ranges_follow_the_throughput_a_container_is_created_with() {
    let emu = EmulatorBuilder::new()
        .partitions_from_throughput()
        .start()
        .await
        .unwrap();
    let base = emu.endpoint();
    let c = TestClient::new(WELL_KNOWN_KEY);
    let r = c.post_json(base, "/dbs", &[], &json!({"id": "db"})).await;
    assert_eq!(r.status, 201);
    create(&c, base, "db", "default", &[]).await;
    create(&c, base, "db", "small", &[("x-ms-offer-throughput", "400")]).await;
    create(&c, base, "db", "mid", &[("x-ms-offer-throughput", "11000")]).await;
    create(
        &c,
        base,
        "db",
        "large",
        &[("x-ms-offer-throughput", "30000")],
    )
    .await;
    let autoscale = r#"{"maxThroughput": 20000}"#;
    create(
        &c,
        base,
        "db",
        "auto",
        &[("x-ms-cosmos-offer-autopilot-settings", autoscale)],
    )
    .await;
    assert_eq!(ranges(&c, base, "db", "default").await, 1);
    assert_eq!(ranges(&c, base, "db", "small").await, 1);
    assert_eq!(ranges(&c, base, "db", "mid").await, 2);
    assert_eq!(ranges(&c, base, "db", "large").await, 5);
    assert_eq!(ranges(&c, base, "db", "auto").await, 2);

    // A container sharing its database's throughput is sized from the database's.
    let r = c
        .post_json(
            base,
            "/dbs",
            &[("x-ms-offer-throughput", "12000")],
            &json!({"id": "shared"}),
        )
        .await;
    assert_eq!(r.status, 201, "{r:?}");
    create(&c, base, "shared", "inside", &[]).await;
    assert_eq!(ranges(&c, base, "shared", "inside").await, 2);

    // Items in every range still read back.
    for i in 0..20 {
        let doc = json!({"id": format!("d{i}"), "pk": format!("p{i}")});
        assert_eq!(c.create_item(base, "db", "large", &doc).await.status, 201);
    }
    for i in 0..20 {
        let pk = json!(format!("p{i}"));
        let r = c
            .read_item(base, "db", "large", &format!("d{i}"), &pk, &[])
            .await;
        assert_eq!(r.status, 200, "{r:?}");
    }
}

#[tokio::test]
async fn a_fixed_count_overrides_the_throughput() {
    let emu = EmulatorBuilder::new().partitions(3).start().await.unwrap();
    let base = emu.endpoint();
    let c = TestClient::new(WELL_KNOWN_KEY);
    let r = c.post_json(base, "/dbs", &[], &json!({"id": "db"})).await;
    assert_eq!(r.status, 201);
    create(&c, base, "db", "small", &[("x-ms-offer-throughput", "400")]).await;
    create(
        &c,
        base,
        "db",
        "large",
        &[("x-ms-offer-throughput", "30000")],
    )
    .await;
    assert_eq!(ranges(&c, base, "db", "small").await, 3);
    assert_eq!(ranges(&c, base, "db", "large").await, 3);
}

//! Spatial functions in queries: ST_DISTANCE between points in meters on the WGS-84 ellipsoid,
//! ST_ISVALID; what is not served answers 400.

use crate::common;

use common::{pk_header, start_with_container};
use cosmos_emulator::EmulatorBuilder;
use serde_json::json;

#[tokio::test]
async fn st_distance_filters_by_meters() {
    let (emu, c) = start_with_container(EmulatorBuilder::new().partitions(1)).await;
    let base = emu.endpoint();
    for (id, lon, lat) in [("near", 20.0, 20.0), ("far", 100.0, 80.0)] {
        let doc = json!({"id": id, "pk": "p", "loc": {"type": "Point", "coordinates": [lon, lat]}});
        assert_eq!(c.create_item(base, "db", "c", &doc).await.status, 201);
    }
    let pk = pk_header(&json!("p"));
    let scoped = [("x-ms-documentdb-partitionkey", pk.as_str())];
    let q = json!({"query": "SELECT VALUE c.id FROM c WHERE ST_DISTANCE(c.loc, {type: 'Point', coordinates: [20.1, 20]}) < 20000"});
    let r = c.query(base, "/dbs/db/colls/c/docs", &q, &scoped).await;
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(r.json()["Documents"], json!(["near"]));
    let q = json!({"query": "SELECT VALUE ROUND(ST_DISTANCE(c.loc, {type: 'Point', coordinates: [21, 20]})) FROM c WHERE c.id = 'near'"});
    let r = c.query(base, "/dbs/db/colls/c/docs", &q, &scoped).await;
    let meters = r.json()["Documents"][0].as_f64().unwrap();
    assert!((104_600.0..104_700.0).contains(&meters), "{meters}");
    let q = json!({"query": "SELECT VALUE ST_ISVALID(c.loc) FROM c"});
    let r = c.query(base, "/dbs/db/colls/c/docs", &q, &scoped).await;
    assert_eq!(r.json()["Documents"], json!([true, true]));
    let q = json!({"query": "SELECT VALUE ST_WITHIN(c.loc, {type: 'Polygon', coordinates: [[[0,0],[1,0],[1,1],[0,0]]]}) FROM c"});
    let r = c.query(base, "/dbs/db/colls/c/docs", &q, &scoped).await;
    assert_eq!(r.status, 400, "{r:?}");
    let q = json!({"query": "SELECT VALUE ST_DISTANCE(c.loc, {type: 'Polygon', coordinates: [[[0,0],[1,0],[1,1],[0,0]]]}) FROM c"});
    let r = c.query(base, "/dbs/db/colls/c/docs", &q, &scoped).await;
    assert_eq!(r.status, 400, "{r:?}");
    assert!(r.message().contains("only between two Points"), "{r:?}");
}

//! `--data-dir` keeps what queries without ORDER BY and the index see: after a restart items come
//! in the order they were created (later ones after them), and an item written with
//! `x-ms-indexing-directive: Exclude` is still read by id but not found by a filtered query.

use crate::common;

use common::data_files::{fresh_dir, start};
use common::{pk_header, TestClient};
use cosmos_emulator::WELL_KNOWN_KEY;
use http::Method;
use serde_json::json;

const DOCS: &str = "/dbs/db/colls/c/docs";

async fn ids(c: &TestClient, base: &str, sql: &str) -> Vec<String> {
    let pk = pk_header(&json!("p"));
    let headers = [("x-ms-documentdb-partitionkey", pk.as_str())];
    let r = c.query(base, DOCS, &json!({"query": sql}), &headers).await;
    assert_eq!(r.status, 200, "{sql}: {}", r.message());
    let docs = r.json()["Documents"].as_array().unwrap().clone();
    docs.iter()
        .map(|d| d["id"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn creation_order_and_index_exclusions_survive_a_restart() {
    let dir = fresh_dir("order");
    let c = TestClient::new(WELL_KNOWN_KEY);
    {
        let emu = start(&dir, &[]);
        let base = emu.endpoint.as_str();
        c.setup(base, "db", "c").await;
        for id in ["d", "c", "b", "a"] {
            let r = c
                .create_item(base, "db", "c", &json!({"id": id, "pk": "p", "n": 1}))
                .await;
            assert_eq!(r.status, 201, "{r:?}");
        }
        let hidden = json!({"id": "h", "pk": "p", "n": 1});
        let exclude = [("x-ms-indexing-directive", "Exclude")];
        let r = c
            .send_with_pk(
                base,
                Method::POST,
                DOCS,
                &json!("p"),
                &exclude,
                Some(&hidden),
            )
            .await;
        assert_eq!(r.status, 201, "{r:?}");
        emu.terminate();
    }
    let emu = start(&dir, &[]);
    let base = emu.endpoint.as_str();
    assert_eq!(
        ids(&c, base, "SELECT * FROM c").await,
        ["d", "c", "b", "a", "h"]
    );
    let r = c
        .create_item(base, "db", "c", &json!({"id": "0", "pk": "p", "n": 1}))
        .await;
    assert_eq!(r.status, 201, "{r:?}");
    assert_eq!(
        ids(&c, base, "SELECT * FROM c WHERE c.n = 1").await,
        ["d", "c", "b", "a", "0"]
    );
    let read = c.read_item(base, "db", "c", "h", &json!("p"), &[]).await;
    assert_eq!(read.status, 200, "{read:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

//! A cross-partition query the gateway serves itself is answered one partition key range per
//! page, as the service's gateway does: a page never spans ranges, a range where nothing
//! matches answers an empty page, and the continuation goes on with the next range.

use crate::common;

use std::collections::HashSet;

use common::start_with_container;
use cosmos_emulator::EmulatorBuilder;
use serde_json::json;

async fn pages(c: &common::TestClient, base: &str, text: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut token: Option<String> = None;
    loop {
        let mut headers = vec![("x-ms-documentdb-query-enablecrosspartition", "true")];
        if let Some(t) = &token {
            headers.push(("x-ms-continuation", t.as_str()));
        }
        let r = c
            .query(
                base,
                "/dbs/db/colls/c/docs",
                &json!({ "query": text }),
                &headers,
            )
            .await;
        assert_eq!(r.status, 200, "{r:?}");
        let ids = r.json()["Documents"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["id"].as_str().unwrap().to_owned())
            .collect();
        out.push(ids);
        token = r.header("x-ms-continuation").map(str::to_owned);
        if token.is_none() || out.len() > 20 {
            return out;
        }
    }
}

#[tokio::test]
async fn one_range_per_page() {
    let (emu, c) = start_with_container(EmulatorBuilder::new().partitions(4)).await;
    let base = emu.endpoint();
    for i in 0..40 {
        let doc = json!({"id": format!("d{i}"), "pk": format!("p{i}"), "n": i});
        assert_eq!(c.create_item(base, "db", "c", &doc).await.status, 201);
    }
    let all = pages(&c, base, "SELECT * FROM c").await;
    assert_eq!(all.len(), 4, "{all:?}");
    let ids: Vec<&String> = all.iter().flatten().collect();
    assert_eq!(ids.len(), 40);
    assert_eq!(ids.iter().collect::<HashSet<_>>().len(), 40);
    assert!(all.iter().all(|p| !p.is_empty()), "{all:?}");

    // Only one item matches: still one page per range, the others empty.
    let one = pages(&c, base, "SELECT * FROM c WHERE c.n = 7").await;
    assert_eq!(one.len(), 4, "{one:?}");
    assert_eq!(one.iter().flatten().collect::<Vec<_>>(), ["d7"]);
}

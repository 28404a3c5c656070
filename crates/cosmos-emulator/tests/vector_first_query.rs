//! The first vector search after items are written costs what later ones do: an item keeps the
//! embeddings of its container's vector policy paths from the moment it is written, so no query
//! reads them out of the item's text. Over real HTTP, seen in the request charge (reading an
//! item's text is work the charge counts) and, in the ignored timing test, in the time taken.

use std::time::{Duration, Instant};

use crate::common;

use common::{pk_header, TestClient};
use cosmos_emulator::{EmulatorBuilder, WELL_KNOWN_KEY};
use serde_json::{json, Value};

const DOCS: &str = "/dbs/db/colls/v/docs";

/// A deterministic embedding of `dims` numbers in [-1, 1), each exactly a 32-bit float.
fn embedding(seed: u64, dims: usize) -> Vec<f32> {
    let mut x = seed
        .wrapping_mul(2862933555777941757)
        .wrapping_add(3037000493);
    (0..dims)
        .map(|_| {
            x = x.wrapping_mul(2862933555777941757).wrapping_add(3037000493);
            ((x >> 40) as f32 / (1u32 << 24) as f32) * 2.0 - 1.0
        })
        .collect()
}

/// An emulator with container `v` (vector path `/e` of `dims` float32 numbers) holding `items`
/// items of partition `p`, each with `pad` bytes besides its embedding.
async fn loaded(dims: usize, items: usize, pad: usize) -> (cosmos_emulator::Emulator, TestClient) {
    loaded_with(EmulatorBuilder::new(), dims, items, pad).await
}

/// [`loaded`] on an emulator `builder` makes.
async fn loaded_with(
    builder: EmulatorBuilder,
    dims: usize,
    items: usize,
    pad: usize,
) -> (cosmos_emulator::Emulator, TestClient) {
    let emu = builder.start().await.expect("starts");
    let c = TestClient::new(WELL_KNOWN_KEY);
    let base = emu.endpoint();
    assert_eq!(
        c.post_json(base, "/dbs", &[], &json!({"id": "db"}))
            .await
            .status,
        201
    );
    let container = json!({
        "id": "v",
        "partitionKey": {"paths": ["/pk"], "kind": "Hash", "version": 2},
        "vectorEmbeddingPolicy": {"vectorEmbeddings": [
            {"path": "/e", "dataType": "float32", "distanceFunction": "cosine", "dimensions": dims}
        ]},
        "indexingPolicy": {"vectorIndexes": [{"path": "/e", "type": "flat"}]}
    });
    let r = c.post_json(base, "/dbs/db/colls", &[], &container).await;
    assert_eq!(r.status, 201, "{}", r.message());
    let pk = pk_header(&json!("p"));
    for i in 0..items {
        let doc = json!({"id": format!("i{i}"), "pk": "p", "e": embedding(i as u64, dims), "pad": "x".repeat(pad)});
        let r = c
            .post_json(base, DOCS, &[("x-ms-documentdb-partitionkey", &pk)], &doc)
            .await;
        assert_eq!(r.status, 201, "{}", r.message());
    }
    (emu, c)
}

/// Runs the search to its end (a page that runs out of time answers a continuation): its
/// charge, the ids it answered and how long it took.
async fn search(c: &TestClient, base: &str, dims: usize) -> (f64, Vec<Value>, Duration) {
    let probe = embedding(u64::MAX, dims);
    let body = json!({
        "query": "SELECT TOP 5 c.id FROM c ORDER BY VectorDistance(c.e, @v)",
        "parameters": [{"name": "@v", "value": probe}]
    });
    let pk = pk_header(&json!("p"));
    let started = Instant::now();
    let (mut charge, mut ids) = (0.0, Vec::new());
    let mut continuation: Option<String> = None;
    for _ in 0..100 {
        let mut headers = vec![("x-ms-documentdb-partitionkey", pk.as_str())];
        if let Some(t) = &continuation {
            headers.push(("x-ms-continuation", t.as_str()));
        }
        let r = c.query(base, DOCS, &body, &headers).await;
        assert_eq!(r.status, 200, "{}", r.message());
        charge += r
            .header("x-ms-request-charge")
            .unwrap()
            .parse::<f64>()
            .unwrap();
        ids.extend(r.json()["Documents"].as_array().unwrap().iter().cloned());
        continuation = r.header("x-ms-continuation").map(str::to_owned);
        if continuation.is_none() {
            return (charge, ids, started.elapsed());
        }
    }
    panic!("the search does not end");
}

#[tokio::test]
async fn the_first_vector_search_reads_no_item_text_and_costs_what_later_ones_do() {
    // 300 items of 40 KB: reading their text is 190,000 units of work, about 2 RU.
    let (emu, c) = loaded(256, 300, 40_000).await;
    let base = emu.endpoint();
    let (first, first_ids, _) = search(&c, base, 256).await;
    let (second, second_ids, _) = search(&c, base, 256).await;
    assert_eq!(first_ids, second_ids);
    assert_eq!(first_ids.len(), 5);
    assert_eq!(
        first, second,
        "the first search read the items' text: it cost {first}, the next {second}"
    );
}

/// Items loaded from a data directory keep their embeddings from the start too: after a
/// restart, the first search costs what the second does.
#[tokio::test]
async fn items_loaded_from_a_data_directory_keep_their_embeddings() {
    let dir = std::env::temp_dir().join(format!("emu-vectors-{}", rand::random::<u32>()));
    let _ = std::fs::remove_dir_all(&dir);
    let (before, before_ids) = {
        let (emu, c) = loaded_with(EmulatorBuilder::new().data_dir(&dir), 64, 200, 40_000).await;
        let base = emu.endpoint();
        let (_, _, _) = search(&c, base, 64).await;
        let (charge, ids, _) = search(&c, base, 64).await;
        assert!(emu.drain(Duration::from_secs(10)).await);
        (charge, ids)
    };
    let emu = EmulatorBuilder::new()
        .data_dir(&dir)
        .start()
        .await
        .expect("the emulator restarts");
    let c = TestClient::new(WELL_KNOWN_KEY);
    let base = emu.endpoint();
    let (first, first_ids, _) = search(&c, base, 64).await;
    let (second, second_ids, _) = search(&c, base, 64).await;
    assert_eq!(first_ids, before_ids);
    assert_eq!(second_ids, before_ids);
    assert_eq!(
        first, second,
        "the first search after a restart read the items' text: it cost {first}, the next {second}"
    );
    assert_eq!(first, before);
    drop(emu);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The timing figure: `VECTOR_ITEMS` items (default 20,000) of 256 dimensions, the first search
/// and the second. Run with `cargo test -p cosmos-emulator --test integration
/// vector_first_query::timing -- --ignored --nocapture`.
#[tokio::test]
#[ignore = "a timing figure, not a check"]
async fn timing() {
    let items = std::env::var("VECTOR_ITEMS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000);
    let (emu, c) = loaded(256, items, 0).await;
    let base = emu.endpoint();
    let (_, _, first) = search(&c, base, 256).await;
    let (_, _, second) = search(&c, base, 256).await;
    println!("{items} items x 256 dimensions: first search {first:?}, second {second:?}");
}

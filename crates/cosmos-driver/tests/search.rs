//! Vector and hybrid search through `query_items` over real HTTP against the embedded emulator
//! with 4 partition key ranges: a top-10 cosine search over 10,000 random 128-dimension vectors
//! checked against a brute-force computation here, resumed page by page from its continuation,
//! and a hybrid search fused on the client from its plan.

use crate::common;

use cosmos_driver::query::{QueryOptions, QueryScope};
use cosmos_driver::resources::{
    DistanceFunction, FullTextPath, FullTextPolicy, VectorDataType, VectorEmbedding,
    VectorEmbeddingPolicy, VectorIndex, VectorIndexType,
};
use cosmos_driver::{
    ContainerClient, ContainerProperties, CosmosDriver, CosmosOperation, DatabaseReference,
    IndexingPolicy, OperationOptions, PartitionKeyDefinition, Query, VectorHit,
};
use cosmos_emulator::{Emulator, EmulatorBuilder};
use futures::{StreamExt, TryStreamExt};
use serde_json::{json, Map, Value};

const DIMS: usize = 128;
const COUNT: usize = 10_000;

/// Deterministic pseudo-random numbers in [-1, 1) (a 64-bit LCG), as f32.
fn vector(seed: u64) -> Vec<f32> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add(1);
    (0..DIMS)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((x >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        })
        .collect()
}

fn cosine(a: &[f64], b: &[f64]) -> f64 {
    let dot: f64 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let na: f64 = a.iter().map(|x| x * x).sum::<f64>().sqrt();
    let nb: f64 = b.iter().map(|x| x * x).sum::<f64>().sqrt();
    dot / (na * nb)
}

async fn search_container(driver: &CosmosDriver, dims: u32) -> ContainerClient {
    driver
        .execute(
            CosmosOperation::create_database(DatabaseReference::new("s").unwrap()),
            &OperationOptions::new(),
        )
        .await
        .expect("create database");
    let props = ContainerProperties::new("v", &PartitionKeyDefinition::new("/pk").unwrap())
        .with_vector_embedding_policy(VectorEmbeddingPolicy {
            vector_embeddings: vec![VectorEmbedding {
                path: "/e".into(),
                data_type: VectorDataType::Float32,
                distance_function: DistanceFunction::Cosine,
                dimensions: dims,
            }],
        })
        .with_full_text_policy(FullTextPolicy {
            default_language: Some("en-US".into()),
            full_text_paths: vec![FullTextPath {
                path: "/t".into(),
                language: None,
            }],
        })
        .with_indexing_policy(IndexingPolicy {
            vector_indexes: vec![VectorIndex {
                path: "/e".into(),
                kind: VectorIndexType::QuantizedFlat,
                other: Map::new(),
            }],
            ..IndexingPolicy::default()
        });
    let created = driver
        .database("s")
        .create_container(&props, None)
        .await
        .expect("create container");
    assert_eq!(
        created.properties().vector_embedding_policy,
        props.vector_embedding_policy
    );
    driver.container("s", "v")
}

async fn seeded(count: usize) -> (Emulator, ContainerClient, Vec<(String, Vec<f64>)>) {
    let emu = common::start(EmulatorBuilder::new().partitions(4)).await;
    let driver = common::driver(common::options(&emu)).await;
    let c = search_container(&driver, DIMS as u32).await;
    let docs: Vec<Value> = (0..count)
        .map(
            |i| json!({"id": format!("d{i}"), "pk": format!("p{}", i % 97), "e": vector(i as u64)}),
        )
        .collect();
    futures::stream::iter(docs.iter())
        .map(|d| {
            let c = c.clone();
            async move {
                c.create_item(d["pk"].as_str().unwrap(), d, None)
                    .await
                    .map(|_| ())
            }
        })
        .buffer_unordered(16)
        .try_collect::<Vec<()>>()
        .await
        .expect("items created");
    let stored = docs
        .iter()
        .map(|d| {
            let e: Vec<f64> = serde_json::from_value(d["e"].clone()).unwrap();
            (d["id"].as_str().unwrap().to_owned(), e)
        })
        .collect();
    (emu, c, stored)
}

fn brute_force(stored: &[(String, Vec<f64>)], probe: &[f64], k: usize) -> Vec<(String, f64)> {
    let mut all: Vec<(String, f64)> = stored
        .iter()
        .map(|(id, e)| (id.clone(), cosine(e, probe)))
        .collect();
    all.sort_by(|a, b| b.1.total_cmp(&a.1));
    all.truncate(k);
    all
}

#[tokio::test]
async fn vector_search_across_partitions_matches_brute_force() {
    let (_emu, c, stored) = seeded(COUNT).await;
    for seed in [1_000_001u64, 1_000_002, 1_000_003] {
        let probe32 = vector(seed);
        let probe: Vec<f64> = serde_json::from_value(json!(probe32)).unwrap();
        let want = brute_force(&stored, &probe, 10);
        let q = Query::vector_search("/e", &probe32, 10).unwrap();
        let hits: Vec<VectorHit<Value>> = c
            .query_items(q.clone(), QueryScope::CrossPartition)
            .try_collect()
            .await
            .expect("the vector search runs");
        let got: Vec<(String, f64)> = hits
            .iter()
            .map(|h| (h.item["id"].as_str().unwrap().to_owned(), h.score))
            .collect();
        assert_eq!(
            got.iter().map(|g| &g.0).collect::<Vec<_>>(),
            want.iter().map(|w| &w.0).collect::<Vec<_>>()
        );
        for (g, w) in got.iter().zip(&want) {
            assert!((g.1 - w.1).abs() < 1e-9, "{g:?} vs {w:?}");
        }
        // Page by page, each page resumed from the previous page's token, gives the same.
        let mut resumed: Vec<String> = Vec::new();
        let mut token: Option<String> = None;
        for _ in 0..100 {
            let mut o = QueryOptions::new().with_max_item_count(3);
            if let Some(t) = &token {
                o = o.with_continuation(t.clone());
            }
            let mut pages = c
                .query_items_with::<VectorHit<Value>>(q.clone(), QueryScope::CrossPartition, o)
                .into_pages();
            let page = pages.next().await.expect("a page").expect("the page reads");
            resumed.extend(
                page.items()
                    .iter()
                    .map(|h| h.item["id"].as_str().unwrap().to_owned()),
            );
            token = page.continuation().unwrap().map(str::to_owned);
            if token.is_none() {
                break;
            }
        }
        assert_eq!(
            resumed,
            want.iter().map(|w| w.0.clone()).collect::<Vec<_>>()
        );
    }
}

#[tokio::test]
async fn hybrid_search_fuses_text_and_vector_rankings() {
    let emu = common::start(EmulatorBuilder::new().partitions(4)).await;
    let driver = common::driver(common::options(&emu)).await;
    let c = search_container(&driver, 2).await;
    let texts = [
        "the red fox jumps",
        "a red dog sleeps",
        "blue fox fox fox",
        "green grass",
        "red red red fox",
        "a quiet fox",
        "dogs and cats",
        "the fox and the hound",
    ];
    for (i, t) in texts.iter().enumerate() {
        let doc =
            json!({"id": format!("d{i}"), "pk": format!("p{i}"), "t": t, "e": [1.0, i as f64]});
        c.create_item(format!("p{i}").as_str(), &doc, None)
            .await
            .unwrap();
    }
    let ids = |q: &str| {
        let c = c.clone();
        let q = Query::new(q);
        async move {
            let rows: Vec<Value> = c
                .query_items(q, QueryScope::CrossPartition)
                .try_collect()
                .await
                .expect("the hybrid search runs");
            rows.iter()
                .map(|r| r["id"].as_str().unwrap().to_owned())
                .collect::<Vec<_>>()
        }
    };
    // Full text alone: BM25 across partitions with the global statistics. "blue fox fox fox"
    // first (three hits), then the short texts.
    let text_only = ids("SELECT TOP 5 c.id FROM c ORDER BY RANK FullTextScore(c.t, 'fox')").await;
    assert_eq!(text_only[0], "d2");
    let mut matched = text_only.clone();
    matched.sort();
    assert_eq!(matched, ["d0", "d2", "d4", "d5", "d7"]);
    // The two texts of two tokens share a rank, then the longer ones follow.
    assert_eq!(text_only[3..], ["d0".to_owned(), "d4".to_owned()]);
    // Fused with a vector ranking (cosine to [1, 0]: d0 closest, then d1, d2...).
    let fused = ids("SELECT TOP 3 c.id FROM c ORDER BY RANK RRF(FullTextScore(c.t, 'fox'), VectorDistance(c.e, [1, 0]))").await;
    // d2 is first by text and third by vector, d0 third by text and first by vector: they tie
    // ahead of d1 (second by vector, unmatched by text).
    let mut top2 = fused[..2].to_vec();
    top2.sort();
    assert_eq!(top2, ["d0", "d2"], "{fused:?}");
    assert_eq!(fused[2], "d1", "{fused:?}");
    // A heavy weight on the vector side puts its closest first.
    let weighted = ids("SELECT TOP 3 c.id FROM c ORDER BY RANK RRF(FullTextScore(c.t, 'fox'), VectorDistance(c.e, [1, 0]), [1, 10])").await;
    assert_eq!(
        weighted[..2],
        ["d0".to_owned(), "d1".to_owned()],
        "{weighted:?}"
    );
    // Without TOP or LIMIT the driver refuses, as the SDKs do.
    let err = c
        .query_items::<Value>(
            Query::new("SELECT c.id FROM c ORDER BY RANK FullTextScore(c.t, 'fox')"),
            QueryScope::CrossPartition,
        )
        .try_collect::<Vec<_>>()
        .await
        .unwrap_err();
    assert!(err.to_string().contains("TOP or LIMIT"), "{err}");
}

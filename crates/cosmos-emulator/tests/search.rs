//! Vector, full-text and hybrid search over HTTP: container search policies checked at creation,
//! vector search ranked closest first (exact, checked against a brute-force computation here),
//! and a hybrid query carried out as the SDKs carry it out from its plan.

use crate::common;

use common::{Resp, TestClient};
use cosmos_emulator::{EmulatorBuilder, WELL_KNOWN_KEY};
use http::Method;
use serde_json::{json, Value};

const DOCS: &str = "/dbs/db/colls/v/docs";
const FEATURES: &str = "Aggregate,CompositeAggregate,Distinct,MultipleOrderBy,OffsetAndLimit,OrderBy,Top,NonStreamingOrderBy,HybridSearch,CountIf,WeightedRankFusion";

async fn create_container(c: &TestClient, base: &str, body: Value) -> Resp {
    c.post_json(base, "/dbs/db/colls", &[], &body).await
}

fn search_container(dims: u32, index: &str) -> Value {
    json!({
        "id": "v",
        "partitionKey": {"paths": ["/pk"], "kind": "Hash", "version": 2},
        "vectorEmbeddingPolicy": {"vectorEmbeddings": [
            {"path": "/e", "dataType": "float32", "distanceFunction": "euclidean", "dimensions": dims}
        ]},
        "fullTextPolicy": {"defaultLanguage": "en-US", "fullTextPaths": [{"path": "/t", "language": "en-US"}]},
        "indexingPolicy": {
            "vectorIndexes": [{"path": "/e", "type": index}],
            "fullTextIndexes": [{"path": "/t"}]
        }
    })
}

async fn start() -> (cosmos_emulator::Emulator, TestClient) {
    let emu = EmulatorBuilder::new()
        .partitions(3)
        .start()
        .await
        .expect("starts");
    let c = TestClient::new(WELL_KNOWN_KEY);
    let r = c
        .post_json(emu.endpoint(), "/dbs", &[], &json!({"id": "db"}))
        .await;
    assert_eq!(r.status, 201);
    (emu, c)
}

/// A small deterministic generator (the test needs no randomness crate).
fn numbers(seed: u64, n: usize) -> Vec<f64> {
    let mut x = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((x >> 33) as f64 / (1u64 << 31) as f64) * 2.0 - 1.0
        })
        .collect()
}

async fn plan(c: &TestClient, base: &str, text: &str) -> Resp {
    c.send(
        base,
        Method::POST,
        DOCS,
        &[
            ("x-ms-cosmos-is-query-plan-request", "True"),
            ("content-type", "application/query+json"),
            ("x-ms-cosmos-supported-query-features", FEATURES),
        ],
        Some(json!({"query": text}).to_string().as_bytes()),
    )
    .await
}

async fn range_rows(c: &TestClient, base: &str, text: &str, range: usize) -> Vec<Value> {
    let range = range.to_string();
    let mut rows = Vec::new();
    let mut continuation: Option<String> = None;
    loop {
        let mut headers = vec![("x-ms-documentdb-partitionkeyrangeid", range.as_str())];
        if let Some(t) = &continuation {
            headers.push(("x-ms-continuation", t.as_str()));
        }
        let r = c.query(base, DOCS, &json!({"query": text}), &headers).await;
        assert_eq!(r.status, 200, "{text}: {}", r.message());
        rows.extend(r.json()["Documents"].as_array().unwrap().iter().cloned());
        continuation = r.header("x-ms-continuation").map(str::to_owned);
        if continuation.is_none() {
            return rows;
        }
    }
}

#[tokio::test]
async fn search_policies_are_checked_at_creation() {
    let (emu, c) = start().await;
    let base = emu.endpoint();
    for (body, needle) in [
        (search_container(506, "flat"), "505"),
        (search_container(4097, "diskANN"), "4096"),
        (search_container(8, "ivf"), "ivf"),
    ] {
        let r = create_container(&c, base, body).await;
        assert_eq!(r.status, 400);
        assert!(r.message().contains(needle), "{}", r.message());
    }
    let r = create_container(&c, base, search_container(505, "flat")).await;
    assert_eq!(r.status, 201, "{}", r.message());
    assert_eq!(
        r.json()["vectorEmbeddingPolicy"]["vectorEmbeddings"][0]["dimensions"],
        505
    );
    // The embedding policy is fixed once created.
    let mut changed = search_container(8, "flat");
    changed["indexingPolicy"] = json!({"vectorIndexes": []});
    let r = c
        .send(
            base,
            Method::PUT,
            "/dbs/db/colls/v",
            &[],
            Some(changed.to_string().as_bytes()),
        )
        .await;
    assert_eq!(r.status, 400, "{}", r.message());
}

#[tokio::test]
async fn vector_search_across_ranges_matches_brute_force() {
    let (emu, c) = start().await;
    let base = emu.endpoint();
    assert_eq!(
        create_container(&c, base, search_container(16, "quantizedFlat"))
            .await
            .status,
        201
    );
    let mut docs = Vec::new();
    for i in 0..300u64 {
        let doc = json!({"id": format!("d{i}"), "pk": format!("p{}", i % 17), "e": numbers(i, 16)});
        let r = c.create_item(base, "db", "v", &doc).await;
        assert_eq!(r.status, 201);
        docs.push(doc);
    }
    let probe = numbers(10_000, 16);
    let text = format!(
        "SELECT TOP 7 c.id, VectorDistance(c.e, {}) AS d FROM c ORDER BY VectorDistance(c.e, {})",
        json!(probe),
        json!(probe)
    );
    // A direct cross-partition query is refused with the plan the client needs.
    let r = c
        .query(
            base,
            DOCS,
            &json!({"query": text}),
            &[("x-ms-documentdb-query-enablecrosspartition", "True")],
        )
        .await;
    assert_eq!((r.status, r.sub_status()), (400, 1004));
    let p = plan(&c, base, &text).await;
    assert_eq!(p.status, 200, "{}", p.message());
    let info = p.json()["queryInfo"].clone();
    assert_eq!(info["hasNonStreamingOrderBy"], true);
    // Euclidean (the policy's): closest is smallest.
    assert_eq!(info["orderBy"], json!(["Ascending"]));
    let rewritten = info["rewrittenQuery"]
        .as_str()
        .unwrap()
        .replace("{documentdb-formattableorderbyquery-filter}", "true");
    let mut rows = Vec::new();
    for range in 0..3 {
        let got = range_rows(&c, base, &rewritten, range).await;
        assert!(got.len() <= 7);
        rows.extend(got);
    }
    rows.sort_by(|a, b| {
        let k = |r: &Value| r["orderByItems"][0]["item"].as_f64().unwrap();
        k(a).total_cmp(&k(b))
    });
    let got: Vec<String> = rows
        .iter()
        .take(7)
        .map(|r| r["payload"]["id"].as_str().unwrap().to_owned())
        .collect();
    let mut want: Vec<(f64, String)> = docs
        .iter()
        .map(|d| {
            let e: Vec<f64> = serde_json::from_value(d["e"].clone()).unwrap();
            let dist = e
                .iter()
                .zip(&probe)
                .map(|(a, b)| (a - b) * (a - b))
                .sum::<f64>()
                .sqrt();
            (dist, d["id"].as_str().unwrap().to_owned())
        })
        .collect();
    want.sort_by(|a, b| a.0.total_cmp(&b.0));
    let want: Vec<String> = want.into_iter().take(7).map(|w| w.1).collect();
    assert_eq!(got, want);
    // Within one partition key the emulator answers directly, closest first.
    let pk = common::pk_header(&json!("p3"));
    let r = c
        .query(
            base,
            DOCS,
            &json!({"query": text}),
            &[("x-ms-documentdb-partitionkey", &pk)],
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.message());
    let d: Vec<f64> = r.json()["Documents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["d"].as_f64().unwrap())
        .collect();
    assert!(!d.is_empty() && d.windows(2).all(|w| w[0] <= w[1]), "{d:?}");
    // A direction on VectorDistance is refused.
    let bad = "SELECT TOP 1 c.id FROM c ORDER BY VectorDistance(c.e, [1]) DESC";
    let r = c
        .query(
            base,
            DOCS,
            &json!({"query": bad}),
            &[("x-ms-documentdb-partitionkey", &pk)],
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(r.message().contains("sorting order"), "{}", r.message());
}

#[tokio::test]
async fn hybrid_search_runs_from_its_plan() {
    let (emu, c) = start().await;
    let base = emu.endpoint();
    assert_eq!(
        create_container(&c, base, search_container(2, "flat"))
            .await
            .status,
        201
    );
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
            json!({"id": format!("d{i}"), "pk": format!("p{i}"), "t": t, "e": [i as f64, 1.0]});
        assert_eq!(c.create_item(base, "db", "v", &doc).await.status, 201);
    }
    let text = "SELECT TOP 3 c.id FROM c ORDER BY RANK RRF(FullTextScore(c.t, 'fox'), VectorDistance(c.e, [0, 1]))";
    let r = c
        .query(
            base,
            DOCS,
            &json!({"query": text}),
            &[("x-ms-documentdb-query-enablecrosspartition", "True")],
        )
        .await;
    assert_eq!((r.status, r.sub_status()), (400, 1004));
    let p = plan(&c, base, text).await;
    assert_eq!(p.status, 200, "{}", p.message());
    let h = p.json()["hybridSearchQueryInfo"].clone();
    assert_eq!(h["take"], 3);
    // Global statistics over every range.
    let stats_query = h["globalStatisticsQuery"].as_str().unwrap();
    let (mut docs, mut words, mut hits) = (0, 0, 0);
    for range in 0..3 {
        for s in range_rows(&c, base, stats_query, range).await {
            docs += s["documentCount"].as_u64().unwrap();
            words += s["fullTextStatistics"][0]["totalWordCount"]
                .as_u64()
                .unwrap_or(0);
            hits += s["fullTextStatistics"][0]["hitCounts"][0]
                .as_u64()
                .unwrap_or(0);
        }
    }
    assert_eq!((docs, hits), (8, 5));
    use cosmos_emulator::sql::fulltext_language::Language::English;
    assert_eq!(
        words,
        texts
            .iter()
            .map(|t| cosmos_emulator::sql::fulltext::tokens(t, English).len() as u64)
            .sum::<u64>()
    );
    // Components: each ranks its rows; the client fuses the ranks.
    let mut by_rid: std::collections::BTreeMap<String, Value> = Default::default();
    for info in h["componentQueryInfos"].as_array().unwrap() {
        let q = info["rewrittenQuery"]
            .as_str()
            .unwrap()
            .replace("{documentdb-formattableorderbyquery-filter}", "true")
            .replace(
                "{documentdb-formattablehybridsearchquery-totaldocumentcount}",
                &docs.to_string(),
            )
            .replace(
                "{documentdb-formattablehybridsearchquery-totalwordcount-0}",
                &words.to_string(),
            )
            .replace(
                "{documentdb-formattablehybridsearchquery-hitcountsarray-0}",
                &format!("[{hits}]"),
            );
        for range in 0..3 {
            for row in range_rows(&c, base, &q, range).await {
                by_rid.insert(row["_rid"].as_str().unwrap().to_owned(), row);
            }
        }
    }
    let rows: Vec<Value> = by_rid.into_values().collect();
    let mut fused = vec![0.0f64; rows.len()];
    for (k, info) in h["componentQueryInfos"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
    {
        let descending = info["orderBy"][0] == "Descending";
        let mut order: Vec<usize> = (0..rows.len()).collect();
        let score = |i: usize| rows[i]["payload"]["componentScores"][k].as_f64().unwrap();
        order.sort_by(|&a, &b| {
            if descending {
                score(b).total_cmp(&score(a))
            } else {
                score(a).total_cmp(&score(b))
            }
        });
        for (rank, i) in order.into_iter().enumerate() {
            fused[i] += 1.0 / (60.0 + rank as f64 + 1.0);
        }
    }
    let mut idx: Vec<usize> = (0..rows.len()).collect();
    idx.sort_by(|&a, &b| fused[b].total_cmp(&fused[a]));
    let top: Vec<&str> = idx
        .iter()
        .take(3)
        .map(|&i| rows[i]["payload"]["payload"]["id"].as_str().unwrap())
        .collect();
    // d2 ("blue fox fox fox") leads the text ranking and is third by vector; d0 ("the red fox
    // jumps", at [0, 1]) leads the vector ranking and is fourth by text: fused, d2 then d0.
    assert_eq!(top[..2], ["d2", "d0"], "{top:?}");
}

#[tokio::test]
async fn full_text_paths_tokenize_in_their_languages() {
    let (emu, c) = start().await;
    let base = emu.endpoint();
    let container = |de: &str| {
        json!({
            "id": "v",
            "partitionKey": {"paths": ["/pk"], "kind": "Hash", "version": 2},
            "fullTextPolicy": {"defaultLanguage": "en-US", "fullTextPaths": [
                {"path": "/de", "language": de}, {"path": "/en", "language": "en-US"}
            ]},
            "indexingPolicy": {"fullTextIndexes": [{"path": "/de"}, {"path": "/en"}]}
        })
    };
    let r = create_container(&c, base, container("ja-JP")).await;
    assert_eq!(r.status, 400);
    assert!(
        r.message().contains("ja-JP") && r.message().contains("de-DE, es-ES"),
        "{}",
        r.message()
    );
    let r = create_container(&c, base, container("de-DE")).await;
    assert_eq!(r.status, 201, "{}", r.message());
    let docs = [
        json!({"id": "a", "pk": "1", "de": "Zwei Häuser am See", "en": "Zwei Häuser"}),
        json!({"id": "b", "pk": "2", "de": "Ein Hund läuft", "en": "The dog runs home"}),
        json!({"id": "c", "pk": "3", "de": "Bücher", "en": "running dogs"}),
    ];
    for d in &docs {
        assert_eq!(c.create_item(base, "db", "v", d).await.status, 201);
    }
    let cases = [
        (
            "SELECT VALUE c.id FROM c WHERE FullTextContains(c.de, 'Haus')",
            vec!["a"],
        ),
        (
            "SELECT VALUE c.id FROM c WHERE FullTextContains(c.en, 'Haus')",
            vec![],
        ),
        (
            "SELECT VALUE c.id FROM c WHERE FullTextContains(c.en, 'dog running')",
            vec!["b"],
        ),
        (
            "SELECT VALUE c.id FROM c WHERE FullTextContainsAny(c.en, 'run', 'Buch')",
            vec!["b", "c"],
        ),
        (
            "SELECT VALUE c.id FROM c WHERE FullTextContainsAny(c.de, 'run', 'Buch')",
            vec!["c"],
        ),
    ];
    for (text, want) in cases {
        let mut got: Vec<String> = Vec::new();
        for range in 0..3 {
            got.extend(
                range_rows(&c, base, text, range)
                    .await
                    .iter()
                    .map(|v| v.as_str().unwrap().to_owned()),
            );
        }
        got.sort();
        assert_eq!(got, want, "{text}");
    }
}

/// Every row of `text` within partition key `pk`, page after page.
async fn key_rows(c: &TestClient, base: &str, text: &str, pk: &str) -> Vec<Value> {
    let pk = common::pk_header(&json!(pk));
    let mut rows = Vec::new();
    let mut continuation: Option<String> = None;
    for _ in 0..1000 {
        let mut headers = vec![
            ("x-ms-documentdb-partitionkey", pk.as_str()),
            ("x-ms-max-item-count", "25"),
        ];
        if let Some(t) = &continuation {
            headers.push(("x-ms-continuation", t.as_str()));
        }
        let r = c.query(base, DOCS, &json!({"query": text}), &headers).await;
        assert_eq!(r.status, 200, "{text}: {}", r.message());
        rows.extend(r.json()["Documents"].as_array().unwrap().iter().cloned());
        continuation = r.header("x-ms-continuation").map(str::to_owned);
        if continuation.is_none() {
            return rows;
        }
    }
    panic!("{text}: no last page");
}

#[tokio::test]
async fn top_k_vector_search_is_the_head_of_the_full_order_under_ties_and_small_pages() {
    // A small page budget: the scan is read over several pages, and the top-k kept between them.
    let limits = cosmos_emulator::QueryLimits {
        page_work: 3_000,
        ..Default::default()
    };
    let emu = EmulatorBuilder::new()
        .partitions(2)
        .query_limits(limits)
        .start()
        .await
        .expect("starts");
    let c = TestClient::new(WELL_KNOWN_KEY);
    let base = emu.endpoint();
    assert_eq!(
        c.post_json(base, "/dbs", &[], &json!({"id": "db"}))
            .await
            .status,
        201
    );
    assert_eq!(
        create_container(&c, base, search_container(2, "flat"))
            .await
            .status,
        201
    );
    // Only 9 distinct vectors among 500 documents: many rows tie on the distance.
    for i in 0..500u64 {
        let e = [(i * 7 % 9) as f64, 1.0];
        let doc = json!({"id": format!("d{:03}", (i * 37) % 500), "pk": "k", "e": e, "n": i % 5});
        assert_eq!(c.create_item(base, "db", "v", &doc).await.status, 201);
    }
    let by = "VectorDistance(c.e, [3.2, 1])";
    let full = key_rows(
        &c,
        base,
        &format!("SELECT c.id, {by} AS d FROM c ORDER BY {by}"),
        "k",
    )
    .await;
    assert_eq!(full.len(), 500);
    for k in [1usize, 5, 23, 64, 130, 499, 500, 600] {
        let top = key_rows(
            &c,
            base,
            &format!("SELECT TOP {k} c.id, {by} AS d FROM c ORDER BY {by}"),
            "k",
        )
        .await;
        assert_eq!(top, full[..k.min(500)], "TOP {k}");
        let off = key_rows(
            &c,
            base,
            &format!("SELECT c.id FROM c ORDER BY {by} OFFSET 3 LIMIT {k}"),
            "k",
        )
        .await;
        let want: Vec<Value> = full
            .iter()
            .skip(3)
            .take(k)
            .map(|r| json!({"id": r["id"]}))
            .collect();
        assert_eq!(off, want, "OFFSET 3 LIMIT {k}");
    }
    // The same holds for another ORDER BY with TOP (ties on n, then document order).
    let all = key_rows(&c, base, "SELECT c.id FROM c ORDER BY c.n DESC", "k").await;
    let top = key_rows(&c, base, "SELECT TOP 77 c.id FROM c ORDER BY c.n DESC", "k").await;
    assert_eq!(top, all[..77]);
}

/// An item's embedding for the fast-path test: mostly numbers, some integers, and some items with
/// none, a bad one, a short one, all zeros, or a copy of another's (a tie).
fn mixed_item(i: u64) -> Value {
    let mut doc = json!({"id": format!("m{i:03}"), "pk": "k"});
    let e = match i % 29 {
        0 => return doc,
        1 => json!("x"),
        2 => json!([1, 2, 3]),
        3 => json!([0, 0, 0, 0]),
        4 => json!([1, "2", 3, 4]),
        5..=9 => json!(numbers(i % 3, 4)),
        10..=16 => json!(numbers(i, 4)
            .iter()
            .map(|x| ((x + 1.0) * 60.0) as i64)
            .collect::<Vec<_>>()),
        _ => json!(numbers(i, 4).iter().map(|x| *x as f32).collect::<Vec<_>>()),
    };
    doc["e"] = e;
    doc
}

#[tokio::test]
async fn top_k_vector_search_from_kept_embeddings_is_the_general_answer() {
    // A small page budget: each build is read over several pages.
    let limits = cosmos_emulator::QueryLimits {
        page_work: 2_000,
        ..Default::default()
    };
    let emu = EmulatorBuilder::new()
        .partitions(2)
        .query_limits(limits)
        .start()
        .await
        .expect("starts");
    let c = TestClient::new(WELL_KNOWN_KEY);
    let base = emu.endpoint();
    assert_eq!(
        c.post_json(base, "/dbs", &[], &json!({"id": "db"}))
            .await
            .status,
        201
    );
    assert_eq!(
        create_container(&c, base, search_container(4, "flat"))
            .await
            .status,
        201
    );
    for i in 0..400u64 {
        assert_eq!(
            c.create_item(base, "db", "v", &mixed_item(i)).await.status,
            201
        );
    }
    let probe = "[3, 1, 2, 5]";
    for options in [
        "",
        r#", false, {"distanceFunction": "cosine"}"#,
        r#", true, {"distanceFunction": "dotproduct", "dataType": "float32"}"#,
        r#", false, {"distanceFunction": "euclidean", "dataType": "float16"}"#,
        r#", false, {"distanceFunction": "dotproduct", "dataType": "int8"}"#,
        r#", false, {"distanceFunction": "cosine", "dataType": "uint8"}"#,
    ] {
        let by = format!("VectorDistance(c.e, {probe}{options})");
        // A filter that passes every item: evaluated in general, every item parsed.
        let general = format!("SELECT c.id, {by} AS d FROM c WHERE c.id != '' ORDER BY {by}");
        let full = key_rows(&c, base, &general, "k").await;
        assert_eq!(full.len(), 400, "{general}");
        assert!(
            full.iter().any(|r| r.get("d").is_none()) && full.iter().any(|r| r.get("d").is_some())
        );
        for k in [1usize, 10, 64, 150] {
            for filter in ["", "WHERE true "] {
                let text = format!("SELECT TOP {k} c.id, {by} AS d FROM c {filter}ORDER BY {by}");
                assert_eq!(key_rows(&c, base, &text, "k").await, full[..k], "{text}");
            }
        }
    }
    // A replaced item is measured by its new embedding (and the kept one of the old version is
    // not used).
    // (Cosine: undefined scores sort last.)
    let by = format!(r#"VectorDistance(c.e, {probe}, false, {{"distanceFunction": "cosine"}})"#);
    let text = format!("SELECT TOP 1 c.id, {by} AS d FROM c ORDER BY {by}");
    let before = key_rows(&c, base, &text, "k").await;
    assert_ne!(before[0]["id"], "m100");
    let doc = json!({"id": "m100", "pk": "k", "e": [3, 1, 2, 5.000001]});
    let r = c
        .send_with_pk(
            base,
            Method::PUT,
            &format!("{DOCS}/m100"),
            &json!("k"),
            &[],
            Some(&doc),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.message());
    let after = key_rows(&c, base, &text, "k").await;
    assert_eq!(after[0]["id"], "m100", "{after:?}");
    let r = c
        .send_with_pk(
            base,
            Method::PUT,
            &format!("{DOCS}/m100"),
            &json!("k"),
            &[],
            Some(&mixed_item(100)),
        )
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(key_rows(&c, base, &text, "k").await, before);
}

//! Request charges a user can plan with, over real HTTP: point reads and writes follow the
//! service's published figures (1 KB and 100 KB items), a read many costs about the sum of its
//! point reads, a query the index answers charges for the documents it loads and its lookups
//! (not for the whole container), a query that reads everything charges what it reads, and the
//! same request over the same state is charged the same. The model is in `docs/charges.md`.

use crate::common;

use common::{pk_header, start_with_container, TestClient};
use cosmos_emulator::EmulatorBuilder;
use http::Method;
use serde_json::{json, Value};

const DOCS: &str = "/dbs/db/colls/c/docs";
/// Documents in the container of the query tests.
const N: usize = 600;

fn charge(r: &common::Resp) -> f64 {
    r.header("x-ms-request-charge")
        .expect("a charge")
        .parse()
        .expect("a number")
}

/// A document of about `bytes` bytes in partition `p`.
fn doc_of(id: &str, n: usize, bytes: usize) -> Value {
    json!({"id": id, "pk": "p", "n": n, "g": format!("g{}", n % 10), "pad": "x".repeat(bytes.saturating_sub(120))})
}

async fn fill(c: &TestClient, base: &str) {
    for i in 0..N {
        let r = c
            .create_item(base, "db", "c", &doc_of(&format!("d{i:04}"), i, 1000))
            .await;
        assert_eq!(r.status, 201, "{r:?}");
    }
}

/// The total charge of every page of `text` in partition `p`.
async fn query_charge(c: &TestClient, base: &str, text: &str) -> (f64, usize) {
    let pk = pk_header(&json!("p"));
    let mut total = 0.0;
    let mut rows = 0;
    let mut continuation: Option<String> = None;
    loop {
        let mut headers = vec![
            ("x-ms-documentdb-partitionkey", pk.as_str()),
            ("x-ms-max-item-count", "1000"),
        ];
        if let Some(t) = &continuation {
            headers.push(("x-ms-continuation", t.as_str()));
        }
        let r = c
            .query(base, DOCS, &json!({ "query": text }), &headers)
            .await;
        assert_eq!(r.status, 200, "{text}: {}", r.message());
        total += charge(&r);
        rows += r.json()["Documents"].as_array().unwrap().len();
        continuation = r.header("x-ms-continuation").map(str::to_owned);
        if continuation.is_none() {
            return (total, rows);
        }
    }
}

#[tokio::test]
async fn point_reads_and_writes_follow_the_published_1_kb_and_100_kb_figures() {
    let (emu, c) = start_with_container(EmulatorBuilder::new()).await;
    let base = emu.endpoint();
    // (size of the item, published read charge, published write charge)
    for (bytes, read, write) in [(1000, 1.0, 5.0), (100_000, 10.0, 50.0)] {
        let id = format!("s{bytes}");
        let created = c.create_item(base, "db", "c", &doc_of(&id, 1, bytes)).await;
        assert_eq!(created.status, 201);
        let got = c.read_item(base, "db", "c", &id, &json!("p"), &[]).await;
        assert_eq!(got.status, 200);
        let (r, w) = (charge(&got), charge(&created));
        println!("{bytes}-byte item: read {r} RU, write {w} RU");
        assert!(
            (r - read).abs() <= read * 0.05,
            "a {bytes}-byte read costs {r}, the service {read}"
        );
        assert!(
            (w - write).abs() <= write * 0.05,
            "a {bytes}-byte write costs {w}, the service {write}"
        );
    }
}

#[tokio::test]
async fn queries_charge_for_what_the_index_loads_and_scans_for_what_they_read() {
    let (emu, c) = start_with_container(EmulatorBuilder::new()).await;
    let base = emu.endpoint();
    fill(&c, base).await;

    let one_read = charge(
        &c.read_item(base, "db", "c", "d0000", &json!("p"), &[])
            .await,
    );
    assert!(
        (1.0..=1.05).contains(&one_read),
        "a 1 KB read costs {one_read}"
    );

    // A read many of 50 items costs about the sum of their 50 point reads.
    let ids: Vec<String> = (0..50).map(|i| format!("'d{:04}'", i * 7)).collect();
    let text = format!("SELECT * FROM c WHERE c.id IN ({})", ids.join(","));
    let (many, rows) = query_charge(&c, base, &text).await;
    assert_eq!(rows, 50);
    println!("read many of 50: {many} RU; one point read {one_read} RU");
    assert!(
        many <= 50.0 * one_read * 1.3 && many >= 50.0 * one_read * 0.7,
        "a read many of 50 costs {many}, 50 point reads {}",
        50.0 * one_read
    );

    // An equality on a path loads its 60 matches, not the 600 documents.
    let (equal, rows) = query_charge(&c, base, "SELECT c.id FROM c WHERE c.g = 'g3'").await;
    assert_eq!(rows, N / 10);
    let (all_ids, _) = query_charge(&c, base, "SELECT c.id FROM c").await;
    assert!(
        equal < all_ids / 3.0,
        "an equality costs {equal}, reading every id {all_ids}"
    );
    // A range, likewise.
    let (range, rows) = query_charge(&c, base, "SELECT c.id FROM c WHERE c.n >= 540").await;
    assert_eq!(rows, 60);
    assert!(
        range < all_ids / 3.0,
        "a range costs {range}, all {all_ids}"
    );

    // A GROUP BY over the whole container charges what it reads; filtered, what it loads.
    let (grouped, _) =
        query_charge(&c, base, "SELECT c.g, COUNT(1) AS k FROM c GROUP BY c.g").await;
    assert!(
        grouped >= N as f64 * 0.1,
        "a GROUP BY over {N} documents costs {grouped}"
    );
    let (grouped_one, _) = query_charge(
        &c,
        base,
        "SELECT c.g, COUNT(1) AS k FROM c WHERE c.g = 'g3' GROUP BY c.g",
    )
    .await;
    assert!(
        grouped_one < grouped / 3.0,
        "a filtered GROUP BY costs {grouped_one}, the whole {grouped}"
    );
    // ORDER BY over the whole container, likewise.
    let (ordered, _) = query_charge(&c, base, "SELECT c.id FROM c ORDER BY c.n").await;
    assert!(ordered >= N as f64 * 0.1, "ORDER BY costs {ordered}");

    // A filter the index cannot answer (a function of a path) scans.
    let (scanned, _) = query_charge(&c, base, "SELECT c.id FROM c WHERE LOWER(c.g) = 'g3'").await;
    assert!(
        scanned >= N as f64 * 0.1,
        "a function filter scans: {scanned}"
    );

    // The same request over the same state is charged the same.
    for text in [text.as_str(), "SELECT c.id FROM c WHERE c.g = 'g3'"] {
        assert_eq!(
            query_charge(&c, base, text).await.0,
            query_charge(&c, base, text).await.0
        );
    }
    let patched = c
        .send_with_pk(
            base,
            Method::PATCH,
            &format!("{DOCS}/d0001"),
            &json!("p"),
            &[],
            Some(&json!({"operations": [{"op": "set", "path": "/n", "value": 1}]})),
        )
        .await;
    let patch = charge(&patched);
    assert!((5.0..=5.25).contains(&patch), "a 1 KB patch costs {patch}");
}

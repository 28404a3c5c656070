//! Queries that must see every row before their first result (ORDER BY, aggregates, GROUP BY,
//! DISTINCT) read their scope under the page's work budget: with a tiny budget (a few rows' worth
//! of units) they answer empty pages with continuations while they read, and a client paging
//! through gets exactly the answer one page gives with the default budget. Past the memory budget
//! such a query is refused.

use crate::common;

use common::{pk_header, start_with_container, TestClient};
use cosmos_emulator::{EmulatorBuilder, QueryLimits};
use serde_json::{json, Value};

const DOCS: &str = "/dbs/db/colls/c/docs";

async fn query(c: &TestClient, base: &str, body: &Value, extra: &[(&str, &str)]) -> common::Resp {
    c.query(base, DOCS, body, extra).await
}

/// Every result of a query and how many pages (and empty pages with a continuation) it took.
async fn all_pages(
    c: &TestClient,
    base: &str,
    body: &Value,
    extra: &[(&str, &str)],
) -> (Vec<Value>, usize, usize) {
    pages_from(c, base, body, extra, None).await
}

/// Like [`all_pages`], from a continuation.
async fn pages_from(
    c: &TestClient,
    base: &str,
    body: &Value,
    extra: &[(&str, &str)],
    mut continuation: Option<String>,
) -> (Vec<Value>, usize, usize) {
    let mut out = Vec::new();
    let (mut pages, mut empty) = (0, 0);
    loop {
        let mut headers = extra.to_vec();
        if let Some(t) = &continuation {
            headers.push(("x-ms-continuation", t.as_str()));
        }
        let r = query(c, base, body, &headers).await;
        assert_eq!(r.status, 200, "{body}: {}", r.message());
        assert!(r.header("x-ms-session-token").is_some());
        let docs = r.json()["Documents"].as_array().unwrap().clone();
        pages += 1;
        continuation = r.header("x-ms-continuation").map(str::to_owned);
        if docs.is_empty() && continuation.is_some() {
            empty += 1;
        }
        out.extend(docs);
        if continuation.is_none() {
            return (out, pages, empty);
        }
        assert!(pages < 2000, "paging does not end: {body}");
    }
}

/// A budget of about `rows` rows of these queries (each row of them costs 5 to 25 units).
fn tiny(rows: u64) -> QueryLimits {
    let page_work = 10 * rows;
    QueryLimits {
        page_work,
        ..QueryLimits::default()
    }
}

/// An emulator with `limits` and 2 ranges, holding the same 60 documents as every other one.
async fn filled(limits: QueryLimits) -> (cosmos_emulator::Emulator, TestClient) {
    let (emu, c) =
        start_with_container(EmulatorBuilder::new().partitions(2).query_limits(limits)).await;
    for i in 0..60 {
        let tags = &["a", "b", "c"][..(i % 3) + 1];
        let group = ["x", "y", "z", "w"][i % 4];
        let mut doc = json!({
            "id": format!("d{i:02}"),
            "pk": format!("k{}", i % 3),
            "n": (i * 7) % 13,
            "g": group,
            "tags": tags,
        });
        if i % 5 == 0 {
            doc["s"] = json!(format!("s{}", i % 9));
        } else if i % 7 == 0 {
            doc["s"] = json!(i);
        }
        let r = c.create_item(emu.endpoint(), "db", "c", &doc).await;
        assert_eq!(r.status, 201, "{r:?}");
    }
    (emu, c)
}

const QUERIES: &[&str] = &[
    "SELECT VALUE c.id FROM c ORDER BY c.n DESC, c.id",
    "SELECT c.id, t FROM c JOIN t IN c.tags ORDER BY t, c.id DESC",
    "SELECT VALUE COUNT(1) FROM c",
    "SELECT COUNT(1) AS n, SUM(c.n) AS s, AVG(c.n) AS a, MIN(c.s) AS lo, MAX(c.s) AS hi FROM c",
    "SELECT VALUE COUNT(1) FROM c JOIN t IN c.tags WHERE t != 'a'",
    "SELECT VALUE MAX(c.missing) FROM c",
    "SELECT c.g AS g, COUNT(1) AS n, SUM(c.n) AS s, MIN(c.id) AS first FROM c GROUP BY c.g",
    "SELECT VALUE t FROM c JOIN t IN c.tags GROUP BY t",
    "SELECT DISTINCT VALUE c.n FROM c",
    "SELECT DISTINCT c.g, c.n % 2 AS odd FROM c",
    "SELECT DISTINCT VALUE c.n FROM c ORDER BY c.n DESC",
    "SELECT TOP 3 c.g, COUNT(1) AS n FROM c GROUP BY c.g",
    "SELECT VALUE c.id FROM c ORDER BY c.id OFFSET 5 LIMIT 7",
];

#[tokio::test]
async fn whole_results_paged_under_a_tiny_budget_equal_one_page_under_the_default() {
    let (whole_emu, whole) = filled(QueryLimits::default()).await;
    let (tiny_emu, paged) = filled(tiny(3)).await;
    let k1 = pk_header(&json!("k1"));
    let scopes: Vec<(&str, Vec<(&str, &str)>)> = vec![
        (
            "range 0",
            vec![("x-ms-documentdb-partitionkeyrangeid", "0")],
        ),
        (
            "range 1",
            vec![("x-ms-documentdb-partitionkeyrangeid", "1")],
        ),
        (
            "key k1",
            vec![("x-ms-documentdb-partitionkey", k1.as_str())],
        ),
    ];
    for text in QUERIES {
        let body = json!({ "query": text });
        for (name, scope) in &scopes {
            let mut one_go = scope.clone();
            one_go.push(("x-ms-max-item-count", "1000"));
            let (want, pages, _) = all_pages(&whole, whole_emu.endpoint(), &body, &one_go).await;
            assert_eq!(pages, 1, "{text} over {name} in one page by default");
            let mut small_pages = scope.clone();
            small_pages.push(("x-ms-max-item-count", "2"));
            let (got, pages, empty) =
                all_pages(&paged, tiny_emu.endpoint(), &body, &small_pages).await;
            assert_eq!(got, want, "{text} over {name}");
            // About 20-40 documents per scope, at most 3 rows bound per page: the scope is read
            // over several pages that return nothing yet.
            assert!(
                empty >= 4,
                "{text} over {name}: {pages} pages, {empty} empty"
            );
        }
    }
}

#[tokio::test]
async fn a_build_that_is_gone_or_replayed_starts_again_and_stays_exact() {
    let (whole_emu, whole) = filled(QueryLimits::default()).await;
    let (emu, c) = filled(tiny(2)).await;
    let scope = [
        ("x-ms-documentdb-partitionkeyrangeid", "0"),
        ("x-ms-max-item-count", "1000"),
    ];
    // Ten builds at once: the shelf keeps fewer, so the first ones are evicted and start again.
    let bodies: Vec<Value> = (0..10)
        .map(|i| json!({"query": format!("SELECT c.g, COUNT(1) AS n, SUM(c.n + {i}) AS s FROM c GROUP BY c.g")}))
        .collect();
    let mut tokens = Vec::new();
    for body in &bodies {
        let r = query(&c, emu.endpoint(), body, &scope).await;
        assert_eq!(r.status, 200, "{}", r.message());
        assert_eq!(r.json()["_count"], 0, "still reading");
        tokens.push(r.header("x-ms-continuation").unwrap().to_owned());
    }
    for (body, token) in bodies.iter().zip(&tokens) {
        let (want, _, _) = all_pages(&whole, whole_emu.endpoint(), body, &scope).await;
        // The same continuation sent twice (a retried request): both runs end with the answer.
        for _ in 0..2 {
            let (got, _, _) =
                pages_from(&c, emu.endpoint(), body, &scope, Some(token.clone())).await;
            assert_eq!(got, want, "{body}");
        }
    }
    // A build's continuation sent with another scope starts again over that scope.
    let body = json!({"query": "SELECT VALUE COUNT(1) FROM c"});
    let r = query(&c, emu.endpoint(), &body, &scope).await;
    let token = r.header("x-ms-continuation").unwrap().to_owned();
    let other = [("x-ms-documentdb-partitionkeyrangeid", "1")];
    let (got, _, _) = pages_from(&c, emu.endpoint(), &body, &other, Some(token)).await;
    let (want, _, _) = all_pages(
        &whole,
        whole_emu.endpoint(),
        &body,
        &[("x-ms-documentdb-partitionkeyrangeid", "1")],
    )
    .await;
    assert_eq!(got, want);
}

#[tokio::test]
async fn a_page_reads_at_most_its_work_budget_and_charges_what_it_read() {
    let (emu, c) = filled(tiny(5)).await;
    let body = json!({"query": "SELECT VALUE SUM(c.n) FROM c"});
    let scope = [("x-ms-documentdb-partitionkeyrangeid", "0")];
    let r = query(&c, emu.endpoint(), &body, &scope).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["_count"], 0);
    assert!(r.header("x-ms-continuation").is_some());
    let charge: f64 = r.header("x-ms-request-charge").unwrap().parse().unwrap();
    // Five documents read, one row each: the page stopped at its budget.
    let full = {
        let (emu, c) = filled(QueryLimits::default()).await;
        let r = query(&c, emu.endpoint(), &body, &scope).await;
        let charge: f64 = r.header("x-ms-request-charge").unwrap().parse().unwrap();
        charge
    };
    assert!(charge > 0.0 && charge < full, "{charge} vs {full}");
}

#[tokio::test]
async fn a_build_past_the_memory_budget_is_refused_while_aggregates_hold_almost_nothing() {
    let limits = QueryLimits {
        build_bytes: 2_000,
        ..QueryLimits::default()
    };
    let (emu, c) = filled(limits).await;
    let scope = [("x-ms-documentdb-partitionkeyrangeid", "0")];
    for text in [
        "SELECT * FROM c ORDER BY c.id",
        "SELECT DISTINCT VALUE c FROM c",
        "SELECT c.id, COUNT(1) AS n FROM c GROUP BY c.id",
    ] {
        let r = query(&c, emu.endpoint(), &json!({ "query": text }), &scope).await;
        assert_eq!(r.status, 400, "{text}");
        assert!(
            r.message().contains("exceeded the memory"),
            "{}",
            r.message()
        );
    }
    for text in [
        "SELECT VALUE COUNT(1) FROM c",
        "SELECT MIN(c.n) AS lo, AVG(c.n) AS a FROM c",
        "SELECT c.g, COUNT(1) AS n FROM c GROUP BY c.g",
        "SELECT DISTINCT VALUE c.g FROM c",
    ] {
        let (rows, _, _) = all_pages(&c, emu.endpoint(), &json!({ "query": text }), &scope).await;
        assert!(!rows.is_empty(), "{text}");
    }
}

#[tokio::test]
async fn an_order_by_rebuilt_after_writes_between_pages_resumes_after_its_last_row() {
    let (emu, c) = filled(tiny(3)).await;
    let base = emu.endpoint();
    let k1 = pk_header(&json!("k1"));
    let body = json!({"query": "SELECT VALUE c.id FROM c ORDER BY c.id"});
    let headers = [
        ("x-ms-documentdb-partitionkey", k1.as_str()),
        ("x-ms-max-item-count", "3"),
    ];
    let (mut rows, mut continuation, mut writes) = (Vec::new(), None::<String>, 0);
    for _ in 0..500 {
        let mut h = headers.to_vec();
        if let Some(t) = &continuation {
            h.push(("x-ms-continuation", t.as_str()));
        }
        let r = query(&c, base, &body, &h).await;
        assert_eq!(r.status, 200, "{}", r.message());
        let docs = r.json()["Documents"].as_array().unwrap().clone();
        continuation = r.header("x-ms-continuation").map(str::to_owned);
        if !docs.is_empty() && writes < 3 {
            // One item before every row returned (never returned) and one after them all: the
            // next page rebuilds the sorted rows over several empty pages and resumes after the
            // last row returned.
            writes += 1;
            for id in [format!("a{writes}"), format!("z{writes}")] {
                let doc = json!({"id": id, "pk": "k1", "n": 0});
                assert_eq!(c.create_item(base, "db", "c", &doc).await.status, 201);
            }
        }
        rows.extend(docs);
        if continuation.is_none() {
            break;
        }
    }
    assert!(continuation.is_none(), "paging does not end");
    let mut want: Vec<Value> = (0..60)
        .filter(|i| i % 3 == 1)
        .map(|i| json!(format!("d{i:02}")))
        .collect();
    want.extend((1..=3).map(|w| json!(format!("z{w}"))));
    assert_eq!(rows, want);
}

/// The per-range queries a query plan sends for aggregates and GROUP BY: under a tiny budget each
/// page answers the partial aggregates of the documents it read (never an empty page before the
/// last), and combining them as the SDKs do gives the one-page answer.
#[tokio::test]
async fn per_range_aggregate_queries_answer_partial_aggregates_that_combine_to_the_answer() {
    let (whole_emu, whole) = filled(QueryLimits::default()).await;
    let (emu, c) = filled(tiny(4)).await;
    let scope = [
        ("x-ms-documentdb-partitionkeyrangeid", "0"),
        ("x-ms-max-item-count", "100"),
    ];
    let count = json!({"query": r#"SELECT VALUE [{"item": COUNT(1)}] FROM c"#});
    let sum = json!({"query": r#"SELECT VALUE [{"item": {"sum": SUM(c.n), "count": COUNT(c.n)}}] FROM c WHERE c.n > 2"#});
    let groups = json!({"query": r#"SELECT [{"item": c.g}] AS groupByItems, {"g": c.g, "n": {"item": COUNT(1)}} AS payload FROM c GROUP BY c.g"#});

    let (want, pages, _) = all_pages(&whole, whole_emu.endpoint(), &count, &scope).await;
    assert_eq!(pages, 1);
    let (got, pages, empty) = all_pages(&c, emu.endpoint(), &count, &scope).await;
    assert_eq!(empty, 0, "every page has its partial count");
    assert!(pages >= 4, "{pages} pages");
    assert_eq!(got.len(), pages, "one partial row per page");
    let total: i64 = got.iter().map(|r| r[0]["item"].as_i64().unwrap()).sum();
    assert_eq!(json!(total), want[0][0]["item"]);

    let (want, _, _) = all_pages(&whole, whole_emu.endpoint(), &sum, &scope).await;
    let (got, _, _) = all_pages(&c, emu.endpoint(), &sum, &scope).await;
    let add = |rows: &[Value], field: &str| -> i64 {
        rows.iter()
            .map(|r| r[0]["item"][field].as_i64().unwrap_or(0))
            .sum()
    };
    assert_eq!(add(&got, "sum"), add(&want, "sum"));
    assert_eq!(add(&got, "count"), add(&want, "count"));

    // Groups: merged by their groupByItems, the counts add up to the one-page answer; a page also
    // ends at its item count.
    let merge = |rows: &[Value]| -> std::collections::BTreeMap<String, i64> {
        let mut out = std::collections::BTreeMap::new();
        for r in rows {
            *out.entry(r["groupByItems"].to_string()).or_insert(0) +=
                r["payload"]["n"]["item"].as_i64().unwrap();
        }
        out
    };
    let (want, _, _) = all_pages(&whole, whole_emu.endpoint(), &groups, &scope).await;
    let small = [
        ("x-ms-documentdb-partitionkeyrangeid", "0"),
        ("x-ms-max-item-count", "2"),
    ];
    let (got, _, empty) = all_pages(&c, emu.endpoint(), &groups, &small).await;
    assert_eq!(empty, 0);
    assert!(got.len() > want.len(), "partial groups over several pages");
    assert_eq!(merge(&got), merge(&want));
}

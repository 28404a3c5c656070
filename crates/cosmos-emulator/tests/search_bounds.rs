//! Full-text and ranked queries held to the same bounds as every other query: too many search
//! terms are refused with 400 naming the limit before any item is read, a ranked query within one
//! partition key pages under the page budget (empty pages with continuations while it reads) and
//! answers what one page under the default budget answers, and no hostile ranked query answers
//! 500.

use crate::common;

use common::{pk_header, start_with_container, TestClient};
use cosmos_emulator::{EmulatorBuilder, QueryLimits};
use http::Method;
use serde_json::{json, Value};

const DOCS: &str = "/dbs/db/colls/c/docs";
const FEATURES: &str = "Aggregate,CompositeAggregate,Distinct,MultipleOrderBy,OffsetAndLimit,OrderBy,Top,NonStreamingOrderBy,HybridSearch,CountIf,WeightedRankFusion";

fn terms(n: usize) -> String {
    (0..n)
        .map(|i| format!("'w{i}'"))
        .collect::<Vec<_>>()
        .join(", ")
}

async fn plan(c: &TestClient, base: &str, body: &Value) -> common::Resp {
    c.send(
        base,
        Method::POST,
        DOCS,
        &[
            ("x-ms-cosmos-is-query-plan-request", "True"),
            ("content-type", "application/query+json"),
            ("x-ms-cosmos-supported-query-features", FEATURES),
        ],
        Some(body.to_string().as_bytes()),
    )
    .await
}

/// Within a page budget of 2,000 units, reading the one item under key "k" (about 190 KB of
/// text, about 3,000 units to parse) runs out the budget: a query that reads it answers the 400
/// of a row over the budget, so an answer naming the term limit was given before any item was
/// read.
#[tokio::test]
async fn too_many_search_terms_are_refused_naming_the_limit_before_any_item_is_read() {
    let limits = QueryLimits {
        page_work: 2_000,
        ..QueryLimits::default()
    };
    let (emu, c) = start_with_container(EmulatorBuilder::new().query_limits(limits)).await;
    let base = emu.endpoint();
    let text: String = (0..20_000).map(|i| format!("w{} ", i % 3000)).collect();
    let doc = json!({"id": "big", "pk": "k", "t": text});
    assert_eq!(c.create_item(base, "db", "c", &doc).await.status, 201);
    let key = pk_header(&json!("k"));
    // Reading the item is over the budget (what a scan would answer).
    let scan = json!({"query": "SELECT VALUE c.id FROM c WHERE FullTextContains(c.t, 'w1')"});
    let r = c
        .query(base, DOCS, &scan, &[("x-ms-documentdb-partitionkey", &key)])
        .await;
    assert_eq!(r.status, 400, "{}", r.message());
    assert!(r.message().contains("units of work"), "{}", r.message());
    for n in [101, 2_000, 20_000, 50_000] {
        for query in [
            format!("SELECT TOP 5 c.id FROM c ORDER BY RANK FullTextScore(c.t, {})", terms(n)),
            format!("SELECT TOP 5 c.id FROM c ORDER BY RANK FullTextScore(c.t, [{}])", terms(n)),
            format!(
                "SELECT TOP 5 c.id FROM c ORDER BY RANK RRF(FullTextScore(c.t, 'a'), FullTextScore(c.t, {}))",
                terms(n)
            ),
            format!("SELECT VALUE c.id FROM c WHERE FullTextContainsAny(c.t, {})", terms(n)),
            format!("SELECT VALUE c.id FROM c WHERE FullTextContainsAll(c.t, {})", terms(n)),
        ] {
            let body = json!({"query": query});
            let r = c.query(base, DOCS, &body, &[("x-ms-documentdb-partitionkey", &key)]).await;
            let head = &query[..80];
            assert_eq!(r.status, 400, "{n} terms, {head}: {}", r.message());
            // The term limit, or (50,000 terms in an array) the parser's limit on operators.
            let names_a_limit = |m: &str| {
                (m.contains("100 search terms") && m.contains(&n.to_string()))
                    || m.contains("more than 50000 operators, the limit")
            };
            let m = r.message();
            assert!(names_a_limit(&m), "{n} terms, {head}: {m}");
            // The plan names the same limit (the client would otherwise run its queries).
            let p = plan(&c, base, &body).await;
            assert_eq!(p.status, 400, "{n} terms, plan of {head}: {}", p.message());
            assert!(names_a_limit(&p.message()), "{}", p.message());
        }
    }
    // 100 terms are within the limit (the item's read is what is over this budget).
    let query = format!(
        "SELECT TOP 5 c.id FROM c ORDER BY RANK FullTextScore(c.t, {})",
        terms(100)
    );
    let r = c
        .query(
            base,
            DOCS,
            &json!({"query": query}),
            &[("x-ms-documentdb-partitionkey", &key)],
        )
        .await;
    assert_eq!(r.status, 400, "{}", r.message());
    assert!(r.message().contains("units of work"), "{}", r.message());
}

/// A small deterministic generator of word numbers.
fn words(seed: u64, n: usize, vocabulary: u64) -> Vec<u64> {
    let mut x = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) % vocabulary
        })
        .collect()
}

async fn fill(c: &TestClient, base: &str, items: u64) {
    for i in 0..items {
        let text: Vec<String> = words(i, 20 + (i % 17) as usize, 60)
            .iter()
            .map(|w| format!("w{w}"))
            .collect();
        let pk = if i % 5 == 4 { "other" } else { "k" };
        let doc = json!({"id": format!("d{i:03}"), "pk": pk, "t": text.join(" "), "u": format!("w{} w{}", i % 7, i % 11)});
        assert_eq!(c.create_item(base, "db", "c", &doc).await.status, 201);
    }
}

/// The ranked query: RRF of `components` FullTextScore calls of `per` terms each, over two paths
/// (one call alone for one component).
fn rrf(components: usize, per: usize) -> String {
    let calls: Vec<String> = (0..components)
        .map(|j| {
            let path = if j % 3 == 2 { "c.u" } else { "c.t" };
            let ts: Vec<String> = (0..per)
                .map(|k| format!("'w{}'", (j * 7 + k * 3) % 70))
                .collect();
            format!("FullTextScore({path}, {})", ts.join(", "))
        })
        .collect();
    match calls.as_slice() {
        [one] => format!("SELECT TOP 25 c.id FROM c ORDER BY RANK {one}"),
        _ => format!(
            "SELECT TOP 25 c.id FROM c ORDER BY RANK RRF({})",
            calls.join(", ")
        ),
    }
}

/// Every page of `body` under key "k": the results, the pages and each page's work.
async fn ranked_pages(c: &TestClient, base: &str, body: &Value) -> (Vec<Value>, Vec<u64>) {
    let key = pk_header(&json!("k"));
    let mut out = Vec::new();
    let mut work = Vec::new();
    let mut continuation: Option<String> = None;
    loop {
        let mut headers = vec![
            ("x-ms-documentdb-partitionkey", key.as_str()),
            ("x-ms-documentdb-populatequerymetrics", "True"),
        ];
        if let Some(t) = &continuation {
            headers.push(("x-ms-continuation", t.as_str()));
        }
        let r = c.query(base, DOCS, body, &headers).await;
        assert_eq!(r.status, 200, "page {}: {}", work.len(), r.message());
        work.push(
            r.header("x-ms-emulator-query-work")
                .unwrap()
                .parse::<u64>()
                .unwrap(),
        );
        out.extend(r.json()["Documents"].as_array().unwrap().iter().cloned());
        continuation = r.header("x-ms-continuation").map(str::to_owned);
        if continuation.is_none() {
            return (out, work);
        }
        assert!(work.len() < 5_000, "paging does not end");
    }
}

#[tokio::test]
async fn a_ranked_query_pages_within_the_budget_and_answers_what_one_page_answers() {
    let small = QueryLimits {
        page_work: 20_000,
        ..QueryLimits::default()
    };
    let (tiny, c) =
        start_with_container(EmulatorBuilder::new().partitions(2).query_limits(small)).await;
    let unpaged = QueryLimits {
        page_work: u64::MAX / 2,
        page_time: std::time::Duration::from_secs(600),
        ..QueryLimits::default()
    };
    let (whole, _) =
        start_with_container(EmulatorBuilder::new().partitions(2).query_limits(unpaged)).await;
    fill(&c, tiny.endpoint(), 150).await;
    fill(&c, whole.endpoint(), 150).await;
    for text in [rrf(6, 20), rrf(16, 6), rrf(1, 100)] {
        let body = json!({"query": text});
        let (expected, whole_work) = ranked_pages(&c, whole.endpoint(), &body).await;
        assert_eq!(
            whole_work.len(),
            1,
            "one page without a budget: {whole_work:?}"
        );
        assert_eq!(expected.len(), 25);
        let (paged, work) = ranked_pages(&c, tiny.endpoint(), &body).await;
        assert!(work.len() > 2, "{} pages, work {work:?}", work.len());
        assert!(work.iter().all(|&w| w <= small.page_work), "{work:?}");
        assert_eq!(paged, expected, "{}", &text[..60]);
        // A continuation from another kind of query is refused.
        let key = pk_header(&json!("k"));
        let r = c
            .query(
                tiny.endpoint(),
                DOCS,
                &body,
                &[
                    ("x-ms-documentdb-partitionkey", &key),
                    ("x-ms-continuation", "eyJrIjoiciIsIm4iOjB9"),
                ],
            )
            .await;
        assert_eq!(r.status, 400, "{}", r.message());
    }
}

#[tokio::test]
async fn hostile_ranked_queries_never_answer_500() {
    let (emu, c) = start_with_container(EmulatorBuilder::new()).await;
    let base = emu.endpoint();
    fill(&c, base, 20).await;
    let key = pk_header(&json!("k"));
    let huge = "x".repeat(300_000);
    let long_path = format!("c.{}", ["a"; 3000].join("."));
    let mut queries: Vec<(String, Value)> = [
        format!("SELECT TOP 5 c.id FROM c ORDER BY RANK FullTextScore(c.t, '{huge}')"),
        format!("SELECT TOP 5 c.id FROM c ORDER BY RANK RRF(FullTextScore(c.t, '{huge}'), FullTextScore(c.u, 'a'))"),
        format!("SELECT TOP 5 c.id FROM c ORDER BY RANK FullTextScore({long_path}, {})", terms(100)),
        format!("SELECT TOP 5 c.id FROM c ORDER BY RANK RRF({})", vec![format!("FullTextScore(c.t, {})", terms(100)); 16].join(", ")),
        format!("SELECT TOP 5 c.id FROM c ORDER BY RANK RRF({})", vec!["FullTextScore(c.t, 'w1')"; 17].join(", ")),
        "SELECT TOP 5 c.id FROM c ORDER BY RANK FullTextScore(c.t, '')".into(),
        "SELECT TOP 5 c.id FROM c ORDER BY RANK FullTextScore(c.t, '', ' ', 'the')".into(),
        "SELECT TOP 5 c.id FROM c ORDER BY RANK FullTextScore(c.t)".into(),
        "SELECT TOP 5 c.id FROM c ORDER BY RANK FullTextScore(c.t, [])".into(),
        "SELECT TOP 5 c.id FROM c ORDER BY RANK FullTextScore(c.t, 1)".into(),
        "SELECT TOP 5 c.id FROM c ORDER BY RANK FullTextScore(c.t, null, true)".into(),
        "SELECT TOP 5 c.id FROM c ORDER BY RANK FullTextScore(c.t, ['a', 2])".into(),
        "SELECT TOP 5 c.id FROM c ORDER BY RANK FullTextScore(c.t, {'a': 1})".into(),
        "SELECT TOP 5 c.id FROM c ORDER BY RANK FullTextScore(c.t, [['a']])".into(),
        "SELECT TOP 5 c.id FROM c ORDER BY RANK FullTextScore(c.t, c.u)".into(),
        "SELECT TOP 5 c.id FROM c ORDER BY RANK FullTextScore(UPPER(c.t), 'a')".into(),
        "SELECT TOP 5 c.id FROM c ORDER BY RANK FullTextScore('text', 'a')".into(),
        "SELECT TOP 5 c.id FROM c ORDER BY RANK FullTextScore(c.t, UPPER('a'))".into(),
        "SELECT TOP 5 c.id FROM c ORDER BY RANK FullTextScore(c.t, FullTextScore(c.t, 'a'))".into(),
        "SELECT TOP 5 c.id FROM c ORDER BY RANK RRF(RRF(FullTextScore(c.t, 'a')))".into(),
        "SELECT TOP 5 c.id FROM c ORDER BY RANK RRF(ABS(FullTextScore(c.t, 'a')), FullTextScore(c.t, 'b'))".into(),
        "SELECT TOP 5 c.id FROM c ORDER BY RANK RRF(FullTextScore(c.t, 'a'), FullTextScore(c.t, 'b'), [1])".into(),
        "SELECT TOP 5 c.id FROM c ORDER BY RANK RRF(FullTextScore(c.t, 'a'), FullTextScore(c.t, 'b'), ['x', 'y'])".into(),
        "SELECT TOP 5 c.id FROM c ORDER BY RANK RRF()".into(),
        "SELECT TOP 5 c.id FROM c ORDER BY RANK FullTextScore()".into(),
        "SELECT c.id FROM c ORDER BY RANK FullTextScore(c.t, 'a')".into(),
        "SELECT TOP 5000 c.id FROM c ORDER BY RANK FullTextScore(c.t, 'a')".into(),
        "SELECT TOP 5 c.id FROM c JOIN x IN c.t ORDER BY RANK FullTextScore(c.t, 'a')".into(),
        "SELECT TOP 5 VALUE c FROM c WHERE FullTextContains(c.t, 'w1') ORDER BY RANK FullTextScore(c.t['a'], 'w1')".into(),
        "SELECT TOP 5 c.id FROM c ORDER BY RANK FullTextScore(c.t, @terms)".into(),
        "SELECT TOP 5 c.id FROM c ORDER BY RANK FullTextScore(c.t, @missing)".into(),
        "SELECT TOP 5 c.id FROM c WHERE FullTextContains(c.t, @terms) ORDER BY RANK FullTextScore(c.t, 'a')".into(),
    ]
    .into_iter()
    .map(|q| (q, json!([{"name": "@terms", "value": (0..500).map(|i| format!("w{i}")).collect::<Vec<_>>()}])))
    .collect();
    queries.push((
        "SELECT TOP 5 c.id FROM c ORDER BY RANK FullTextScore(c.t, @one)".into(),
        json!([{"name": "@one", "value": huge}]),
    ));
    for (query, parameters) in &queries {
        let body = json!({"query": query, "parameters": parameters});
        let head: String = query.chars().take(120).collect();
        let r = c
            .query(base, DOCS, &body, &[("x-ms-documentdb-partitionkey", &key)])
            .await;
        assert!(
            r.status == 200 || r.status == 400,
            "{head}: {} {}",
            r.status,
            r.message()
        );
        let p = plan(&c, base, &body).await;
        assert!(
            p.status == 200 || p.status == 400,
            "plan of {head}: {} {}",
            p.status,
            p.message()
        );
    }
}

//! Queries over real HTTP: single-partition and per-range execution, paging and continuations
//! (also with writes between pages), the cross-partition answer without a plan, bad queries and
//! continuations, request charges, and limits that keep hostile texts from crashing the server.

use crate::common;

use std::collections::BTreeSet;

use common::{pk_header, start_with_container, TestClient};
use cosmos_emulator::EmulatorBuilder;
use http::Method;
use serde_json::{json, Value};

const DOCS: &str = "/dbs/db/colls/c/docs";

async fn query(c: &TestClient, base: &str, body: &Value, extra: &[(&str, &str)]) -> common::Resp {
    c.query(base, DOCS, body, extra).await
}

/// Every page of a query; `between` runs after each page (writes between pages).
async fn all_pages(
    c: &TestClient,
    base: &str,
    body: &Value,
    extra: &[(&str, &str)],
    mut between: impl FnMut(usize) -> Option<Value>,
) -> (Vec<Value>, usize) {
    let mut out = Vec::new();
    let mut continuation: Option<String> = None;
    let mut pages = 0;
    loop {
        let mut headers = extra.to_vec();
        if let Some(t) = &continuation {
            headers.push(("x-ms-continuation", t.as_str()));
        }
        let r = query(c, base, body, &headers).await;
        assert_eq!(r.status, 200, "{}", r.message());
        let page = r.json();
        let docs = page["Documents"].as_array().unwrap().clone();
        assert_eq!(page["_count"], docs.len());
        out.extend(docs);
        pages += 1;
        continuation = r.header("x-ms-continuation").map(str::to_owned);
        if continuation.is_none() {
            return (out, pages);
        }
        if let Some(doc) = between(pages) {
            let r = c.create_item(base, "db", "c", &doc).await;
            assert_eq!(r.status, 201, "{r:?}");
        }
        assert!(pages < 500, "paging does not end");
    }
}

async fn fill(c: &TestClient, base: &str, n: usize) {
    for i in 0..n {
        let doc = json!({"id": format!("item{i:03}"), "pk": format!("k{}", i % 5), "n": (i * 7) % 11, "tags": ["a", "b"]});
        assert_eq!(c.create_item(base, "db", "c", &doc).await.status, 201);
    }
}

fn ids(values: &[Value]) -> Vec<String> {
    values
        .iter()
        .map(|v| v["id"].as_str().or(v.as_str()).unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn a_single_partition_query_pages_exactly_even_with_writes_between_pages() {
    let (emu, c) = start_with_container(EmulatorBuilder::new().partitions(4)).await;
    let base = emu.endpoint();
    fill(&c, base, 40).await;
    let pk = pk_header(&json!("k1"));
    let body = json!({"query": "SELECT c.id, t FROM c JOIN t IN c.tags WHERE c.n >= @min", "parameters": [{"name": "@min", "value": 0}]});
    let headers = [
        ("x-ms-documentdb-partitionkey", pk.as_str()),
        ("x-ms-max-item-count", "3"),
    ];
    let (rows, pages) = all_pages(&c, base, &body, &headers, |_| None).await;
    assert_eq!(rows.len(), 16, "8 items of k1, two tags each");
    assert!(pages >= 6);
    let distinct: BTreeSet<String> = rows
        .iter()
        .map(|r| format!("{}/{}", r["id"], r["t"]))
        .collect();
    assert_eq!(distinct.len(), 16, "no row twice");

    // Items created between pages: those already present are each returned once.
    let mut created = 0;
    let body = json!({"query": "SELECT * FROM c"});
    let (docs, _) = all_pages(&c, base, &body, &headers, |page| {
        created += 1;
        Some(json!({"id": format!("new{page:03}"), "pk": "k1"}))
    })
    .await;
    let got = ids(&docs);
    let unique: BTreeSet<&String> = got.iter().collect();
    assert_eq!(
        unique.len(),
        got.len(),
        "a duplicate after writes between pages: {got:?}"
    );
    for i in (1..40).step_by(5) {
        assert!(got.contains(&format!("item{i:03}")), "item{i:03} lost");
    }
}

#[tokio::test]
async fn order_by_pages_resume_after_the_last_row() {
    let (emu, c) = start_with_container(EmulatorBuilder::new().partitions(2)).await;
    let base = emu.endpoint();
    fill(&c, base, 30).await;
    let pk = pk_header(&json!("k2"));
    let body = json!({"query": "SELECT VALUE c.id FROM c ORDER BY c.n DESC, c.id"});
    let headers = [
        ("x-ms-documentdb-partitionkey", pk.as_str()),
        ("x-ms-max-item-count", "2"),
    ];
    let (rows, pages) = all_pages(&c, base, &body, &headers, |_| None).await;
    let want = {
        let mut items: Vec<(usize, String)> = (0..30)
            .filter(|i| i % 5 == 2)
            .map(|i| ((i * 7) % 11, format!("item{i:03}")))
            .collect();
        items.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        items
            .into_iter()
            .map(|(_, id)| Value::from(id))
            .collect::<Vec<_>>()
    };
    assert_eq!(rows, want);
    assert_eq!(pages, 3);

    let body = json!({"query": "SELECT VALUE c.id FROM c WHERE c.pk = 'k2' ORDER BY c.id OFFSET 2 LIMIT 3"});
    let (rows, _) = all_pages(
        &c,
        base,
        &body,
        &[
            ("x-ms-documentdb-partitionkey", pk.as_str()),
            ("x-ms-max-item-count", "1"),
        ],
        |_| None,
    )
    .await;
    assert_eq!(
        rows,
        vec![json!("item012"), json!("item017"), json!("item022")]
    );
}

#[tokio::test]
async fn sorted_and_whole_results_page_from_one_computation_and_follow_writes_between_pages() {
    let (emu, c) = start_with_container(EmulatorBuilder::new().partitions(2)).await;
    let base = emu.endpoint();
    for i in 0..200 {
        let doc = json!({"id": format!("d{i:03}"), "pk": "p", "n": (i * 37) % 200});
        assert_eq!(c.create_item(base, "db", "c", &doc).await.status, 201);
    }
    let pk = pk_header(&json!("p"));
    let headers = [
        ("x-ms-documentdb-partitionkey", pk.as_str()),
        ("x-ms-max-item-count", "10"),
    ];
    let body = json!({"query": "SELECT VALUE c.n FROM c ORDER BY c.n"});
    // The first page reads all 200 documents; a later page only walks its own rows.
    let first = query(&c, base, &body, &headers).await;
    let token = first.header("x-ms-continuation").unwrap().to_owned();
    let mut next_headers = headers.to_vec();
    next_headers.push(("x-ms-continuation", token.as_str()));
    let second = query(&c, base, &body, &next_headers).await;
    let charge =
        |r: &common::Resp| -> f64 { r.header("x-ms-request-charge").unwrap().parse().unwrap() };
    assert!(charge(&first) >= 2.0 + 200.0 * 0.1, "{}", charge(&first));
    assert!(
        charge(&second) < charge(&first) / 2.0,
        "{} then {}",
        charge(&first),
        charge(&second)
    );
    assert_eq!(second.json()["Documents"][0], json!(10));

    // Writes between pages: rows after the last one returned appear, none repeats or is lost.
    let (rows, pages) = all_pages(&c, base, &body, &headers, |page| {
        (page <= 3).then(|| json!({"id": format!("late{page}"), "pk": "p", "n": 1000 + page}))
    })
    .await;
    assert_eq!(
        pages, 21,
        "20 pages of the first 200 rows, one more for the late writes"
    );
    let mut want: Vec<Value> = (0..200).map(Value::from).collect();
    want.extend((1..=3).map(|p| json!(1000 + p)));
    assert_eq!(rows, want);

    let body = json!({"query": "SELECT c.n % 7 AS k, COUNT(1) AS n FROM c GROUP BY c.n % 7"});
    let headers = [
        ("x-ms-documentdb-partitionkey", pk.as_str()),
        ("x-ms-max-item-count", "2"),
    ];
    let (groups, _) = all_pages(&c, base, &body, &headers, |_| None).await;
    assert_eq!(groups.len(), 7, "{groups:?}");
    let total: u64 = groups.iter().map(|g| g["n"].as_u64().unwrap()).sum();
    assert_eq!(total, 203);
}

#[tokio::test]
async fn cross_partition_queries_need_a_plan_unless_the_gateway_serves_them() {
    let (emu, c) = start_with_container(EmulatorBuilder::new().partitions(4)).await;
    let base = emu.endpoint();
    fill(&c, base, 25).await;
    let cross = [("x-ms-documentdb-query-enablecrosspartition", "True")];
    for text in [
        "SELECT * FROM c ORDER BY c.n",
        "SELECT VALUE COUNT(1) FROM c",
        "SELECT DISTINCT c.pk FROM c",
        "SELECT TOP 3 * FROM c",
    ] {
        let r = query(&c, base, &json!({"query": text}), &cross).await;
        assert_eq!(
            (r.status, r.sub_status()),
            (400, 1004),
            "{text}: {}",
            r.message()
        );
    }
    let simple = json!({"query": "SELECT VALUE c.id FROM c WHERE c.n > 3"});
    let r = query(&c, base, &simple, &[]).await;
    assert_eq!(r.status, 400);
    assert!(
        r.message().contains("enablecrosspartition"),
        "{}",
        r.message()
    );
    let mut headers = cross.to_vec();
    headers.push(("x-ms-max-item-count", "4"));
    let (rows, pages) = all_pages(&c, base, &simple, &headers, |_| None).await;
    let want: BTreeSet<String> = (0..25)
        .filter(|i| (i * 7) % 11 > 3)
        .map(|i| format!("item{i:03}"))
        .collect();
    assert_eq!(rows.len(), want.len());
    assert_eq!(ids(&rows).into_iter().collect::<BTreeSet<_>>(), want);
    assert!(pages > 2);

    // A WHERE that pins the partition key runs on its partition without a header when the
    // gateway serves the query; one that needs a plan still needs it (the service decides by the
    // partition key header), and runs in the key with the header.
    let pinned = json!({"query": "SELECT VALUE c.id FROM c WHERE c.pk = @k", "parameters": [{"name": "@k", "value": "k3"}]});
    let r = query(&c, base, &pinned, &[]).await;
    assert_eq!(r.status, 200, "{}", r.message());
    assert_eq!(r.json()["Documents"].as_array().map(Vec::len), Some(5));
    let pinned = json!({"query": "SELECT VALUE COUNT(1) FROM c WHERE c.pk = @k", "parameters": [{"name": "@k", "value": "k3"}]});
    let r = query(&c, base, &pinned, &cross).await;
    assert_eq!((r.status, r.sub_status()), (400, 1004), "{}", r.message());
    let k3 = pk_header(&json!("k3"));
    let r = query(
        &c,
        base,
        &pinned,
        &[("x-ms-documentdb-partitionkey", k3.as_str())],
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.message());
    assert_eq!(r.json()["Documents"], json!([5]));

    // Per range: the ranges together hold every item once.
    let mut total = 0;
    for range in ["0", "1", "2", "3"] {
        let r = query(
            &c,
            base,
            &json!({"query": "SELECT VALUE COUNT(1) FROM c"}),
            &[("x-ms-documentdb-partitionkeyrangeid", range)],
        )
        .await;
        assert_eq!(r.status, 200, "{}", r.message());
        assert_eq!(r.header("x-ms-documentdb-partitionkeyrangeid"), Some(range));
        total += r.json()["Documents"][0].as_u64().unwrap();
    }
    assert_eq!(total, 25);
    let r = query(
        &c,
        base,
        &json!({"query": "SELECT * FROM c"}),
        &[("x-ms-documentdb-partitionkeyrangeid", "9")],
    )
    .await;
    assert_eq!((r.status, r.sub_status()), (410, 1002));
}

#[tokio::test]
async fn bad_queries_and_continuations_are_400s_that_say_what_is_wrong() {
    let (emu, c) = start_with_container(EmulatorBuilder::new()).await;
    let base = emu.endpoint();
    fill(&c, base, 3).await;
    let pk = pk_header(&json!("k0"));
    let on_pk = [("x-ms-documentdb-partitionkey", pk.as_str())];
    for (text, needle) in [
        ("SELECT * FROM c WHERE", "position 21"),
        ("SELECT FROB(c.a) FROM c", "FROB"),
        ("SELECT LOWER(c.a, 1) FROM c", "takes 1 argument"),
        ("SELECT * FROM c WHERE c.a = @missing", "@missing"),
        ("SELECT * FROM c WHERE REGEXMATCH(c.id, '(')", "REGEXMATCH"),
    ] {
        let r = query(&c, base, &json!({"query": text}), &on_pk).await;
        assert_eq!(r.status, 400, "{text}");
        assert!(r.message().contains(needle), "{text}: {}", r.message());
    }
    let r = query(&c, base, &json!({"sql": "SELECT * FROM c"}), &on_pk).await;
    assert_eq!(r.status, 400);
    for token in ["not base64!", "eyJrIjoieiJ9", "e30"] {
        let mut headers = on_pk.to_vec();
        headers.push(("x-ms-continuation", token));
        let r = query(&c, base, &json!({"query": "SELECT * FROM c"}), &headers).await;
        assert_eq!(r.status, 400, "{token}");
        assert!(r.message().contains("continuation"), "{}", r.message());
    }
}

#[tokio::test]
async fn binding_errors_are_refused_when_the_query_is_compiled_even_on_an_empty_container() {
    let (emu, c) = start_with_container(EmulatorBuilder::new().partitions(2)).await;
    let base = emu.endpoint();
    let pk = pk_header(&json!("k0"));
    let on_pk = [("x-ms-documentdb-partitionkey", pk.as_str())];
    let plan_request = [
        ("x-ms-cosmos-is-query-plan-request", "True"),
        ("x-ms-cosmos-supported-query-features", "Aggregate,OrderBy"),
    ];
    let cross = [("x-ms-documentdb-query-enablecrosspartition", "True")];
    for (text, needle) in [
        (
            "SELECT * FROM c WHERE d.x = 1",
            "Identifier 'd' could not be resolved. (at position 22)",
        ),
        (
            "SELECT c.id FROM c ORDER BY e.n",
            "Identifier 'e' could not be resolved.",
        ),
        (
            "SELECT VALUE COUNT(1) FROM c WHERE EXISTS(SELECT VALUE t FROM t IN z.tags)",
            "Identifier 'z' could not be resolved.",
        ),
        ("SELECT FROB(c.a) FROM c", "FROB"),
        ("SELECT LOWER(c.a, 1) FROM c", "takes 1 argument"),
        ("SELECT * FROM c WHERE ABS()", "ABS"),
    ] {
        for headers in [&on_pk[..], &plan_request[..], &cross[..]] {
            let r = query(&c, base, &json!({"query": text}), headers).await;
            assert_eq!(r.status, 400, "{text} {headers:?}: {r:?}");
            assert!(
                r.message().contains(needle),
                "{text} {headers:?}: {}",
                r.message()
            );
        }
    }
}

#[tokio::test]
async fn the_request_charge_grows_with_documents_scanned_and_returned() {
    let (emu, c) = start_with_container(EmulatorBuilder::new()).await;
    let base = emu.endpoint();
    fill(&c, base, 50).await;
    let charge = |r: &common::Resp| {
        r.header("x-ms-request-charge")
            .unwrap()
            .parse::<f64>()
            .unwrap()
    };
    // A cross-partition query is answered one range per page: its charge is its pages' sum.
    let across = |text: &'static str| {
        let c = c.clone();
        async move {
            let mut total = 0.0;
            let mut continuation: Option<String> = None;
            loop {
                let mut headers = vec![
                    ("x-ms-documentdb-query-enablecrosspartition", "True"),
                    ("x-ms-max-item-count", "1000"),
                ];
                if let Some(t) = &continuation {
                    headers.push(("x-ms-continuation", t.as_str()));
                }
                let r = query(&c, base, &json!({ "query": text }), &headers).await;
                assert_eq!(r.status, 200, "{r:?}");
                total += r
                    .header("x-ms-request-charge")
                    .unwrap()
                    .parse::<f64>()
                    .unwrap();
                continuation = r.header("x-ms-continuation").map(str::to_owned);
                if continuation.is_none() {
                    return total;
                }
            }
        }
    };
    let none = across("SELECT * FROM c WHERE c.n = 99").await;
    let all = across("SELECT * FROM c").await;
    let pk = pk_header(&json!("k0"));
    let one_key = query(
        &c,
        base,
        &json!({"query": "SELECT * FROM c WHERE c.n = 99"}),
        &[("x-ms-documentdb-partitionkey", pk.as_str())],
    )
    .await;
    assert!(charge(&one_key) < none, "fewer scanned, less charged");
    assert!(none < all, "more returned, more charged");
}

#[tokio::test]
async fn a_2_mb_condition_or_query_is_refused_and_long_or_chains_are_answered() {
    let (emu, c) = start_with_container(EmulatorBuilder::new()).await;
    let base = emu.endpoint();
    let doc = json!({"id": "a", "pk": "p", "n": 1});
    assert_eq!(c.create_item(base, "db", "c", &doc).await.status, 201);
    let huge: String = "1 = 1 or ".repeat(2 * 1024 * 1024 / 9 - 10) + "1 = 1";
    let patch = json!({"operations": [{"op": "set", "path": "/n", "value": 2}], "condition": format!("from c where {huge}")});
    for id in ["a", "missing"] {
        let r = c
            .send_with_pk(
                base,
                Method::PATCH,
                &format!("{DOCS}/{id}"),
                &json!("p"),
                &[],
                Some(&patch),
            )
            .await;
        assert_eq!(r.status, 400, "{}", r.message());
        assert!(r.message().contains("limit"), "{}", r.message());
    }
    let pk = pk_header(&json!("p"));
    let on_pk = [("x-ms-documentdb-partitionkey", pk.as_str())];
    let r = query(
        &c,
        base,
        &json!({"query": format!("SELECT * FROM c WHERE {huge}")}),
        &on_pk,
    )
    .await;
    assert_eq!(r.status, 400);
    assert!(r.message().contains("limit"), "{}", r.message());
    let deep = format!(
        "SELECT VALUE {}1{} FROM c",
        "(".repeat(5000),
        ")".repeat(5000)
    );
    let r = query(&c, base, &json!({"query": deep}), &on_pk).await;
    assert_eq!(r.status, 400);
    assert!(r.message().contains("levels deep"), "{}", r.message());

    let long = vec!["c.n = 0"; 12_000].join(" or ") + " or c.n = 1";
    let r = query(
        &c,
        base,
        &json!({"query": format!("SELECT VALUE c.id FROM c WHERE {long}")}),
        &on_pk,
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.message());
    assert_eq!(r.json()["Documents"], json!(["a"]));
    let cond = json!({"operations": [{"op": "set", "path": "/n", "value": 2}], "condition": format!("from c where {long}")});
    let r = c
        .send_with_pk(
            base,
            Method::PATCH,
            &format!("{DOCS}/a"),
            &json!("p"),
            &[],
            Some(&cond),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.message());
}

#[tokio::test]
async fn a_query_plan_names_the_work_and_its_rewritten_query_runs_on_each_range() {
    let (emu, c) = start_with_container(EmulatorBuilder::new().partitions(3)).await;
    let base = emu.endpoint();
    fill(&c, base, 20).await;
    let text = "SELECT c.id FROM c WHERE c.n > @min ORDER BY c.n DESC";
    let body = json!({"query": text, "parameters": [{"name": "@min", "value": 2}]});
    let r = c
        .send(
            base,
            Method::POST,
            DOCS,
            &[
                ("x-ms-cosmos-is-query-plan-request", "True"),
                ("content-type", "application/query+json"),
                ("x-ms-cosmos-supported-query-features", "OrderBy,Aggregate"),
            ],
            Some(body.to_string().as_bytes()),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.message());
    let plan = r.json();
    assert_eq!(plan["partitionedQueryExecutionInfoVersion"], 2);
    assert_eq!(plan["queryInfo"]["orderBy"], json!(["Descending"]));
    assert_eq!(
        plan["queryRanges"],
        json!([{"min": "", "max": "FF", "isMinInclusive": true, "isMaxInclusive": false}])
    );
    let rewritten = plan["queryInfo"]["rewrittenQuery"]
        .as_str()
        .unwrap()
        .replace("{documentdb-formattableorderbyquery-filter}", "true");
    let mut merged = Vec::new();
    for range in ["0", "1", "2"] {
        let per_range = json!({"query": rewritten, "parameters": [{"name": "@min", "value": 2}]});
        let (rows, _) = all_pages(
            &c,
            base,
            &per_range,
            &[
                ("x-ms-documentdb-partitionkeyrangeid", range),
                ("x-ms-max-item-count", "2"),
            ],
            |_| None,
        )
        .await;
        let keys: Vec<i64> = rows
            .iter()
            .map(|r| r["orderByItems"][0]["item"].as_i64().unwrap())
            .collect();
        assert!(
            keys.windows(2).all(|w| w[0] >= w[1]),
            "range {range} is not in order: {keys:?}"
        );
        assert!(rows
            .iter()
            .all(|r| r["_rid"].is_string() && r["payload"]["id"].is_string()));
        merged.extend(rows);
    }
    let want = (0..20).filter(|i| (i * 7) % 11 > 2).count();
    assert_eq!(merged.len(), want);

    let pinned = json!({"query": "SELECT VALUE COUNT(1) FROM c WHERE c.pk = 'k1'"});
    let r = c
        .send(
            base,
            Method::POST,
            DOCS,
            &[
                ("x-ms-cosmos-is-query-plan-request", "True"),
                ("content-type", "application/query+json"),
            ],
            Some(pinned.to_string().as_bytes()),
        )
        .await;
    let plan = r.json();
    assert_eq!(plan["queryInfo"]["aggregates"], json!(["Count"]));
    let range = &plan["queryRanges"][0];
    assert_eq!(range["min"], range["max"]);
    assert_eq!(range["min"].as_str().unwrap().len(), 32);
}

/// Read-many queries (a disjunction of id and partition key equalities) skip the documents whose
/// id cannot match without reading them: every page, continuation and charge equals that of the
/// same filter written so the shortcut does not apply (`OR false`).
#[tokio::test]
async fn read_many_queries_page_exactly_as_a_full_scan() {
    let (emu, c) = start_with_container(EmulatorBuilder::new().partitions(2)).await;
    let base = emu.endpoint();
    fill(&c, base, 60).await;
    let wanted = [3, 8, 17, 18, 29, 41, 42, 55, 59];
    let mut terms = Vec::new();
    let mut params = Vec::new();
    for (i, n) in wanted.iter().enumerate() {
        terms.push(format!("(c.id = @id{i} AND c.pk = @pk{i})"));
        params.push(json!({"name": format!("@id{i}"), "value": format!("item{n:03}")}));
        params.push(json!({"name": format!("@pk{i}"), "value": format!("k{}", n % 5)}));
    }
    // An id with the wrong key, and one that does not exist: neither is returned.
    terms.push("(c.id = 'item004' AND c.pk = 'k0')".into());
    terms.push("c.id IN ('nope', 'item010')".into());
    let fast = json!({"query": format!("SELECT * FROM c WHERE {}", terms.join(" OR ")), "parameters": params});
    let slow = json!({"query": format!("SELECT * FROM c WHERE {} OR false", terms.join(" OR ")), "parameters": params});
    let mut found = Vec::new();
    for range in ["0", "1"] {
        let mut tokens: [Option<String>; 2] = [None, None];
        loop {
            let mut answers = Vec::new();
            for (body, token) in [&fast, &slow].into_iter().zip(&tokens) {
                let mut headers = vec![
                    ("x-ms-documentdb-partitionkeyrangeid", range),
                    ("x-ms-max-item-count", "2"),
                ];
                if let Some(t) = token {
                    headers.push(("x-ms-continuation", t.as_str()));
                }
                let r = query(&c, base, body, &headers).await;
                assert_eq!(r.status, 200, "{}", r.message());
                answers.push(r);
            }
            let [f, s] = [&answers[0], &answers[1]];
            assert_eq!(
                f.json()["Documents"],
                s.json()["Documents"],
                "range {range}"
            );
            for name in ["x-ms-continuation", "x-ms-item-count"] {
                assert_eq!(f.header(name), s.header(name), "{name} on range {range}");
            }
            // (The charges differ: the index answers the read many's clause, not the one with
            // `OR false`, so one pays for its lookups and the documents they load, the other for
            // every document it reads; `charges.rs` checks both.)
            found.extend(ids(f.json()["Documents"].as_array().unwrap()));
            let next = f.header("x-ms-continuation").map(str::to_owned);
            if next.is_none() {
                break;
            }
            tokens = [next.clone(), next];
        }
    }
    found.sort();
    let mut want: Vec<String> = wanted.iter().map(|n| format!("item{n:03}")).collect();
    want.push("item010".into());
    want.sort();
    assert_eq!(found, want);
}

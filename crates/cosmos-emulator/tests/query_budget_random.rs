//! Random queries composed from the grammar (JOINs over document arrays and parameters,
//! subqueries nested in WHERE and SELECT, string and array functions, parameters of random sizes,
//! ORDER BY, GROUP BY, DISTINCT, TOP, OFFSET/LIMIT), each paged to its end under a small page
//! budget: every page ends within its work budget (the emulator reports the units a page used) and
//! near its time budget, answers 200 with a continuation or a 400 naming what is wrong, never 5xx,
//! and every continuation moves on (a query whose rows cost more than a few hundred pages is
//! followed for that many pages only).
//!
//! The seed is fixed; `QUERY_RANDOM_SEED` picks another, `QUERY_RANDOM_COUNT` how many queries.

use crate::common;

use std::time::{Duration, Instant};

use common::{pk_header, start_with_container, TestClient};
use cosmos_emulator::{EmulatorBuilder, QueryLimits};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};

const DOCS: &str = "/dbs/db/colls/c/docs";
const PAGE_WORK: u64 = 40_000;
const PAGE_TIME: Duration = Duration::from_millis(800);
/// Pages a query is followed for.
const MAX_PAGES: usize = 200;

/// A query generator: names in scope, and what each is.
struct Gen<'r> {
    rng: &'r mut StdRng,
    /// Number-valued names (JOIN aliases over number arrays) in scope.
    numbers: Vec<String>,
    /// Object-valued names (`k IN c.kids`) in scope.
    kids: Vec<String>,
    /// String-valued names.
    strings: Vec<String>,
    fresh: usize,
    depth: usize,
}

impl Gen<'_> {
    fn pick<'a>(&mut self, options: &[&'a str]) -> &'a str {
        options[self.rng.random_range(0..options.len())]
    }

    fn name(&mut self, stem: &str) -> String {
        self.fresh += 1;
        format!("{stem}{}", self.fresh)
    }

    /// An array to range over: of numbers, strings or kids.
    fn source(&mut self) -> (String, char) {
        let mut options: Vec<(String, char)> = vec![
            ("c.nums".into(), 'n'),
            ("@arr".into(), 'n'),
            ("c.tags".into(), 's'),
            ("c.kids".into(), 'k'),
            ("ARRAY_CONCAT(c.nums, @arr)".into(), 'n'),
            ("ARRAY_SLICE(@arr, 1, 20)".into(), 'n'),
        ];
        for k in &self.kids {
            options.push((format!("{k}.toys"), 's'));
        }
        options.swap_remove(self.rng.random_range(0..options.len()))
    }

    fn bind(&mut self, alias: &str, kind: char) {
        match kind {
            'n' => self.numbers.push(alias.to_owned()),
            's' => self.strings.push(alias.to_owned()),
            _ => self.kids.push(alias.to_owned()),
        }
    }

    fn number(&mut self) -> String {
        let roll = self.rng.random_range(0..12);
        if self.depth < 3 && roll == 0 {
            return self.subquery_number();
        }
        match roll {
            1 | 2 if !self.numbers.is_empty() => {
                self.numbers[self.rng.random_range(0..self.numbers.len())].clone()
            }
            3 if !self.kids.is_empty() => {
                let k = self.kids[self.rng.random_range(0..self.kids.len())].clone();
                format!("{k}.age")
            }
            4 => "LENGTH(c.s)".into(),
            5 => "ARRAY_LENGTH(c.tags)".into(),
            6 => "LENGTH(REPLACE(c.s, 'a', @s))".into(),
            7 => "LENGTH(CONCAT(c.s, @s, c.s))".into(),
            8 => "LENGTH(REPLICATE(@short, @n))".into(),
            9 => "ARRAY_LENGTH(ARRAY_CONCAT(c.nums, @arr, c.nums))".into(),
            10 => format!("{} + {}", self.rng.random_range(0..5), "c.n"),
            _ => "c.n".into(),
        }
    }

    fn subquery_number(&mut self) -> String {
        self.depth += 1;
        let (from, kind) = self.source();
        let alias = self.name("y");
        let saved = (
            self.numbers.clone(),
            self.kids.clone(),
            self.strings.clone(),
        );
        self.bind(&alias, kind);
        let mut text = format!("(SELECT VALUE COUNT(1) FROM {alias} IN {from}");
        if self.rng.random_bool(0.5) {
            let (from2, kind2) = self.source();
            let alias2 = self.name("z");
            self.bind(&alias2, kind2);
            text.push_str(&format!(" JOIN {alias2} IN {from2}"));
        }
        let pred = self.predicate();
        text.push_str(&format!(" WHERE {pred})"));
        (self.numbers, self.kids, self.strings) = saved;
        self.depth -= 1;
        text
    }

    fn predicate(&mut self) -> String {
        let roll = self.rng.random_range(0..10);
        match roll {
            0 if self.depth < 3 => {
                self.depth += 1;
                let (from, kind) = self.source();
                let alias = self.name("e");
                let saved = (
                    self.numbers.clone(),
                    self.kids.clone(),
                    self.strings.clone(),
                );
                self.bind(&alias, kind);
                let mut text = format!("EXISTS(SELECT VALUE 1 FROM {alias} IN {from}");
                if self.rng.random_bool(0.6) {
                    let (from2, kind2) = self.source();
                    let alias2 = self.name("f");
                    self.bind(&alias2, kind2);
                    text.push_str(&format!(" JOIN {alias2} IN {from2}"));
                }
                let pred = self.predicate();
                text.push_str(&format!(" WHERE {pred})"));
                (self.numbers, self.kids, self.strings) = saved;
                self.depth -= 1;
                text
            }
            1 => {
                let (a, b) = (self.predicate_leaf(), self.predicate_leaf());
                format!("({a} {} {b})", self.pick(&["AND", "OR"]))
            }
            2 => "ARRAY_CONTAINS(@arr, c.n)".into(),
            3 => format!("STARTSWITH(c.s, '{}')", self.pick(&["a", "b", "ab"])),
            4 => "c.s LIKE '%ab%'".into(),
            5 => "REGEXMATCH(c.s, 'a+b')".into(),
            _ => self.predicate_leaf(),
        }
    }

    fn predicate_leaf(&mut self) -> String {
        if !self.strings.is_empty() && self.rng.random_bool(0.2) {
            let s = self.strings[self.rng.random_range(0..self.strings.len())].clone();
            return format!("{s} = 't{}'", self.rng.random_range(0..5));
        }
        let (a, b) = (self.number(), self.number());
        format!("{a} {} {b}", self.pick(&["<", ">", "=", "!=", ">="]))
    }

    /// A whole query.
    fn query(&mut self) -> String {
        let mut from = String::from("FROM c");
        for _ in 0..self.rng.random_range(0..=3) {
            let (source, kind) = self.source();
            let alias = self.name("j");
            self.bind(&alias, kind);
            from.push_str(&format!(" JOIN {alias} IN {source}"));
        }
        let filter = self
            .rng
            .random_bool(0.7)
            .then(|| self.predicate())
            .map_or(String::new(), |p| format!(" WHERE {p}"));
        match self.rng.random_range(0..7) {
            0 => format!("SELECT VALUE COUNT(1) {from}{filter}"),
            1 => format!(
                "SELECT c.pk, COUNT(1) AS n, MAX({}) AS hi FROM c{} GROUP BY c.pk",
                self.number(),
                filter
            ),
            2 => format!("SELECT DISTINCT VALUE {} {from}{filter}", self.number()),
            3 => format!(
                "SELECT c.id, {} AS v {from}{filter} ORDER BY c.{} {}",
                self.number(),
                self.pick(&["id", "n"]),
                self.pick(&["ASC", "DESC"])
            ),
            4 => format!(
                "SELECT TOP {} VALUE {} {from}{filter}",
                self.rng.random_range(1..40),
                self.number()
            ),
            5 => format!(
                "SELECT VALUE [c.id, {}] {from}{filter} OFFSET {} LIMIT {}",
                self.number(),
                self.rng.random_range(0..20),
                self.rng.random_range(1..60)
            ),
            _ => format!("SELECT c.id, {} AS v {from}{filter}", self.number()),
        }
    }
}

fn parameters(rng: &mut StdRng) -> Value {
    let arr: Vec<u32> = (0..rng.random_range(0..80)).map(|i| i * 3).collect();
    let s: String = (0..rng.random_range(0..30_000))
        .map(|i| if i % 3 == 0 { 'b' } else { 'a' })
        .collect();
    json!([
        {"name": "@arr", "value": arr},
        {"name": "@s", "value": s},
        {"name": "@short", "value": "ab"},
        {"name": "@n", "value": rng.random_range(0..6000)},
    ])
}

async fn fill(c: &TestClient, base: &str, rng: &mut StdRng) {
    for i in 0..40 {
        let nums: Vec<u32> = (0..rng.random_range(0..120)).map(|n| n * 7 % 101).collect();
        let tags: Vec<String> = (0..rng.random_range(0..25))
            .map(|t| format!("t{}", t % 5))
            .collect();
        let kids: Vec<Value> = (0..rng.random_range(0..12))
            .map(|k| json!({"age": k * 3 % 17, "toys": vec![format!("t{k}"); k % 4]}))
            .collect();
        let s: String = (0..rng.random_range(0..3000))
            .map(|n| if n % 5 == 0 { 'b' } else { 'a' })
            .collect();
        let doc = json!({
            "id": format!("d{i:02}"), "pk": format!("k{}", i % 4), "n": i % 13,
            "s": s, "nums": nums, "tags": tags, "kids": kids,
        });
        let r = c.create_item(base, "db", "c", &doc).await;
        assert_eq!(r.status, 201, "{}", r.message());
    }
}

#[tokio::test]
async fn every_page_of_random_queries_ends_within_its_budget() {
    let seed: u64 = std::env::var("QUERY_RANDOM_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(22);
    let count: usize = std::env::var("QUERY_RANDOM_COUNT")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(120);
    let limits = QueryLimits {
        page_work: PAGE_WORK,
        page_time: PAGE_TIME,
        ..QueryLimits::default()
    };
    let (emu, c) =
        start_with_container(EmulatorBuilder::new().partitions(2).query_limits(limits)).await;
    let base = emu.endpoint();
    let mut rng = StdRng::seed_from_u64(seed);
    fill(&c, base, &mut rng).await;
    let (mut paged, mut refused, mut pages_total, mut budget_pages, mut long) = (0, 0, 0, 0, 0);
    for n in 0..count {
        let text = Gen {
            rng: &mut rng,
            numbers: Vec::new(),
            kids: Vec::new(),
            strings: Vec::new(),
            fresh: 0,
            depth: 0,
        }
        .query();
        let body = json!({"query": text, "parameters": parameters(&mut rng)});
        let pk = pk_header(&json!(format!("k{}", rng.random_range(0..4))));
        let range = rng.random_range(0..2).to_string();
        let scope = if rng.random_bool(0.5) {
            ("x-ms-documentdb-partitionkey", pk.as_str())
        } else {
            ("x-ms-documentdb-partitionkeyrangeid", range.as_str())
        };
        let page_size = rng.random_range(1..60).to_string();
        let mut continuation: Option<String> = None;
        let mut pages = 0;
        loop {
            let mut headers = vec![
                scope,
                ("x-ms-max-item-count", page_size.as_str()),
                ("x-ms-documentdb-populatequerymetrics", "True"),
            ];
            if let Some(t) = &continuation {
                headers.push(("x-ms-continuation", t));
            }
            let started = Instant::now();
            let r = c.query(base, DOCS, &body, &headers).await;
            let took = started.elapsed();
            pages += 1;
            let context = format!("query {n} (seed {seed}) page {pages}: {text}");
            assert!(
                took < PAGE_TIME * 2 + Duration::from_secs(2),
                "{context}: {took:?}"
            );
            match r.status {
                200 => {}
                400 => {
                    let m = r.message();
                    assert!(
                        m.contains("units of work")
                            || m.contains("ms a page")
                            || m.contains("limit")
                            || m.contains("could not be run")
                            || m.contains("invalid"),
                        "{context}: {m}"
                    );
                    refused += 1;
                    break;
                }
                other => panic!("{context}: status {other}: {}", r.message()),
            }
            let work: u64 = r
                .header("x-ms-emulator-query-work")
                .and_then(|w| w.parse().ok())
                .expect("the page's work");
            assert!(work <= PAGE_WORK, "{context}: {work} units");
            if work == PAGE_WORK {
                budget_pages += 1;
            }
            let next = r.header("x-ms-continuation").map(str::to_owned);
            assert!(
                next.is_none() || next != continuation,
                "{context}: the continuation did not move"
            );
            continuation = next;
            if continuation.is_none() {
                break;
            }
            if pages >= MAX_PAGES {
                long += 1;
                break;
            }
        }
        pages_total += pages;
        if pages > 1 {
            paged += 1;
        }
    }
    // The generator reaches the budgets: many queries need several pages, many pages end at the
    // work budget, and some single rows need more than a page.
    assert!(paged > count / 10, "{paged} of {count} queries paged");
    assert!(
        budget_pages > count / 10,
        "{budget_pages} pages at the budget"
    );
    assert!(refused < count / 2, "{refused} of {count} refused");
    eprintln!(
        "{count} queries, {pages_total} pages, {paged} paged, {budget_pages} pages at the work budget, {refused} refused, {long} followed for {MAX_PAGES} pages"
    );
}

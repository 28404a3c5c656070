//! Hierarchical partition keys through the driver against the embedded emulator: point operations
//! by the full key, queries scoped by a prefix of the key (sent to each range the prefix's
//! effective partition keys overlap, scoped by `x-ms-start-epk` / `x-ms-end-epk`) over 2- and
//! 3-level keys, across several ranges, resumed at every page boundary, through a split in the
//! middle; and the driver's and the emulator's effective partition keys agree.

use crate::common;

use std::collections::BTreeSet;

use cosmos_driver::protocol::{effective_partition_key, PartitionKeyValue};
use cosmos_driver::query::{Query, QueryOptions, QueryScope};
use cosmos_driver::{
    ContainerClient, CosmosDriver, CosmosOperation, DatabaseReference, OperationOptions,
    PartitionKey, PartitionKeyDefinition,
};
use cosmos_emulator::{Emulator, EmulatorBuilder};
use futures::TryStreamExt;
use serde_json::{json, Value};

/// Tenants with their user counts: t0 holds most keys, so a split of its range cuts it.
const TENANTS: [(&str, usize); 3] = [("t0", 30), ("t1", 3), ("t2", 3)];

fn key(parts: &[&str]) -> PartitionKey {
    PartitionKey::hierarchical(parts.iter().map(|p| PartitionKeyValue::from(*p))).unwrap()
}

fn documents() -> Vec<Value> {
    let mut out = Vec::new();
    for (t, users) in TENANTS {
        for u in 0..users {
            for s in 0..2 {
                out.push(json!({
                    "id": format!("{t}-u{u:02}-s{s}"),
                    "tenant": t,
                    "user": format!("u{u:02}"),
                    "session": format!("s{s}"),
                    "n": (u * 7 + s * 3) % 11,
                }));
            }
        }
    }
    out
}

struct Setup {
    emu: Emulator,
    driver: CosmosDriver,
    docs: Vec<Value>,
}

async fn create(driver: &CosmosDriver, name: &str, paths: &[&str]) {
    let c = DatabaseReference::new("h")
        .unwrap()
        .container(name)
        .unwrap();
    let definition =
        PartitionKeyDefinition::hierarchical(paths.iter().map(|p| p.to_string())).unwrap();
    driver
        .execute(
            CosmosOperation::create_container(c, definition),
            &OperationOptions::new(),
        )
        .await
        .expect("create a MultiHash container");
}

/// Containers `two` (/tenant/user) and `three` (/tenant/user/session) with [`documents`].
async fn setup(partitions: usize) -> Setup {
    let emu = common::start(EmulatorBuilder::new().partitions(partitions)).await;
    let driver = common::driver(common::options(&emu)).await;
    driver
        .execute(
            CosmosOperation::create_database(DatabaseReference::new("h").unwrap()),
            &OperationOptions::new(),
        )
        .await
        .unwrap();
    create(&driver, "two", &["/tenant", "/user"]).await;
    create(&driver, "three", &["/tenant", "/user", "/session"]).await;
    let docs = documents();
    let (two, three) = (driver.container("h", "two"), driver.container("h", "three"));
    for d in &docs {
        let s = |k: &str| d[k].as_str().unwrap().to_owned();
        three
            .create_item(key(&[&s("tenant"), &s("user"), &s("session")]), d, None)
            .await
            .unwrap();
        if d["session"] == "s0" {
            two.create_item(key(&[&s("tenant"), &s("user")]), d, None)
                .await
                .unwrap();
        }
    }
    Setup { emu, driver, docs }
}

/// Which documents a scope holds.
type Holds = Box<dyn Fn(&Value) -> bool>;

fn ids(values: &[Value]) -> Vec<String> {
    values
        .iter()
        .map(|v| v["id"].as_str().unwrap_or_default().to_owned())
        .collect()
}

fn expected(docs: &[Value], pred: impl Fn(&Value) -> bool) -> BTreeSet<String> {
    docs.iter()
        .filter(|d| pred(d))
        .map(|d| d["id"].as_str().unwrap().to_owned())
        .collect()
}

async fn run(c: &ContainerClient, q: &str, pk: PartitionKey, page: u32) -> Vec<Value> {
    c.query_items_with::<Value>(
        Query::new(q),
        QueryScope::PartitionKey(pk),
        QueryOptions::new().with_max_item_count(page),
    )
    .try_collect()
    .await
    .unwrap()
}

/// The pages of a query, each asked for by a fresh query resumed from the previous page's token.
async fn resumed_page_by_page(c: &ContainerClient, q: &str, pk: &PartitionKey) -> Vec<Value> {
    let mut got = Vec::new();
    let mut token: Option<String> = None;
    for round in 0.. {
        assert!(round < 200, "{q}: too many pages");
        let mut o = QueryOptions::new().with_max_item_count(4);
        if let Some(t) = &token {
            o = o.with_continuation(t.clone());
        }
        let mut pages = c
            .query_items_with::<Value>(Query::new(q), QueryScope::PartitionKey(pk.clone()), o)
            .into_pages();
        let Some(page) = pages.try_next().await.unwrap() else {
            break;
        };
        token = page.continuation().unwrap().map(str::to_owned);
        got.extend(page.into_items());
        if token.is_none() {
            break;
        }
    }
    got
}

/// The partition key ranges of `h/<c>` as (id, min, max).
async fn ranges(driver: &CosmosDriver, c: &str) -> Vec<(String, String, String)> {
    let reference = DatabaseReference::new("h").unwrap().container(c).unwrap();
    let r = driver
        .execute(
            CosmosOperation::read_partition_key_ranges(reference),
            &OperationOptions::new(),
        )
        .await
        .unwrap();
    let body: Value = r.json().unwrap();
    body["PartitionKeyRanges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let s = |k: &str| r[k].as_str().unwrap().to_owned();
            (s("id"), s("minInclusive"), s("maxExclusive"))
        })
        .collect()
}

/// The ranges holding keys of `prefix` (a container of `paths` paths).
async fn ranges_of_prefix(
    driver: &CosmosDriver,
    c: &str,
    prefix: &PartitionKey,
    paths: usize,
) -> Vec<String> {
    let lo = effective_partition_key(prefix, paths);
    let hi = format!("{lo}FF");
    ranges(driver, c)
        .await
        .into_iter()
        .filter(|(_, min, max)| min.as_str() < hi.as_str() && lo.as_str() < max.as_str())
        .map(|(id, _, _)| id)
        .collect()
}

/// The values of `q` over every item, evaluated as a single-range query per full key would not
/// do: ORDER BY c.n DESC, c.id over the expected documents.
fn ordered(docs: &[Value], pred: impl Fn(&Value) -> bool) -> Vec<String> {
    let mut d: Vec<&Value> = docs.iter().filter(|d| pred(d)).collect();
    d.sort_by(|a, b| {
        b["n"]
            .as_i64()
            .cmp(&a["n"].as_i64())
            .then(a["id"].as_str().cmp(&b["id"].as_str()))
    });
    d.iter()
        .map(|d| d["id"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn the_driver_and_the_emulator_compute_the_same_effective_partition_keys() {
    use cosmos_emulator::epk::PartitionKeyValue as EmulatorKey;
    let table: Vec<(Vec<Value>, usize)> = vec![
        (vec![json!("a")], 1),
        (vec![json!("")], 1),
        (vec![json!(5)], 1),
        (vec![json!(-1.25)], 1),
        (vec![json!(true)], 1),
        (vec![json!(null)], 1),
        (vec![json!("tenant"), json!("user")], 2),
        (vec![json!("t"), json!(42), json!(false)], 3),
        (vec![json!("t"), json!(null), json!("s")], 3),
        (vec![json!("only a prefix")], 3),
        (vec![json!("p"), json!("q")], 3),
        (vec![json!("ü nicode ✓"), json!(1e300)], 2),
    ];
    for (values, paths) in table {
        let header = Value::Array(values.clone()).to_string();
        let driver_key = PartitionKey::hierarchical(values.iter().map(|v| match v {
            Value::String(s) => PartitionKeyValue::from(s.as_str()),
            Value::Number(n) => PartitionKeyValue::Number(n.as_f64().unwrap()),
            Value::Bool(b) => PartitionKeyValue::Bool(*b),
            _ => PartitionKeyValue::Null,
        }))
        .unwrap();
        let emulator_key = EmulatorKey::from_header(&header).unwrap();
        let emulator_epk = if paths > 1 {
            emulator_key.epk_per_component()
        } else {
            emulator_key.epk()
        };
        assert_eq!(
            effective_partition_key(&driver_key, paths),
            emulator_epk.hex(),
            "{header} over {paths} paths"
        );
    }
}

#[tokio::test]
async fn point_operations_on_hierarchical_keys_use_every_component() {
    let s = setup(4).await;
    let three = s.driver.container("h", "three");
    let full = key(&["t1", "u02", "s1"]);
    let item = three
        .read_item::<Value>(full.clone(), "t1-u02-s1", None)
        .await
        .unwrap();
    assert_eq!(item.item().unwrap()["user"], "u02");
    let changed =
        json!({"id": "t1-u02-s1", "tenant": "t1", "user": "u02", "session": "s1", "n": 100});
    three
        .upsert_item(full.clone(), &changed, None)
        .await
        .unwrap();
    let read = three
        .read_item::<Value>(full.clone(), "t1-u02-s1", None)
        .await
        .unwrap();
    assert_eq!(read.item().unwrap()["n"], 100);
    let partial = three
        .read_item::<Value>(key(&["t1", "u02"]), "t1-u02-s1", None)
        .await
        .unwrap_err();
    assert_eq!(partial.status(), Some(400), "{partial}");
    three
        .delete_item(full.clone(), "t1-u02-s1", None)
        .await
        .unwrap();
    let gone = three
        .read_item::<Value>(full, "t1-u02-s1", None)
        .await
        .unwrap_err();
    assert_eq!(gone.status(), Some(404));
    let two = s.driver.container("h", "two");
    let r = two
        .read_item::<Value>(key(&["t0", "u05"]), "t0-u05-s0", None)
        .await
        .unwrap();
    assert_eq!(r.item().unwrap()["tenant"], "t0");
}

#[tokio::test]
async fn prefix_queries_read_exactly_their_keys_over_two_and_three_levels() {
    let s = setup(4).await;
    let (two, three) = (
        s.driver.container("h", "two"),
        s.driver.container("h", "three"),
    );
    let cases: Vec<(&ContainerClient, PartitionKey, Holds)> = vec![
        (
            &three,
            key(&["t0"]),
            Box::new(|d: &Value| d["tenant"] == "t0"),
        ),
        (
            &three,
            key(&["t2", "u01"]),
            Box::new(|d: &Value| d["tenant"] == "t2" && d["user"] == "u01"),
        ),
        (
            &two,
            key(&["t1"]),
            Box::new(|d: &Value| d["tenant"] == "t1" && d["session"] == "s0"),
        ),
        (
            &two,
            key(&["t0"]),
            Box::new(|d: &Value| d["tenant"] == "t0" && d["session"] == "s0"),
        ),
    ];
    for (c, pk, pred) in &cases {
        let got = run(c, "SELECT * FROM c", pk.clone(), 7).await;
        let got_ids = ids(&got);
        assert_eq!(
            got_ids.len(),
            got_ids.iter().collect::<BTreeSet<_>>().len(),
            "no repeats"
        );
        assert_eq!(
            got_ids.into_iter().collect::<BTreeSet<_>>(),
            expected(&s.docs, pred),
            "{pk:?}"
        );
        let sorted = run(
            c,
            "SELECT c.id, c.n FROM c ORDER BY c.n DESC, c.id ASC",
            pk.clone(),
            5,
        )
        .await;
        assert_eq!(
            ids(&sorted),
            ordered(&s.docs, pred),
            "ORDER BY under {pk:?}"
        );
        let count: Vec<Value> = run(c, "SELECT VALUE COUNT(1) FROM c", pk.clone(), 5).await;
        assert_eq!(
            count,
            vec![json!(expected(&s.docs, pred).len())],
            "COUNT under {pk:?}"
        );
    }
    // A full key keeps the single-range path and its one key.
    let full = run(&three, "SELECT * FROM c", key(&["t0", "u03", "s1"]), 7).await;
    assert_eq!(ids(&full), vec!["t0-u03-s1".to_owned()]);
}

#[tokio::test]
async fn prefix_queries_span_several_ranges_and_resume_at_every_page_boundary() {
    let s = setup(2).await;
    let three = s.driver.container("h", "three");
    let t0 = key(&["t0"]);
    // Cut t0's range at its median key, then each child again: t0 spans several ranges.
    for _ in 0..2 {
        let holders = ranges_of_prefix(&s.driver, "three", &t0, 3).await;
        for id in holders {
            common::split_range(&s.emu, "h", "three", &id).await;
        }
    }
    let spanning = ranges_of_prefix(&s.driver, "three", &t0, 3).await;
    assert!(spanning.len() >= 3, "t0 spans {spanning:?}");
    let is_t0 = |d: &Value| d["tenant"] == "t0";
    for q in [
        "SELECT * FROM c",
        "SELECT c.id, c.n FROM c ORDER BY c.n DESC, c.id ASC",
        "SELECT c.id FROM c WHERE c.n < 6",
    ] {
        let whole = run(&three, q, t0.clone(), 1000).await;
        let resumed = resumed_page_by_page(&three, q, &t0).await;
        assert_eq!(ids(&resumed), ids(&whole), "{q}");
        let want = if q.contains("c.n < 6") {
            expected(&s.docs, |d| is_t0(d) && d["n"].as_i64().unwrap() < 6)
        } else {
            expected(&s.docs, is_t0)
        };
        assert_eq!(
            ids(&whole).into_iter().collect::<BTreeSet<_>>(),
            want,
            "{q}"
        );
        if q.contains("ORDER BY") {
            assert_eq!(ids(&whole), ordered(&s.docs, is_t0));
        }
    }
}

#[tokio::test]
async fn a_split_in_the_middle_of_a_prefix_query_loses_and_repeats_nothing() {
    let s = setup(2).await;
    let three = s.driver.container("h", "three");
    let t0 = key(&["t0"]);
    let q = "SELECT c.id, c.n FROM c ORDER BY c.n DESC, c.id ASC";
    let all = ids(&run(&three, q, t0.clone(), 1000).await);
    assert_eq!(all.len(), 60);
    let options = || QueryOptions::new().with_max_item_count(4);
    let mut pages = three
        .query_items_with::<Value>(
            Query::new(q),
            QueryScope::PartitionKey(t0.clone()),
            options(),
        )
        .into_pages();
    let mut got = Vec::new();
    let mut token = None;
    for _ in 0..2 {
        let page = pages.try_next().await.unwrap().unwrap();
        token = page.continuation().unwrap().map(str::to_owned);
        got.extend(ids(&page.into_items()));
    }
    let holder = ranges_of_prefix(&s.driver, "three", &t0, 3).await;
    assert_eq!(holder.len(), 1);
    common::split_range(&s.emu, "h", "three", &holder[0]).await;
    assert_eq!(ranges_of_prefix(&s.driver, "three", &t0, 3).await.len(), 2);
    let mut splits = 0;
    while let Some(page) = pages.try_next().await.unwrap() {
        splits = page.summary().splits;
        got.extend(ids(&page.into_items()));
    }
    assert_eq!(got, all, "the running query continued on the children");
    assert_eq!(splits, 1, "the running query met the split once");

    let rest: Vec<Value> = three
        .query_items_with(
            Query::new(q),
            QueryScope::PartitionKey(t0),
            options().with_continuation(token.unwrap()),
        )
        .try_collect()
        .await
        .unwrap();
    let mut resumed = all[..8].to_vec();
    resumed.extend(ids(&rest));
    assert_eq!(
        resumed, all,
        "a token from before the split resumes on the children"
    );
}

#[tokio::test]
async fn cross_partition_queries_and_read_many_work_on_hierarchical_containers() {
    let s = setup(4).await;
    let three = s.driver.container("h", "three");
    // The plan's query range for a WHERE pinning a prefix, and for none, over every range.
    for (q, pred) in [
        (
            "SELECT c.id, c.n FROM c WHERE c.tenant = 't0' AND c.user = 'u04' ORDER BY c.n DESC, c.id ASC",
            Box::new(|d: &Value| d["tenant"] == "t0" && d["user"] == "u04") as Holds,
        ),
        (
            "SELECT c.id, c.n FROM c ORDER BY c.n DESC, c.id ASC",
            Box::new(|_: &Value| true),
        ),
    ] {
        let got: Vec<Value> = three
            .query_items_with(
                Query::new(q),
                QueryScope::CrossPartition,
                QueryOptions::new().with_max_item_count(6),
            )
            .try_collect()
            .await
            .unwrap();
        assert_eq!(ids(&got), ordered(&s.docs, pred), "{q}");
    }
    // Read many groups the keys by the range their full EPK lies in.
    let wanted: Vec<(PartitionKey, String)> = s
        .docs
        .iter()
        .step_by(5)
        .map(|d| {
            let part = |k: &str| d[k].as_str().unwrap().to_owned();
            (
                key(&[&part("tenant"), &part("user"), &part("session")]),
                part("id"),
            )
        })
        .chain([(key(&["t0", "u00", "s9"]), "absent".to_owned())])
        .collect();
    let read = three.read_many::<Value>(&wanted).await.unwrap();
    let want: Vec<String> = wanted[..wanted.len() - 1]
        .iter()
        .map(|(_, id)| id.clone())
        .collect();
    assert_eq!(ids(read.items()), want);
}

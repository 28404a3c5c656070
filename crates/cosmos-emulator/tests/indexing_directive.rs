//! `x-ms-indexing-directive: Exclude`: the item is stored and read by id, but queries that use the
//! index (a WHERE clause or ORDER BY) do not see it; a plain scan and the feeds still do.

use crate::common;

use common::{pk_header, start_with_container, TestClient};
use cosmos_emulator::EmulatorBuilder;
use http::Method;
use serde_json::{json, Value};

const DOCS: &str = "/dbs/db/colls/c/docs";

async fn write(
    c: &TestClient,
    base: &str,
    method: Method,
    path: &str,
    doc: &Value,
    extra: &[(&str, &str)],
) -> u16 {
    let pk = pk_header(&doc["pk"]);
    let mut headers = vec![("x-ms-documentdb-partitionkey", pk.as_str())];
    headers.extend_from_slice(extra);
    c.send(
        base,
        method,
        path,
        &headers,
        Some(doc.to_string().as_bytes()),
    )
    .await
    .status
}

async fn ids(c: &TestClient, base: &str, sql: &str) -> Vec<String> {
    let pk = pk_header(&json!("p"));
    let r = c
        .query(
            base,
            DOCS,
            &json!({"query": sql}),
            &[("x-ms-documentdb-partitionkey", &pk)],
        )
        .await;
    assert_eq!(r.status, 200, "{sql}: {}", r.message());
    let mut out: Vec<String> = r.json()["Documents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            d.as_str()
                .map_or_else(|| d["id"].as_str().unwrap().to_owned(), str::to_owned)
        })
        .collect();
    out.sort();
    out
}

const EXCLUDE: (&str, &str) = ("x-ms-indexing-directive", "Exclude");
const INCLUDE: (&str, &str) = ("x-ms-indexing-directive", "Include");

#[tokio::test]
async fn an_excluded_item_is_read_by_id_but_not_found_by_indexed_queries() {
    let (emu, c) = start_with_container(EmulatorBuilder::new()).await;
    let base = emu.endpoint();
    let kept = json!({"id": "kept", "pk": "p", "n": 1});
    let hidden = json!({"id": "hidden", "pk": "p", "n": 1});
    assert_eq!(write(&c, base, Method::POST, DOCS, &kept, &[]).await, 201);
    assert_eq!(
        write(&c, base, Method::POST, DOCS, &hidden, &[EXCLUDE]).await,
        201
    );

    let read = c
        .read_item(base, "db", "c", "hidden", &json!("p"), &[])
        .await;
    assert_eq!(read.status, 200, "a point read finds it");
    for sql in [
        "SELECT * FROM c WHERE c.n = 1",
        "SELECT * FROM c WHERE c.id = 'hidden' OR c.id = 'kept'",
        "SELECT VALUE c.id FROM c ORDER BY c.n",
    ] {
        assert_eq!(ids(&c, base, sql).await, ["kept"], "{sql}");
    }
    // A scan with no filter and no ORDER BY reads every stored item.
    assert_eq!(ids(&c, base, "SELECT * FROM c").await, ["hidden", "kept"]);

    // Replaced with Include (or with no directive) it is indexed again; upserted with Exclude it
    // leaves the index.
    let path = format!("{DOCS}/hidden");
    assert_eq!(
        write(&c, base, Method::PUT, &path, &hidden, &[INCLUDE]).await,
        200
    );
    assert_eq!(
        ids(&c, base, "SELECT * FROM c WHERE c.n = 1").await,
        ["hidden", "kept"]
    );
    let upsert = [("x-ms-documentdb-is-upsert", "true"), EXCLUDE];
    assert_eq!(
        write(&c, base, Method::POST, DOCS, &kept, &upsert).await,
        200
    );
    assert_eq!(
        ids(&c, base, "SELECT * FROM c WHERE c.n = 1").await,
        ["hidden"]
    );
    assert_eq!(
        write(&c, base, Method::PUT, &format!("{DOCS}/kept"), &kept, &[]).await,
        200
    );
    assert_eq!(
        ids(&c, base, "SELECT * FROM c WHERE c.n = 1").await,
        ["hidden", "kept"]
    );
}

#[tokio::test]
async fn an_unknown_directive_is_refused() {
    let (emu, c) = start_with_container(EmulatorBuilder::new()).await;
    let doc = json!({"id": "a", "pk": "p"});
    let bad = [("x-ms-indexing-directive", "Sometimes")];
    assert_eq!(
        write(&c, emu.endpoint(), Method::POST, DOCS, &doc, &bad).await,
        400
    );
    let r = c
        .read_item(emu.endpoint(), "db", "c", "a", &json!("p"), &[])
        .await;
    assert_eq!(r.status, 404, "nothing was written");
}

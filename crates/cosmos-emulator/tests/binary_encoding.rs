//! Cosmos binary JSON over real sockets: items created, upserted and replaced with binary bodies
//! (as an SDK with binary encoding on sends them), read back as JSON text and, when the request
//! accepts `CosmosBinary`, as binary; queries stay JSON text; bad binary bodies answer 400.

use crate::common;

use common::{pk_header, start_with_container, Resp, TestClient};
use cosmos_emulator::protocol::cosmos_binary::{decode, encode, PREAMBLE};
use cosmos_emulator::EmulatorBuilder;
use http::Method;
use serde_json::{json, Value};

const FORMATS: &str = "x-ms-cosmos-supported-serialization-formats";
const DOCS: &str = "/dbs/db/colls/c/docs";

/// Sends `body` (raw bytes) with partition key `p` and `extra` headers.
async fn send(
    c: &TestClient,
    base: &str,
    method: Method,
    path: &str,
    extra: &[(&str, &str)],
    body: &[u8],
) -> Resp {
    let pk = pk_header(&json!("p"));
    let mut headers = vec![("x-ms-documentdb-partitionkey", pk.as_str())];
    headers.extend_from_slice(extra);
    c.send(base, method, path, &headers, Some(body)).await
}

fn binary(value: &Value) -> Vec<u8> {
    encode(value).unwrap()
}

/// The decoded body of a binary answer, checked to be binary and typed as such.
fn binary_body(r: &Resp) -> Value {
    assert_eq!(r.body.first(), Some(&PREAMBLE), "not binary: {r:?}");
    assert_eq!(r.header("content-type"), Some("application/octet-stream"));
    decode(&r.body).unwrap_or_else(|e| panic!("the answer does not decode: {e}"))
}

/// The user properties of an item (system properties dropped).
fn user(mut v: Value) -> Value {
    let map = v.as_object_mut().unwrap();
    map.retain(|k, _| !k.starts_with('_'));
    v
}

#[tokio::test]
async fn binary_bodies_create_upsert_and_replace_items() {
    let (emu, c) = start_with_container(EmulatorBuilder::new()).await;
    let base = emu.endpoint();

    // Built by hand in the forms an SDK writes: an object with byte length and count, names and
    // values as length-in-marker strings, 7 as a literal and -40 as an 8-byte integer.
    let mut props = vec![0x82, b'i', b'd', 0x81, b'a', 0x82, b'p', b'k', 0x81, b'p'];
    props.extend_from_slice(&[0x81, b'n', 0x07, 0x81, b'm', 0xCB]);
    props.extend_from_slice(&(-40i64).to_le_bytes());
    let mut created = vec![PREAMBLE, 0xED, props.len() as u8, 4];
    created.extend_from_slice(&props);
    let r = send(&c, base, Method::POST, DOCS, &[], &created).await;
    assert_eq!(r.status, 201, "{r:?}");
    assert_eq!(r.header("content-type"), Some("application/json"));
    let doc = r.json();
    assert_eq!(
        user(doc.clone()),
        json!({"id": "a", "pk": "p", "n": 7, "m": -40})
    );
    assert!(doc["_etag"].is_string() && doc["_rid"].is_string());

    // Upsert with a binary body, the answer asked in binary.
    let upserted = json!({"id": "a", "pk": "p", "n": 8, "tags": ["x", "y"], "nested": {"f": 1.25}});
    let r = send(
        &c,
        base,
        Method::POST,
        DOCS,
        &[
            ("x-ms-documentdb-is-upsert", "True"),
            (FORMATS, "CosmosBinary"),
        ],
        &binary(&upserted),
    )
    .await;
    assert_eq!(r.status, 200, "{r:?}");
    let answer = binary_body(&r);
    assert_eq!(user(answer.clone()), upserted);
    assert_eq!(answer["_etag"].as_str(), r.header("etag"));

    // Read back as text and as binary: the same item.
    let path = format!("{DOCS}/a");
    let text = c.read_a(base, &[]).await;
    assert_eq!(text.status, 200);
    assert_eq!(text.header("content-type"), Some("application/json"));
    let as_text = text.json();
    assert_eq!(user(as_text.clone()), upserted);
    let bin = c.read_a(base, &[(FORMATS, "CosmosBinary")]).await;
    assert_eq!(bin.status, 200);
    assert_eq!(binary_body(&bin), as_text);

    // Replace with a binary body; the item reads back replaced.
    let replaced = json!({"id": "a", "pk": "p", "n": 9, "long": "z".repeat(300), "big": u64::MAX});
    let r = send(&c, base, Method::PUT, &path, &[], &binary(&replaced)).await;
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(user(r.json()), replaced);
    let bin = c.read_a(base, &[(FORMATS, "JsonText,CosmosBinary")]).await;
    assert_eq!(user(binary_body(&bin)), replaced);
    assert_eq!(user(c.read_a(base, &[]).await.json()), replaced);

    // A replace asked in binary answers in binary; one that accepts only text answers in text.
    let again = json!({"id": "a", "pk": "p", "n": 10});
    let r = send(
        &c,
        base,
        Method::PUT,
        &path,
        &[(FORMATS, "CosmosBinary")],
        &binary(&again),
    )
    .await;
    assert_eq!(user(binary_body(&r)), again);
    let r = send(
        &c,
        base,
        Method::PUT,
        &path,
        &[(FORMATS, "JsonText")],
        &binary(&again),
    )
    .await;
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(user(r.json()), again);

    // A create of an existing item with a binary body is still a conflict, answered in text.
    let r = send(
        &c,
        base,
        Method::POST,
        DOCS,
        &[(FORMATS, "CosmosBinary")],
        &binary(&again),
    )
    .await;
    assert_eq!(r.status, 409, "{r:?}");
    assert!(r.json()["code"].is_string());
}

#[tokio::test]
async fn queries_answer_in_text_when_binary_is_accepted() {
    let (emu, c) = start_with_container(EmulatorBuilder::new()).await;
    let base = emu.endpoint();
    let doc = json!({"id": "q", "pk": "p", "v": 3});
    let r = send(&c, base, Method::POST, DOCS, &[], &binary(&doc)).await;
    assert_eq!(r.status, 201, "{r:?}");
    let pk = pk_header(&json!("p"));
    let r = c
        .query(
            base,
            DOCS,
            &json!({"query": "SELECT VALUE c.v FROM c WHERE c.id = 'q'"}),
            &[
                (FORMATS, "JsonText,CosmosBinary"),
                ("x-ms-documentdb-partitionkey", pk.as_str()),
            ],
        )
        .await;
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(r.json()["Documents"], json!([3]));
}

#[tokio::test]
async fn bad_binary_bodies_are_refused_with_the_reason() {
    let (emu, c) = start_with_container(EmulatorBuilder::new()).await;
    let base = emu.endpoint();
    // An object that declares more bytes than follow.
    let r = send(
        &c,
        base,
        Method::POST,
        DOCS,
        &[],
        &[PREAMBLE, 0xEA, 40, 0x82, b'i', b'd'],
    )
    .await;
    assert_eq!(r.status, 400, "{r:?}");
    assert!(
        r.message()
            .contains("not valid Cosmos binary JSON: at byte 1: the container declares 40 bytes"),
        "{}",
        r.message()
    );
    // A marker the emulator does not decode is named.
    let r = send(&c, base, Method::POST, DOCS, &[], &[PREAMBLE, 0xCF, 0, 0]).await;
    assert_eq!(r.status, 400);
    assert!(
        r.message().contains("marker 0xCF (a 16-bit float)"),
        "{}",
        r.message()
    );
    // A body that is not an object gets the same answer as its text form.
    let r = send(&c, base, Method::POST, DOCS, &[], &binary(&json!([1]))).await;
    assert_eq!(r.status, 400);
    assert!(
        r.message().contains("must be a JSON object"),
        "{}",
        r.message()
    );
    // Nesting deeper than an item may: the item rule's answer.
    let mut deep = json!(1);
    for _ in 0..110 {
        deep = json!([deep]);
    }
    let r = send(
        &c,
        base,
        Method::POST,
        DOCS,
        &[],
        &binary(&json!({"id": "d", "pk": "p", "x": deep})),
    )
    .await;
    assert_eq!(r.status, 400);
    assert!(
        r.message().contains("deeper than the 100 levels"),
        "{}",
        r.message()
    );
    // Past the decoder's own bound, without recursion.
    let mut deeper = vec![PREAMBLE];
    deeper.extend(std::iter::repeat_n(0xE1u8, 100_000));
    deeper.push(0);
    let r = send(&c, base, Method::POST, DOCS, &[], &deeper).await;
    assert_eq!(r.status, 400);
    assert!(
        r.message().contains("nest deeper than 120 levels"),
        "{}",
        r.message()
    );
    // Binary is read only for items.
    let r = c
        .send(
            base,
            Method::POST,
            "/dbs",
            &[],
            Some(&binary(&json!({"id": "x"}))),
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(r.message().contains("only for items"), "{}", r.message());
    // Nothing was stored.
    assert_eq!(
        c.read_item(base, "db", "c", "d", &json!("p"), &[])
            .await
            .status,
        404
    );
}

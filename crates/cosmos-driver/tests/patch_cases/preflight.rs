//! Every pre-flight refusal is made before any request goes out.

use cosmos_driver::patch::PatchInstructions;
use cosmos_driver::{CosmosOperation, PartitionKeyDefinition, Precondition};
use cosmos_emulator::faults::OpKind;
use cosmos_emulator::EmulatorBuilder;
use http::{HeaderName, HeaderValue};
use serde_json::json;

use super::support::{
    all_requests, create, item_requests, loop_options, patch, patch_op, requests_of, setup,
};
use crate::common;

#[tokio::test]
async fn refusals_send_no_request() {
    let (emu, driver, c) = setup(EmulatorBuilder::new()).await;
    create(
        &driver,
        &c,
        &json!({"id": "a", "pk": "p", "n": 1, "nested": {"k": 1}}),
    )
    .await;
    let o = loop_options();
    // One PATCH learns the container's partition key paths; after it, nothing else is needed.
    patch(
        &driver,
        &c,
        "a",
        "p",
        &PatchInstructions::new().increment("/n", 1),
        &o,
    )
    .await
    .unwrap();
    emu.counters().reset();

    let p = PatchInstructions::new;
    let cases: Vec<(&str, cosmos_driver::CosmosOperation, &str)> = vec![
        (
            "caller precondition",
            patch_op(&c, "a", "p", &p().set("/x", json!(1))).with_precondition(Precondition::IfMatch("\"e\"".into())),
            "If-Match",
        ),
        (
            "caller If-Match header",
            patch_op(&c, "a", "p", &p().set("/x", json!(1)))
                .with_header(HeaderName::from_static("if-match"), HeaderValue::from_static("\"e\"")),
            "caller precondition",
        ),
        ("empty list", patch_op(&c, "a", "p", &p()), "no operations"),
        ("partition key", patch_op(&c, "a", "p", &p().set("/pk", json!("q"))), "#0 (set) is refused: its path \"/pk\" overlaps the partition key path \"/pk\""),
        ("inside the partition key", patch_op(&c, "a", "p", &p().set("/ok", json!(1)).add("/pk/x", json!(1))), "#1 (add)"),
        ("move from the partition key", patch_op(&c, "a", "p", &p().move_from("/pk", "/old")), "its from \"/pk\" overlaps"),
        ("move onto the partition key", patch_op(&c, "a", "p", &p().move_from("/n", "/pk")), "its path \"/pk\" overlaps"),
        ("id", patch_op(&c, "a", "p", &p().set("/id", json!("b"))), "touches \"id\""),
        ("_rid", patch_op(&c, "a", "p", &p().remove("/_rid")), "touches \"_rid\""),
        ("_self", patch_op(&c, "a", "p", &p().set("/_self", json!(""))), "touches \"_self\""),
        ("_etag", patch_op(&c, "a", "p", &p().set("/_etag", json!(""))), "touches \"_etag\""),
        ("_ts", patch_op(&c, "a", "p", &p().increment("/_ts", 1)), "touches \"_ts\""),
        ("not a pointer", patch_op(&c, "a", "p", &p().set("n", json!(1))), "must start with '/'"),
        ("bad escape", patch_op(&c, "a", "p", &p().set("/a~2", json!(1))), "'~' at byte 2"),
        ("whole document", patch_op(&c, "a", "p", &p().remove("")), "names the whole document"),
        (
            "not instructions",
            CosmosOperation::patch_item(c.item("a").unwrap()).with_partition_key("p").with_body(r#"{"ops":[]}"#),
            "not a list of patch instructions",
        ),
        (
            "condition predicate (the loop cannot evaluate it)",
            CosmosOperation::patch_item(c.item("a").unwrap())
                .with_partition_key("p")
                .with_body(r#"{"operations":[{"op":"set","path":"/x","value":1}],"condition":"from c where c.n = 2"}"#),
            "needs the service's PATCH verb",
        ),
    ];
    for (name, op, needle) in cases {
        let e = driver.execute(op, &o).await.expect_err(name);
        assert!(e.is_invalid_input(), "{name}: {e}");
        assert!(e.message().contains(needle), "{name}: {}", e.message());
        assert!(
            e.diagnostics().requests().is_empty(),
            "{name}: {:?}",
            e.diagnostics().requests()
        );
        assert_eq!(
            all_requests(&emu),
            0,
            "{name}: a request went out: {}",
            emu.counters().snapshot()
        );
    }
}

#[tokio::test]
async fn partition_key_refusal_on_a_new_driver_sends_no_item_request() {
    let (emu, driver, c) = setup(EmulatorBuilder::new()).await;
    create(&driver, &c, &json!({"id": "a", "pk": "p", "n": 1})).await;
    let fresh = common::driver(common::options(&emu)).await;
    emu.counters().reset();
    let e = patch(
        &fresh,
        &c,
        "a",
        "p",
        &PatchInstructions::new().remove("/pk"),
        &loop_options(),
    )
    .await
    .unwrap_err();
    assert!(
        e.is_invalid_input() && e.message().contains("partition key"),
        "{e}"
    );
    assert_eq!(item_requests(&emu), 0, "{}", emu.counters().snapshot());
    assert_eq!(
        requests_of(&emu, OpKind::Metadata),
        1,
        "one read of the container's definition"
    );
    // The definition is kept: the next refusal sends nothing at all.
    emu.counters().reset();
    patch(
        &fresh,
        &c,
        "a",
        "p",
        &PatchInstructions::new().set("/pk", json!(1)),
        &loop_options(),
    )
    .await
    .unwrap_err();
    assert_eq!(all_requests(&emu), 0, "{}", emu.counters().snapshot());
}

#[tokio::test]
async fn a_nested_partition_key_path_protects_its_ancestors() {
    let emu = common::start(EmulatorBuilder::new()).await;
    let driver = common::driver(common::options(&emu)).await;
    let db = cosmos_driver::DatabaseReference::new("db").unwrap();
    let o = loop_options();
    driver
        .execute(CosmosOperation::create_database(db.clone()), &o)
        .await
        .unwrap();
    let c = db.container("nested").unwrap();
    let def = PartitionKeyDefinition::new("/user/id").unwrap();
    driver
        .execute(CosmosOperation::create_container(c.clone(), def), &o)
        .await
        .unwrap();
    let doc = json!({"id": "a", "user": {"id": "u", "name": "x"}});
    let create = CosmosOperation::create_item(c.clone())
        .with_partition_key("u")
        .with_json_body(&doc)
        .unwrap();
    driver.execute(create, &o).await.unwrap();
    let run = |spec: PatchInstructions| {
        let op = CosmosOperation::patch_item(c.item("a").unwrap())
            .with_partition_key("u")
            .with_json_body(&spec)
            .unwrap();
        driver.execute(op, &o)
    };
    let ok = run(PatchInstructions::new().set("/user/name", json!("y")))
        .await
        .unwrap();
    assert_eq!(
        ok.json::<serde_json::Value>().unwrap()["user"],
        json!({"id": "u", "name": "y"})
    );
    for spec in [
        PatchInstructions::new().set("/user", json!({})),
        PatchInstructions::new().remove("/user/id"),
        PatchInstructions::new().move_from("/user", "/person"),
    ] {
        emu.counters().reset();
        let e = run(spec).await.unwrap_err();
        assert!(
            e.is_invalid_input() && e.message().contains("partition key path \"/user/id\""),
            "{e}"
        );
        assert_eq!(all_requests(&emu), 0);
    }
}

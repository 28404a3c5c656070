//! The read-modify-write loop: results, response synthesis, 412 handling and verbatim errors.

use std::error::Error as _;
use std::num::NonZeroU8;
use std::time::Duration;

use cosmos_driver::patch::PatchInstructions;
use cosmos_driver::{CosmosError, ErrorKind, OperationOptions};
use cosmos_emulator::faults::{DelaySpec, FaultRule, OpKind, Reaction};
use cosmos_emulator::EmulatorBuilder;
use serde_json::{json, Value};

use super::support::{create, loop_options, patch, read_doc, requests_of, setup, user_part};

fn attempts(n: u8) -> OperationOptions {
    loop_options().with_patch_max_attempts(NonZeroU8::new(n).unwrap())
}

#[tokio::test]
async fn applies_the_documented_example_and_keeps_member_order() {
    let (_emu, driver, c) = setup(EmulatorBuilder::new()).await;
    let doc = json!({"id": "bike", "pk": "road", "name": "R-410", "price": 455.95, "inventory": {"quantity": 15},
                     "used": false, "tags": ["r-series"]});
    create(&driver, &c, &doc).await;
    let spec = PatchInstructions::new()
        .add("/color", json!("silver"))
        .remove("/used")
        .set("/price", json!(355.45))
        .increment("/inventory/quantity", 10)
        .add("/tags/-", json!("featured-bikes"))
        .move_from("/color", "/inventory/color")
        .add("/a_new", json!(1))
        .add("/z_new", json!(2));
    let r = patch(&driver, &c, "bike", "road", &spec, &loop_options())
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let expected = json!({"id": "bike", "pk": "road", "name": "R-410", "price": 355.45,
                          "inventory": {"quantity": 25, "color": "silver"}, "tags": ["r-series", "featured-bikes"],
                          "a_new": 1, "z_new": 2});
    let returned: Value = r.json().unwrap();
    assert_eq!(
        user_part(&returned).to_string(),
        expected.to_string(),
        "member order is kept"
    );
    let (stored, etag) = read_doc(&driver, &c, "bike", "road").await;
    assert_eq!(
        user_part(&stored).to_string(),
        expected.to_string(),
        "the store keeps the order too"
    );
    assert_eq!(r.etag(), Some(etag.as_str()));
}

#[tokio::test]
async fn untouched_numbers_survive_the_round_trip_exactly() {
    let (_emu, driver, c) = setup(EmulatorBuilder::new()).await;
    // Doubles a best-effort float parser reads back one ulp off, integers beyond 2^53, extremes.
    let texts = [
        "15638.730045610173",
        "104870.75450795399",
        "108991.04681229181",
        "0.30000000000000004",
        "2.2250738585072014e-308",
        "5e-324",
        "1.7976931348623157e308",
        "9007199254740993",
        "-9223372036854775808",
        "18446744073709551615",
    ];
    let fields: Vec<String> = texts
        .iter()
        .enumerate()
        .map(|(i, t)| format!("\"v{i}\":{t}"))
        .collect();
    let body = format!("{{\"id\":\"nums\",\"pk\":\"p\",{}}}", fields.join(","));
    let create = cosmos_driver::CosmosOperation::create_item(c.clone())
        .with_partition_key("p")
        .with_body(body);
    driver.execute(create, &loop_options()).await.unwrap();
    patch(
        &driver,
        &c,
        "nums",
        "p",
        &PatchInstructions::new().set("/touched", json!(true)),
        &loop_options(),
    )
    .await
    .unwrap();
    let stored = driver
        .execute(crate::common::read(&c, "nums", "p"), &loop_options())
        .await
        .unwrap();
    let stored = std::str::from_utf8(stored.body()).unwrap().to_owned();
    for (i, text) in texts.iter().enumerate() {
        let start = stored
            .find(&format!("\"v{i}\":"))
            .expect("the field is kept")
            + format!("\"v{i}\":").len();
        let rest = &stored[start..];
        let end = rest.find([',', '}']).unwrap_or(rest.len());
        let written = &rest[..end];
        let same = written == *text
            || written.parse::<f64>().map(f64::to_bits).ok()
                == text.parse::<f64>().map(f64::to_bits).ok()
                && !text.chars().all(|c| c.is_ascii_digit() || c == '-');
        assert!(same, "v{i}: {text} came back as {written}");
    }
}

#[tokio::test]
async fn the_body_etag_is_the_response_etag_with_and_without_content_response() {
    let (_emu, driver, c) = setup(EmulatorBuilder::new()).await;
    create(&driver, &c, &json!({"id": "a", "pk": "p", "n": 1})).await;
    for on in [true, false] {
        let o = loop_options().with_content_response_on_write(on);
        let r = patch(
            &driver,
            &c,
            "a",
            "p",
            &PatchInstructions::new().increment("/n", 1),
            &o,
        )
        .await
        .unwrap();
        let body: Value = r.json().unwrap();
        let etag = r.etag().expect("the replace's etag");
        assert_eq!(body["_etag"], json!(etag), "content_response_on_write={on}");
        let (stored, stored_etag) = read_doc(&driver, &c, "a", "p").await;
        assert_eq!(stored_etag, etag);
        assert_eq!(user_part(&stored), user_part(&body));
        // The etag round-trips: a conditional replace with it succeeds.
        let replace = cosmos_driver::CosmosOperation::replace_item(c.item("a").unwrap())
            .with_partition_key("p")
            .with_json_body(&user_part(&stored))
            .unwrap()
            .with_precondition(cosmos_driver::Precondition::IfMatch(
                body["_etag"].as_str().unwrap().to_owned(),
            ));
        driver
            .execute(replace, &loop_options())
            .await
            .expect("the body's etag is current");
    }
}

#[tokio::test]
async fn one_lost_race_then_success_aggregates_every_sub_operation() {
    let (emu, driver, c) = setup(EmulatorBuilder::new()).await;
    create(&driver, &c, &json!({"id": "a", "pk": "p", "n": 1})).await;
    let _lose_once = emu.faults().add(
        FaultRule::new(Reaction::respond(412, 0))
            .for_ops([OpKind::Replace])
            .first(1),
    );
    emu.counters().reset();
    let r = patch(
        &driver,
        &c,
        "a",
        "p",
        &PatchInstructions::new().increment("/n", 5),
        &loop_options(),
    )
    .await
    .unwrap();
    assert_eq!(r.json::<Value>().unwrap()["n"], json!(6));
    let rows = r.diagnostics().requests();
    let statuses: Vec<String> = rows
        .iter()
        .map(|r| r.status().unwrap().to_string())
        .collect();
    assert_eq!(
        statuses,
        ["200", "412", "200", "200"],
        "read, lost replace, read, replace in dispatch order"
    );
    let summed: Duration = rows.iter().map(|r| r.duration()).sum();
    assert!(
        r.diagnostics().duration() >= summed,
        "{:?} < {summed:?}",
        r.diagnostics().duration()
    );
    assert_eq!(
        (
            requests_of(&emu, OpKind::Read),
            requests_of(&emu, OpKind::Replace)
        ),
        (2, 2)
    );
}

#[tokio::test]
async fn exhaustion_is_a_412_with_the_last_412_as_its_source() {
    let (emu, driver, c) = setup(EmulatorBuilder::new()).await;
    create(&driver, &c, &json!({"id": "a", "pk": "p", "n": 1})).await;
    let _always = emu
        .faults()
        .add(FaultRule::new(Reaction::respond(412, 0)).for_ops([OpKind::Replace]));
    for limit in [1u8, 3, 5] {
        emu.counters().reset();
        let e = patch(
            &driver,
            &c,
            "a",
            "p",
            &PatchInstructions::new().increment("/n", 1),
            &attempts(limit),
        )
        .await
        .unwrap_err();
        assert!(e.is_precondition_failed(), "{e}");
        assert_eq!(e.kind(), ErrorKind::Service);
        assert!(
            e.message()
                .contains(&format!("after {limit} read-modify-write attempt")),
            "{e}"
        );
        let source = e
            .source()
            .and_then(|s| s.downcast_ref::<CosmosError>())
            .expect("the last 412 is the source");
        assert!(source.is_precondition_failed());
        assert_eq!(
            e.diagnostics().requests().len(),
            1,
            "the last 412's own diagnostics"
        );
        assert_eq!(requests_of(&emu, OpKind::Read), u64::from(limit));
        assert_eq!(requests_of(&emu, OpKind::Replace), u64::from(limit));
    }
    let (stored, _) = read_doc(&driver, &c, "a", "p").await;
    assert_eq!(stored["n"], json!(1), "no replace landed");
}

#[tokio::test]
async fn the_default_limit_is_five_attempts() {
    let (emu, driver, c) = setup(EmulatorBuilder::new()).await;
    create(&driver, &c, &json!({"id": "a", "pk": "p", "n": 1})).await;
    let _always = emu
        .faults()
        .add(FaultRule::new(Reaction::respond(412, 0)).for_ops([OpKind::Replace]));
    emu.counters().reset();
    let e = patch(
        &driver,
        &c,
        "a",
        "p",
        &PatchInstructions::new().increment("/n", 1),
        &loop_options(),
    )
    .await
    .unwrap_err();
    assert!(e.is_precondition_failed());
    assert_eq!(requests_of(&emu, OpKind::Replace), 5);
}

#[tokio::test]
async fn sub_operation_errors_are_returned_verbatim() {
    let (emu, driver, c) = setup(EmulatorBuilder::new()).await;
    create(&driver, &c, &json!({"id": "a", "pk": "p", "n": 1})).await;
    let inc = PatchInstructions::new().increment("/n", 1);
    let o = loop_options();

    let e = patch(&driver, &c, "missing", "p", &inc, &o)
        .await
        .unwrap_err();
    assert!(e.is_not_found() && e.kind() == ErrorKind::Service, "{e}");
    assert_eq!(
        e.diagnostics().requests().len(),
        1,
        "the read's own diagnostics"
    );
    assert!(e.body().is_some(), "the service's error body is kept");

    {
        let _deny = emu
            .faults()
            .add(FaultRule::new(Reaction::respond(403, 0)).for_ops([OpKind::Replace]));
        let e = patch(&driver, &c, "a", "p", &inc, &o).await.unwrap_err();
        assert!(e.is_forbidden() && e.sub_status() == Some(0), "{e}");
        assert!(!e.diagnostics().requests().is_empty());
    }
    {
        let _throttle = emu.faults().add(
            FaultRule::new(Reaction::respond_retry_after(429, 3200, 5)).for_ops([OpKind::Read]),
        );
        let e = patch(&driver, &c, "a", "p", &inc, &o).await.unwrap_err();
        assert!(e.is_throttled() && e.sub_status() == Some(3200), "{e}");
        assert_eq!(
            e.diagnostics().requests().len(),
            10,
            "the driver's own throttling retries ran first"
        );
    }
    {
        let _throttle = emu.faults().add(
            FaultRule::new(Reaction::respond_retry_after(429, 3200, 5)).for_ops([OpKind::Replace]),
        );
        let e = patch(&driver, &c, "a", "p", &inc, &o).await.unwrap_err();
        assert!(e.is_throttled(), "{e}");
        assert_eq!(e.diagnostics().requests().len(), 10);
    }
    let (stored, _) = read_doc(&driver, &c, "a", "p").await;
    assert_eq!(stored["n"], json!(1), "nothing landed");
}

#[tokio::test]
async fn a_patch_that_does_not_fit_the_item_is_a_bad_request_and_changes_nothing() {
    let (emu, driver, c) = setup(EmulatorBuilder::new()).await;
    create(
        &driver,
        &c,
        &json!({"id": "a", "pk": "p", "n": 1, "s": "text"}),
    )
    .await;
    emu.counters().reset();
    let cases = [
        (
            PatchInstructions::new()
                .increment("/n", 1)
                .increment("/s", 1),
            "#1 (increment",
        ),
        (
            PatchInstructions::new().replace("/missing", json!(1)),
            "nothing exists",
        ),
        (
            PatchInstructions::new()
                .set("/n", json!(i64::MAX))
                .increment("/n", 1),
            "overflows",
        ),
        (
            PatchInstructions::new().add("/no/parent", json!(1)),
            "does not exist",
        ),
    ];
    for (spec, needle) in cases {
        let e = patch(&driver, &c, "a", "p", &spec, &loop_options())
            .await
            .unwrap_err();
        assert!(e.is_bad_request() && e.is_invalid_input(), "{e}");
        assert!(e.message().contains(needle), "{}", e.message());
        assert!(e
            .source()
            .and_then(|s| s.downcast_ref::<cosmos_driver::patch::PatchError>())
            .is_some());
        assert_eq!(
            e.diagnostics().requests().len(),
            1,
            "the read's diagnostics"
        );
    }
    assert_eq!(requests_of(&emu, OpKind::Replace), 0, "no replace was sent");
    let (stored, _) = read_doc(&driver, &c, "a", "p").await;
    assert_eq!(stored["n"], json!(1));
}

#[tokio::test]
async fn the_end_to_end_timeout_bounds_the_whole_loop() {
    let (emu, driver, c) = setup(EmulatorBuilder::new()).await;
    create(&driver, &c, &json!({"id": "a", "pk": "p", "n": 1})).await;
    let _slow_conflicts = emu.faults().add(
        FaultRule::new(Reaction::Respond {
            status: 412,
            sub_status: 0,
            retry_after_ms: None,
            delay: DelaySpec::fixed(150.0).unwrap(),
        })
        .for_ops([OpKind::Replace]),
    );
    let o = attempts(50).with_end_to_end_timeout(Duration::from_millis(500));
    let started = std::time::Instant::now();
    let e = patch(
        &driver,
        &c,
        "a",
        "p",
        &PatchInstructions::new().increment("/n", 1),
        &o,
    )
    .await
    .unwrap_err();
    let took = started.elapsed();
    assert!(e.is_end_to_end_timeout(), "{e}");
    assert!(
        took < Duration::from_secs(3),
        "the budget bounds the loop, not each sub-operation: {took:?}"
    );
}

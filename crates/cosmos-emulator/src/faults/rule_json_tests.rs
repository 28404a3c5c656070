//! Tests of the rules JSON format: every field, every error, and round trips.

use serde_json::json;

use super::rule_json::{parse_rules, RuleJson};
use super::*;

fn rule_to_json(rule: &FaultRule) -> serde_json::Value {
    serde_json::to_value(RuleJson::from_rule(rule)).unwrap()
}

fn snapshot_to_json(snapshot: &RuleSnapshot) -> serde_json::Value {
    serde_json::to_value(RuleJson::from_snapshot(snapshot)).unwrap()
}

fn one(json: &str) -> FaultRule {
    let mut rules = parse_rules(json.as_bytes()).unwrap_or_else(|e| panic!("{json}: {e}"));
    assert_eq!(rules.len(), 1);
    rules.remove(0)
}

fn err(json: &str) -> String {
    match parse_rules(json.as_bytes()) {
        Ok(rules) => panic!("{json} parsed into {rules:?}"),
        Err(e) => e,
    }
}

#[test]
fn full_example_parses() {
    let rule = one(
        r#"{"rules":[{"name":"slow-east","regions":["East US"],"ops":["read","read-feed"],"path":"/dbs/*",
        "probability":0.5,"first":10,"after":2,"enabled":false,
        "reaction":{"delay":{"uniform_ms":[800,1500]}}}]}"#,
    );
    let want = FaultRule::new(Reaction::Delay(DelaySpec::Uniform {
        min_ms: 800.0,
        max_ms: 1500.0,
    }))
    .named("slow-east")
    .in_regions(["East US"])
    .for_ops([OpKind::Read, OpKind::ReadFeed])
    .on_path("/dbs/*")
    .with_probability(0.5)
    .first(10)
    .after(2)
    .enabled(false);
    assert_eq!(rule, want);
}

#[test]
fn defaults_for_absent_and_null_fields() {
    for json in [
        r#"{"reaction":"close"}"#,
        r#"{"reaction":"close","regions":null,"first":null,"path":null}"#,
    ] {
        let rule = one(json);
        assert_eq!(rule.condition, Condition::any());
        assert_eq!(rule.name, "close");
    }
}

#[test]
fn document_shapes() {
    assert_eq!(parse_rules(br#"{"rules":[]}"#).unwrap(), vec![]);
    assert_eq!(
        parse_rules(br#"[{"reaction":"stall"},{"reaction":"close"}]"#)
            .unwrap()
            .len(),
        2
    );
    assert_eq!(one(r#"{"reaction":"stall"}"#).reaction, Reaction::Stall);
}

#[test]
fn reactions_table() {
    let cases = [
        (json!("close"), Reaction::Close),
        (json!({"close":{}}), Reaction::Close),
        (json!("stall"), Reaction::Stall),
        (json!({"stall":null}), Reaction::Stall),
        (json!("execute_then_close"), Reaction::ExecuteThenClose),
        (json!({"execute_then_close":{}}), Reaction::ExecuteThenClose),
        (
            json!({"execute_then_respond":{"status":408}}),
            Reaction::ExecuteThenRespond {
                status: 408,
                sub_status: 0,
            },
        ),
        (
            json!({"execute_then_respond":{"status":503,"sub_status":21008}}),
            Reaction::ExecuteThenRespond {
                status: 503,
                sub_status: 21008,
            },
        ),
        (json!("execute_then_close"), Reaction::ExecuteThenClose),
        (
            json!({"execute_then_respond":{"status":503}}),
            Reaction::ExecuteThenRespond {
                status: 503,
                sub_status: 0,
            },
        ),
        (
            json!({"execute_then_respond":{"status":408,"sub_status":7}}),
            Reaction::ExecuteThenRespond {
                status: 408,
                sub_status: 7,
            },
        ),
        (
            json!({"delay":250}),
            Reaction::Delay(DelaySpec::Fixed { ms: 250.0 }),
        ),
        (
            json!({"delay":{"fixed_ms":1.5}}),
            Reaction::Delay(DelaySpec::Fixed { ms: 1.5 }),
        ),
        (
            json!({"delay":{"lognormal_ms":{"median":40,"sigma":0.3}}}),
            Reaction::Delay(DelaySpec::LogNormal {
                median_ms: 40.0,
                sigma: 0.3,
            }),
        ),
        (json!({"respond":{"status":503}}), Reaction::respond(503, 0)),
        (
            json!({"respond":{"status":429,"sub_status":3200,"retry_after_ms":50,"delay_ms":0}}),
            Reaction::respond_retry_after(429, 3200, 50),
        ),
        (
            json!({"respond":{"status":503,"sub_status":0,"retry_after_ms":null,"delay_ms":20}}),
            Reaction::Respond {
                status: 503,
                sub_status: 0,
                retry_after_ms: None,
                delay: DelaySpec::Fixed { ms: 20.0 },
            },
        ),
        (
            json!({"respond":{"status":410,"sub_status":1002,"delay":{"uniform_ms":[5,10]}}}),
            Reaction::Respond {
                status: 410,
                sub_status: 1002,
                retry_after_ms: None,
                delay: DelaySpec::Uniform {
                    min_ms: 5.0,
                    max_ms: 10.0,
                },
            },
        ),
    ];
    for (reaction, want) in cases {
        let rule = one(&json!({ "reaction": reaction }).to_string());
        assert_eq!(rule.reaction, want, "{reaction}");
    }
}

#[test]
fn errors_name_the_field() {
    let cases = [
        ("{", "not valid JSON"),
        ("42", "expected {\"rules\":[...]}, got 42"),
        (r#"{"rules":{}}"#, "rules: invalid type: map, expected a sequence"),
        (r#"{"rules":[],"extra":1}"#, "extra: unknown field"),
        (
            r#"{"rules":[7]}"#,
            "rules[0]: invalid type: integer `7`",
        ),
        (r#"{"rules":[{"name":"x"}]}"#, "rules[0]: missing field `reaction`"),
        (
            r#"{"rules":[{"reaction":{"execute_then_respond":{"status":200}}}]}"#,
            "rules[0].reaction.execute_then_respond.status: expected an integer between 400 and 599, got 200",
        ),
        (
            r#"{"rules":[{"reaction":{"execute_then_respond":{}}}]}"#,
            "rules[0].reaction.execute_then_respond: missing field `status`",
        ),
        (
            r#"{"rules":[{"reaction":{"execute_then_close":{"status":503}}}]}"#,
            "execute_then_close takes no settings",
        ),
        (
            r#"{"rules":[{"reaction":"close","probabilty":1}]}"#,
            "rules[0].probabilty: unknown field",
        ),
        (
            r#"{"rules":[{"reaction":"close","probability":1.5}]}"#,
            "rules[0].probability: expected a number between 0 and 1, got 1.5",
        ),
        (
            r#"{"rules":[{"reaction":"close","probability":"half"}]}"#,
            "rules[0].probability: invalid type: string \"half\"",
        ),
        (
            r#"{"rules":[{"reaction":"close","first":-1}]}"#,
            "rules[0].first: invalid value: integer `-1`",
        ),
        (
            r#"{"rules":[{"reaction":"close","after":2.5}]}"#,
            "rules[0].after: invalid type: floating point `2.5`",
        ),
        (
            r#"{"rules":[{"reaction":"close","enabled":"yes"}]}"#,
            "rules[0].enabled: invalid type: string \"yes\", expected a boolean",
        ),
        (
            r#"{"rules":[{"reaction":"close","name":5}]}"#,
            "rules[0].name: invalid type: integer `5`, expected a string",
        ),
        (
            r#"{"rules":[{"reaction":"close","regions":"East US"}]}"#,
            "rules[0].regions: invalid type: string \"East US\", expected a sequence",
        ),
        (
            r#"{"rules":[{"reaction":"close","regions":["A",3]}]}"#,
            "rules[0].regions[1]: invalid type: integer `3`, expected a string",
        ),
        (
            r#"{"rules":[{"reaction":"close","ops":["read","write"]}]}"#,
            "rules[0].ops[1]: unknown variant `write`",
        ),
        (
            r#"{"rules":[{"reaction":"close","path":["/dbs"]}]}"#,
            "rules[0].path: invalid type: sequence, expected a string",
        ),
        (
            r#"{"rules":[{"reaction":"close","header":"x-a"}]}"#,
            "rules[0].header: invalid type: string \"x-a\"",
        ),
        (
            r#"{"rules":[{"reaction":"close","header":{"name":"x-a"}}]}"#,
            "rules[0].header: missing field `value`",
        ),
        (
            r#"{"rules":[{"reaction":"close","header":{"name":"x a","value":"1"}}]}"#,
            "rules[0].header.name: not a valid header name",
        ),
        (
            r#"{"rules":[{"reaction":"close","header":{"name":"x-a","value":"1","x":2}}]}"#,
            "rules[0].header.x: unknown field",
        ),
        (
            r#"{"rules":[{"reaction":"explode"}]}"#,
            "rules[0].reaction: unknown reaction \"explode\"",
        ),
        (
            r#"{"rules":[{"reaction":{"close":{},"stall":{}}}]}"#,
            "rules[0].reaction: one reaction per rule",
        ),
        (
            r#"{"rules":[{"reaction":{"close":5}}]}"#,
            "rules[0].reaction.close: close takes no settings",
        ),
        (
            r#"{"rules":[{"reaction":7}]}"#,
            "rules[0].reaction: invalid type: integer `7`, expected \"close\"",
        ),
        (
            r#"{"rules":[{"reaction":{"respond":{}}}]}"#,
            "rules[0].reaction.respond: missing field `status`",
        ),
        (
            r#"{"rules":[{"reaction":{"respond":{"status":42}}}]}"#,
            "rules[0].reaction.respond.status: expected an integer between 200 and 599, got 42",
        ),
        (
            r#"{"rules":[{"reaction":{"respond":{"status":70000}}}]}"#,
            "respond.status: expected an integer between 200 and 599, got 70000",
        ),
        (
            r#"{"rules":[{"reaction":{"respond":{"status":503,"sub_status":5000000000}}}]}"#,
            "rules[0].reaction.respond.sub_status: invalid value: integer `5000000000`, expected u32",
        ),
        (
            r#"{"rules":[{"reaction":{"respond":{"status":503,"retry_after_ms":"soon"}}}]}"#,
            "rules[0].reaction.respond.retry_after_ms: invalid type: string \"soon\"",
        ),
        (
            r#"{"rules":[{"reaction":{"respond":{"status":503,"delay_ms":-3}}}]}"#,
            "respond.delay_ms: fixed delay must be between",
        ),
        (
            r#"{"rules":[{"reaction":{"respond":{"status":503,"delay_ms":1,"delay":2}}}]}"#,
            "not both",
        ),
        (
            r#"{"rules":[{"reaction":{"respond":{"status":503,"code":"x"}}}]}"#,
            "respond.code: unknown field",
        ),
        (
            r#"{"rules":[{"reaction":{"delay":null}}]}"#,
            "rules[0].reaction.delay: invalid type",
        ),
        (
            r#"{"rules":[{"reaction":{"delay":"slow"}}]}"#,
            "rules[0].reaction.delay: invalid type",
        ),
        (
            r#"{"rules":[{"reaction":{"delay":{"gamma_ms":3}}}]}"#,
            "reaction.delay: unknown delay \"gamma_ms\"",
        ),
        (
            r#"{"rules":[{"reaction":{"delay":{"uniform_ms":[3]}}}]}"#,
            "rules[0].reaction.delay.uniform_ms: invalid length 1, expected an array of length 2",
        ),
        (
            r#"{"rules":[{"reaction":{"delay":{"uniform_ms":[9,3]}}}]}"#,
            "reaction.delay.uniform_ms: uniform delay minimum 9 ms is above",
        ),
        (
            r#"{"rules":[{"reaction":{"delay":{"uniform_ms":[1,"x"]}}}]}"#,
            "rules[0].reaction.delay.uniform_ms[1]: invalid type: string \"x\"",
        ),
        (
            r#"{"rules":[{"reaction":{"delay":{"lognormal_ms":{"median":5}}}}]}"#,
            "rules[0].reaction.delay.lognormal_ms: missing field `sigma`",
        ),
        (
            r#"{"rules":[{"reaction":{"delay":{"lognormal_ms":{"median":5,"sigma":-1}}}}]}"#,
            "lognormal_ms: log-normal sigma must be between 0 and 10",
        ),
        (
            r#"{"rules":[{"reaction":{"delay":{"lognormal_ms":{"median":5,"sigma":1,"mu":2}}}}]}"#,
            "lognormal_ms.mu: unknown field",
        ),
        (
            r#"[{"reaction":"close"},{"reaction":"stal"}]"#,
            "[1].reaction: unknown reaction \"stal\"",
        ),
        (
            r#"{"reaction":"close","after":"x"}"#,
            "rule.after: invalid type: string \"x\"",
        ),
    ];
    let mut wrong = Vec::new();
    for (json, want) in cases {
        let got = err(json);
        if !got.contains(want) {
            wrong.push(format!("{json}\n  got:  {got}\n  want: {want}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn long_strings_are_not_echoed_whole() {
    let long = "x".repeat(10_000);
    let got = err(&json!({"reaction": long}).to_string());
    assert!(got.len() < 300, "{}", got.len());
}

#[test]
fn written_rules_read_back_identically() {
    let rules = [
        FaultRule::new(Reaction::Close),
        FaultRule::new(Reaction::Stall)
            .named("s")
            .in_regions(["A", "B"])
            .first(3)
            .after(1)
            .enabled(false),
        FaultRule::new(Reaction::Delay(DelaySpec::LogNormal {
            median_ms: 30.0,
            sigma: 0.8,
        }))
        .for_ops([OpKind::Metadata, OpKind::Patch])
        .on_path("/dbs/*/docs/*")
        .with_header("x-ms-cosmos-hub-region-processing-only", "True")
        .with_probability(0.25),
        FaultRule::new(Reaction::respond_retry_after(429, 3200, 100)),
        FaultRule::new(Reaction::ExecuteThenClose).for_ops([OpKind::Create]),
        FaultRule::new(Reaction::ExecuteThenRespond {
            status: 408,
            sub_status: 0,
        }),
        FaultRule::new(Reaction::Respond {
            status: 503,
            sub_status: 21008,
            retry_after_ms: None,
            delay: DelaySpec::Uniform {
                min_ms: 1.0,
                max_ms: 2.0,
            },
        }),
    ];
    for rule in rules {
        let text = rule_to_json(&rule).to_string();
        assert_eq!(one(&text), rule, "{text}");
    }
}

#[test]
fn listed_rules_can_be_posted_back() {
    let snapshot = RuleSnapshot {
        id: RuleId(4),
        rule: FaultRule::new(Reaction::Close).named("c"),
        hits: 9,
    };
    let listed = snapshot_to_json(&snapshot);
    assert_eq!(listed["id"], 4);
    assert_eq!(listed["hits"], 9);
    assert_eq!(listed["reaction"], "close");
    assert_eq!(one(&listed.to_string()), snapshot.rule);
}

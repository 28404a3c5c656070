//! Writing fault rules as JSON, in the format [`super::json_read`] reads back.

use serde_json::{json, Map, Value};

use super::{DelaySpec, FaultRule, Reaction, RuleSnapshot};

/// A rule as a JSON object (every condition field written out).
pub fn rule_to_json(rule: &FaultRule) -> Value {
    let condition = &rule.condition;
    json!({
        "name": rule.name,
        "regions": condition.regions,
        "ops": condition.ops,
        "path": condition.path.as_ref().map(|p| p.as_str()),
        "header": condition.header.as_ref().map(|h| json!({"name": h.name, "value": h.value})),
        "probability": condition.probability,
        "first": condition.first,
        "after": condition.after,
        "enabled": condition.enabled,
        "reaction": reaction_to_json(&rule.reaction),
    })
}

/// A listed rule: `{"id":N, ...rule fields..., "hits":N}`.
pub fn snapshot_to_json(snapshot: &RuleSnapshot) -> Value {
    let mut out = Map::new();
    out.insert("id".to_owned(), json!(snapshot.id));
    if let Value::Object(fields) = rule_to_json(&snapshot.rule) {
        out.extend(fields);
    }
    out.insert("hits".to_owned(), json!(snapshot.hits));
    Value::Object(out)
}

/// A reaction as JSON.
pub fn reaction_to_json(reaction: &Reaction) -> Value {
    match reaction {
        Reaction::Delay(spec) => json!({ "delay": delay_to_json(spec) }),
        Reaction::Respond {
            status,
            sub_status,
            retry_after_ms,
            delay,
        } => {
            let mut body = json!({
                "status": status,
                "sub_status": sub_status,
                "retry_after_ms": retry_after_ms,
            });
            let (key, value) = match delay {
                DelaySpec::Fixed { ms } => ("delay_ms", json!(ms)),
                other => ("delay", delay_to_json(other)),
            };
            if let Value::Object(map) = &mut body {
                map.insert(key.to_owned(), value);
            }
            json!({ "respond": body })
        }
        Reaction::Close => json!("close"),
        Reaction::Stall => json!("stall"),
    }
}

/// A delay distribution as JSON.
pub fn delay_to_json(spec: &DelaySpec) -> Value {
    match *spec {
        DelaySpec::Fixed { ms } => json!({ "fixed_ms": ms }),
        DelaySpec::Uniform { min_ms, max_ms } => json!({ "uniform_ms": [min_ms, max_ms] }),
        DelaySpec::LogNormal { median_ms, sigma } => {
            json!({ "lognormal_ms": { "median": median_ms, "sigma": sigma } })
        }
    }
}

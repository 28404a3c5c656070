//! Reading fault rules from JSON: the `--faults` file and `POST /_emulator/faults` body.
//!
//! A document is `{"rules":[RULE,...]}`, a bare array `[RULE,...]`, or one `RULE` object:
//!
//! ```json
//! {"rules":[
//!   {"name":"slow-east","regions":["East US"],"ops":["read"],"path":"/dbs/*",
//!    "probability":0.5,"first":10,"after":0,"enabled":true,
//!    "reaction":{"delay":{"uniform_ms":[800,1500]}}},
//!   {"name":"throttle","ops":["create","upsert"],
//!    "reaction":{"respond":{"status":429,"sub_status":3200,"retry_after_ms":50,"delay_ms":0}}},
//!   {"regions":["West US"],"first":1,"reaction":"close"}
//! ]}
//! ```
//!
//! RULE fields (all optional except `reaction`):
//! - `name`: string label (default: named after the reaction);
//! - `regions`: array of region names, empty or absent = any region;
//! - `ops`: array of `read`, `create`, `replace`, `upsert`, `delete`, `patch`, `query`,
//!   `read-feed`, `metadata`; empty or absent = any;
//! - `path`: pattern over the request path, `*` matches any run of characters (`/` included);
//! - `header`: `{"name":"x-ms-...","value":"True"}`, a header the request must carry with this
//!   value (name and value compare ignoring case);
//! - `probability`: number in 0..=1 (default 1);
//! - `first`: fire at most this many times (integer, or null = no limit);
//! - `after`: let this many matching requests through first (integer, default 0);
//! - `enabled`: boolean (default true);
//! - `reaction`: one of
//!   - `{"delay": DELAY}`: wait, then serve;
//!   - `{"respond": {"status": 200..=599, "sub_status": int (default 0), "retry_after_ms": int or
//!     null, "delay_ms": number (default 0)}}` (or `"delay": DELAY` instead of `delay_ms`);
//!   - `"close"`: close the connection without answering;
//!   - `"stall"`: never answer.
//!
//! DELAY is a number of milliseconds, `{"fixed_ms":N}`, `{"uniform_ms":[MIN,MAX]}` or
//! `{"lognormal_ms":{"median":M,"sigma":S}}`.
//!
//! The fields `id` and `hits` that `GET /_emulator/faults` adds are accepted and ignored, so a
//! listing can be posted back. Any other field is an error; every error names the field at fault,
//! e.g. `rules[1].reaction.respond.status: expected an integer between 200 and 599, got 42`.

use serde_json::{Map, Value};

use super::condition::clamp_probability;
use super::text::{cut, quoted};
use super::{Condition, DelaySpec, FaultRule, HeaderMatch, OpKind, PathPattern, Reaction};

const RULE_FIELDS: [&str; 12] = [
    "name",
    "regions",
    "ops",
    "path",
    "header",
    "probability",
    "first",
    "after",
    "enabled",
    "reaction",
    "id",
    "hits",
];
const RESPOND_FIELDS: [&str; 5] = [
    "status",
    "sub_status",
    "retry_after_ms",
    "delay_ms",
    "delay",
];

/// Parse a rules document. Errors name the field that is wrong.
pub fn parse_rules(json: &[u8]) -> Result<Vec<FaultRule>, String> {
    let value: Value =
        serde_json::from_slice(json).map_err(|e| format!("fault rules are not valid JSON: {e}"))?;
    match value {
        Value::Object(map) if map.contains_key("rules") => {
            if let Some(extra) = map.keys().find(|k| *k != "rules") {
                return Err(format!(
                    "{}: unknown field (a rules document has only \"rules\")",
                    cut(extra)
                ));
            }
            match map.get("rules") {
                Some(Value::Array(items)) => parse_list(items, "rules"),
                Some(other) => Err(format!(
                    "rules: expected an array of rules, got {}",
                    kind(other)
                )),
                None => Ok(Vec::new()),
            }
        }
        Value::Object(_) => Ok(vec![parse_rule(&value, "rule")?]),
        Value::Array(items) => parse_list(&items, ""),
        other => Err(format!(
            "fault rules: expected {{\"rules\":[...]}}, got {}",
            kind(&other)
        )),
    }
}

fn parse_list(items: &[Value], at: &str) -> Result<Vec<FaultRule>, String> {
    items
        .iter()
        .enumerate()
        .map(|(i, item)| parse_rule(item, &format!("{at}[{i}]")))
        .collect()
}

/// Parse one RULE object found at `at` (used in error messages).
pub fn parse_rule(value: &Value, at: &str) -> Result<FaultRule, String> {
    let map = object(value, at, "a rule object")?;
    check_fields(map, at, &RULE_FIELDS)?;
    let reaction = match map.get("reaction") {
        Some(reaction) => parse_reaction(reaction, &format!("{at}.reaction"))?,
        None => {
            return Err(format!(
                "{at}.reaction: missing (every rule needs a reaction)"
            ))
        }
    };
    let mut rule = FaultRule::new(reaction);
    if let Some(name) = present(map, "name") {
        rule.name = string(name, &format!("{at}.name"))?.to_owned();
    }
    rule.condition = parse_condition(map, at)?;
    Ok(rule)
}

fn parse_condition(map: &Map<String, Value>, at: &str) -> Result<Condition, String> {
    let mut condition = Condition::any();
    if let Some(regions) = present(map, "regions") {
        let at = format!("{at}.regions");
        condition.regions = array(regions, &at, "an array of region names")?
            .iter()
            .enumerate()
            .map(|(i, r)| string(r, &format!("{at}[{i}]")).map(str::to_owned))
            .collect::<Result<_, _>>()?;
    }
    if let Some(ops) = present(map, "ops") {
        let at = format!("{at}.ops");
        condition.ops = array(ops, &at, "an array of operation kinds")?
            .iter()
            .enumerate()
            .map(|(i, op)| {
                let at = format!("{at}[{i}]");
                string(op, &at)?
                    .parse::<OpKind>()
                    .map_err(|e| format!("{at}: {e}"))
            })
            .collect::<Result<_, _>>()?;
    }
    if let Some(path) = present(map, "path") {
        condition.path = Some(PathPattern::new(string(path, &format!("{at}.path"))?));
    }
    if let Some(header) = present(map, "header") {
        let at = format!("{at}.header");
        let fields = object(header, &at, "{\"name\":...,\"value\":...}")?;
        check_fields(fields, &at, &["name", "value"])?;
        let part = |key: &str| match fields.get(key) {
            Some(v) => string(v, &format!("{at}.{key}")),
            None => Err(format!("{at}.{key}: missing")),
        };
        let name = part("name")?;
        if http::HeaderName::from_bytes(name.as_bytes()).is_err() {
            return Err(format!(
                "{at}.name: not a valid header name: {}",
                quoted(name)
            ));
        }
        condition.header = Some(HeaderMatch::new(name, part("value")?));
    }
    if let Some(p) = present(map, "probability") {
        let p = number(p, &format!("{at}.probability"))?;
        if !(0.0..=1.0).contains(&p) {
            return Err(format!(
                "{at}.probability: expected a number between 0 and 1, got {p}"
            ));
        }
        condition.probability = clamp_probability(p);
    }
    if let Some(first) = present(map, "first") {
        condition.first = Some(unsigned(first, &format!("{at}.first"))?);
    }
    if let Some(after) = present(map, "after") {
        condition.after = unsigned(after, &format!("{at}.after"))?;
    }
    if let Some(enabled) = present(map, "enabled") {
        condition.enabled = enabled.as_bool().ok_or_else(|| {
            format!(
                "{at}.enabled: expected true or false, got {}",
                kind(enabled)
            )
        })?;
    }
    Ok(condition)
}

/// Parse a reaction found at `at`.
pub fn parse_reaction(value: &Value, at: &str) -> Result<Reaction, String> {
    const EXPECTED: &str = "\"close\", \"stall\", {\"delay\":...} or {\"respond\":...}";
    let (name, body) = match value {
        Value::String(s) => (s.as_str(), &Value::Null),
        Value::Object(map) if map.len() == 1 => match map.iter().next() {
            Some((name, body)) => (name.as_str(), body),
            None => return Err(format!("{at}: expected {EXPECTED}")),
        },
        other => return Err(format!("{at}: expected {EXPECTED}, got {}", kind(other))),
    };
    match name {
        "close" | "stall" if body.is_null() || body.as_object().is_some_and(Map::is_empty) => {
            Ok(if name == "close" {
                Reaction::Close
            } else {
                Reaction::Stall
            })
        }
        "close" | "stall" => Err(format!(
            "{at}.{name}: takes no settings, got {}",
            kind(body)
        )),
        "delay" => Ok(Reaction::Delay(parse_delay(body, &format!("{at}.delay"))?)),
        "respond" => parse_respond(body, &format!("{at}.respond")),
        _ => Err(format!(
            "{at}: unknown reaction {} (expected {EXPECTED})",
            quoted(name)
        )),
    }
}

fn parse_respond(value: &Value, at: &str) -> Result<Reaction, String> {
    let map = object(value, at, "an object with \"status\"")?;
    check_fields(map, at, &RESPOND_FIELDS)?;
    let status = match present(map, "status") {
        Some(status) => unsigned(status, &format!("{at}.status"))?,
        None => return Err(format!("{at}.status: missing")),
    };
    let status = u16::try_from(status)
        .ok()
        .filter(|s| (200..=599).contains(s))
        .ok_or_else(|| {
            format!("{at}.status: expected an integer between 200 and 599, got {status}")
        })?;
    let sub_status = match present(map, "sub_status") {
        Some(sub) => {
            let n = unsigned(sub, &format!("{at}.sub_status"))?;
            u32::try_from(n).map_err(|_| format!("{at}.sub_status: {n} is too large"))?
        }
        None => 0,
    };
    let retry_after_ms = present(map, "retry_after_ms")
        .map(|v| unsigned(v, &format!("{at}.retry_after_ms")))
        .transpose()?;
    let delay = match (present(map, "delay_ms"), present(map, "delay")) {
        (Some(_), Some(_)) => {
            return Err(format!(
                "{at}: give either \"delay_ms\" or \"delay\", not both"
            ))
        }
        (Some(ms), None) => {
            let at = format!("{at}.delay_ms");
            DelaySpec::fixed(number(ms, &at)?).map_err(|e| format!("{at}: {e}"))?
        }
        (None, Some(spec)) => parse_delay(spec, &format!("{at}.delay"))?,
        (None, None) => DelaySpec::ZERO,
    };
    Ok(Reaction::Respond {
        status,
        sub_status,
        retry_after_ms,
        delay,
    })
}

/// Parse a DELAY found at `at`.
pub fn parse_delay(value: &Value, at: &str) -> Result<DelaySpec, String> {
    const EXPECTED: &str =
        "milliseconds, {\"fixed_ms\":N}, {\"uniform_ms\":[MIN,MAX]} or {\"lognormal_ms\":{\"median\":M,\"sigma\":S}}";
    if value.is_number() {
        return DelaySpec::fixed(number(value, at)?).map_err(|e| format!("{at}: {e}"));
    }
    let (name, body) = match value {
        Value::Object(map) if map.len() == 1 => match map.iter().next() {
            Some(entry) => entry,
            None => return Err(format!("{at}: expected {EXPECTED}")),
        },
        other => return Err(format!("{at}: expected {EXPECTED}, got {}", kind(other))),
    };
    let inner = format!("{at}.{name}");
    let spec = match name.as_str() {
        "fixed_ms" => DelaySpec::fixed(number(body, &inner)?),
        "uniform_ms" => match array(body, &inner, "[MIN,MAX]")? {
            [min, max] => DelaySpec::uniform(
                number(min, &format!("{inner}[0]"))?,
                number(max, &format!("{inner}[1]"))?,
            ),
            other => {
                return Err(format!(
                    "{inner}: expected [MIN,MAX], got {} numbers",
                    other.len()
                ))
            }
        },
        "lognormal_ms" => {
            let map = object(body, &inner, "{\"median\":M,\"sigma\":S}")?;
            check_fields(map, &inner, &["median", "sigma"])?;
            let median =
                present(map, "median").ok_or_else(|| format!("{inner}.median: missing"))?;
            let sigma = present(map, "sigma").ok_or_else(|| format!("{inner}.sigma: missing"))?;
            DelaySpec::log_normal(
                number(median, &format!("{inner}.median"))?,
                number(sigma, &format!("{inner}.sigma"))?,
            )
        }
        _ => {
            return Err(format!(
                "{at}: unknown delay {} (expected {EXPECTED})",
                quoted(name)
            ))
        }
    };
    spec.map_err(|e| format!("{inner}: {e}"))
}

/// A field that is present and not null.
fn present<'a>(map: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    map.get(key).filter(|v| !v.is_null())
}

fn check_fields(map: &Map<String, Value>, at: &str, known: &[&str]) -> Result<(), String> {
    match map.keys().find(|k| !known.contains(&k.as_str())) {
        Some(unknown) => Err(format!(
            "{at}.{}: unknown field (known: {})",
            cut(unknown),
            known.join(", ")
        )),
        None => Ok(()),
    }
}

fn object<'a>(
    value: &'a Value,
    at: &str,
    expected: &str,
) -> Result<&'a Map<String, Value>, String> {
    value
        .as_object()
        .ok_or_else(|| format!("{at}: expected {expected}, got {}", kind(value)))
}

fn array<'a>(value: &'a Value, at: &str, expected: &str) -> Result<&'a [Value], String> {
    value
        .as_array()
        .map(Vec::as_slice)
        .ok_or_else(|| format!("{at}: expected {expected}, got {}", kind(value)))
}

fn string<'a>(value: &'a Value, at: &str) -> Result<&'a str, String> {
    value
        .as_str()
        .ok_or_else(|| format!("{at}: expected a string, got {}", kind(value)))
}

fn number(value: &Value, at: &str) -> Result<f64, String> {
    value
        .as_f64()
        .ok_or_else(|| format!("{at}: expected a number, got {}", kind(value)))
}

fn unsigned(value: &Value, at: &str) -> Result<u64, String> {
    value
        .as_u64()
        .ok_or_else(|| format!("{at}: expected a non-negative integer, got {}", kind(value)))
}

/// A short description of a JSON value for error messages (numbers and short strings verbatim).
fn kind(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => quoted(s),
        Value::Array(_) => "an array".to_owned(),
        Value::Object(_) => "an object".to_owned(),
    }
}

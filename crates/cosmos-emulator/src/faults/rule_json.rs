//! Fault rules as JSON, read and written through one set of serde types: the `--faults` file, the
//! `POST /_emulator/faults` body and the `GET /_emulator/faults` listing.
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
//! RULE fields (all optional except `reaction`; `null` counts as absent):
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
//!   - `"close"` (or `{"close": null}`, `{"close": {}}`): close the connection without answering;
//!   - `"stall"` (likewise): never answer;
//!   - `"execute_then_close"` (likewise): carry the request out, then close the connection without
//!     answering (the write is stored, the client cannot know it);
//!   - `{"execute_then_respond": {"status": 400..=599, "sub_status": int (default 0)}}`: carry the
//!     request out, then answer this status (e.g. 408 or 503) instead of its result.
//!
//! DELAY is a number of milliseconds, `{"fixed_ms":N}`, `{"uniform_ms":[MIN,MAX]}` or
//! `{"lognormal_ms":{"median":M,"sigma":S}}`.
//!
//! The fields `id` and `hits` that a listing adds are accepted and ignored, so a listing can be
//! posted back. Any other field is an error; every error names the field at fault, e.g.
//! `rules[1].reaction.respond.status: expected an integer between 200 and 599, got 42`.

use std::fmt;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::condition::clamp_probability;
use super::quote::{cut, quoted};
use super::{
    Condition, DelaySpec, FaultRule, HeaderMatch, OpKind, PathPattern, Reaction, RuleId,
    RuleSnapshot,
};

/// A rule as JSON: what is read, and (with `id` and `hits` for a listing) what is written.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RuleJson {
    /// The installed rule's id (listings only; ignored when read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<RuleId>,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub regions: Option<Vec<String>>,
    #[serde(default)]
    pub ops: Option<Vec<OpKind>>,
    #[serde(default)]
    pub path: Option<String>,
    #[serde(default)]
    pub header: Option<HeaderJson>,
    #[serde(default)]
    pub probability: Option<f64>,
    #[serde(default)]
    pub first: Option<u64>,
    #[serde(default)]
    pub after: Option<u64>,
    #[serde(default)]
    pub enabled: Option<bool>,
    pub reaction: ReactionJson,
    /// How often the installed rule fired (listings only; ignored when read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hits: Option<u64>,
}

/// `{"name": ..., "value": ...}`: a header the request must carry.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct HeaderJson {
    pub name: String,
    pub value: String,
}

/// A reaction: `"close"`, `"stall"`, `"execute_then_close"`, `{"delay": DELAY}`,
/// `{"respond": {...}}` or `{"execute_then_respond": {...}}`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ReactionJson {
    Close,
    Stall,
    Delay(DelayJson),
    Respond(RespondJson),
    ExecuteThenClose,
    ExecuteThenRespond(ExecuteRespondJson),
}

/// `{"status": 400..=599, "sub_status": ...}`: the answer sent after carrying the request out.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ExecuteRespondJson {
    pub status: u64,
    #[serde(default)]
    pub sub_status: Option<u32>,
}

/// `{"status": ..., "sub_status": ..., "retry_after_ms": ..., "delay_ms" | "delay": ...}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RespondJson {
    pub status: u64,
    #[serde(default)]
    pub sub_status: Option<u32>,
    #[serde(default)]
    pub retry_after_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay: Option<DelayJson>,
}

/// A delay distribution: milliseconds (read only), `{"fixed_ms"}`, `{"uniform_ms"}` or
/// `{"lognormal_ms"}`.
// The variants name the JSON keys (`fixed_ms`, ...).
#[allow(clippy::enum_variant_names)]
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum DelayJson {
    FixedMs(f64),
    UniformMs([f64; 2]),
    LognormalMs(LogNormalJson),
}

/// `{"median": M, "sigma": S}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct LogNormalJson {
    pub median: f64,
    pub sigma: f64,
}

/// `{"rules": [...]}`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RulesDocument {
    #[serde(default)]
    rules: Option<Vec<RuleJson>>,
}

/// Parses a rules document. Errors name the field that is wrong.
pub(crate) fn parse_rules(json: &[u8]) -> Result<Vec<FaultRule>, String> {
    let value: Value =
        serde_json::from_slice(json).map_err(|e| format!("fault rules are not valid JSON: {e}"))?;
    let (docs, prefix): (Vec<RuleJson>, &str) = match &value {
        Value::Object(map) if map.contains_key("rules") => {
            let doc: RulesDocument = at_path(&value, "")?;
            (doc.rules.unwrap_or_default(), "rules")
        }
        Value::Object(_) => (vec![at_path(&value, "rule")?], "rule"),
        Value::Array(_) => (at_path(&value, "")?, ""),
        other => {
            return Err(format!(
                "fault rules: expected {{\"rules\":[...]}}, got {}",
                kind(other)
            ))
        }
    };
    docs.into_iter()
        .enumerate()
        .map(|(i, doc)| {
            let at = match prefix {
                "rule" => "rule".to_owned(),
                prefix => format!("{prefix}[{i}]"),
            };
            doc.into_rule(&at)
        })
        .collect()
}

/// Deserializes `value`, naming the path of any error (after `prefix`, e.g. `rule`).
fn at_path<T: de::DeserializeOwned>(value: &Value, prefix: &str) -> Result<T, String> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let path = match (prefix, path.as_str()) {
            (_, ".") => prefix.to_owned(),
            ("", p) => p.to_owned(),
            (prefix, p) => format!("{prefix}.{p}"),
        };
        let at = if path.is_empty() {
            "fault rules".to_owned()
        } else {
            path
        };
        shorten(format!("{at}: {}", e.into_inner()))
    })
}

/// Error messages stay short whatever the caller sent.
fn shorten(message: String) -> String {
    const LIMIT: usize = 300;
    match message.char_indices().nth(LIMIT) {
        Some((end, _)) => format!("{}…", &message[..end]),
        None => message,
    }
}

impl RuleJson {
    /// The rule this JSON describes, with the checks serde cannot express; `at` names it in errors.
    pub(crate) fn into_rule(self, at: &str) -> Result<FaultRule, String> {
        let reaction = self.reaction.into_reaction(&format!("{at}.reaction"))?;
        let mut rule = FaultRule::new(reaction);
        if let Some(name) = self.name {
            rule.name = name;
        }
        let mut condition = Condition::any();
        condition.regions = self.regions.unwrap_or_default();
        condition.ops = self.ops.unwrap_or_default();
        condition.path = self.path.map(PathPattern::new);
        if let Some(header) = self.header {
            if http::HeaderName::from_bytes(header.name.as_bytes()).is_err() {
                return Err(format!(
                    "{at}.header.name: not a valid header name: {}",
                    quoted(&header.name)
                ));
            }
            condition.header = Some(HeaderMatch::new(header.name, header.value));
        }
        if let Some(p) = self.probability {
            if !(0.0..=1.0).contains(&p) {
                return Err(format!(
                    "{at}.probability: expected a number between 0 and 1, got {p}"
                ));
            }
            condition.probability = clamp_probability(p);
        }
        condition.first = self.first;
        condition.after = self.after.unwrap_or(0);
        condition.enabled = self.enabled.unwrap_or(true);
        rule.condition = condition;
        Ok(rule)
    }

    /// A rule as JSON (every condition field written out).
    pub(crate) fn from_rule(rule: &FaultRule) -> Self {
        let condition = &rule.condition;
        RuleJson {
            id: None,
            name: Some(rule.name.clone()),
            regions: Some(condition.regions.clone()),
            ops: Some(condition.ops.clone()),
            path: condition.path.as_ref().map(|p| p.as_str().to_owned()),
            header: condition.header.as_ref().map(|h| HeaderJson {
                name: h.name.clone(),
                value: h.value.clone(),
            }),
            probability: Some(condition.probability),
            first: condition.first,
            after: Some(condition.after),
            enabled: Some(condition.enabled),
            reaction: ReactionJson::from_reaction(&rule.reaction),
            hits: None,
        }
    }

    /// A listed rule: its id, every rule field, and its hits.
    pub(crate) fn from_snapshot(snapshot: &RuleSnapshot) -> Self {
        RuleJson {
            id: Some(snapshot.id),
            hits: Some(snapshot.hits),
            ..Self::from_rule(&snapshot.rule)
        }
    }
}

impl ReactionJson {
    fn into_reaction(self, at: &str) -> Result<Reaction, String> {
        Ok(match self {
            ReactionJson::Close => Reaction::Close,
            ReactionJson::Stall => Reaction::Stall,
            ReactionJson::Delay(delay) => Reaction::Delay(delay.into_spec(&format!("{at}.delay"))?),
            ReactionJson::Respond(respond) => respond.into_reaction(&format!("{at}.respond"))?,
            ReactionJson::ExecuteThenClose => Reaction::ExecuteThenClose,
            ReactionJson::ExecuteThenRespond(answer) => {
                let status = u16::try_from(answer.status)
                    .ok()
                    .filter(|s| (400..=599).contains(s))
                    .ok_or_else(|| {
                        format!(
                            "{at}.execute_then_respond.status: expected an integer between 400 and 599, got {}",
                            answer.status
                        )
                    })?;
                Reaction::ExecuteThenRespond {
                    status,
                    sub_status: answer.sub_status.unwrap_or(0),
                }
            }
        })
    }

    fn from_reaction(reaction: &Reaction) -> Self {
        match reaction {
            Reaction::Delay(spec) => ReactionJson::Delay(DelayJson::from_spec(spec)),
            Reaction::Respond {
                status,
                sub_status,
                retry_after_ms,
                delay,
            } => {
                let (delay_ms, delay) = match delay {
                    DelaySpec::Fixed { ms } => (Some(*ms), None),
                    other => (None, Some(DelayJson::from_spec(other))),
                };
                ReactionJson::Respond(RespondJson {
                    status: u64::from(*status),
                    sub_status: Some(*sub_status),
                    retry_after_ms: *retry_after_ms,
                    delay_ms,
                    delay,
                })
            }
            Reaction::Close => ReactionJson::Close,
            Reaction::Stall => ReactionJson::Stall,
            Reaction::ExecuteThenClose => ReactionJson::ExecuteThenClose,
            Reaction::ExecuteThenRespond { status, sub_status } => {
                ReactionJson::ExecuteThenRespond(ExecuteRespondJson {
                    status: u64::from(*status),
                    sub_status: Some(*sub_status),
                })
            }
        }
    }
}

impl RespondJson {
    fn into_reaction(self, at: &str) -> Result<Reaction, String> {
        let status = u16::try_from(self.status)
            .ok()
            .filter(|s| (200..=599).contains(s))
            .ok_or_else(|| {
                format!(
                    "{at}.status: expected an integer between 200 and 599, got {}",
                    self.status
                )
            })?;
        let delay = match (self.delay_ms, self.delay) {
            (Some(_), Some(_)) => {
                return Err(format!(
                    "{at}: give either \"delay_ms\" or \"delay\", not both"
                ))
            }
            (Some(ms), None) => DelaySpec::fixed(ms).map_err(|e| format!("{at}.delay_ms: {e}"))?,
            (None, Some(spec)) => spec.into_spec(&format!("{at}.delay"))?,
            (None, None) => DelaySpec::ZERO,
        };
        Ok(Reaction::Respond {
            status,
            sub_status: self.sub_status.unwrap_or(0),
            retry_after_ms: self.retry_after_ms,
            delay,
        })
    }
}

impl DelayJson {
    fn into_spec(self, at: &str) -> Result<DelaySpec, String> {
        match self {
            DelayJson::FixedMs(ms) => DelaySpec::fixed(ms).map_err(|e| format!("{at}: {e}")),
            DelayJson::UniformMs([min, max]) => {
                DelaySpec::uniform(min, max).map_err(|e| format!("{at}.uniform_ms: {e}"))
            }
            DelayJson::LognormalMs(LogNormalJson { median, sigma }) => {
                DelaySpec::log_normal(median, sigma).map_err(|e| format!("{at}.lognormal_ms: {e}"))
            }
        }
    }

    fn from_spec(spec: &DelaySpec) -> Self {
        match *spec {
            DelaySpec::Fixed { ms } => DelayJson::FixedMs(ms),
            DelaySpec::Uniform { min_ms, max_ms } => DelayJson::UniformMs([min_ms, max_ms]),
            DelaySpec::LogNormal { median_ms, sigma } => DelayJson::LognormalMs(LogNormalJson {
                median: median_ms,
                sigma,
            }),
        }
    }
}

/// No settings: `null` or `{}`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NoSettings {}

impl<'de> Deserialize<'de> for ReactionJson {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ReactionVisitor;
        const EXPECTED: &str = "\"close\", \"stall\", \"execute_then_close\", {\"delay\":...}, {\"respond\":...} or {\"execute_then_respond\":...}";
        impl<'de> Visitor<'de> for ReactionVisitor {
            type Value = ReactionJson;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(EXPECTED)
            }

            fn visit_str<E: de::Error>(self, name: &str) -> Result<ReactionJson, E> {
                match name {
                    "close" => Ok(ReactionJson::Close),
                    "stall" => Ok(ReactionJson::Stall),
                    "execute_then_close" => Ok(ReactionJson::ExecuteThenClose),
                    other => Err(E::custom(format!(
                        "unknown reaction {} (expected {EXPECTED})",
                        quoted(other)
                    ))),
                }
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ReactionJson, A::Error> {
                let Some(name) = map.next_key::<String>()? else {
                    return Err(de::Error::custom(format!("expected {EXPECTED}, got {{}}")));
                };
                let reaction = match name.as_str() {
                    "close" | "stall" | "execute_then_close" => {
                        map.next_value::<Option<NoSettings>>()
                            .map_err(|_| de::Error::custom(format!("{name} takes no settings")))?;
                        match name.as_str() {
                            "close" => ReactionJson::Close,
                            "stall" => ReactionJson::Stall,
                            _ => ReactionJson::ExecuteThenClose,
                        }
                    }
                    "execute_then_respond" => ReactionJson::ExecuteThenRespond(map.next_value()?),
                    "delay" => ReactionJson::Delay(map.next_value()?),
                    "respond" => ReactionJson::Respond(map.next_value()?),
                    other => {
                        return Err(de::Error::custom(format!(
                            "unknown reaction {} (expected {EXPECTED})",
                            quoted(other)
                        )))
                    }
                };
                if let Some(extra) = map.next_key::<String>()? {
                    return Err(de::Error::custom(format!(
                        "one reaction per rule: {} follows {name}",
                        quoted(&extra)
                    )));
                }
                Ok(reaction)
            }
        }
        deserializer.deserialize_any(ReactionVisitor)
    }
}

impl<'de> Deserialize<'de> for DelayJson {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct DelayVisitor;
        const EXPECTED: &str = "milliseconds, {\"fixed_ms\":N}, {\"uniform_ms\":[MIN,MAX]} or {\"lognormal_ms\":{\"median\":M,\"sigma\":S}}";
        impl<'de> Visitor<'de> for DelayVisitor {
            type Value = DelayJson;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(EXPECTED)
            }

            fn visit_f64<E: de::Error>(self, ms: f64) -> Result<DelayJson, E> {
                Ok(DelayJson::FixedMs(ms))
            }

            fn visit_u64<E: de::Error>(self, ms: u64) -> Result<DelayJson, E> {
                Ok(DelayJson::FixedMs(ms as f64))
            }

            fn visit_i64<E: de::Error>(self, ms: i64) -> Result<DelayJson, E> {
                Ok(DelayJson::FixedMs(ms as f64))
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<DelayJson, A::Error> {
                let Some(name) = map.next_key::<String>()? else {
                    return Err(de::Error::custom(format!("expected {EXPECTED}, got {{}}")));
                };
                let delay = match name.as_str() {
                    "fixed_ms" => DelayJson::FixedMs(map.next_value()?),
                    "uniform_ms" => DelayJson::UniformMs(map.next_value()?),
                    "lognormal_ms" => DelayJson::LognormalMs(map.next_value()?),
                    other => {
                        return Err(de::Error::custom(format!(
                            "unknown delay {} (expected {EXPECTED})",
                            quoted(other)
                        )))
                    }
                };
                if let Some(extra) = map.next_key::<String>()? {
                    return Err(de::Error::custom(format!(
                        "one delay per reaction: {} follows {}",
                        quoted(&extra),
                        cut(&name)
                    )));
                }
                Ok(delay)
            }
        }
        deserializer.deserialize_any(DelayVisitor)
    }
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

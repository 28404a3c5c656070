//! The admin API of region outages, `/_emulator/outages` on the global port: pure request ->
//! response over [`RegionOutages`].
//!
//! | method | body                                                   | answer                               |
//! |--------|--------------------------------------------------------|--------------------------------------|
//! | GET    |                                                        | `{"outages":[{"region","mode"},..]}` |
//! | PUT    | `{"region":"West US","mode":"refuse"\|"close"\|"none"}` | the listing after the change         |
//! | DELETE |                                                        | `{"ended":N}`                        |
//!
//! `mode` defaults to `refuse`; `none` ends the region's outage.

use http::Method;
use serde::Deserialize;
use serde_json::{json, Value};

use super::admin::AdminResponse;
use super::outage::{OutageMode, RegionOutages};

/// The admin path this module answers.
pub(crate) const PATH: &str = "/_emulator/outages";

/// `PUT` body.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OutageChange {
    region: String,
    #[serde(default)]
    mode: Option<ModeOrNone>,
}

#[derive(Deserialize)]
#[serde(rename_all = "lowercase")]
enum ModeOrNone {
    Refuse,
    Close,
    None,
}

/// Answers a request on [`PATH`].
pub(crate) fn handle(method: &Method, body: &[u8], outages: &RegionOutages) -> AdminResponse {
    match *method {
        Method::GET => listing(outages),
        Method::PUT => {
            let change: OutageChange = match serde_json::from_slice(body) {
                Ok(change) => change,
                Err(e) => {
                    return AdminResponse::error(
                        400,
                        "BadRequest",
                        format!(
                            "the body must be {{\"region\": \"<region>\", \"mode\": \"refuse\"|\"close\"|\"none\"}}: {e}"
                        ),
                    )
                }
            };
            let result = match change.mode.unwrap_or(ModeOrNone::Refuse) {
                ModeOrNone::Refuse => outages.start(&change.region, OutageMode::Refuse),
                ModeOrNone::Close => outages.start(&change.region, OutageMode::Close),
                ModeOrNone::None => outages.end(&change.region).map(|_| ()),
            };
            match result {
                Ok(()) => listing(outages),
                Err(message) => AdminResponse::error(400, "BadRequest", message),
            }
        }
        Method::DELETE => AdminResponse::json(200, json!({ "ended": outages.end_all() })),
        _ => AdminResponse::error(
            405,
            "MethodNotAllowed",
            format!("use GET, PUT or DELETE on {PATH}"),
        ),
    }
}

fn listing(outages: &RegionOutages) -> AdminResponse {
    let list: Vec<Value> = outages
        .list()
        .into_iter()
        .map(|(region, mode)| json!({ "region": region, "mode": mode }))
        .collect();
    AdminResponse::json(200, json!({ "outages": list }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(outages: &RegionOutages, method: Method, body: &str) -> (u16, Value) {
        let r = handle(&method, body.as_bytes(), outages);
        (r.status, serde_json::from_slice(&r.body).unwrap())
    }

    #[test]
    fn table() {
        let o = RegionOutages::new(&["East US".to_owned(), "West US".to_owned()]);
        let cases = [
            (Method::GET, "", 200, json!({"outages": []})),
            (
                Method::PUT,
                r#"{"region":"west us"}"#,
                200,
                json!({"outages": [{"region": "West US", "mode": "refuse"}]}),
            ),
            (
                Method::PUT,
                r#"{"region":"East US","mode":"close"}"#,
                200,
                json!({"outages": [{"region": "East US", "mode": "close"}, {"region": "West US", "mode": "refuse"}]}),
            ),
            (
                Method::PUT,
                r#"{"region":"West US","mode":"none"}"#,
                200,
                json!({"outages": [{"region": "East US", "mode": "close"}]}),
            ),
            (Method::DELETE, "", 200, json!({"ended": 1})),
            (Method::GET, "", 200, json!({"outages": []})),
        ];
        for (method, body, status, want) in cases {
            assert_eq!(
                answer(&o, method.clone(), body),
                (status, want),
                "{method} {body}"
            );
        }
    }

    #[test]
    fn errors() {
        let o = RegionOutages::new(&["East US".to_owned()]);
        let cases = [
            (Method::PUT, "{", 400, "the body must be"),
            (
                Method::PUT,
                r#"{"region":"Mars"}"#,
                400,
                "unknown region \"Mars\"",
            ),
            (
                Method::PUT,
                r#"{"region":"East US","mode":"melt"}"#,
                400,
                "unknown variant `melt`",
            ),
            (
                Method::PUT,
                r#"{"region":"East US","when":1}"#,
                400,
                "unknown field `when`",
            ),
            (Method::POST, "", 405, "use GET, PUT or DELETE"),
        ];
        for (method, body, status, want) in cases {
            let (got_status, value) = answer(&o, method.clone(), body);
            let message = value["message"].as_str().unwrap_or_default();
            assert_eq!(got_status, status, "{method} {body}: {value}");
            assert!(message.contains(want), "{method} {body}: {message}");
        }
        assert!(o.list().is_empty(), "no error changed anything");
    }
}

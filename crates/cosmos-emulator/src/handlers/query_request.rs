//! The body of a query request (`application/query+json`, or `application/sql` text), read and
//! parsed into the query and its parameters.

use std::collections::HashMap;

use serde::Deserialize;
use serde_json::Value;

use crate::exchange::RequestCtx;
use crate::protocol::{headers, ApiError};
use crate::sql::parse_query;
use crate::sql::run::QueryRequest;

/// Most parameters in one request.
const MAX_PARAMETERS: usize = 1000;

/// The JSON body of a query request.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct QueryBody {
    pub query: String,
    #[serde(default)]
    pub parameters: Vec<Parameter>,
}

/// One `{"name": "@x", "value": ...}`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Parameter {
    pub name: String,
    pub value: Option<Value>,
}

/// Reads and parses the body (`application/query+json`, or `application/sql` text).
pub(super) fn read_request(ctx: &RequestCtx<'_>) -> Result<QueryRequest, ApiError> {
    let is_sql_text = ctx
        .header(headers::CONTENT_TYPE)
        .is_some_and(|c| c.trim().eq_ignore_ascii_case("application/sql"));
    let body: QueryBody = if is_sql_text {
        QueryBody {
            query: String::from_utf8(ctx.body.to_vec())
                .map_err(|_| ApiError::bad_request("The query text is not valid UTF-8."))?,
            parameters: Vec::new(),
        }
    } else {
        serde_json::from_slice(&ctx.body).map_err(|e| {
            ApiError::bad_request(format!(
                "The query body must be {{\"query\": \"...\", \"parameters\": [{{\"name\": \"@p\", \"value\": ...}}]}}: {e}"
            ))
        })?
    };
    if body.parameters.len() > MAX_PARAMETERS {
        return Err(ApiError::bad_request(format!(
            "The query has {} parameters; the limit is {MAX_PARAMETERS}.",
            body.parameters.len()
        )));
    }
    let mut params = HashMap::new();
    for p in body.parameters {
        if !p.name.starts_with('@') {
            return Err(ApiError::bad_request(format!(
                "The parameter name {:?} must start with '@'.",
                p.name
            )));
        }
        if let Some(v) = p.value {
            params.insert(p.name, v);
        }
    }
    let query = parse_query(&body.query)
        .map_err(|e| ApiError::bad_request(format!("The query is invalid: {e}")))?;
    Ok(QueryRequest {
        text: body.query,
        query,
        params,
    })
}

//! A query as a call receives it: its text, the parsed query and its parameters.

use std::collections::HashMap;

use serde_json::Value;

use crate::sql::ast::Query;

/// A parsed query request: the query and its parameters.
pub(crate) struct QueryRequest {
    pub text: String,
    pub query: Query,
    pub params: HashMap<String, Value>,
}

//! A query: its text and named parameters, and the JSON body the service expects
//! (`{"query": ..., "parameters": [{"name": "@p", "value": ...}]}`).

use bytes::Bytes;
use ring::digest;
use serde::Serialize;

use crate::error::CosmosError;

/// The longest query text accepted (the service's own limit is 512 KiB).
pub(crate) const MAX_QUERY_TEXT_BYTES: usize = 512 * 1024;
/// The most parameters one query may carry.
pub const MAX_PARAMETERS: usize = 256;
/// The longest parameter name accepted, `@` included.
pub(crate) const MAX_PARAMETER_NAME_BYTES: usize = 256;

/// One named parameter: `@name` and its JSON value.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct QueryParameter {
    name: String,
    value: serde_json::Value,
}

impl QueryParameter {
    /// The parameter's name, `@` included.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The parameter's value.
    pub fn value(&self) -> &serde_json::Value {
        &self.value
    }
}

/// A NoSQL query with named parameters.
///
/// ```
/// use cosmos_driver::Query;
///
/// let query = Query::new("SELECT * FROM c WHERE c.n > @lo AND c.pk = @pk")
///     .with_parameter("@lo", 10)?
///     .with_parameter("@pk", "c-7")?;
/// assert_eq!(query.parameters().len(), 2);
/// # Ok::<(), cosmos_driver::CosmosError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Query {
    #[serde(rename = "query")]
    text: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    parameters: Vec<QueryParameter>,
}

impl Query {
    /// A query with `text` and no parameters. The text is checked when the query is executed (or
    /// by [`Query::validate`]).
    pub fn new(text: impl Into<String>) -> Self {
        Query {
            text: text.into(),
            parameters: Vec::new(),
        }
    }

    /// The same query with parameter `name` (which starts with `@`) bound to `value`, serialized
    /// through serde. Refuses a malformed or repeated name, too many parameters, or a value serde
    /// cannot turn into JSON. The value is taken by value or by reference (`10`, `&n`, `"x"`).
    pub fn with_parameter<T: Serialize>(
        mut self,
        name: &str,
        value: T,
    ) -> Result<Self, CosmosError> {
        check_parameter_name(name)?;
        if self.parameters.iter().any(|p| p.name == name) {
            return Err(CosmosError::invalid_input(format!(
                "query parameter {name} is given twice"
            )));
        }
        if self.parameters.len() >= MAX_PARAMETERS {
            return Err(CosmosError::invalid_input(format!(
                "a query takes at most {MAX_PARAMETERS} parameters"
            )));
        }
        let value = serde_json::to_value(&value).map_err(|e| {
            CosmosError::invalid_input(format!("query parameter {name} cannot be serialized: {e}"))
        })?;
        self.parameters.push(QueryParameter {
            name: name.to_owned(),
            value,
        });
        Ok(self)
    }

    /// The same parameters with another text (the rewritten query a plan asks ranges to run).
    pub(crate) fn with_text(&self, text: &str) -> Query {
        Query {
            text: text.to_owned(),
            parameters: self.parameters.clone(),
        }
    }

    /// The query text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The parameters, in the order they were added.
    pub fn parameters(&self) -> &[QueryParameter] {
        &self.parameters
    }

    /// Checks what the service would refuse before anything is sent: empty or oversized text.
    pub fn validate(&self) -> Result<(), CosmosError> {
        if self.text.trim().is_empty() {
            return Err(CosmosError::invalid_input("the query text is empty"));
        }
        if self.text.len() > MAX_QUERY_TEXT_BYTES {
            return Err(CosmosError::invalid_input(format!(
                "the query text is {} bytes; at most {MAX_QUERY_TEXT_BYTES} are accepted",
                self.text.len()
            )));
        }
        Ok(())
    }

    /// The request body: `{"query": ..., "parameters": [...]}` (parameters left out when none).
    pub fn to_body(&self) -> Result<Bytes, CosmosError> {
        self.validate()?;
        serde_json::to_vec(self)
            .map(Bytes::from)
            .map_err(|e| CosmosError::invalid_input(format!("the query cannot be serialized: {e}")))
    }

    /// A digest of the text and parameters, which binds a continuation token to the query that
    /// issued it. Two queries share it only if their text and parameters are equal.
    pub fn fingerprint(&self) -> String {
        let mut ctx = digest::Context::new(&digest::SHA256);
        ctx.update(&(self.text.len() as u64).to_le_bytes());
        ctx.update(self.text.as_bytes());
        for p in &self.parameters {
            let value = p.value.to_string();
            ctx.update(&(p.name.len() as u64).to_le_bytes());
            ctx.update(p.name.as_bytes());
            ctx.update(&(value.len() as u64).to_le_bytes());
            ctx.update(value.as_bytes());
        }
        let d = ctx.finish();
        d.as_ref()[..12]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }
}

fn check_parameter_name(name: &str) -> Result<(), CosmosError> {
    let bad = |why: &str| {
        let shown: String = name.chars().take(40).collect();
        CosmosError::invalid_input(format!("query parameter name {shown:?} {why}"))
    };
    let Some(rest) = name.strip_prefix('@') else {
        return Err(bad("must start with '@'"));
    };
    if name.len() > MAX_PARAMETER_NAME_BYTES {
        return Err(bad("is too long"));
    }
    let mut chars = rest.chars();
    match chars.next() {
        Some(c) if c.is_ascii_alphabetic() || c == '_' => {}
        _ => return Err(bad("must continue with a letter or '_' after '@'")),
    }
    if !chars.all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(bad("may hold only letters, digits and '_'"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn body_carries_text_and_parameters_in_order() {
        #[derive(Serialize)]
        struct Range {
            lo: i32,
        }
        let q = Query::new("SELECT * FROM c WHERE c.n > @lo AND c.s = @s")
            .with_parameter("@lo", 10)
            .unwrap()
            .with_parameter("@s", "x")
            .unwrap()
            .with_parameter("@r", &Range { lo: 3 })
            .unwrap();
        let body: serde_json::Value = serde_json::from_slice(&q.to_body().unwrap()).unwrap();
        assert_eq!(
            body,
            json!({"query": "SELECT * FROM c WHERE c.n > @lo AND c.s = @s", "parameters": [
                {"name": "@lo", "value": 10}, {"name": "@s", "value": "x"},
                {"name": "@r", "value": {"lo": 3}}]})
        );
    }

    #[test]
    fn body_without_parameters_has_only_the_text() {
        let body = Query::new("SELECT * FROM c").to_body().unwrap();
        assert_eq!(&body[..], br#"{"query":"SELECT * FROM c"}"#);
    }

    #[test]
    fn bad_parameter_names_are_refused_with_the_reason() {
        let table = [
            ("lo", "must start with '@'"),
            ("@", "must continue with a letter"),
            ("@1a", "must continue with a letter"),
            ("@a-b", "only letters, digits"),
            ("@a b", "only letters, digits"),
        ];
        for (name, why) in table {
            let e = Query::new("SELECT 1").with_parameter(name, 1).unwrap_err();
            assert!(e.message().contains(why), "{name}: {}", e.message());
            assert_eq!(e.kind(), crate::error::ErrorKind::InvalidInput);
        }
        let long = format!("@{}", "a".repeat(MAX_PARAMETER_NAME_BYTES));
        assert!(Query::new("x").with_parameter(&long, 1).is_err());
    }

    #[test]
    fn repeated_parameter_and_too_many_are_refused() {
        let q = Query::new("SELECT 1").with_parameter("@a", 1).unwrap();
        let e = q.clone().with_parameter("@a", 2).unwrap_err();
        assert!(e.message().contains("given twice"));
        let mut q = Query::new("SELECT 1");
        for i in 0..MAX_PARAMETERS {
            q = q.with_parameter(&format!("@p{i}"), i).unwrap();
        }
        assert!(q.with_parameter("@last", 0).is_err());
    }

    #[test]
    fn unserializable_value_is_refused() {
        let mut m = std::collections::HashMap::new();
        m.insert((1, 2), 3);
        let e = Query::new("SELECT 1").with_parameter("@m", &m).unwrap_err();
        assert!(
            e.message().contains("@m cannot be serialized"),
            "{}",
            e.message()
        );
    }

    #[test]
    fn empty_and_oversized_text_are_refused() {
        assert!(Query::new("  ").to_body().is_err());
        let big = "a".repeat(MAX_QUERY_TEXT_BYTES + 1);
        assert!(Query::new(big)
            .to_body()
            .unwrap_err()
            .message()
            .contains("bytes"));
    }

    #[test]
    fn fingerprint_changes_with_text_and_parameters() {
        let a = Query::new("SELECT * FROM c WHERE c.n > @lo")
            .with_parameter("@lo", 1)
            .unwrap();
        let same = Query::new("SELECT * FROM c WHERE c.n > @lo")
            .with_parameter("@lo", 1)
            .unwrap();
        let other_value = Query::new("SELECT * FROM c WHERE c.n > @lo")
            .with_parameter("@lo", 2)
            .unwrap();
        let other_text = Query::new("SELECT * FROM c WHERE c.n >= @lo")
            .with_parameter("@lo", 1)
            .unwrap();
        assert_eq!(a.fingerprint(), same.fingerprint());
        assert_ne!(a.fingerprint(), other_value.fingerprint());
        assert_ne!(a.fingerprint(), other_text.fingerprint());
        assert_eq!(a.fingerprint().len(), 24);
    }
}

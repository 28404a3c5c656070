//! Partition keys: values, their header form, and container partition key definitions.

use std::fmt;
use std::fmt::Write as _;
use std::sync::Arc;

use http::HeaderValue;

use super::protocol_error::ProtocolError;

/// The most components a hierarchical partition key may have.
pub const MAX_HIERARCHY_DEPTH: usize = 3;

/// One component of a partition key.
#[derive(Clone, Debug, PartialEq)]
pub enum PartitionKeyValue {
    /// A JSON string.
    String(Arc<str>),
    /// A JSON number (the service hashes numbers as 64-bit floats).
    Number(f64),
    /// A JSON boolean.
    Bool(bool),
    /// JSON `null`.
    Null,
}

impl PartitionKeyValue {
    fn write_json(&self, out: &mut String) {
        match self {
            PartitionKeyValue::String(s) => write_json_string(out, s),
            PartitionKeyValue::Number(n) => write_json_number(out, *n),
            PartitionKeyValue::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            PartitionKeyValue::Null => out.push_str("null"),
        }
    }
}

/// Writes `s` as a JSON string using only printable ASCII (header values must be ASCII).
fn write_json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            ' '..='~' => out.push(c),
            _ => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
        }
    }
    out.push('"');
}

fn write_json_number(out: &mut String, n: f64) {
    // Whole numbers in the exactly representable range print without a fraction, like the SDKs.
    if n.fract() == 0.0 && n.abs() < 9_007_199_254_740_992.0 {
        let _ = write!(out, "{}", n as i64);
    } else {
        let _ = write!(out, "{n}");
    }
}

/// A partition key: one value, or up to three for a hierarchical (MultiHash) container.
///
/// Only the header form (`["value"]`) is kept, computed once when the key is built; cloning is a
/// reference-count increment.
#[derive(Clone, PartialEq)]
pub struct PartitionKey {
    header: HeaderValue,
}

/// Builds the header from JSON text written by this module (printable ASCII only).
fn header_from(json: String) -> Result<HeaderValue, ProtocolError> {
    let header = HeaderValue::from_maybe_shared(bytes::Bytes::from(json.into_bytes()))
        .map_err(|_| ProtocolError::new("the partition key cannot be written as a header value"))?;
    // Share the bytes now, so that sending the key never copies it.
    drop(header.clone());
    Ok(header)
}

fn single_header(value: &PartitionKeyValue) -> HeaderValue {
    let mut json = String::with_capacity(16);
    json.push('[');
    value.write_json(&mut json);
    json.push(']');
    header_from(json).unwrap_or_else(|_| HeaderValue::from_static("[null]"))
}

impl PartitionKey {
    fn from_values(values: Vec<PartitionKeyValue>) -> Result<Self, ProtocolError> {
        if values.is_empty() {
            return Err(ProtocolError::new(
                "a partition key needs at least one value",
            ));
        }
        if values.len() > MAX_HIERARCHY_DEPTH {
            return Err(ProtocolError::new(format!(
                "a hierarchical partition key has {} values; the service allows at most {MAX_HIERARCHY_DEPTH}",
                values.len()
            )));
        }
        for v in &values {
            if let PartitionKeyValue::Number(n) = v {
                if !n.is_finite() {
                    return Err(ProtocolError::new(format!(
                        "the partition key number {n} is not finite; JSON cannot carry it"
                    )));
                }
            }
        }
        let mut json = String::with_capacity(16);
        json.push('[');
        for (i, v) in values.iter().enumerate() {
            if i > 0 {
                json.push(',');
            }
            v.write_json(&mut json);
        }
        json.push(']');
        Ok(Self {
            header: header_from(json)?,
        })
    }

    /// A single-value key from any component.
    pub fn single(value: PartitionKeyValue) -> Result<Self, ProtocolError> {
        Self::from_values(vec![value])
    }

    /// A numeric key; fails for NaN and infinities.
    pub fn number(n: f64) -> Result<Self, ProtocolError> {
        Self::single(PartitionKeyValue::Number(n))
    }

    /// The JSON `null` key.
    pub fn null() -> Self {
        Self {
            header: HeaderValue::from_static("[null]"),
        }
    }

    /// A hierarchical key of one to three components, outermost first.
    pub fn hierarchical(
        values: impl IntoIterator<Item = PartitionKeyValue>,
    ) -> Result<Self, ProtocolError> {
        Self::from_values(values.into_iter().collect())
    }

    /// The components, outermost first (decoded from the header form).
    pub fn values(&self) -> Vec<PartitionKeyValue> {
        let parsed: Vec<serde_json::Value> =
            serde_json::from_str(self.as_json()).unwrap_or_default();
        parsed
            .into_iter()
            .map(|v| match v {
                serde_json::Value::String(s) => PartitionKeyValue::String(Arc::from(s)),
                serde_json::Value::Number(n) => {
                    PartitionKeyValue::Number(n.as_f64().unwrap_or_default())
                }
                serde_json::Value::Bool(b) => PartitionKeyValue::Bool(b),
                _ => PartitionKeyValue::Null,
            })
            .collect()
    }

    /// The value of the `x-ms-documentdb-partitionkey` header (`["v"]`).
    pub fn header_value(&self) -> &HeaderValue {
        &self.header
    }

    /// The header form as text.
    pub fn as_json(&self) -> &str {
        self.header.to_str().unwrap_or_default()
    }
}

impl fmt::Debug for PartitionKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PartitionKey({})", self.as_json())
    }
}

impl From<&str> for PartitionKey {
    fn from(s: &str) -> Self {
        let mut json = String::with_capacity(s.len() + 4);
        json.push('[');
        write_json_string(&mut json, s);
        json.push(']');
        Self {
            header: header_from(json).unwrap_or_else(|_| HeaderValue::from_static("[\"\"]")),
        }
    }
}

impl From<String> for PartitionKey {
    fn from(s: String) -> Self {
        PartitionKey::from(s.as_str())
    }
}

impl From<&String> for PartitionKey {
    fn from(s: &String) -> Self {
        PartitionKey::from(s.as_str())
    }
}

impl From<bool> for PartitionKey {
    fn from(b: bool) -> Self {
        Self {
            header: HeaderValue::from_static(if b { "[true]" } else { "[false]" }),
        }
    }
}

macro_rules! pk_from_int {
    ($($t:ty),*) => {$(
        impl From<$t> for PartitionKey {
            fn from(n: $t) -> Self {
                Self { header: single_header(&PartitionKeyValue::Number(n as f64)) }
            }
        }
    )*};
}
pk_from_int!(i32, i64, u32, u64);

impl From<&str> for PartitionKeyValue {
    fn from(s: &str) -> Self {
        PartitionKeyValue::String(Arc::from(s))
    }
}
impl From<String> for PartitionKeyValue {
    fn from(s: String) -> Self {
        PartitionKeyValue::String(Arc::from(s))
    }
}
impl From<bool> for PartitionKeyValue {
    fn from(b: bool) -> Self {
        PartitionKeyValue::Bool(b)
    }
}
impl From<f64> for PartitionKeyValue {
    fn from(n: f64) -> Self {
        PartitionKeyValue::Number(n)
    }
}
impl From<i64> for PartitionKeyValue {
    fn from(n: i64) -> Self {
        PartitionKeyValue::Number(n as f64)
    }
}

/// How a container derives partition keys from documents: one path (`Hash`) or up to three
/// (`MultiHash`, hierarchical).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartitionKeyDefinition {
    paths: Vec<String>,
}

impl PartitionKeyDefinition {
    /// A single-path definition such as `/tenantId`.
    pub fn new(path: impl Into<String>) -> Result<Self, ProtocolError> {
        Self::hierarchical([path.into()])
    }

    /// A hierarchical definition of one to three paths.
    pub fn hierarchical<I, S>(paths: I) -> Result<Self, ProtocolError>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let paths: Vec<String> = paths.into_iter().map(Into::into).collect();
        if paths.is_empty() || paths.len() > MAX_HIERARCHY_DEPTH {
            return Err(ProtocolError::new(format!(
                "a partition key definition needs 1 to {MAX_HIERARCHY_DEPTH} paths, not {}",
                paths.len()
            )));
        }
        for p in &paths {
            if !p.starts_with('/') || p.len() < 2 {
                return Err(ProtocolError::new(format!(
                    "the partition key path {p:?} must start with '/' and name a property"
                )));
            }
        }
        Ok(Self { paths })
    }

    /// The paths, outermost first.
    pub fn paths(&self) -> &[String] {
        &self.paths
    }

    /// The definition as the service's JSON (`{"paths":[..],"kind":"Hash","version":2}`).
    pub fn to_json(&self) -> serde_json::Value {
        let kind = if self.paths.len() == 1 {
            "Hash"
        } else {
            "MultiHash"
        };
        serde_json::json!({ "paths": self.paths, "kind": kind, "version": 2 })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_forms() {
        assert_eq!(PartitionKey::from("v").as_json(), r#"["v"]"#);
        assert_eq!(PartitionKey::from("a\"b\\c").as_json(), r#"["a\"b\\c"]"#);
        assert_eq!(
            PartitionKey::from("é😀").as_json(),
            r#"["\u00e9\ud83d\ude00"]"#
        );
        assert_eq!(PartitionKey::from(5i64).as_json(), "[5]");
        assert_eq!(PartitionKey::number(5.0).unwrap().as_json(), "[5]");
        assert_eq!(PartitionKey::number(2.5).unwrap().as_json(), "[2.5]");
        assert_eq!(PartitionKey::from(true).as_json(), "[true]");
        assert_eq!(PartitionKey::null().as_json(), "[null]");
        let h = PartitionKey::hierarchical([
            "t".into(),
            PartitionKeyValue::from(7i64),
            PartitionKeyValue::Null,
        ])
        .unwrap();
        assert_eq!(h.as_json(), r#"["t",7,null]"#);
        assert_eq!(
            h.values(),
            vec![
                "t".into(),
                PartitionKeyValue::Number(7.0),
                PartitionKeyValue::Null
            ]
        );
    }

    #[test]
    fn header_form_is_json() {
        let pk = PartitionKey::from("tab\tnew\nline é");
        let parsed: Vec<String> = serde_json::from_str(pk.as_json()).unwrap();
        assert_eq!(parsed, vec!["tab\tnew\nline é".to_string()]);
    }

    #[test]
    fn bad_keys_are_refused() {
        assert!(PartitionKey::number(f64::NAN)
            .unwrap_err()
            .message()
            .contains("not finite"));
        assert!(PartitionKey::hierarchical([]).is_err());
        let four = (0..4).map(|i| PartitionKeyValue::from(i as i64));
        assert!(PartitionKey::hierarchical(four)
            .unwrap_err()
            .message()
            .contains("at most 3"));
    }

    #[test]
    fn definitions() {
        let d = PartitionKeyDefinition::new("/pk").unwrap();
        assert_eq!(d.to_json()["kind"], "Hash");
        let h = PartitionKeyDefinition::hierarchical(["/a", "/b"]).unwrap();
        assert_eq!(h.to_json()["kind"], "MultiHash");
        assert!(PartitionKeyDefinition::new("pk")
            .unwrap_err()
            .message()
            .contains("must start with '/'"));
    }
}

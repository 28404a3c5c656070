//! Partition key values as the service understands them, and the effective partition key (EPK) that
//! hash partitioning version 2 derives from them.
//!
//! EPK V2: each component is written in the service's binary form for hashing (a type marker byte,
//! then for numbers the IEEE-754 double in little-endian order, for strings the UTF-8 bytes followed
//! by 0xFF); MurmurHash3 x64-128 (seed 0) of the whole buffer; the 16 result bytes (h1 then h2,
//! little-endian) reversed; the two top bits cleared. Rendered as 32 upper-case hex digits.

use serde_json::Value;

use super::key::Epk;
use super::murmur::murmur3_x64_128;

/// The longest partition key header accepted (a 2 KB key with JSON escapes fits).
pub(super) const MAX_HEADER_BYTES: usize = 4096;

const MARKER_UNDEFINED: u8 = 0x00;
const MARKER_NULL: u8 = 0x01;
const MARKER_FALSE: u8 = 0x02;
const MARKER_TRUE: u8 = 0x03;
const MARKER_NUMBER: u8 = 0x05;
const MARKER_STRING: u8 = 0x08;
const STRING_END: u8 = 0xFF;

/// One component of a partition key value.
#[derive(Clone, Debug, PartialEq)]
pub enum PkComponent {
    /// The path is absent from the document (`{}` in the header).
    Undefined,
    Null,
    Bool(bool),
    Number(f64),
    String(String),
}

/// A partition key value: its components (empty = the container-wide "none" key).
#[derive(Clone, Debug, PartialEq)]
pub struct PartitionKeyValue(pub Vec<PkComponent>);

impl PkComponent {
    /// Reads one component from its JSON form; objects stand for Undefined only when empty.
    pub fn from_json(value: &Value) -> Result<Self, String> {
        match value {
            Value::Null => Ok(Self::Null),
            Value::Bool(b) => Ok(Self::Bool(*b)),
            Value::Number(n) => n
                .as_f64()
                .map(Self::Number)
                .ok_or_else(|| format!("partition key number {n} is out of range")),
            Value::String(s) => Ok(Self::String(s.clone())),
            Value::Object(map) if map.is_empty() => Ok(Self::Undefined),
            other => Err(format!(
                "partition key component {other} is not a string, number, boolean, null or {{}}"
            )),
        }
    }

    fn write_for_hashing(&self, out: &mut Vec<u8>) {
        match self {
            Self::Undefined => out.push(MARKER_UNDEFINED),
            Self::Null => out.push(MARKER_NULL),
            Self::Bool(false) => out.push(MARKER_FALSE),
            Self::Bool(true) => out.push(MARKER_TRUE),
            Self::Number(n) => {
                out.push(MARKER_NUMBER);
                out.extend_from_slice(&n.to_le_bytes());
            }
            Self::String(s) => {
                out.push(MARKER_STRING);
                out.extend_from_slice(s.as_bytes());
                out.push(STRING_END);
            }
        }
    }
}

impl PartitionKeyValue {
    /// Parses the `x-ms-documentdb-partitionkey` header: a JSON array of components.
    pub fn from_header(text: &str) -> Result<Self, String> {
        if text.len() > MAX_HEADER_BYTES {
            return Err(format!(
                "the partition key header is {} bytes long; it may be at most {MAX_HEADER_BYTES} bytes",
                text.len()
            ));
        }
        let parsed: Value = serde_json::from_str(text)
            .map_err(|e| format!("the partition key header {text:?} is not valid JSON: {e}"))?;
        let Value::Array(items) = parsed else {
            return Err(format!(
                "the partition key header {text:?} is not a JSON array"
            ));
        };
        items
            .iter()
            .map(PkComponent::from_json)
            .collect::<Result<Vec<_>, _>>()
            .map(Self)
    }

    /// Extracts the value at `path` (already split into segments) from a document; absent = Undefined.
    pub fn from_document(doc: &Value, path: &[String]) -> Result<Self, String> {
        match doc {
            Value::Object(map) => Self::from_object(map, path),
            _ => Ok(Self(vec![PkComponent::Undefined])),
        }
    }

    /// Like [`Self::from_document`], for a document already held as a JSON object.
    pub fn from_object(
        doc: &serde_json::Map<String, Value>,
        path: &[String],
    ) -> Result<Self, String> {
        let Some((first, rest)) = path.split_first() else {
            return Ok(Self(vec![PkComponent::Undefined]));
        };
        let mut current = doc.get(first.as_str());
        for segment in rest {
            current = current.and_then(|v| v.get(segment.as_str()));
        }
        let component = match current {
            // As the service takes them: a missing value, and an object, are undefined.
            None | Some(Value::Object(_)) => PkComponent::Undefined,
            Some(Value::Array(_)) => {
                return Err(format!(
                    "the partition key at /{} must be a string, number, boolean, null or an object (taken as undefined), not an array",
                    path.join("/")
                ))
            }
            Some(value) => PkComponent::from_json(value)?,
        };
        Ok(Self(vec![component]))
    }

    /// The effective partition key under hash version 2 (`Hash`: one hash over every component);
    /// the "none" key (no components) is 0.
    pub fn epk(&self) -> Epk {
        if self.0.is_empty() {
            return Epk::single(0);
        }
        let mut buffer = Vec::with_capacity(32);
        for component in &self.0 {
            component.write_for_hashing(&mut buffer);
        }
        Epk::single(hash_v2(&buffer))
    }

    /// The effective partition key of a hierarchical (`MultiHash`) key: each component's own
    /// hash, in order (one part per component).
    pub fn epk_per_component(&self) -> Epk {
        let parts: Vec<u128> = self
            .0
            .iter()
            .map(|c| {
                let mut buffer = Vec::with_capacity(16);
                c.write_for_hashing(&mut buffer);
                hash_v2(&buffer)
            })
            .collect();
        Epk::from_parts(&parts).unwrap_or(Epk::MIN)
    }
}

/// MurmurHash3 x64-128 (seed 0) of `buffer` as the service reads it: bytes h1(LE) || h2(LE)
/// reversed are h2(BE) || h1(BE), the number (h2 << 64) | h1; the top two bits cleared.
fn hash_v2(buffer: &[u8]) -> u128 {
    let (h1, h2) = murmur3_x64_128(buffer, 0);
    let value = (u128::from(h2) << 64) | u128::from(h1);
    value & (u128::MAX >> 2)
}

/// Renders an EPK as the service does (32 upper-case hex digits).
pub fn epk_hex(epk: Epk) -> String {
    epk.hex()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_longer_than_the_limit_are_refused_by_name() {
        let long = format!("[\"{}\"]", "k".repeat(MAX_HEADER_BYTES));
        assert!(PartitionKeyValue::from_header(&long)
            .unwrap_err()
            .contains("4096"));
        let fits = format!("[\"{}\"]", "k".repeat(2048));
        assert!(PartitionKeyValue::from_header(&fits).is_ok());
    }

    fn epk_of(component: PkComponent) -> String {
        epk_hex(PartitionKeyValue(vec![component]).epk())
    }

    /// Published V2 vectors (the official Java SDK's partition key hashing tests).
    #[test]
    fn matches_published_v2_vectors() {
        let long_a = "a".repeat(1024);
        let cases: Vec<(PkComponent, &str)> = vec![
            (
                PkComponent::String(String::new()),
                "32E9366E637A71B4E710384B2F4970A0",
            ),
            (
                PkComponent::String("partitionKey".into()),
                "013AEFCF77FA271571CF665A58C933F1",
            ),
            (
                PkComponent::String(long_a),
                "332BDF5512AE49615F32C7D98C2DB86C",
            ),
            (PkComponent::Null, "378867E4430E67857ACE5C908374FE16"),
            (PkComponent::Undefined, "11622DAA78F835834610ABE56EFF5CB5"),
            (PkComponent::Bool(true), "0E711127C5B5A8E4726AC6DD306A3E59"),
            (PkComponent::Bool(false), "2FE1BE91E90A3439635E0E9E37361EF2"),
            (
                PkComponent::Number(-128.0),
                "01DAEDABF913540367FE219B2AD06148",
            ),
            (
                PkComponent::Number(127.0),
                "0C507ACAC853ECA7977BF4CEFB562A25",
            ),
            (
                PkComponent::Number(i64::MIN as f64),
                "23D5C6395512BDFEAFADAD15328AD2BB",
            ),
            (
                PkComponent::Number(i64::MAX as f64),
                "2EDB959178DFCCA18983F89384D1629B",
            ),
            (
                PkComponent::Number(f64::from(i32::MIN)),
                "0B1660D5233C3171725B30D4A5F4CC1F",
            ),
            (
                PkComponent::Number(f64::from(i32::MAX)),
                "2D9349D64712AEB5EB1406E2F0BE2725",
            ),
            (
                PkComponent::Number(f64::from_bits(1)),
                "0E6CBA63A280927DE485DEF865800139",
            ),
            (
                PkComponent::Number(f64::MAX),
                "31424D996457102634591FF245DBCC4D",
            ),
        ];
        for (component, expected) in cases {
            assert_eq!(
                epk_of(component.clone()),
                expected,
                "component {component:?}"
            );
        }
    }

    #[test]
    fn header_parsing_accepts_each_component_kind() {
        let value = PartitionKeyValue::from_header(r#"["a", 1.5, true, null, {}]"#).unwrap();
        assert_eq!(
            value.0,
            vec![
                PkComponent::String("a".into()),
                PkComponent::Number(1.5),
                PkComponent::Bool(true),
                PkComponent::Null,
                PkComponent::Undefined
            ]
        );
        assert_eq!(PartitionKeyValue::from_header("[]").unwrap().0, vec![]);
    }

    #[test]
    fn header_parsing_rejects_bad_input() {
        for bad in ["", "\"a\"", "[[1]]", "[{\"a\":1}]", "[", "{}"] {
            assert!(
                PartitionKeyValue::from_header(bad).is_err(),
                "accepted {bad:?}"
            );
        }
    }

    #[test]
    fn integer_and_float_forms_of_a_number_hash_alike() {
        let a = PartitionKeyValue::from_header("[1]").unwrap().epk();
        let b = PartitionKeyValue::from_header("[1.0]").unwrap().epk();
        assert_eq!(a, b);
    }

    #[test]
    fn document_extraction_follows_nested_paths() {
        let doc: Value = serde_json::json!({"a": {"b": "x"}, "n": null});
        let nested = PartitionKeyValue::from_document(&doc, &["a".into(), "b".into()]).unwrap();
        assert_eq!(nested.0, vec![PkComponent::String("x".into())]);
        let missing = PartitionKeyValue::from_document(&doc, &["zz".into()]).unwrap();
        assert_eq!(missing.0, vec![PkComponent::Undefined]);
        // An object at the path is undefined, as the service takes it; an array is refused.
        let object = PartitionKeyValue::from_document(&doc, &["a".into()]).unwrap();
        assert_eq!(object.0, vec![PkComponent::Undefined]);
        let doc: Value = serde_json::json!({"a": [1]});
        assert!(PartitionKeyValue::from_document(&doc, &["a".into()]).is_err());
    }
}

//! A container's partition key definition (`Hash` with one path, or `MultiHash` with one to three
//! paths) and what it decides: which components a key has, its effective partition key, and which
//! keys a full key or a hierarchical prefix selects.

use serde_json::{Map, Value};

use super::hash_v1;
use super::key::{Epk, EpkFilter, MAX_PARTS};
use super::partition_key::{PartitionKeyValue, PkComponent};

/// The partition key definition of a container.
#[derive(Clone, Debug, PartialEq)]
pub struct PkDefinition {
    /// Each path split into property names ("/a/b" -> ["a","b"]).
    pub paths: Vec<Vec<String>>,
    /// `MultiHash` (hierarchical): one hash per component.
    pub multi_hash: bool,
    /// `"version": 1`: the service's older hash (`Hash` only); version 2 otherwise.
    pub hash_v1: bool,
}

const EXAMPLE: &str =
    "\"partitionKey\": {\"paths\": [\"/pk\"], \"kind\": \"Hash\", \"version\": 2}";

impl PkDefinition {
    /// Reads and checks a container body's `partitionKey`, filling in `version: 2` when absent.
    pub fn from_container_body(map: &mut Map<String, Value>) -> Result<Self, String> {
        let Some(Value::Object(def)) = map.get_mut("partitionKey") else {
            return Err(format!(
                "The container needs a partition key definition: {EXAMPLE}"
            ));
        };
        let kind = def
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or("Hash")
            .to_owned();
        let multi_hash = match kind.as_str() {
            "Hash" => false,
            "MultiHash" => true,
            other => {
                return Err(format!(
                    "Partition key kind {other:?} is not supported; use \"Hash\" or \"MultiHash\"."
                ))
            }
        };
        let hash_v1 = match def.get("version") {
            None | Some(Value::Null) => {
                def.insert("version".into(), Value::from(2));
                false
            }
            Some(v) if v.as_u64() == Some(2) => false,
            Some(v) if v.as_u64() == Some(1) && !multi_hash => true,
            Some(v) if v.as_u64() == Some(1) => {
                return Err("A MultiHash partition key definition needs \"version\": 2.".to_owned())
            }
            Some(v) => {
                return Err(format!(
                    "Partition key version {v} is not valid: use 1 or 2 (2 when absent)."
                ))
            }
        };
        def.insert("kind".into(), Value::from(kind.as_str()));
        let texts: Vec<&str> = match def.get("paths") {
            Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        let most = if multi_hash { MAX_PARTS } else { 1 };
        if texts.is_empty() || texts.len() > most {
            // The service's words when there are too many.
            let too_many = if texts.len() > most {
                "Too many partition key paths. "
            } else {
                ""
            };
            return Err(if multi_hash {
                format!(
                    "{too_many}A MultiHash partition key definition has 1 to {MAX_PARTS} paths; this one has {}.",
                    texts.len()
                )
            } else {
                format!("{too_many}A Hash partition key definition must have exactly one path (use \"kind\": \"MultiHash\" for hierarchical keys).")
            });
        }
        let paths = texts
            .iter()
            .map(|t| segments(t))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self {
            paths,
            multi_hash,
            hash_v1,
        })
    }

    /// The effective partition key of a key with all its components (or, for `MultiHash`, a
    /// prefix of them: the start of the prefix's range).
    pub fn epk(&self, key: &PartitionKeyValue) -> Epk {
        if self.multi_hash {
            key.epk_per_component()
        } else if self.hash_v1 {
            hash_v1::epk(key)
        } else {
            key.epk()
        }
    }

    /// The effective partition key of `key` as the service writes it (a query plan's ranges).
    pub fn epk_text(&self, key: &PartitionKeyValue) -> String {
        if self.hash_v1 {
            hash_v1::epk_text(key)
        } else {
            self.epk(key).hex()
        }
    }

    /// Reads an effective partition key a client sends (`x-ms-start-epk`, a feed range bound) in
    /// this container's form; `"FF"`, the end of the key space, in either.
    pub fn parse_epk(&self, text: &str) -> Result<Epk, String> {
        if self.hash_v1 && !text.eq_ignore_ascii_case(super::MAX_EPK) {
            hash_v1::parse(text)
        } else {
            Epk::parse_hex(text)
        }
    }

    /// Reads an effective partition key range `[min, max)` a client sends (`x-ms-start-epk` and
    /// `x-ms-end-epk`, a feed range); `"FF"` is the end of the key space.
    pub fn parse_epk_range(&self, min: &str, max: &str) -> Result<(Epk, Epk), String> {
        let end = |text: &str| text.eq_ignore_ascii_case(super::MAX_EPK);
        if !self.hash_v1 {
            return Ok((Epk::parse_hex(min)?, Epk::parse_hex(max)?));
        }
        if end(max) {
            return Ok((self.parse_epk(min)?, Epk::parse_hex(super::MAX_EPK)?));
        }
        if end(min) {
            return Ok((Epk::parse_hex(min)?, self.parse_epk(max)?));
        }
        hash_v1::parse_range(min, max)
    }

    /// The text of a range boundary, as the pkranges feed writes it.
    pub fn boundary_text(&self, epk: Epk) -> String {
        if self.hash_v1 {
            // Boundaries of V1 containers are whole hash values (see `boundaries`).
            hash_v1::boundary_text(epk).unwrap_or_else(|| epk.hex())
        } else {
            epk.hex()
        }
    }

    /// Inner boundaries of `count` even ranges (`count - 1` values, ascending): for V1, each on a
    /// whole hash value.
    pub fn boundaries(&self, count: usize) -> Vec<Epk> {
        let even = super::ranges::boundaries(count);
        if !self.hash_v1 {
            return even;
        }
        let mut out: Vec<Epk> = even.into_iter().map(hash_v1::floor_to_hash).collect();
        out.dedup();
        out.retain(|b| *b != Epk::MIN);
        out
    }

    /// Where a range `[low, high)` (high None: the end of the space) is cut in two when it is cut
    /// by its key space: the middle, for V1 on a whole hash value. None when too small.
    pub fn midpoint(&self, low: Epk, high: Option<Epk>) -> Option<Epk> {
        let (l, h) = (
            low.first(),
            high.map_or(super::ranges::SPACE_END, |h| h.first()),
        );
        let mut mid = Epk::single(l + h.saturating_sub(l) / 2);
        if self.hash_v1 {
            mid = hash_v1::floor_to_hash(mid);
        }
        (low < mid && high.is_none_or(|h| mid < h)).then_some(mid)
    }

    /// The EPK of the key a point operation names: it must have every component.
    pub fn point_epk(&self, key: &PartitionKeyValue) -> Result<Epk, String> {
        let (have, want) = (key.0.len(), self.paths.len());
        if self.multi_hash && have != want {
            let fewer_or_more = if have < want { "fewer" } else { "more" };
            return Err(format!(
                "Partition key provided either doesn't correspond to definition in the collection or doesn't match partition key field values specified in the document. The partition key in the x-ms-documentdb-partitionkey header has {fewer_or_more} components ({have}) than the container's definition has paths ({want}); this operation needs a value for each path."
            ));
        }
        if !self.multi_hash && have > 1 {
            return Err(format!(
                "The partition key has {have} components; the container's definition has one path."
            ));
        }
        Ok(self.epk(key))
    }

    /// The keys a partition key header selects for a read: the one key when it is complete, the
    /// range `[prefix, prefix + "FF")` when it is a prefix of a hierarchical key.
    pub fn filter(&self, key: &PartitionKeyValue) -> Result<EpkFilter, String> {
        let (have, want) = (key.0.len(), self.paths.len());
        if !self.multi_hash || have == want {
            return self.point_epk(key).map(EpkFilter::Key);
        }
        if have == 0 || have > want {
            return Err(format!(
                "The partition key has {have} components; the container's definition has {want} paths: give 1 to {want} of them."
            ));
        }
        let start = self.epk(key);
        Ok(EpkFilter::Range(start, start.prefix_end()))
    }

    /// The partition key inside a document: one component per path, absent paths Undefined.
    pub fn key_of(&self, doc: &Map<String, Value>) -> Result<PartitionKeyValue, String> {
        let mut components: Vec<PkComponent> = Vec::with_capacity(self.paths.len());
        for path in &self.paths {
            components.extend(PartitionKeyValue::from_object(doc, path)?.0);
        }
        Ok(PartitionKeyValue(components))
    }

    /// The EPK of the key inside a document.
    pub fn epk_of_document(&self, doc: &Map<String, Value>) -> Result<Epk, String> {
        self.key_of(doc).map(|k| self.epk(&k))
    }
}

/// The property names of a partition key path: `/a/b`, with segments quoted in `"` or `'` to
/// hold any character, `/` included (`/"le/vel 1"/'x'`); inside quotes a backslash before the
/// quote or a backslash stands for that character, and any other backslash is kept. Pure.
fn segments(path: &str) -> Result<Vec<String>, String> {
    let bad = || format!("The partition key path {path:?} is not a path like \"/pk\".");
    let mut chars = path.chars().peekable();
    let mut out = Vec::new();
    while let Some(c) = chars.next() {
        if c != '/' {
            return Err(bad());
        }
        let mut segment = String::new();
        match chars.peek().copied() {
            Some(quote @ ('"' | '\'')) => {
                chars.next();
                loop {
                    match chars.next() {
                        None => return Err(bad()),
                        Some(c) if c == quote => break,
                        Some('\\') => match chars.next() {
                            Some(e) if e == quote || e == '\\' => segment.push(e),
                            Some(e) => {
                                segment.push('\\');
                                segment.push(e);
                            }
                            None => return Err(bad()),
                        },
                        Some(c) => segment.push(c),
                    }
                }
                if chars.peek().is_some_and(|c| *c != '/') {
                    return Err(bad());
                }
            }
            _ => {
                while let Some(c) = chars.next_if(|c| *c != '/') {
                    segment.push(c);
                }
            }
        }
        if segment.is_empty() {
            return Err(bad());
        }
        out.push(segment);
    }
    if out.is_empty() {
        return Err(bad());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn definition(body: Value) -> Result<PkDefinition, String> {
        let mut map = json!({ "id": "c", "partitionKey": body })
            .as_object()
            .cloned()
            .unwrap();
        PkDefinition::from_container_body(&mut map)
    }

    #[test]
    fn paths_split_into_property_names_with_quoted_segments() {
        let ok: [(&str, &[&str]); 6] = [
            ("/pk", &["pk"]),
            ("/a/b", &["a", "b"]),
            ("/\"level' 1*()\"/\"le/vel2\"", &["level' 1*()", "le/vel2"]),
            ("/'level\" 1*()'/'le/vel2'", &["level\" 1*()", "le/vel2"]),
            ("/\"a \\\" b \\\\ c \\t\"", &["a \" b \\ c \\t"]),
            ("/x/'y'", &["x", "y"]),
        ];
        for (path, want) in ok {
            assert_eq!(segments(path).unwrap(), want, "{path}");
        }
        for bad in ["", "pk", "/", "/a//b", "/a/", "/\"open", "/\"a\"b", "/''"] {
            assert!(segments(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn accepts_hash_and_multi_hash_definitions() {
        let hash = definition(json!({"paths": ["/a/b"], "kind": "Hash"})).unwrap();
        assert_eq!(hash.paths, vec![vec!["a".to_owned(), "b".to_owned()]]);
        assert!(!hash.multi_hash);
        for n in 1..=3 {
            let paths: Vec<String> = (0..n).map(|i| format!("/p{i}")).collect();
            let multi =
                definition(json!({"paths": paths, "kind": "MultiHash", "version": 2})).unwrap();
            assert_eq!(multi.paths.len(), n);
            assert!(multi.multi_hash);
        }
    }

    #[test]
    fn refuses_bad_definitions_with_a_reason() {
        let four = json!({"paths": ["/a", "/b", "/c", "/d"], "kind": "MultiHash", "version": 2});
        assert!(definition(four.clone())
            .unwrap_err()
            .contains("1 to 3 paths"));
        let two_hash = json!({"paths": ["/a", "/b"], "kind": "Hash"});
        assert!(definition(two_hash).unwrap_err().contains("MultiHash"));
        let four_err = definition(four).unwrap_err();
        assert!(
            four_err.starts_with("Too many partition key paths"),
            "{four_err}"
        );
        let range = json!({"paths": ["/a"], "kind": "Range"});
        assert!(definition(range).is_err());
        let bad_path = json!({"paths": ["/a", "b"], "kind": "MultiHash"});
        assert!(definition(bad_path).is_err());
    }

    fn key(text: &str) -> PartitionKeyValue {
        PartitionKeyValue::from_header(text).unwrap()
    }

    #[test]
    fn multi_hash_keys_need_every_component_for_point_operations() {
        let d = definition(json!({"paths": ["/t", "/u", "/s"], "kind": "MultiHash"})).unwrap();
        assert!(d.point_epk(&key(r#"["a","b","c"]"#)).is_ok());
        for partial in [r#"["a"]"#, r#"["a","b"]"#, "[]", r#"["a","b","c","d"]"#] {
            assert!(d.point_epk(&key(partial)).is_err(), "{partial}");
        }
        assert_eq!(
            d.filter(&key(r#"["a","b","c"]"#)).unwrap(),
            EpkFilter::Key(d.epk(&key(r#"["a","b","c"]"#)))
        );
        let EpkFilter::Range(min, max) = d.filter(&key(r#"["a"]"#)).unwrap() else {
            panic!("a prefix selects a range");
        };
        assert_eq!(min.parts().len(), 1);
        let full = d.epk(&key(r#"["a","x","y"]"#));
        assert!(min < full && full < max);
        assert!(d.filter(&key("[]")).is_err());
    }

    #[test]
    fn document_keys_are_read_from_every_path() {
        let d = definition(json!({"paths": ["/t", "/n/u"], "kind": "MultiHash"})).unwrap();
        let doc = json!({"t": "a", "n": {"u": 5}});
        let inside = d.key_of(doc.as_object().unwrap()).unwrap();
        assert_eq!(inside, key(r#"["a", 5]"#));
        let missing = json!({"t": "a"});
        assert_eq!(
            d.key_of(missing.as_object().unwrap()).unwrap(),
            key(r#"["a", {}]"#)
        );
    }
}

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
    /// `"version": 1`, or a `Hash` definition without a version: the service's older hash;
    /// version 2 otherwise.
    pub hash_v1: bool,
}

const EXAMPLE: &str =
    "\"partitionKey\": {\"paths\": [\"/pk\"], \"kind\": \"Hash\", \"version\": 2}";

impl PkDefinition {
    /// Reads and checks a container body's `partitionKey`. Without a version, a `Hash` definition
    /// is a legacy V1 container (and stays without one) and a `MultiHash` one gets `version: 2`.
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
            // A `Hash` definition without a version is the service's legacy V1 container: hashed
            // as V1 and read back without a version. `MultiHash` exists only in version 2.
            None | Some(Value::Null) if multi_hash => {
                def.insert("version".into(), Value::from(2));
                false
            }
            None | Some(Value::Null) => {
                def.remove("version");
                true
            }
            Some(v) if v.as_u64() == Some(2) => false,
            Some(v) if v.as_u64() == Some(1) && !multi_hash => true,
            Some(v) if v.as_u64() == Some(1) => {
                return Err("A MultiHash partition key definition needs \"version\": 2.".to_owned())
            }
            Some(v) => {
                return Err(format!(
                    "Partition key version {v} is not valid: use 1 or 2 (1 when absent)."
                ))
            }
        };
        def.insert("kind".into(), Value::from(kind.as_str()));
        let texts: Vec<&str> = match def.get("paths") {
            Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        let most = if multi_hash { MAX_PARTS } else { 1 };
        if texts.len() > most {
            // The service's words.
            let hint = if multi_hash {
                ""
            } else {
                " Use \"kind\": \"MultiHash\" for a hierarchical partition key."
            };
            return Err(format!(
                "Too many partition key paths ({}) specified. A maximum of {most} is allowed.{hint}",
                texts.len()
            ));
        }
        if texts.is_empty() {
            return Err(format!(
                "The partition key definition needs at least one path: {EXAMPLE}"
            ));
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
/// Whether `c` may stand in a path segment that is not quoted: what the message below names
/// (blanks, the wildcards `*` and `?`, and the characters of the path grammar) may not.
fn unquoted_char(c: char) -> bool {
    !(c.is_whitespace() || c.is_control() || matches!(c, '*' | '?' | '[' | ']' | '"' | '\'' | '\\'))
}

/// Splits a partition key path into its property names. A refusal uses the service's words, with
/// the position of the character the path failed near (0 when it does not start with `/`, else
/// one past the offending character, as the service counts it).
fn segments(path: &str) -> Result<Vec<String>, String> {
    let bad = |position: usize| {
        format!(
            "The partition key component definition path '{path}' could not be accepted, \
             failed near position '{position}'. Partition key paths must contain only valid \
             characters and not contain a trailing slash or wildcard character."
        )
    };
    let chars: Vec<char> = path.chars().collect();
    let mut at = 0;
    let mut out = Vec::new();
    if chars.is_empty() {
        return Err(bad(0));
    }
    while at < chars.len() {
        if chars[at] != '/' {
            return Err(bad(if at == 0 { 0 } else { at + 1 }));
        }
        at += 1;
        let mut segment = String::new();
        match chars.get(at).copied() {
            Some(quote @ ('"' | '\'')) => {
                at += 1;
                loop {
                    match chars.get(at).copied() {
                        None => return Err(bad(at)),
                        Some(c) if c == quote => {
                            at += 1;
                            break;
                        }
                        Some('\\') => {
                            match chars.get(at + 1).copied() {
                                Some(e) if e == quote || e == '\\' => segment.push(e),
                                Some(e) => {
                                    segment.push('\\');
                                    segment.push(e);
                                }
                                None => return Err(bad(at + 1)),
                            }
                            at += 2;
                        }
                        Some(c) => {
                            segment.push(c);
                            at += 1;
                        }
                    }
                }
                if chars.get(at).is_some_and(|c| *c != '/') {
                    return Err(bad(at + 1));
                }
            }
            _ => {
                while let Some(&c) = chars.get(at).filter(|c| **c != '/') {
                    if !unquoted_char(c) {
                        return Err(bad(at + 1));
                    }
                    segment.push(c);
                    at += 1;
                }
            }
        }
        if segment.is_empty() {
            return Err(bad(at));
        }
        out.push(segment);
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
        // Refusals in the service's words, with the position it reports (its own examples:
        // 'pk' fails near 0, and a blank after nine characters near 10).
        let refused = [
            ("", 0),
            ("pk", 0),
            ("/asdwqr31 @#$", 10),
            ("/a*", 3),
            ("/a/?", 4),
            ("/", 1),
            ("/a//b", 3),
            ("/a/", 3),
            ("/\"open", 6),
            ("/\"a\"b", 5),
            ("/''", 3),
        ];
        for (bad, position) in refused {
            assert_eq!(
                segments(bad).unwrap_err(),
                format!(
                    "The partition key component definition path '{bad}' could not be accepted, \
                     failed near position '{position}'. Partition key paths must contain only \
                     valid characters and not contain a trailing slash or wildcard character."
                ),
                "{bad}"
            );
        }
    }

    #[test]
    fn accepts_hash_and_multi_hash_definitions() {
        let hash = definition(json!({"paths": ["/a/b"], "kind": "Hash"})).unwrap();
        assert_eq!(hash.paths, vec![vec!["a".to_owned(), "b".to_owned()]]);
        assert!(!hash.multi_hash);
        // Without a version: the legacy V1 hash, and no version is written into the definition.
        assert!(hash.hash_v1);
        let mut body = json!({"id": "c", "partitionKey": {"paths": ["/a"], "kind": "Hash"}})
            .as_object()
            .cloned()
            .unwrap();
        assert!(
            PkDefinition::from_container_body(&mut body)
                .unwrap()
                .hash_v1
        );
        assert_eq!(body["partitionKey"].get("version"), None);
        let v2 = definition(json!({"paths": ["/a"], "kind": "Hash", "version": 2})).unwrap();
        assert!(!v2.hash_v1);
        let mut multi =
            json!({"id": "c", "partitionKey": {"paths": ["/a", "/b"], "kind": "MultiHash"}})
                .as_object()
                .cloned()
                .unwrap();
        assert!(
            !PkDefinition::from_container_body(&mut multi)
                .unwrap()
                .hash_v1
        );
        assert_eq!(multi["partitionKey"]["version"], 2);
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
        assert_eq!(
            definition(four).unwrap_err(),
            "Too many partition key paths (4) specified. A maximum of 3 is allowed."
        );
        let two_hash = json!({"paths": ["/a", "/b"], "kind": "Hash"});
        let two_err = definition(two_hash).unwrap_err();
        assert!(
            two_err.starts_with(
                "Too many partition key paths (2) specified. A maximum of 1 is allowed."
            ) && two_err.contains("MultiHash"),
            "{two_err}"
        );
        assert!(definition(json!({"paths": [], "kind": "Hash"}))
            .unwrap_err()
            .contains("at least one path"));
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

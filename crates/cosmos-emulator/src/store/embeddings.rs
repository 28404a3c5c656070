//! The embeddings of one stored item version, read from its JSON text the first time a vector
//! search measures them and kept with the version (which never changes: a replace stores a new
//! version, with an empty cache of its own, and the old one goes with its last reader).
//!
//! Reading an embedding walks the text for the one property path (the rest of the item is skipped
//! unparsed) and keeps its numbers as `f32` when every one of them is exactly a 32-bit float (4
//! bytes a dimension: embeddings written from `float32` arrays), else as the `f64` values the
//! parser read (8 bytes a dimension). Either way each value is the very number a full parse of the
//! item gives, so a score computed from the cache is the score computed from the parsed item.
//! At most [`MOST_PATHS`] paths are kept per version; a further path is read each time it is
//! needed.

use std::fmt;
use std::sync::{Arc, Mutex};

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use crate::sql::vector::MAX_DIMENSIONS;

/// Most property paths whose embeddings one item version keeps.
pub(crate) const MOST_PATHS: usize = 4;

/// The numbers of an embedding, as compactly as they are exact.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Numbers {
    F32(Box<[f32]>),
    F64(Box<[f64]>),
}

impl Numbers {
    /// Bytes the numbers take.
    #[cfg(test)]
    pub(crate) fn bytes(&self) -> usize {
        match self {
            Self::F32(v) => v.len() * 4,
            Self::F64(v) => v.len() * 8,
        }
    }
}

/// What an item holds at a property path, as a vector measure sees it.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) enum Embedding {
    /// Nothing there, not an array, an array with an element that is not a number, or longer
    /// than [`MAX_DIMENSIONS`]: undefined under every data type.
    #[default]
    Unusable,
    /// An array of finite numbers.
    Numbers {
        numbers: Numbers,
        /// Whether every number is an integer in -128..=127 (an `int8` vector).
        int8: bool,
        /// Whether every number is an integer in 0..=255 (a `uint8` vector).
        uint8: bool,
    },
}

impl Embedding {
    /// The embedding of `values` (the numbers of an array, in order).
    pub(crate) fn of(values: Vec<f64>) -> Self {
        // (JSON text holds finite numbers only; a vector with another is of no data type.)
        if !values.iter().all(|x| x.is_finite()) {
            return Self::Unusable;
        }
        let int8 = values
            .iter()
            .all(|x| x.fract() == 0.0 && (-128.0..=127.0).contains(x));
        let uint8 = values
            .iter()
            .all(|x| x.fract() == 0.0 && (0.0..=255.0).contains(x));
        let exact_f32 = values
            .iter()
            .all(|x| f64::from(*x as f32).to_bits() == x.to_bits());
        let numbers = if exact_f32 {
            Numbers::F32(values.iter().map(|x| *x as f32).collect())
        } else {
            Numbers::F64(values.into_boxed_slice())
        };
        Self::Numbers {
            numbers,
            int8,
            uint8,
        }
    }

    /// The embedding at `path` (property names from the item's root) of the parsed item `item`:
    /// what [`Embedding::read`] reads from the item's text (the text holds the same numbers:
    /// floats are written and read back exactly).
    pub(crate) fn at(item: &Map<String, Value>, path: &[String]) -> Self {
        let Some((first, rest)) = path.split_first() else {
            return Self::Unusable;
        };
        let mut at = item.get(first);
        for name in rest {
            at = at.and_then(Value::as_object).and_then(|m| m.get(name));
        }
        let Some(Value::Array(items)) = at else {
            return Self::Unusable;
        };
        if items.len() > MAX_DIMENSIONS {
            return Self::Unusable;
        }
        match items
            .iter()
            .map(Value::as_f64)
            .collect::<Option<Vec<f64>>>()
        {
            Some(values) => Self::of(values),
            None => Self::Unusable,
        }
    }

    /// Reads the embedding at `path` (property names from the item's root) from the item's JSON
    /// text; `None` when the text is not JSON.
    pub(crate) fn read(body: &[u8], path: &[String]) -> Option<Self> {
        let mut found = None;
        let mut de = serde_json::Deserializer::from_slice(body);
        At {
            path,
            out: &mut found,
        }
        .deserialize(&mut de)
        .ok()?;
        de.end().ok()?;
        Some(found.unwrap_or(Embedding::Unusable))
    }
}

/// A property path and the embedding read there.
type Kept = (Box<[String]>, Arc<Embedding>);

/// The embeddings read so far of one item version, by property path.
#[derive(Default)]
pub(crate) struct Embeddings {
    kept: Mutex<Vec<Kept>>,
}

impl fmt::Debug for Embeddings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let paths = self.kept.lock().map(|k| k.len()).unwrap_or(0);
        write!(f, "Embeddings({paths} paths)")
    }
}

impl Embeddings {
    /// The embeddings of the item `item` at `paths` (its container's vector policy paths, at most
    /// [`MOST_PATHS`] kept), taken when the item is written so that no search reads them from its
    /// text.
    pub(crate) fn of_item(item: &Map<String, Value>, paths: &[Box<[String]>]) -> Self {
        let kept = paths
            .iter()
            .take(MOST_PATHS)
            .map(|p| (p.clone(), Arc::new(Embedding::at(item, p))))
            .collect();
        Self {
            kept: Mutex::new(kept),
        }
    }

    /// The embedding at `path` if it was read already.
    pub(crate) fn kept(&self, path: &[String]) -> Option<Arc<Embedding>> {
        let kept = self.kept.lock().ok()?;
        kept.iter()
            .find(|(p, _)| p.as_ref() == path)
            .map(|(_, e)| e.clone())
    }

    /// The embedding at `path`, read from `body` (this version's text) unless it was read
    /// already; `None` when the text is not JSON.
    pub(crate) fn get(&self, body: &[u8], path: &[String]) -> Option<Arc<Embedding>> {
        if let Some(e) = self.kept(path) {
            return Some(e);
        }
        let read = Arc::new(Embedding::read(body, path)?);
        if let Ok(mut kept) = self.kept.lock() {
            if let Some((_, e)) = kept.iter().find(|(p, _)| p.as_ref() == path) {
                return Some(e.clone());
            }
            if kept.len() < MOST_PATHS {
                kept.push((path.into(), read.clone()));
            }
        }
        Some(read)
    }

    /// Bytes of numbers kept.
    #[cfg(test)]
    pub(crate) fn bytes(&self) -> usize {
        self.kept
            .lock()
            .map(|k| {
                k.iter()
                    .map(|(_, e)| match &**e {
                        Embedding::Numbers { numbers, .. } => numbers.bytes(),
                        Embedding::Unusable => 0,
                    })
                    .sum()
            })
            .unwrap_or(0)
    }
}

/// Walks an object for the property `path[0]`, then on down the rest of the path; what it finds
/// at the end goes to `out`. A property written twice counts as its last value, as a full parse
/// keeps it.
struct At<'p> {
    path: &'p [String],
    out: &'p mut Option<Embedding>,
}

impl<'de> DeserializeSeed<'de> for At<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

/// Visitor methods that accept a scalar and ignore it.
macro_rules! ignore_scalars {
    () => {
        fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
        fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
        fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
        fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
        fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
        fn visit_none<E>(self) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
    };
}

impl<'de> Visitor<'de> for At<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    ignore_scalars!();

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let Some((first, rest)) = self.path.split_first() else {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            return Ok(());
        };
        while let Some(hit) = map.next_key_seed(KeyIs(first))? {
            if !hit {
                map.next_value::<IgnoredAny>()?;
            } else if rest.is_empty() {
                *self.out = Some(map.next_value_seed(Leaf)?);
            } else {
                // A later value of the property replaces all an earlier one held.
                *self.out = None;
                map.next_value_seed(At {
                    path: rest,
                    out: &mut *self.out,
                })?;
            }
        }
        Ok(())
    }
}

/// Whether an object key is the given name.
struct KeyIs<'n>(&'n str);

impl<'de> DeserializeSeed<'de> for KeyIs<'_> {
    type Value = bool;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeyIs<'_> {
    type Value = bool;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a property name")
    }
    fn visit_str<E>(self, key: &str) -> Result<bool, E> {
        Ok(key == self.0)
    }
}

/// The value at the end of the path.
struct Leaf;

impl<'de> DeserializeSeed<'de> for Leaf {
    type Value = Embedding;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Embedding, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Leaf {
    type Value = Embedding;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    ignore_scalars!();

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Embedding, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Embedding::Unusable)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Embedding, A::Error> {
        let mut values = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(MAX_DIMENSIONS));
        let mut usable = true;
        while let Some(x) = seq.next_element_seed(Element)? {
            match x {
                Some(x) if usable && values.len() < MAX_DIMENSIONS => values.push(x),
                // Read on to the end of the array; nothing more is kept.
                _ => usable = false,
            }
        }
        Ok(if usable {
            Embedding::of(values)
        } else {
            Embedding::Unusable
        })
    }
}

/// One element of an embedding array: its number, or `None` for any other value.
struct Element;

impl<'de> DeserializeSeed<'de> for Element {
    type Value = Option<f64>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Option<f64>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Element {
    type Value = Option<f64>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    // The conversions `serde_json::Value::as_f64` makes.
    fn visit_i64<E>(self, x: i64) -> Result<Option<f64>, E> {
        Ok(Some(x as f64))
    }
    fn visit_u64<E>(self, x: u64) -> Result<Option<f64>, E> {
        Ok(Some(x as f64))
    }
    fn visit_f64<E>(self, x: f64) -> Result<Option<f64>, E> {
        Ok(Some(x))
    }
    fn visit_bool<E>(self, _: bool) -> Result<Option<f64>, E> {
        Ok(None)
    }
    fn visit_str<E>(self, _: &str) -> Result<Option<f64>, E> {
        Ok(None)
    }
    fn visit_unit<E>(self) -> Result<Option<f64>, E> {
        Ok(None)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Option<f64>, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(None)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Option<f64>, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(p: &[&str]) -> Vec<String> {
        p.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn an_item_keeps_at_write_what_reading_its_text_would_find() {
        let texts = [
            r#"{"e": [0.5, -1, 3.25], "n": {"v": [1, 2, 300]}}"#,
            r#"{"e": [0.1, 2e-7, 1e300], "n": {"v": [-5, 7]}}"#,
            r#"{"e": [1, "x"], "n": {"v": [[1], 2]}}"#,
            r#"{"e": {"a": 1}, "n": 4}"#,
            r#"{"e": [], "n": {}}"#,
            r#"{"e": [1, 2], "e": [3]}"#,
            r#"{"other": [1]}"#,
        ];
        let paths: Vec<Box<[String]>> = vec![
            path(&["e"]).into(),
            path(&["n", "v"]).into(),
            path(&["missing"]).into(),
        ];
        for text in texts {
            let item: Map<String, Value> = serde_json::from_str(text).unwrap();
            let body = serde_json::to_vec(&item).unwrap();
            let kept = Embeddings::of_item(&item, &paths);
            for p in &paths {
                let at_write = kept.kept(p).expect("kept when written");
                assert_eq!(
                    *at_write,
                    Embedding::read(&body, p).unwrap(),
                    "{text} at {p:?}"
                );
            }
        }
        let long = serde_json::json!({"e": vec![1.0; MAX_DIMENSIONS + 1]});
        let item = long.as_object().unwrap();
        assert_eq!(
            *Embeddings::of_item(item, &paths)
                .kept(&path(&["e"]))
                .unwrap(),
            Embedding::Unusable
        );
        // At most MOST_PATHS paths are kept.
        let many: Vec<Box<[String]>> = (0..MOST_PATHS + 2)
            .map(|i| path(&[&format!("p{i}")]).into())
            .collect();
        let kept = Embeddings::of_item(item, &many);
        assert!(kept.kept(&path(&[&format!("p{}", MOST_PATHS)])).is_none());
        assert!(kept.kept(&path(&["p0"])).is_some());
    }

    #[test]
    fn an_embedding_is_read_as_a_full_parse_sees_it() {
        let f32s = |v: &[f32]| Embedding::Numbers {
            numbers: Numbers::F32(v.into()),
            int8: false,
            uint8: false,
        };
        let cases: Vec<(&str, &[&str], Option<Embedding>)> = vec![
            (r#"{"e":[0.5,-1.25]}"#, &["e"], Some(f32s(&[0.5, -1.25]))),
            (
                r#"{"e":[1,2,3]}"#,
                &["e"],
                Some(Embedding::of(vec![1.0, 2.0, 3.0])),
            ),
            (
                r#"{"a":{"e":[1]},"a":5}"#,
                &["a", "e"],
                Some(Embedding::Unusable),
            ),
            (
                r#"{"a":5,"a":{"e":[1]}}"#,
                &["a", "e"],
                Some(Embedding::of(vec![1.0])),
            ),
            (r#"{"e":[1],"e":"x"}"#, &["e"], Some(Embedding::Unusable)),
            (r#"{"e":[1,"2"]}"#, &["e"], Some(Embedding::Unusable)),
            (r#"{"e":[1,[2]]}"#, &["e"], Some(Embedding::Unusable)),
            (r#"{"x":[1]}"#, &["e"], Some(Embedding::Unusable)),
            (r#"[1,2]"#, &["e"], Some(Embedding::Unusable)),
            (r#"{"e":{"0":1}}"#, &["e"], Some(Embedding::Unusable)),
            (r#"{"\u0065":[2]}"#, &["e"], Some(Embedding::of(vec![2.0]))),
            (r#"{"e":[]}"#, &["e"], Some(Embedding::of(vec![]))),
            (r#"{"e":[1"#, &["e"], None),
            (r#"{"e":[1]} x"#, &["e"], None),
        ];
        for (text, p, want) in cases {
            assert_eq!(Embedding::read(text.as_bytes(), &path(p)), want, "{text}");
        }
    }

    #[test]
    fn numbers_are_kept_exactly_and_small_when_they_can_be() {
        let text = r#"{"e":[0.1, 0.5, 12345678901234567890, -3, 1e300]}"#;
        let parsed: serde_json::Value = serde_json::from_str(text).unwrap();
        let want: Vec<f64> = parsed["e"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect();
        match Embedding::read(text.as_bytes(), &path(&["e"])).unwrap() {
            Embedding::Numbers {
                numbers: Numbers::F64(got),
                int8,
                uint8,
            } => {
                assert_eq!(got.as_ref(), want.as_slice());
                assert!(!int8 && !uint8);
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            Embedding::of(vec![-3.0, 127.0]),
            Embedding::Numbers {
                numbers: Numbers::F32(vec![-3.0, 127.0].into()),
                int8: true,
                uint8: false
            }
        );
        let long = format!("{{\"e\":[{}]}}", vec!["1"; MAX_DIMENSIONS + 1].join(","));
        assert_eq!(
            Embedding::read(long.as_bytes(), &path(&["e"])),
            Some(Embedding::Unusable)
        );
    }

    #[test]
    fn a_version_keeps_a_few_paths_and_reads_the_rest_each_time() {
        let body = br#"{"a":[1],"b":[2],"c":[3],"d":[4],"e":[5],"f":[6]}"#;
        let kept = Embeddings::default();
        for name in ["a", "b", "c", "d", "e", "f"] {
            let p = path(&[name]);
            assert!(kept.kept(&p).is_none());
            assert!(kept.get(body, &p).is_some());
        }
        assert!(kept.kept(&path(&["d"])).is_some());
        assert!(kept.kept(&path(&["e"])).is_none(), "past the paths kept");
        assert_eq!(kept.bytes(), MOST_PATHS * 4);
        assert!(
            kept.get(b"{", &path(&["a"])).is_some(),
            "kept, not read again"
        );
        assert!(Embeddings::default().get(b"{", &path(&["a"])).is_none());
    }
}

//! Patch paths: JSON-pointer-like `/a/b/0` (with `~0` and `~1` escapes), navigated over serde values.

use serde_json::Value;

/// A parsed path: its segments, unescaped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PatchPath(pub Vec<String>);

impl PatchPath {
    /// Parses `/a/b`; the root itself ("" or "/") is not a valid target.
    pub(crate) fn parse(text: &str) -> Result<Self, String> {
        let Some(rest) = text.strip_prefix('/') else {
            return Err(format!("the path {text:?} must start with '/'"));
        };
        if rest.is_empty() {
            return Err("the path \"/\" names the whole document; patch a property instead".into());
        }
        let segments: Vec<String> = rest
            .split('/')
            .map(|s| s.replace("~1", "/").replace("~0", "~"))
            .collect();
        if segments.iter().any(String::is_empty) {
            return Err(format!("the path {text:?} has an empty segment"));
        }
        Ok(Self(segments))
    }

    /// The first segment (the top-level property).
    pub(crate) fn root(&self) -> &str {
        self.0.first().map(String::as_str).unwrap_or("")
    }

    /// The parent container of the target and the last segment.
    pub(crate) fn parent_mut<'a>(
        &self,
        doc: &'a mut Value,
    ) -> Result<(&'a mut Value, &str), String> {
        let Some((last, parents)) = self.0.split_last() else {
            return Err("empty path".into());
        };
        let mut current = doc;
        for segment in parents {
            current = child_mut(current, segment)
                .ok_or_else(|| format!("the path {} does not exist", self))?;
        }
        Ok((current, last.as_str()))
    }

    /// The value at the path, if present.
    pub(crate) fn get<'a>(&self, doc: &'a Value) -> Option<&'a Value> {
        let mut current = doc;
        for segment in &self.0 {
            current = match current {
                Value::Object(map) => map.get(segment)?,
                Value::Array(items) => items.get(segment.parse::<usize>().ok()?)?,
                _ => return None,
            };
        }
        Some(current)
    }
}

impl std::fmt::Display for PatchPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for s in &self.0 {
            write!(f, "/{s}")?;
        }
        Ok(())
    }
}

fn child_mut<'a>(value: &'a mut Value, segment: &str) -> Option<&'a mut Value> {
    match value {
        Value::Object(map) => map.get_mut(segment),
        Value::Array(items) => items.get_mut(segment.parse::<usize>().ok()?),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_unescapes() {
        assert_eq!(
            PatchPath::parse("/a/b~1c/d~0e").unwrap().0,
            vec!["a", "b/c", "d~e"]
        );
        for bad in ["", "/", "a", "/a//b"] {
            assert!(PatchPath::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn navigates_objects_and_arrays() {
        let doc = serde_json::json!({"a": {"list": [1, {"x": 2}]}});
        assert_eq!(
            PatchPath::parse("/a/list/1/x").unwrap().get(&doc),
            Some(&serde_json::json!(2))
        );
        assert_eq!(PatchPath::parse("/a/list/9").unwrap().get(&doc), None);
    }
}

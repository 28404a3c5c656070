//! Walking a document along a pointer's tokens.

use serde_json::{Map, Value};

use super::patch_error::{type_name, PatchFailure};
use super::pointer::{ArrayPosition, JsonPointer};

/// An object or array found in a document.
#[derive(Debug)]
pub(super) enum Container<'v> {
    /// An object's members.
    Object(&'v mut Map<String, Value>),
    /// An array's elements.
    Array(&'v mut Vec<Value>),
}

/// The container at `tokens` (the parent of an operation's target), or why it is not there.
pub(super) fn parent_mut<'v>(
    doc: &'v mut Value,
    tokens: &[String],
) -> Result<Container<'v>, PatchFailure> {
    let mut current = doc;
    for (depth, token) in tokens.iter().enumerate() {
        let missing = || PatchFailure::ParentMissing {
            missing: prefix(tokens, depth + 1),
        };
        current = match current {
            Value::Object(map) => map.get_mut(token.as_str()).ok_or_else(missing)?,
            Value::Array(items) => match ArrayPosition::parse(token) {
                Some(ArrayPosition::Index(i)) => items.get_mut(i).ok_or_else(missing)?,
                Some(ArrayPosition::End) => return Err(missing()),
                None => {
                    return Err(PatchFailure::NotAnArrayIndex {
                        token: token.clone(),
                    })
                }
            },
            scalar => {
                return Err(PatchFailure::NotAContainer {
                    at: prefix(tokens, depth),
                    found: type_name(scalar),
                })
            }
        };
    }
    match current {
        Value::Object(map) => Ok(Container::Object(map)),
        Value::Array(items) => Ok(Container::Array(items)),
        scalar => Err(PatchFailure::NotAContainer {
            at: prefix(tokens, tokens.len()),
            found: type_name(scalar),
        }),
    }
}

/// The value at `tokens`, if there is one. Used when undoing, where every location is known to
/// exist.
pub(super) fn value_mut<'v>(doc: &'v mut Value, tokens: &[String]) -> Option<&'v mut Value> {
    let mut current = doc;
    for token in tokens {
        current = match current {
            Value::Object(map) => map.get_mut(token.as_str())?,
            Value::Array(items) => match ArrayPosition::parse(token)? {
                ArrayPosition::Index(i) => items.get_mut(i)?,
                ArrayPosition::End => return None,
            },
            _ => return None,
        };
    }
    Some(current)
}

/// The escaped pointer text of the first `len` tokens.
fn prefix(tokens: &[String], len: usize) -> String {
    let end = len.min(tokens.len());
    JsonPointer::from_tokens(tokens[..end].iter().map(String::as_str))
        .as_str()
        .to_owned()
}

/// An array token read against an array of length `len`: an index (possibly `len` itself for
/// `-`), or the failure for a token that is not an index.
pub(super) fn array_index(token: &str, len: usize) -> Result<(usize, bool), PatchFailure> {
    match ArrayPosition::parse(token) {
        Some(ArrayPosition::Index(i)) => Ok((i, false)),
        Some(ArrayPosition::End) => Ok((len, true)),
        None => Err(PatchFailure::NotAnArrayIndex {
            token: token.to_owned(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tokens(p: &str) -> Vec<String> {
        JsonPointer::parse(p).unwrap().tokens().to_vec()
    }

    #[test]
    fn finds_containers_and_names_what_is_missing() {
        let mut doc = json!({"a": {"b": [10, {"c": 1}]}, "s": "text", "x/y": {}});
        assert!(
            matches!(parent_mut(&mut doc, &tokens("/a/b/1")), Ok(Container::Object(m)) if m.contains_key("c"))
        );
        assert!(
            matches!(parent_mut(&mut doc, &tokens("/x~1y")), Ok(Container::Object(m)) if m.is_empty())
        );
        assert!(
            matches!(parent_mut(&mut doc, &tokens("/a/b")), Ok(Container::Array(a)) if a.len() == 2)
        );
        let cases: &[(&str, PatchFailure)] = &[
            (
                "/nope",
                PatchFailure::ParentMissing {
                    missing: "/nope".into(),
                },
            ),
            (
                "/a/nope/deeper",
                PatchFailure::ParentMissing {
                    missing: "/a/nope".into(),
                },
            ),
            (
                "/a/b/2",
                PatchFailure::ParentMissing {
                    missing: "/a/b/2".into(),
                },
            ),
            (
                "/a/b/-",
                PatchFailure::ParentMissing {
                    missing: "/a/b/-".into(),
                },
            ),
            (
                "/a/b/01",
                PatchFailure::NotAnArrayIndex { token: "01".into() },
            ),
            (
                "/s",
                PatchFailure::NotAContainer {
                    at: "/s".into(),
                    found: "string",
                },
            ),
            (
                "/s/t",
                PatchFailure::NotAContainer {
                    at: "/s".into(),
                    found: "string",
                },
            ),
            (
                "/a/b/0",
                PatchFailure::NotAContainer {
                    at: "/a/b/0".into(),
                    found: "number",
                },
            ),
        ];
        for (pointer, expected) in cases {
            assert_eq!(
                parent_mut(&mut doc, &tokens(pointer)).unwrap_err(),
                *expected,
                "{pointer}"
            );
        }
    }

    #[test]
    fn value_lookup_is_total() {
        let mut doc = json!({"a": [1, 2]});
        assert_eq!(value_mut(&mut doc, &tokens("/a/1")), Some(&mut json!(2)));
        assert_eq!(value_mut(&mut doc, &tokens("/a/2")), None);
        assert_eq!(value_mut(&mut doc, &tokens("/a/-")), None);
        assert_eq!(value_mut(&mut doc, &tokens("/a/1/z")), None);
        assert_eq!(value_mut(&mut doc, &[]), Some(&mut json!({"a": [1, 2]})));
    }
}

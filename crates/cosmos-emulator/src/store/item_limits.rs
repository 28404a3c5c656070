//! The limits every stored item meets after every write path (create, replace, upsert, patch):
//! its size with system properties, and how deep its objects and arrays nest.

use serde_json::{Map, Value};

use crate::protocol::ApiError;

/// The largest item, system properties included (the service's 2 MB).
pub(crate) const MAX_ITEM_BYTES: usize = 2 * 1024 * 1024;

/// The deepest nesting of objects and arrays in an item (the item itself is level 1). Kept well
/// below what the JSON reader accepts (128), so every stored item can be read back and patched.
pub(crate) const MAX_ITEM_DEPTH: usize = 100;

/// 400 when `item` nests deeper than [`MAX_ITEM_DEPTH`]. Walks with an explicit stack.
pub(crate) fn check_depth(item: &Map<String, Value>) -> Result<(), ApiError> {
    let mut stack: Vec<(&Value, usize)> = item.values().map(|v| (v, 2)).collect();
    while let Some((value, level)) = stack.pop() {
        let children: Box<dyn Iterator<Item = &Value>> = match value {
            Value::Object(map) => Box::new(map.values()),
            Value::Array(items) => Box::new(items.iter()),
            _ => continue,
        };
        if level > MAX_ITEM_DEPTH {
            return Err(ApiError::bad_request(format!(
                "The item nests objects and arrays deeper than the {MAX_ITEM_DEPTH} levels allowed."
            )));
        }
        stack.extend(children.map(|child| (child, level + 1)));
    }
    Ok(())
}

/// 413 when an item's stored text is larger than [`MAX_ITEM_BYTES`].
pub(crate) fn check_size(stored_bytes: usize) -> Result<(), ApiError> {
    if stored_bytes > MAX_ITEM_BYTES {
        return Err(ApiError::new(
            413,
            format!(
                "The item would be {stored_bytes} bytes with its system properties; items are at most {MAX_ITEM_BYTES} bytes."
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn nested(depth: usize) -> Map<String, Value> {
        let mut v = json!(1);
        for _ in 1..depth {
            v = json!({ "a": v });
        }
        let mut item = Map::new();
        item.insert("a".into(), v);
        item
    }

    #[test]
    fn depth_counts_the_item_as_level_one() {
        assert!(check_depth(&nested(MAX_ITEM_DEPTH)).is_ok());
        let err = check_depth(&nested(MAX_ITEM_DEPTH + 1)).unwrap_err();
        assert_eq!(err.status, 400);
        assert!(err.message.contains("100 levels"));
        let mut arrays = Map::new();
        let mut v = json!([]);
        for _ in 0..MAX_ITEM_DEPTH {
            v = json!([v]);
        }
        arrays.insert("x".into(), v);
        assert!(check_depth(&arrays).is_err());
    }

    #[test]
    fn size_is_checked_with_system_properties() {
        assert!(check_size(MAX_ITEM_BYTES).is_ok());
        let err = check_size(MAX_ITEM_BYTES + 1).unwrap_err();
        assert_eq!(err.status, 413);
        assert!(err.message.contains("2097152"));
    }
}

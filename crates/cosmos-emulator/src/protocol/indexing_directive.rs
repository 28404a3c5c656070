//! `x-ms-indexing-directive` on an item write: whether the item enters the container's index.
//! `Include` and `Default` (or no header) index it (the container's policy indexes every item
//! written, `automatic` being true whenever it indexes); `Exclude` keeps it out, so queries that
//! use the index do not see it, while point reads do. Pure: the header's value in, a flag out.

use super::headers::INDEXING_DIRECTIVE;
use super::ApiError;

/// Whether an item written with `value` (the header's value, `None` without it) is indexed; 400
/// for a value that is none of `Default`, `Include`, `Exclude` (in any case) or their numbers as
/// some SDKs send them (`0` Default, `1` Exclude, `2` Include: the Python SDK's
/// `IndexingDirective`).
pub(crate) fn indexed(value: Option<&str>) -> Result<bool, ApiError> {
    let Some(value) = value else {
        return Ok(true);
    };
    let value = value.trim();
    if value.eq_ignore_ascii_case("exclude") || value == "1" {
        Ok(false)
    } else if value.eq_ignore_ascii_case("include")
        || value.eq_ignore_ascii_case("default")
        || value == "0"
        || value == "2"
    {
        Ok(true)
    } else {
        Err(ApiError::bad_request(format!(
            "The value of header {INDEXING_DIRECTIVE} is not Default, Include or Exclude."
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::indexed;

    #[test]
    fn directives_decide_indexing() {
        let table: [(Option<&str>, Option<bool>); 12] = [
            (None, Some(true)),
            // The Python SDK sends the enum's number.
            (Some("0"), Some(true)),
            (Some("1"), Some(false)),
            (Some("2"), Some(true)),
            (Some("3"), None),
            (Some("Default"), Some(true)),
            (Some("Include"), Some(true)),
            (Some("include"), Some(true)),
            (Some("Exclude"), Some(false)),
            (Some(" EXCLUDE "), Some(false)),
            (Some("Sometimes"), None),
            (Some(""), None),
        ];
        for (value, expected) in table {
            let got = indexed(value);
            assert_eq!(got.as_ref().ok().copied(), expected, "{value:?}");
            if let Err(e) = got {
                assert_eq!(e.status, 400);
                assert!(
                    e.message.contains("x-ms-indexing-directive"),
                    "{}",
                    e.message
                );
            }
        }
    }
}

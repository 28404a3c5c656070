//! The offer queries the SDKs send to `/offers`, and nothing else:
//! `SELECT * FROM root r WHERE r.resource = @link` (Python, parameters in the body),
//! `SELECT * from root where root.resource = "<link>"` (Node.js), the same on `offerResourceId`,
//! and `SELECT * FROM root r` (every offer). Pure: text in, filter out.

use serde_json::Value;

/// Which offers a query selects.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OfferFilter {
    All,
    /// Offers whose `resource` (the owner's `_self`) is this link.
    Resource(String),
    /// Offers whose `offerResourceId` (the owner's `_rid`) is this id.
    OfferResourceId(String),
}

/// Longest offer query text accepted.
const MAX_QUERY: usize = 4096;

/// Reads an offer query; `parameters` is the body's `parameters` array (may be null).
pub fn parse(query: &str, parameters: &Value) -> Result<OfferFilter, String> {
    if query.len() > MAX_QUERY {
        return Err(format!(
            "The offer query is longer than {MAX_QUERY} characters."
        ));
    }
    let unsupported = || {
        format!(
            "Offer queries support SELECT * FROM root [r] [WHERE r.resource = <link> | r.offerResourceId = <rid>]; {query:?} is not one of them."
        )
    };
    let tokens = tokenize(query).ok_or_else(unsupported)?;
    let words: Vec<&str> = tokens.iter().map(String::as_str).collect();
    let is = |w: &str, k: &str| w.eq_ignore_ascii_case(k);
    let (alias, rest) = match words.as_slice() {
        [s, "*", f, root, rest @ ..] if is(s, "select") && is(f, "from") && is(root, "root") => {
            match rest {
                [w, ..] if is(w, "where") => ("root", rest),
                [alias, rest @ ..] => (*alias, rest),
                [] => ("root", rest),
            }
        }
        _ => return Err(unsupported()),
    };
    match rest {
        [] => Ok(OfferFilter::All),
        [w, lhs, "=", value] if is(w, "where") => {
            let property = lhs
                .strip_prefix(alias)
                .and_then(|p| p.strip_prefix('.'))
                .ok_or_else(unsupported)?;
            let value = literal(value, parameters).ok_or_else(|| {
                format!("The offer query's value {value:?} is neither a string nor a parameter given in \"parameters\".")
            })?;
            match property {
                "resource" => Ok(OfferFilter::Resource(value)),
                "offerResourceId" => Ok(OfferFilter::OfferResourceId(value)),
                _ => Err(unsupported()),
            }
        }
        _ => Err(unsupported()),
    }
}

/// A quoted string, or a parameter's string value.
fn literal(token: &str, parameters: &Value) -> Option<String> {
    if let Some(name) = token.strip_prefix('@') {
        return parameters.as_array()?.iter().find_map(|p| {
            let pname = p.get("name")?.as_str()?;
            (pname.trim_start_matches('@') == name)
                .then(|| p.get("value")?.as_str().map(str::to_owned))
                .flatten()
        });
    }
    let quote = token.chars().next().filter(|c| *c == '"' || *c == '\'')?;
    token
        .strip_prefix(quote)?
        .strip_suffix(quote)
        .map(str::to_owned)
}

/// Words, `*`, `=` and quoted strings (kept with their quotes); None on an unterminated string.
fn tokenize(text: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
        } else if c == '*' || c == '=' {
            out.push(c.to_string());
            chars.next();
        } else if c == '"' || c == '\'' {
            let mut s = String::from(c);
            chars.next();
            loop {
                let next = chars.next()?;
                s.push(next);
                if next == c {
                    break;
                }
            }
            out.push(s);
        } else {
            let mut s = String::new();
            while let Some(&n) = chars.peek() {
                if n.is_whitespace() || n == '*' || n == '=' || n == '"' || n == '\'' {
                    break;
                }
                s.push(n);
                chars.next();
            }
            out.push(s);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_the_shapes_the_sdks_send() {
        let params = json!([{"name": "@link", "value": "dbs/x/colls/y/"}]);
        let table: Vec<(&str, Value, OfferFilter)> = vec![
            (
                "SELECT * FROM root r WHERE r.resource=@link",
                params.clone(),
                OfferFilter::Resource("dbs/x/colls/y/".into()),
            ),
            (
                "SELECT * from root where root.resource = \"dbs/x/\"",
                Value::Null,
                OfferFilter::Resource("dbs/x/".into()),
            ),
            (
                "select * from root r where r.offerResourceId = 'AAAA'",
                Value::Null,
                OfferFilter::OfferResourceId("AAAA".into()),
            ),
            ("SELECT * FROM root r", Value::Null, OfferFilter::All),
            ("SELECT * FROM root", Value::Null, OfferFilter::All),
        ];
        for (query, params, want) in table {
            assert_eq!(parse(query, &params).unwrap(), want, "{query}");
        }
    }

    #[test]
    fn refuses_anything_else_with_a_reason() {
        for (query, reason) in [
            ("SELECT r.id FROM root r", "not one of them"),
            (
                "SELECT * FROM root r WHERE r.resource = @missing",
                "parameter",
            ),
            (
                "SELECT * FROM root r WHERE r.content = 'x'",
                "not one of them",
            ),
            (
                "SELECT * FROM root r WHERE r.resource = 'open",
                "not one of them",
            ),
            ("DELETE", "not one of them"),
        ] {
            let e = parse(query, &Value::Null).unwrap_err();
            assert!(e.contains(reason), "{query}: {e}");
        }
        assert!(parse(&"x".repeat(5000), &Value::Null)
            .unwrap_err()
            .contains("longer"));
    }
}

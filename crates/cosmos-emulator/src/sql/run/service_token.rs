//! The service's own query continuation format, accepted where it maps to a position: a bare
//! `-RID:~<_rid>#RT:<n>#TRC:<n>` (other `#` fields ignored) or the composite
//! `[{"token": "-RID:...", "range": {"min": "...", "max": "..."}}]` of one range. `-RID` names the
//! item the last page ended with, `TRC` the rows answered so far; the query goes on after that
//! item in creation order (`_rid` order), within the composite's range or the request's first
//! range. What cannot be mapped (no `-RID`, an unreadable `_rid` or count, an item of another
//! container, a composite without its token or range, or of several ranges) is refused with 400
//! naming what is missing. Pure: text and the container's facts in, a position out.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use serde_json::Value;

use super::token::CreatedAt;
use crate::epk::{epk_hex, Epk};
use crate::store::creation_order::ordinal;

/// A service continuation, read.
#[derive(Debug, PartialEq)]
pub(crate) struct ServiceToken {
    /// The `_rid` of the item the last page ended with.
    pub rid: [u8; 16],
    /// Rows answered so far (`TRC`; 0 without it).
    pub seen: u64,
    /// The composite form's range, `[min, max)` as the service writes them (hex; "FF": the end).
    pub range: Option<(String, String)>,
}

/// Whether `text` is in the service's format rather than the emulator's own (base64url of JSON,
/// which never starts with `[` or `-` and holds no `#`).
pub(crate) fn is_service_format(text: &str) -> bool {
    let t = text.trim();
    t.starts_with('[') || t.starts_with("-RID") || t.contains('#')
}

fn refuse(what: &str) -> String {
    format!("The continuation token is in the service's format but cannot be resumed: {what}.")
}

/// Reads a service continuation (see the module's description).
pub(crate) fn parse(text: &str) -> Result<ServiceToken, String> {
    let t = text.trim();
    if !t.starts_with('[') {
        return parse_bare(t, None);
    }
    let list: Vec<Value> = serde_json::from_str(t)
        .map_err(|e| refuse(&format!("its composite form is not a JSON array ({e})")))?;
    let [entry] = list.as_slice() else {
        return Err(refuse(&format!(
            "it names {} ranges; send the continuation of one range",
            list.len()
        )));
    };
    let token = entry["token"]
        .as_str()
        .ok_or_else(|| refuse("its composite entry has no \"token\""))?;
    let bound = |name: &str| entry["range"][name].as_str().map(str::to_owned);
    let range = bound("min")
        .zip(bound("max"))
        .ok_or_else(|| refuse("its composite entry has no \"range\" with \"min\" and \"max\""))?;
    parse_bare(token, Some(range))
}

fn parse_bare(t: &str, range: Option<(String, String)>) -> Result<ServiceToken, String> {
    let mut fields = t.split('#');
    let rid_text = fields
        .next()
        .and_then(|f| f.strip_prefix("-RID:"))
        .map(|v| v.trim_start_matches('~'))
        .filter(|v| !v.is_empty())
        .ok_or_else(|| refuse("it names no -RID (the item the last page ended with)"))?;
    let rid: [u8; 16] = STANDARD
        .decode(rid_text.replace('-', "/"))
        .ok()
        .and_then(|b| b.try_into().ok())
        .ok_or_else(|| refuse(&format!("its -RID {rid_text:?} is not an item's _rid")))?;
    let mut seen = 0;
    for field in fields {
        let (name, value) = field.split_once(':').unwrap_or((field, ""));
        let number = || {
            value
                .parse::<u64>()
                .map_err(|_| refuse(&format!("its {name} {value:?} is not a count")))
        };
        match name {
            "TRC" => seen = number()?,
            "RT" => {
                number()?;
            }
            _ => {}
        }
    }
    Ok(ServiceToken { rid, seen, range })
}

/// The position `token` names in the container whose resource id is `container` (400 for an item
/// of another one): just after its item, in its composite range or else `first_range` (the
/// request's first range, `[min, max)`, no max: the end).
pub(crate) fn position(
    token: &ServiceToken,
    container: &[u8; 8],
    first_range: (Epk, Option<Epk>),
) -> Result<CreatedAt, String> {
    if token.rid[..8] != container[..] {
        return Err(refuse("its -RID names an item of another container"));
    }
    let (counter, marker) = ordinal(&token.rid);
    // The first place after the item: the next marker of its counter.
    let after = match marker.checked_add(1) {
        Some(m) => (counter, m),
        None => (counter.saturating_add(1), 0),
    };
    let span = match &token.range {
        Some((min, max)) => {
            let hex = |t: &str| {
                Epk::parse_hex(t).map_err(|e| refuse(&format!("its range bound {t:?}: {e}")))
            };
            let max = if max.eq_ignore_ascii_case("FF") {
                None
            } else {
                Some(epk_hex(hex(max)?))
            };
            (epk_hex(hex(min)?), max)
        }
        None => (epk_hex(first_range.0), first_range.1.map(epk_hex)),
    };
    Ok(CreatedAt {
        range: span.0.clone(),
        span,
        at: Some(after),
        row: 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::ids::encode_rid;

    fn rid(container: [u8; 8], counter: u8, marker: u8) -> [u8; 16] {
        let mut r = [0u8; 16];
        r[..8].copy_from_slice(&container);
        r[8] = counter;
        r[13] = marker;
        r
    }

    #[test]
    fn service_tokens_read_or_name_what_is_missing() {
        let item = rid([1; 8], 5, 0);
        let text = encode_rid(&item);
        type Row<'a> = (String, u64, Option<(&'a str, &'a str)>);
        let ok: [Row<'_>; 3] = [
            (format!("-RID:~{text}#RT:1#TRC:10"), 10, None),
            (
                format!("-RID:{text}#RT:3#TRC:7#ISV:2#IEO:65567#QCF:8"),
                7,
                None,
            ),
            (
                format!(r#"[{{"token":"-RID:~{text}#RT:1","range":{{"min":"","max":"FF"}}}}]"#),
                0,
                Some(("", "FF")),
            ),
        ];
        for (t, seen, range) in ok {
            assert!(is_service_format(&t), "{t}");
            let read = parse(&t).unwrap();
            assert_eq!((read.rid, read.seen), (item, seen), "{t}");
            let range = range.map(|(a, b)| (a.to_owned(), b.to_owned()));
            assert_eq!(read.range, range, "{t}");
        }
        let bad = [
            ("#RT:1#TRC:1".to_owned(), "-RID"),
            ("-RID:~#RT:1".to_owned(), "-RID"),
            ("-RID:~AAAA#RT:1".to_owned(), "_rid"),
            (format!("-RID:~{text}#TRC:many"), "TRC"),
            ("[]".to_owned(), "0 ranges"),
            ("[1".to_owned(), "JSON"),
            (r#"[{"range":{"min":"","max":"FF"}}]"#.to_owned(), "token"),
            (format!(r#"[{{"token":"-RID:~{text}"}}]"#), "range"),
        ];
        for (t, names) in bad {
            let e = parse(&t).unwrap_err();
            assert!(e.contains(names), "{t}: {e}");
        }
        assert!(!is_service_format("eyJrIjoicyJ9"));
    }

    #[test]
    fn a_position_is_just_after_the_item_in_its_range() {
        let token = |marker, range: Option<(&str, &str)>| ServiceToken {
            rid: rid([1; 8], 5, marker),
            seen: 0,
            range: range.map(|(a, b)| (a.to_owned(), b.to_owned())),
        };
        let whole = (Epk::MIN, None);
        let at = position(&token(2, None), &[1; 8], whole).unwrap();
        assert_eq!((at.at, at.row), (Some((5, 3)), 0));
        assert_eq!(at.span, (epk_hex(Epk::MIN), None));
        let at = position(&token(255, Some(("", "FF"))), &[1; 8], whole).unwrap();
        assert_eq!(at.at, Some((5, 256)));
        assert_eq!(at.span.1, None, "FF is the end");
        let e = position(&token(0, None), &[2; 8], whole).unwrap_err();
        assert!(e.contains("another container"), "{e}");
    }
}

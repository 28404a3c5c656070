//! Compiled regular expressions for `LIKE` and `REGEXMATCH`, cached per thread so a pattern is
//! compiled once per query rather than once per document. The `regex` crate matches in linear
//! time, and compiled size is capped, so no pattern can make matching explode.

use std::cell::RefCell;
use std::collections::HashMap;

use regex::Regex;

/// Largest compiled size of one pattern.
const SIZE_LIMIT: usize = 1 << 20;
/// Patterns kept per thread before the cache is cleared.
const CACHED: usize = 64;

thread_local! {
    static CACHE: RefCell<HashMap<String, Regex>> = RefCell::new(HashMap::new());
}

/// The compiled form of `pattern` (regex syntax).
pub(super) fn compiled(pattern: &str) -> Result<Regex, regex::Error> {
    if let Some(re) = CACHE.with(|c| c.borrow().get(pattern).cloned()) {
        return Ok(re);
    }
    let re = regex::RegexBuilder::new(pattern)
        .size_limit(SIZE_LIMIT)
        .build()?;
    CACHE.with(|c| {
        let mut cache = c.borrow_mut();
        if cache.len() >= CACHED {
            cache.clear();
        }
        cache.insert(pattern.to_owned(), re.clone());
    });
    Ok(re)
}

/// The regex equivalent of a LIKE pattern: `%` any run, `_` one character, `escape` quoting the
/// next character.
pub(super) fn like_to_regex(pattern: &str, escape: Option<char>) -> String {
    let mut out = String::from("(?s)^");
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        if Some(c) == escape {
            if let Some(next) = chars.next() {
                out.push_str(&regex::escape(&next.to_string()));
            }
            continue;
        }
        match c {
            '%' => out.push_str(".*"),
            '_' => out.push('.'),
            other => out.push_str(&regex::escape(&other.to_string())),
        }
    }
    out.push('$');
    out
}

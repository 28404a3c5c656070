//! The `x-ms-date` value, formatted once per second per thread.

use std::cell::RefCell;
use std::time::{SystemTime, UNIX_EPOCH};

use http::HeaderValue;

struct Cached {
    second: u64,
    header: HeaderValue,
    lower: String,
}

thread_local! {
    static CACHE: RefCell<Option<Cached>> = const { RefCell::new(None) };
}

/// Calls `f` with the current RFC 1123 date as a header value and in lowercase (for signing).
pub(crate) fn with_request_date<R>(f: impl FnOnce(&HeaderValue, &str) -> R) -> R {
    let now = SystemTime::now();
    let second = now
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    CACHE.with(|cell| {
        let mut slot = cell.borrow_mut();
        let fresh = matches!(&*slot, Some(c) if c.second == second);
        if !fresh {
            let text = httpdate::fmt_http_date(UNIX_EPOCH + std::time::Duration::from_secs(second));
            let header =
                HeaderValue::from_str(&text).unwrap_or_else(|_| HeaderValue::from_static(""));
            *slot = Some(Cached {
                second,
                header,
                lower: text.to_ascii_lowercase(),
            });
        }
        match &*slot {
            Some(c) => f(&c.header, &c.lower),
            None => f(&HeaderValue::from_static(""), ""),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc1123_and_lowercase() {
        with_request_date(|h, lower| {
            let text = h.to_str().unwrap();
            assert!(text.ends_with(" GMT"), "{text}");
            assert_eq!(text.len(), 29);
            assert_eq!(lower, text.to_ascii_lowercase());
            assert!(httpdate::parse_http_date(text).is_ok());
        });
    }
}

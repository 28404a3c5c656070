//! Quoting caller-supplied text in error messages without echoing megabytes of it.

const LIMIT: usize = 40;

/// `s` quoted like `{:?}`, cut to 40 characters (with `…` when cut).
pub(crate) fn quoted(s: &str) -> String {
    match s.char_indices().nth(LIMIT) {
        Some((cut, _)) => format!("{:?}…", &s[..cut]),
        None => format!("{s:?}"),
    }
}

/// `s` as is, cut to 40 characters (with `…` when cut); for field names and paths.
pub(crate) fn cut(s: &str) -> String {
    match s.char_indices().nth(LIMIT) {
        Some((end, _)) => format!("{}…", &s[..end]),
        None => s.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::{cut, quoted};

    #[test]
    fn short_text_is_quoted_whole_and_long_text_is_cut() {
        assert_eq!(quoted("read"), "\"read\"");
        let long = "é".repeat(100);
        let shown = quoted(&long);
        assert_eq!(shown, format!("{:?}…", "é".repeat(40)));
        assert_eq!(cut("/dbs"), "/dbs");
        assert_eq!(cut(&long), format!("{}…", "é".repeat(40)));
    }
}

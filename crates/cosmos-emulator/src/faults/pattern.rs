//! Resource path patterns: `*` globs over the request path.

use std::fmt;

/// A pattern over the request path (without the query string).
///
/// `*` matches any run of characters, `/` included, so `/dbs/*` matches every resource under
/// `/dbs/` and `/dbs/*/docs/*` matches every item path. Every other character matches itself. A
/// pattern without `*` matches only the exact path.
#[derive(Clone, PartialEq, Eq)]
pub struct PathPattern {
    text: String,
}

impl PathPattern {
    /// A pattern from its text.
    pub fn new(text: impl Into<String>) -> Self {
        PathPattern { text: text.into() }
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether `path` matches. Linear-time greedy matching with one backtrack point, so hostile
    /// patterns or paths cannot blow up.
    pub fn matches(&self, path: &str) -> bool {
        let pat = self.text.as_bytes();
        let text = path.as_bytes();
        let (mut p, mut t) = (0usize, 0usize);
        // Position after the last `*` seen in the pattern, and where in the text it started.
        let mut star: Option<(usize, usize)> = None;
        while t < text.len() {
            match pat.get(p) {
                Some(b'*') => {
                    star = Some((p + 1, t));
                    p += 1;
                }
                Some(c) if *c == text[t] => {
                    p += 1;
                    t += 1;
                }
                _ => match star {
                    Some((after_star, started)) => {
                        p = after_star;
                        t = started + 1;
                        star = Some((after_star, started + 1));
                    }
                    None => return false,
                },
            }
        }
        pat[p.min(pat.len())..].iter().all(|c| *c == b'*')
    }
}

impl fmt::Debug for PathPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PathPattern({:?})", self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::PathPattern;

    #[test]
    fn table() {
        let cases = [
            ("/dbs/*", "/dbs/db1/colls/c/docs/a", true),
            ("/dbs/*", "/dbs/", true),
            ("/dbs/*", "/dbs", false),
            ("/dbs/*/docs/*", "/dbs/db/colls/c/docs/item", true),
            ("/dbs/*/docs/*", "/dbs/db/colls/c/pkranges", false),
            ("*", "", true),
            ("*", "/anything/at/all", true),
            ("", "", true),
            ("", "/", false),
            ("/", "/", true),
            ("/dbs/db1", "/dbs/db1", true),
            ("/dbs/db1", "/dbs/db12", false),
            ("/dbs/db1*", "/dbs/db12", true),
            ("*/docs", "/dbs/a/colls/b/docs", true),
            ("*/docs", "/dbs/a/colls/b/docs/x", false),
            ("*a*b*c", "xxaxxbxxc", true),
            ("*a*b*c", "xxaxxcxxb", false),
            ("**", "abc", true),
            (
                "a*a*a*a*a*b",
                "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
                false,
            ),
        ];
        for (pattern, path, want) in cases {
            assert_eq!(
                PathPattern::new(pattern).matches(path),
                want,
                "{pattern:?} vs {path:?}"
            );
        }
    }

    #[test]
    fn non_ascii_paths_do_not_panic() {
        assert!(PathPattern::new("/dbs/*").matches("/dbs/é/ü"));
        assert!(!PathPattern::new("/dbs/é").matches("/dbs/e"));
    }
}

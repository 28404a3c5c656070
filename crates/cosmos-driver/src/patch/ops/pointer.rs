//! RFC 6901 JSON Pointers, parsed once into unescaped reference tokens.

use std::fmt;

/// A parsed RFC 6901 JSON Pointer: the empty pointer (`""`) names the whole document, every other
/// pointer is a `/`-separated list of reference tokens with `~1` standing for `/` and `~0` for `~`.
///
/// The pointer keeps both its original text (for error messages) and its unescaped tokens (for
/// walking a document), so a path is parsed once per operation.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct JsonPointer {
    text: String,
    tokens: Vec<String>,
}

/// Why a string is not a JSON Pointer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PointerError {
    /// A non-empty pointer must start with `/`.
    MissingLeadingSlash,
    /// `~` must be followed by `0` or `1`; `position` is the byte offset of the `~`.
    BadEscape {
        /// Byte offset of the offending `~` in the pointer text.
        position: usize,
    },
}

impl fmt::Display for PointerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::MissingLeadingSlash => f.write_str("a JSON Pointer must start with '/'"),
            Self::BadEscape { position } => write!(
                f,
                "'~' at byte {position} is not followed by '0' or '1' (write '~0' for '~' and '~1' for '/')"
            ),
        }
    }
}

impl std::error::Error for PointerError {}

impl JsonPointer {
    /// Parses `text` as an RFC 6901 pointer.
    pub fn parse(text: &str) -> Result<Self, PointerError> {
        if text.is_empty() {
            return Ok(Self {
                text: String::new(),
                tokens: Vec::new(),
            });
        }
        let Some(rest) = text.strip_prefix('/') else {
            return Err(PointerError::MissingLeadingSlash);
        };
        let mut tokens = Vec::new();
        let mut offset = 1;
        for raw in rest.split('/') {
            tokens.push(unescape(raw, offset)?);
            offset += raw.len() + 1;
        }
        Ok(Self {
            text: text.to_owned(),
            tokens,
        })
    }

    /// A pointer from already unescaped tokens.
    pub fn from_tokens<I, S>(tokens: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let tokens: Vec<String> = tokens.into_iter().map(Into::into).collect();
        let mut text = String::new();
        for token in &tokens {
            text.push('/');
            text.push_str(&token.replace('~', "~0").replace('/', "~1"));
        }
        Self { text, tokens }
    }

    /// The pointer as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The unescaped reference tokens, outermost first.
    pub fn tokens(&self) -> &[String] {
        &self.tokens
    }

    /// Whether this is the empty pointer, which names the whole document.
    pub fn is_root(&self) -> bool {
        self.tokens.is_empty()
    }

    /// The parent's tokens and the last token, or `None` for the root.
    pub fn split_last(&self) -> Option<(&[String], &str)> {
        self.tokens
            .split_last()
            .map(|(last, parent)| (parent, last.as_str()))
    }

    /// Whether `self` names `other` or one of `other`'s ancestors (every pointer is a prefix of
    /// itself; the root is a prefix of everything). Compared token by token, so `/a` is not a
    /// prefix of `/ab`.
    pub fn is_prefix_of(&self, other: &JsonPointer) -> bool {
        other.tokens.len() >= self.tokens.len()
            && other.tokens[..self.tokens.len()] == self.tokens[..]
    }

    /// Whether `self` lies strictly inside `other`.
    pub fn is_strict_descendant_of(&self, other: &JsonPointer) -> bool {
        self.tokens.len() > other.tokens.len() && other.is_prefix_of(self)
    }

    /// Whether one of the two pointers equals, contains or lies inside the other.
    pub fn overlaps(&self, other: &JsonPointer) -> bool {
        self.is_prefix_of(other) || other.is_prefix_of(self)
    }
}

impl fmt::Debug for JsonPointer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "JsonPointer({:?})", self.text)
    }
}

impl fmt::Display for JsonPointer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// Decodes one reference token; `offset` is its byte position in the whole pointer.
fn unescape(raw: &str, offset: usize) -> Result<String, PointerError> {
    if !raw.contains('~') {
        return Ok(raw.to_owned());
    }
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.char_indices();
    while let Some((i, c)) = chars.next() {
        if c != '~' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some((_, '0')) => out.push('~'),
            Some((_, '1')) => out.push('/'),
            _ => {
                return Err(PointerError::BadEscape {
                    position: offset + i,
                })
            }
        }
    }
    Ok(out)
}

/// How a reference token reads as an array position (RFC 6901 section 4 and RFC 6902 `-`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ArrayPosition {
    /// A decimal index without leading zeros.
    Index(usize),
    /// `-`: the position after the last element.
    End,
}

impl ArrayPosition {
    /// Reads `token` as an array position; `None` when it is not `-` nor a canonical decimal
    /// index (leading zeros, signs, non-digits and values beyond `usize` are all refused).
    pub(crate) fn parse(token: &str) -> Option<Self> {
        if token == "-" {
            return Some(Self::End);
        }
        let canonical = !token.is_empty()
            && token.bytes().all(|b| b.is_ascii_digit())
            && (token == "0" || !token.starts_with('0'));
        if !canonical {
            return None;
        }
        token.parse::<usize>().ok().map(Self::Index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_unescapes_tokens() {
        let cases: &[(&str, &[&str])] = &[
            ("", &[]),
            ("/", &[""]),
            ("/a", &["a"]),
            ("/a/b/0", &["a", "b", "0"]),
            ("/a~1b", &["a/b"]),
            ("/m~0n", &["m~n"]),
            ("/~01", &["~1"]),
            ("/~10", &["/0"]),
            ("//", &["", ""]),
            ("/a b/ü", &["a b", "ü"]),
        ];
        for (text, tokens) in cases {
            let pointer = JsonPointer::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(pointer.tokens(), *tokens, "{text}");
            assert_eq!(pointer.as_str(), *text);
        }
    }

    #[test]
    fn refuses_malformed_pointers() {
        let cases: &[(&str, PointerError)] = &[
            ("a", PointerError::MissingLeadingSlash),
            ("a/b", PointerError::MissingLeadingSlash),
            ("/a~", PointerError::BadEscape { position: 2 }),
            ("/a~2", PointerError::BadEscape { position: 2 }),
            ("/ok/x~y", PointerError::BadEscape { position: 5 }),
            ("/~", PointerError::BadEscape { position: 1 }),
        ];
        for (text, expected) in cases {
            assert_eq!(
                JsonPointer::parse(text).as_ref().err(),
                Some(expected),
                "{text}"
            );
        }
    }

    #[test]
    fn error_messages_say_what_is_wrong() {
        assert!(PointerError::MissingLeadingSlash
            .to_string()
            .contains("start with '/'"));
        assert!(PointerError::BadEscape { position: 3 }
            .to_string()
            .contains("byte 3"));
    }

    #[test]
    fn from_tokens_escapes_back() {
        let pointer = JsonPointer::from_tokens(["a/b", "m~n", ""]);
        assert_eq!(pointer.as_str(), "/a~1b/m~0n/");
        assert_eq!(JsonPointer::parse(pointer.as_str()).unwrap(), pointer);
    }

    #[test]
    fn prefix_and_overlap_are_token_wise() {
        let p = |s: &str| JsonPointer::parse(s).unwrap();
        assert!(p("/a").is_prefix_of(&p("/a")));
        assert!(p("/a").is_prefix_of(&p("/a/b")));
        assert!(!p("/a").is_prefix_of(&p("/ab")));
        assert!(p("").is_prefix_of(&p("/x")));
        assert!(p("/a/b").is_strict_descendant_of(&p("/a")));
        assert!(!p("/a").is_strict_descendant_of(&p("/a")));
        assert!(p("/a/b").overlaps(&p("/a")));
        assert!(p("/a").overlaps(&p("/a/b")));
        assert!(!p("/a/b").overlaps(&p("/a/c")));
        assert!(p("/a~1b").overlaps(&p("/a~1b/c")));
        assert!(!p("/a~1b").overlaps(&p("/a/b")));
    }

    #[test]
    fn array_positions_are_canonical() {
        let cases: &[(&str, Option<ArrayPosition>)] = &[
            ("0", Some(ArrayPosition::Index(0))),
            ("7", Some(ArrayPosition::Index(7))),
            ("10", Some(ArrayPosition::Index(10))),
            ("-", Some(ArrayPosition::End)),
            ("01", None),
            ("00", None),
            ("", None),
            ("-1", None),
            ("+1", None),
            ("1a", None),
            (" 1", None),
            ("99999999999999999999999999", None),
        ];
        for (token, expected) in cases {
            assert_eq!(ArrayPosition::parse(token), *expected, "{token:?}");
        }
    }
}

//! Splitting query text into tokens, each with its character position.

use super::limits::{MAX_QUERY_BYTES, MAX_TOKENS};
use super::sql_error::SqlError;

/// An operator or punctuation mark.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Sym {
    LParen,
    RParen,
    LBracket,
    RBracket,
    LBrace,
    RBrace,
    Dot,
    Comma,
    Colon,
    Question,
    Coalesce,
    Plus,
    Minus,
    Star,
    Slash,
    Percent,
    Concat,
    Amp,
    Pipe,
    Caret,
    Tilde,
    Shl,
    Shr,
    ShrZero,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

/// What a token is.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Tok {
    /// A name or keyword (keywords are matched case-insensitively by the parser).
    Ident(String),
    /// `@name`
    Param(String),
    Str(String),
    /// A number literal; integers that fit stay exact.
    Num(serde_json::Number),
    Sym(Sym),
}

/// A token and the character offset where it starts.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Token {
    pub tok: Tok,
    pub pos: usize,
}

/// Splits `text` into tokens; refuses texts over the size and token limits.
pub(super) fn tokenize(text: &str) -> Result<Vec<Token>, SqlError> {
    if text.len() > MAX_QUERY_BYTES {
        return Err(SqlError::new(format!(
            "The query text is {} bytes; the limit is {MAX_QUERY_BYTES} bytes.",
            text.len()
        )));
    }
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        if out.len() >= MAX_TOKENS {
            return Err(SqlError::at(
                i,
                format!("The query has more than {MAX_TOKENS} tokens, the limit."),
            ));
        }
        let start = i;
        let next = chars.get(i + 1).copied();
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        if c == '-' && next == Some('-') {
            while chars.get(i).is_some_and(|c| *c != '\n') {
                i += 1;
            }
            continue;
        }
        let tok = if c.is_ascii_digit() || (c == '.' && next.is_some_and(|d| d.is_ascii_digit())) {
            let (n, end) = number(&chars, i)?;
            i = end;
            Tok::Num(n)
        } else if c == '\'' || c == '"' {
            let (s, end) = string(&chars, i)?;
            i = end;
            Tok::Str(s)
        } else if c.is_alphabetic() || c == '_' || c == '@' {
            i += 1;
            while chars
                .get(i)
                .is_some_and(|c| c.is_alphanumeric() || *c == '_')
            {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            match word.strip_prefix('@') {
                Some("") => return Err(SqlError::at(start, "A parameter needs a name after '@'.")),
                Some(name) => Tok::Param(format!("@{name}")),
                None => Tok::Ident(word),
            }
        } else {
            let (sym, len) = symbol(c, next, chars.get(i + 2).copied())
                .ok_or_else(|| SqlError::at(i, format!("Unexpected character {c:?}.")))?;
            i += len;
            Tok::Sym(sym)
        };
        out.push(Token { tok, pos: start });
    }
    Ok(out)
}

fn symbol(c: char, next: Option<char>, third: Option<char>) -> Option<(Sym, usize)> {
    use Sym::*;
    Some(match (c, next) {
        ('?', Some('?')) => (Coalesce, 2),
        ('|', Some('|')) => (Concat, 2),
        ('!', Some('=')) => (Ne, 2),
        ('<', Some('>')) => (Ne, 2),
        ('<', Some('=')) => (Le, 2),
        ('<', Some('<')) => (Shl, 2),
        ('>', Some('=')) => (Ge, 2),
        ('>', Some('>')) if third == Some('>') => (ShrZero, 3),
        ('>', Some('>')) => (Shr, 2),
        _ => (
            match c {
                '(' => LParen,
                ')' => RParen,
                '[' => LBracket,
                ']' => RBracket,
                '{' => LBrace,
                '}' => RBrace,
                '.' => Dot,
                ',' => Comma,
                ':' => Colon,
                '?' => Question,
                '+' => Plus,
                '-' => Minus,
                '*' => Star,
                '/' => Slash,
                '%' => Percent,
                '&' => Amp,
                '|' => Pipe,
                '^' => Caret,
                '~' => Tilde,
                '=' => Eq,
                '<' => Lt,
                '>' => Gt,
                _ => return None,
            },
            1,
        ),
    })
}

fn number(chars: &[char], start: usize) -> Result<(serde_json::Number, usize), SqlError> {
    let mut i = start;
    let is_hex = chars.get(i) == Some(&'0') && matches!(chars.get(i + 1), Some('x') | Some('X'));
    if is_hex {
        i += 2;
        while chars.get(i).is_some_and(char::is_ascii_hexdigit) {
            i += 1;
        }
        let digits: String = chars[start + 2..i].iter().collect();
        return i64::from_str_radix(&digits, 16)
            .map(|n| (n.into(), i))
            .map_err(|_| SqlError::at(start, format!("0x{digits} is not a valid number.")));
    }
    while chars
        .get(i)
        .is_some_and(|c| c.is_ascii_digit() || *c == '.')
    {
        i += 1;
    }
    if matches!(chars.get(i), Some('e') | Some('E')) {
        i += 1;
        if matches!(chars.get(i), Some('+') | Some('-')) {
            i += 1;
        }
        while chars.get(i).is_some_and(char::is_ascii_digit) {
            i += 1;
        }
    }
    let text: String = chars[start..i].iter().collect();
    if let Ok(n) = text.parse::<i64>() {
        return Ok((n.into(), i));
    }
    text.parse::<f64>()
        .ok()
        .and_then(serde_json::Number::from_f64)
        .map(|n| (n, i))
        .ok_or_else(|| SqlError::at(start, format!("{text:?} is not a valid number.")))
}

fn string(chars: &[char], start: usize) -> Result<(String, usize), SqlError> {
    let quote = chars[start];
    let mut out = String::new();
    let mut i = start + 1;
    loop {
        match chars.get(i) {
            None => return Err(SqlError::at(start, "The string is not closed.")),
            Some(c) if *c == quote => return Ok((out, i + 1)),
            Some('\\') => {
                let escaped = *chars
                    .get(i + 1)
                    .ok_or_else(|| SqlError::at(i, "The string ends with a lone backslash."))?;
                i += 2;
                out.push(match escaped {
                    'n' => '\n',
                    't' => '\t',
                    'r' => '\r',
                    'b' => '\u{8}',
                    'f' => '\u{c}',
                    'u' => {
                        let hex: String = chars.get(i..i + 4).unwrap_or(&[]).iter().collect();
                        let code = u32::from_str_radix(&hex, 16)
                            .ok()
                            .filter(|_| hex.len() == 4)
                            .ok_or_else(|| {
                                SqlError::at(i - 2, "A \\u escape needs 4 hex digits.")
                            })?;
                        i += 4;
                        char::from_u32(code).unwrap_or('\u{fffd}')
                    }
                    other => other,
                });
            }
            Some(c) => {
                out.push(*c);
                i += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(text: &str) -> Vec<Tok> {
        tokenize(text).unwrap().into_iter().map(|t| t.tok).collect()
    }

    #[test]
    fn tokenizes_a_query_with_positions() {
        let t = tokenize("SELECT c.a FROM c WHERE c['b'] >= -1.5 AND c.s != \"x\\\"y\" -- note")
            .unwrap();
        assert_eq!(t[0].tok, Tok::Ident("SELECT".into()));
        assert_eq!(t[1].pos, 7);
        let kinds: Vec<Tok> = t.into_iter().map(|t| t.tok).collect();
        assert!(kinds.contains(&Tok::Sym(Sym::Ge)));
        assert!(kinds.contains(&Tok::Str("x\"y".into())));
        assert!(kinds.contains(&Tok::Num(serde_json::Number::from_f64(1.5).unwrap())));
        assert!(!kinds.contains(&Tok::Ident("note".into())));
    }

    #[test]
    fn keeps_64_bit_integers_exact_and_reads_operators() {
        assert_eq!(
            toks("9007199254740993 @p ?? || >>> <>"),
            vec![
                Tok::Num(9007199254740993i64.into()),
                Tok::Param("@p".into()),
                Tok::Sym(Sym::Coalesce),
                Tok::Sym(Sym::Concat),
                Tok::Sym(Sym::ShrZero),
                Tok::Sym(Sym::Ne),
            ]
        );
        assert_eq!(toks("'\\u0041'"), vec![Tok::Str("A".into())]);
    }

    #[test]
    fn reports_bad_input_with_positions() {
        assert_eq!(tokenize("c.a = 'open").unwrap_err().position, Some(6));
        assert_eq!(tokenize("c.a ; 1").unwrap_err().position, Some(4));
        let big = "1".repeat(MAX_QUERY_BYTES + 1);
        assert!(tokenize(&big).unwrap_err().message.contains("limit"));
    }
}

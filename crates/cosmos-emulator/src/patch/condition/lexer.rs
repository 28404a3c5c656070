//! Tokens of the patch condition language (a subset of the NoSQL query grammar).

/// A comparison operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

/// One token.
#[derive(Clone, Debug, PartialEq)]
pub enum Token {
    Ident(String),
    Str(String),
    Num(f64),
    LParen,
    RParen,
    LBracket,
    RBracket,
    Dot,
    Comma,
    Cmp(CmpOp),
}

/// Splits `text` into tokens.
pub fn tokenize(text: &str) -> Result<Vec<Token>, String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        match c {
            c if c.is_whitespace() => i += 1,
            '(' | ')' | '[' | ']' | '.' | ',' | '=' => {
                if c == '.' && chars.get(i + 1).is_some_and(char::is_ascii_digit) {
                    let (n, next) = number(&chars, i)?;
                    out.push(Token::Num(n));
                    i = next;
                    continue;
                }
                out.push(match c {
                    '(' => Token::LParen,
                    ')' => Token::RParen,
                    '[' => Token::LBracket,
                    ']' => Token::RBracket,
                    '.' => Token::Dot,
                    ',' => Token::Comma,
                    _ => Token::Cmp(CmpOp::Eq),
                });
                i += 1;
            }
            '!' if chars.get(i + 1) == Some(&'=') => {
                out.push(Token::Cmp(CmpOp::Ne));
                i += 2;
            }
            '<' => {
                match chars.get(i + 1) {
                    Some('=') => (out.push(Token::Cmp(CmpOp::Le)), i += 2),
                    Some('>') => (out.push(Token::Cmp(CmpOp::Ne)), i += 2),
                    _ => (out.push(Token::Cmp(CmpOp::Lt)), i += 1),
                };
            }
            '>' => {
                if chars.get(i + 1) == Some(&'=') {
                    out.push(Token::Cmp(CmpOp::Ge));
                    i += 2;
                } else {
                    out.push(Token::Cmp(CmpOp::Gt));
                    i += 1;
                }
            }
            '\'' | '"' => {
                let (s, next) = string(&chars, i)?;
                out.push(Token::Str(s));
                i = next;
            }
            c if c.is_ascii_digit()
                || (c == '-'
                    && chars
                        .get(i + 1)
                        .is_some_and(|d| d.is_ascii_digit() || *d == '.')) =>
            {
                let (n, next) = number(&chars, i)?;
                out.push(Token::Num(n));
                i = next;
            }
            c if c.is_alphabetic() || c == '_' || c == '@' => {
                let start = i;
                while chars
                    .get(i)
                    .is_some_and(|c| c.is_alphanumeric() || *c == '_' || *c == '@')
                {
                    i += 1;
                }
                out.push(Token::Ident(chars[start..i].iter().collect()));
            }
            other => return Err(format!("unexpected character {other:?} at position {i}")),
        }
    }
    Ok(out)
}

fn number(chars: &[char], start: usize) -> Result<(f64, usize), String> {
    let mut i = start;
    if chars.get(i) == Some(&'-') {
        i += 1;
    }
    while chars
        .get(i)
        .is_some_and(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E'))
        || (matches!(chars.get(i), Some('+') | Some('-'))
            && matches!(chars.get(i.wrapping_sub(1)), Some('e') | Some('E')))
    {
        i += 1;
    }
    let text: String = chars[start..i].iter().collect();
    text.parse::<f64>()
        .map(|n| (n, i))
        .map_err(|_| format!("{text:?} is not a number"))
}

fn string(chars: &[char], start: usize) -> Result<(String, usize), String> {
    let quote = chars[start];
    let mut out = String::new();
    let mut i = start + 1;
    loop {
        match chars.get(i) {
            None => {
                return Err(format!(
                    "a string starting at position {start} is not closed"
                ))
            }
            Some(c) if *c == quote => return Ok((out, i + 1)),
            Some('\\') => {
                let escaped = chars
                    .get(i + 1)
                    .ok_or("a string ends with a lone backslash")?;
                out.push(match escaped {
                    'n' => '\n',
                    't' => '\t',
                    'r' => '\r',
                    other => *other,
                });
                i += 2;
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

    #[test]
    fn tokenizes_a_condition() {
        let t = tokenize("from c where c.a['b'] >= -1.5 AND c.s != \"x\\\"y\"").unwrap();
        assert_eq!(
            t,
            vec![
                Token::Ident("from".into()),
                Token::Ident("c".into()),
                Token::Ident("where".into()),
                Token::Ident("c".into()),
                Token::Dot,
                Token::Ident("a".into()),
                Token::LBracket,
                Token::Str("b".into()),
                Token::RBracket,
                Token::Cmp(CmpOp::Ge),
                Token::Num(-1.5),
                Token::Ident("AND".into()),
                Token::Ident("c".into()),
                Token::Dot,
                Token::Ident("s".into()),
                Token::Cmp(CmpOp::Ne),
                Token::Str("x\"y".into()),
            ]
        );
    }

    #[test]
    fn reports_bad_input() {
        assert!(tokenize("c.a = 'open").is_err());
        assert!(tokenize("c.a ; 1").is_err());
    }
}

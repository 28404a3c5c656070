//! Parsing `from <alias> [where <predicate>]` into an expression tree.

pub use super::lexer::CmpOp;
use super::lexer::{tokenize, Token};

/// An expression.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    /// A JSON literal (numbers, strings, booleans, null) or `undefined` (None).
    Literal(Option<serde_json::Value>),
    /// A property path from the alias: `c.a.b[0]` -> ["a","b","0"].
    Path(Vec<String>),
    Cmp(CmpOp, Box<Expr>, Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    Not(Box<Expr>),
    Call(String, Vec<Expr>),
}

/// A parsed condition: the predicate (None = no `where`, always true).
#[derive(Clone, Debug, PartialEq)]
pub struct Condition {
    pub predicate: Option<Expr>,
}

/// Deepest nesting accepted (keeps hostile inputs from exhausting the stack).
const MAX_DEPTH: usize = 64;

/// Parses a condition string.
pub fn parse(text: &str) -> Result<Condition, String> {
    let tokens = tokenize(text)?;
    let mut p = Parser {
        tokens,
        pos: 0,
        alias: String::new(),
        depth: 0,
    };
    if !p.keyword("from") {
        return Err("the condition must start with \"from <alias>\"".into());
    }
    p.alias = match p.next() {
        Some(Token::Ident(a)) => a,
        _ => return Err("\"from\" must be followed by an alias, e.g. \"from c\"".into()),
    };
    let predicate = if p.keyword("where") {
        Some(p.or()?)
    } else {
        None
    };
    if let Some(t) = p.peek() {
        return Err(format!("unexpected {t:?} after the condition"));
    }
    Ok(Condition { predicate })
}

struct Parser {
    tokens: Vec<Token>,
    pos: usize,
    alias: String,
    depth: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.pos)
    }

    fn next(&mut self) -> Option<Token> {
        let t = self.tokens.get(self.pos).cloned();
        self.pos += 1;
        t
    }

    fn keyword(&mut self, word: &str) -> bool {
        if matches!(self.peek(), Some(Token::Ident(w)) if w.eq_ignore_ascii_case(word)) {
            self.pos += 1;
            return true;
        }
        false
    }

    fn expect(&mut self, want: Token) -> Result<(), String> {
        match self.next() {
            Some(t) if t == want => Ok(()),
            other => Err(format!("expected {want:?}, found {other:?}")),
        }
    }

    fn enter(&mut self) -> Result<(), String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err("the condition is nested too deeply".into());
        }
        Ok(())
    }

    fn or(&mut self) -> Result<Expr, String> {
        self.enter()?;
        let mut left = self.and()?;
        while self.keyword("or") {
            left = Expr::Or(Box::new(left), Box::new(self.and()?));
        }
        self.depth -= 1;
        Ok(left)
    }

    fn and(&mut self) -> Result<Expr, String> {
        let mut left = self.not()?;
        while self.keyword("and") {
            left = Expr::And(Box::new(left), Box::new(self.not()?));
        }
        Ok(left)
    }

    fn not(&mut self) -> Result<Expr, String> {
        if self.keyword("not") {
            self.enter()?;
            let inner = self.not()?;
            self.depth -= 1;
            return Ok(Expr::Not(Box::new(inner)));
        }
        self.comparison()
    }

    fn comparison(&mut self) -> Result<Expr, String> {
        let left = self.primary()?;
        let Some(&Token::Cmp(op)) = self.peek() else {
            return Ok(left);
        };
        self.pos += 1;
        let right = self.primary()?;
        Ok(Expr::Cmp(op, Box::new(left), Box::new(right)))
    }

    fn primary(&mut self) -> Result<Expr, String> {
        match self.next() {
            Some(Token::LParen) => {
                let inner = self.or()?;
                self.expect(Token::RParen)?;
                Ok(inner)
            }
            Some(Token::Num(n)) => Ok(Expr::Literal(Some(number(n)))),
            Some(Token::Str(s)) => Ok(Expr::Literal(Some(serde_json::Value::String(s)))),
            Some(Token::Ident(word)) => self.word(word),
            other => Err(format!("expected a value, found {other:?}")),
        }
    }

    fn word(&mut self, word: String) -> Result<Expr, String> {
        match word.to_ascii_lowercase().as_str() {
            "true" => return Ok(Expr::Literal(Some(serde_json::Value::Bool(true)))),
            "false" => return Ok(Expr::Literal(Some(serde_json::Value::Bool(false)))),
            "null" => return Ok(Expr::Literal(Some(serde_json::Value::Null))),
            "undefined" => return Ok(Expr::Literal(None)),
            _ => {}
        }
        if self.peek() == Some(&Token::LParen) {
            self.pos += 1;
            let mut args = Vec::new();
            if self.peek() != Some(&Token::RParen) {
                loop {
                    args.push(self.or()?);
                    if self.peek() == Some(&Token::Comma) {
                        self.pos += 1;
                        continue;
                    }
                    break;
                }
            }
            self.expect(Token::RParen)?;
            return Ok(Expr::Call(word.to_ascii_uppercase(), args));
        }
        if word != self.alias {
            return Err(format!(
                "{word:?} is not the alias {:?} declared by \"from\"",
                self.alias
            ));
        }
        let mut path = Vec::new();
        loop {
            match self.peek() {
                Some(Token::Dot) => {
                    self.pos += 1;
                    match self.next() {
                        Some(Token::Ident(name)) => path.push(name),
                        other => {
                            return Err(format!(
                                "expected a property name after '.', found {other:?}"
                            ))
                        }
                    }
                }
                Some(Token::LBracket) => {
                    self.pos += 1;
                    match self.next() {
                        Some(Token::Str(name)) => path.push(name),
                        Some(Token::Num(n)) if n >= 0.0 && n.fract() == 0.0 => {
                            path.push(format!("{}", n as u64))
                        }
                        other => {
                            return Err(format!(
                                "expected a property name or index in [], found {other:?}"
                            ))
                        }
                    }
                    self.expect(Token::RBracket)?;
                }
                _ => break,
            }
        }
        Ok(Expr::Path(path))
    }
}

fn number(n: f64) -> serde_json::Value {
    if n.fract() == 0.0 && n.abs() < 9.0e15 {
        serde_json::Value::from(n as i64)
    } else {
        serde_json::Number::from_f64(n)
            .map(serde_json::Value::Number)
            .unwrap_or(serde_json::Value::Null)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_precedence_and_paths() {
        let c = parse("FROM c WHERE NOT c.a = 1 OR c.b['x y'][2] > 3 AND IS_DEFINED(c.d)").unwrap();
        let Some(Expr::Or(left, right)) = c.predicate else {
            panic!("not an OR")
        };
        assert!(matches!(*left, Expr::Not(_)));
        let Expr::And(cmp, call) = *right else {
            panic!("not an AND")
        };
        assert_eq!(
            *cmp,
            Expr::Cmp(
                CmpOp::Gt,
                Box::new(Expr::Path(vec!["b".into(), "x y".into(), "2".into()])),
                Box::new(Expr::Literal(Some(3.into())))
            )
        );
        assert!(matches!(*call, Expr::Call(ref name, _) if name == "IS_DEFINED"));
        assert_eq!(parse("from c").unwrap().predicate, None);
    }

    #[test]
    fn rejects_malformed_conditions() {
        for bad in [
            "where c.a = 1",
            "from",
            "from c where",
            "from c where d.a = 1",
            "from c where (c.a = 1",
            "from c where c.a = 1 extra",
            "from c where c. = 1",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        let deep = format!("from c where {}c.a = 1{}", "(".repeat(200), ")".repeat(200));
        assert!(parse(&deep).unwrap_err().contains("deeply"));
    }
}

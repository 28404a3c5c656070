//! Parsing expressions, by precedence from the ternary operator down to literals and paths.
//!
//! Left-associative operator chains are built in loops; each new node's height is checked against
//! [`MAX_DEPTH`], so a long `1 + 1 + ...` is refused instead of becoming a tree the evaluator would
//! recurse through. `AND` and `OR` chains become flat lists and are only limited by the operator
//! count.

use serde_json::Value;

use super::ast::{AggregateCall, AggregateKind, BinaryOp, Expr, Step, UnaryOp};
use super::functions;
use super::lexer::{Sym, Tok};
use super::limits::MAX_DEPTH;
use super::parser::{is_reserved, Parser};
use super::sql_error::SqlError;
use super::walk::height;

impl Parser {
    /// A full expression (one nesting level deeper).
    pub(super) fn expr(&mut self) -> Result<Expr, SqlError> {
        self.enter()?;
        let cond = self.coalesce()?;
        let out = if self.sym(Sym::Question) {
            self.count_operator()?;
            let yes = self.expr()?;
            self.expect_sym(Sym::Colon, ":")?;
            let no = self.expr()?;
            Expr::Ternary(Box::new(cond), Box::new(yes), Box::new(no))
        } else {
            cond
        };
        self.leave();
        Ok(out)
    }

    fn check_height(&self, h: usize) -> Result<(), SqlError> {
        if h > MAX_DEPTH {
            return Err(SqlError::at(
                self.position(),
                format!("The expression nests more than {MAX_DEPTH} levels deep, the limit."),
            ));
        }
        Ok(())
    }

    /// `left op right` with the new node's height checked; `left_height` carries the left
    /// operand's height along a chain so it is not recomputed.
    fn join(
        &self,
        op: BinaryOp,
        left: Expr,
        right: Expr,
        left_height: &mut Option<usize>,
    ) -> Result<Expr, SqlError> {
        let lh = left_height.unwrap_or_else(|| height(&left));
        let h = 1 + lh.max(height(&right));
        self.check_height(h)?;
        *left_height = Some(h);
        Ok(Expr::Binary(op, Box::new(left), Box::new(right)))
    }

    fn coalesce(&mut self) -> Result<Expr, SqlError> {
        let mut left = self.or()?;
        let mut left_height = None;
        while self.sym(Sym::Coalesce) {
            self.count_operator()?;
            let right = self.or()?;
            left = self.join(BinaryOp::Coalesce, left, right, &mut left_height)?;
        }
        Ok(left)
    }

    fn or(&mut self) -> Result<Expr, SqlError> {
        let first = self.and()?;
        if !self.peek_keyword("OR") {
            return Ok(first);
        }
        let mut items = vec![first];
        while self.keyword("OR") {
            self.count_operator()?;
            items.push(self.and()?);
        }
        Ok(Expr::Or(items))
    }

    fn and(&mut self) -> Result<Expr, SqlError> {
        let first = self.not()?;
        if !self.peek_keyword("AND") {
            return Ok(first);
        }
        let mut items = vec![first];
        while self.keyword("AND") {
            self.count_operator()?;
            items.push(self.not()?);
        }
        Ok(Expr::And(items))
    }

    fn not(&mut self) -> Result<Expr, SqlError> {
        if self.keyword("NOT") {
            self.count_operator()?;
            self.enter()?;
            let inner = self.not()?;
            self.leave();
            return Ok(Expr::Unary(UnaryOp::Not, Box::new(inner)));
        }
        self.comparison()
    }

    fn comparison(&mut self) -> Result<Expr, SqlError> {
        let left = self.operators_from(0)?;
        let negated = matches!(self.peek(), Some(Tok::Ident(w)) if w.eq_ignore_ascii_case("NOT"))
            && matches!(self.peek_at(1), Some(Tok::Ident(w))
                if ["IN", "BETWEEN", "LIKE"].iter().any(|k| w.eq_ignore_ascii_case(k)));
        if negated {
            self.advance();
        }
        if self.keyword("IN") {
            self.count_operator()?;
            self.expect_sym(Sym::LParen, "(")?;
            let mut list = Vec::new();
            loop {
                self.count_operator()?;
                list.push(self.expr()?);
                if !self.sym(Sym::Comma) {
                    break;
                }
            }
            self.expect_sym(Sym::RParen, ")")?;
            return Ok(Expr::In {
                expr: Box::new(left),
                list,
                negated,
            });
        }
        if self.keyword("BETWEEN") {
            self.count_operator()?;
            let low = self.operators_from(1)?;
            self.expect_keyword("AND")?;
            let high = self.operators_from(1)?;
            return Ok(Expr::Between {
                expr: Box::new(left),
                low: Box::new(low),
                high: Box::new(high),
                negated,
            });
        }
        if self.keyword("LIKE") {
            self.count_operator()?;
            let pattern = self.operators_from(1)?;
            let escape = if self.keyword("ESCAPE") {
                Some(Box::new(self.operators_from(1)?))
            } else {
                None
            };
            return Ok(Expr::Like {
                expr: Box::new(left),
                pattern: Box::new(pattern),
                escape,
                negated,
            });
        }
        if negated {
            return Err(self.unexpected("IN, BETWEEN or LIKE after NOT"));
        }
        Ok(left)
    }

    /// The binary operator at the cursor and its precedence (comparisons 0 ... `* / %` 6).
    fn peek_binary(&self) -> Option<(BinaryOp, u8)> {
        let Some(Tok::Sym(sym)) = self.peek() else {
            return None;
        };
        Some(match sym {
            Sym::Eq => (BinaryOp::Eq, 0),
            Sym::Ne => (BinaryOp::Ne, 0),
            Sym::Lt => (BinaryOp::Lt, 0),
            Sym::Le => (BinaryOp::Le, 0),
            Sym::Gt => (BinaryOp::Gt, 0),
            Sym::Ge => (BinaryOp::Ge, 0),
            Sym::Pipe => (BinaryOp::BitOr, 1),
            Sym::Caret => (BinaryOp::BitXor, 2),
            Sym::Amp => (BinaryOp::BitAnd, 3),
            Sym::Shl => (BinaryOp::Shl, 4),
            Sym::Shr => (BinaryOp::Shr, 4),
            Sym::ShrZero => (BinaryOp::ShrZero, 4),
            Sym::Plus => (BinaryOp::Add, 5),
            Sym::Minus => (BinaryOp::Sub, 5),
            Sym::Concat => (BinaryOp::Concat, 5),
            Sym::Star => (BinaryOp::Mul, 6),
            Sym::Slash => (BinaryOp::Div, 6),
            Sym::Percent => (BinaryOp::Mod, 6),
            _ => return None,
        })
    }

    /// Operators of precedence `min` and tighter, left-associative, by precedence climbing: the
    /// recursion for a right operand only ever goes to a tighter level, so it is at most seven deep
    /// between two nesting levels.
    fn operators_from(&mut self, min: u8) -> Result<Expr, SqlError> {
        let mut left = self.unary()?;
        let mut left_height = None;
        while let Some((op, prec)) = self.peek_binary().filter(|(_, p)| *p >= min) {
            self.advance();
            self.count_operator()?;
            let right = self.operators_from(prec + 1)?;
            left = self.join(op, left, right, &mut left_height)?;
        }
        Ok(left)
    }

    fn unary(&mut self) -> Result<Expr, SqlError> {
        let op = match self.peek() {
            Some(Tok::Sym(Sym::Minus)) => UnaryOp::Neg,
            Some(Tok::Sym(Sym::Plus)) => UnaryOp::Plus,
            Some(Tok::Sym(Sym::Tilde)) => UnaryOp::BitNot,
            Some(Tok::Ident(w)) if w.eq_ignore_ascii_case("NOT") => UnaryOp::Not,
            _ => return self.postfix(),
        };
        self.advance();
        self.count_operator()?;
        if op == UnaryOp::Neg {
            if let Some(Tok::Num(n)) = self.peek() {
                let negated = negate(n);
                self.advance();
                return Ok(Expr::Literal(negated));
            }
        }
        self.enter()?;
        let inner = self.unary()?;
        self.leave();
        Ok(Expr::Unary(op, Box::new(inner)))
    }

    fn postfix(&mut self) -> Result<Expr, SqlError> {
        let base = self.primary()?;
        let mut steps = Vec::new();
        loop {
            if self.sym(Sym::Dot) {
                match self.advance() {
                    Some(Tok::Ident(n)) => steps.push(Step::Name(n)),
                    _ => {
                        self.retreat();
                        return Err(self.unexpected("a property name after '.'"));
                    }
                }
            } else if self.sym(Sym::LBracket) {
                self.count_operator()?;
                let index = self.expr()?;
                self.expect_sym(Sym::RBracket, "]")?;
                steps.push(match index {
                    Expr::Literal(Value::String(s)) => Step::Name(s),
                    other => Step::Index(other),
                });
            } else {
                break;
            }
        }
        if steps.is_empty() {
            return Ok(base);
        }
        if matches!(base, Expr::Literal(_) | Expr::Undefined) {
            return Err(SqlError::at(
                self.position(),
                "A literal has no properties.",
            ));
        }
        Ok(Expr::Path(Box::new(base), steps))
    }

    fn primary(&mut self) -> Result<Expr, SqlError> {
        let at = self.position();
        match self.advance() {
            Some(Tok::Num(n)) => Ok(Expr::Literal(Value::Number(n))),
            Some(Tok::Str(s)) => Ok(Expr::Literal(Value::String(s))),
            Some(Tok::Param(p)) => Ok(Expr::Param(p)),
            Some(Tok::Sym(Sym::LParen)) => {
                if self.peek_keyword("SELECT") {
                    let q = self.subquery()?;
                    self.expect_sym(Sym::RParen, ")")?;
                    return Ok(Expr::Scalar(Box::new(q)));
                }
                let inner = self.expr()?;
                self.expect_sym(Sym::RParen, ")")?;
                Ok(inner)
            }
            Some(Tok::Sym(Sym::LBracket)) => {
                let mut items = Vec::new();
                if !self.sym(Sym::RBracket) {
                    loop {
                        self.count_operator()?;
                        items.push(self.expr()?);
                        if !self.sym(Sym::Comma) {
                            break;
                        }
                    }
                    self.expect_sym(Sym::RBracket, "]")?;
                }
                Ok(Expr::Array(items))
            }
            Some(Tok::Sym(Sym::LBrace)) => {
                let mut fields = Vec::new();
                if !self.sym(Sym::RBrace) {
                    loop {
                        self.count_operator()?;
                        let key = match self.advance() {
                            Some(Tok::Ident(k)) | Some(Tok::Str(k)) => k,
                            _ => {
                                self.retreat();
                                return Err(self.unexpected("a property name in {}"));
                            }
                        };
                        self.expect_sym(Sym::Colon, ":")?;
                        fields.push((key, self.expr()?));
                        if !self.sym(Sym::Comma) {
                            break;
                        }
                    }
                    self.expect_sym(Sym::RBrace, "}")?;
                }
                Ok(Expr::Object(fields))
            }
            Some(Tok::Ident(word)) => self.word(word, at),
            _ => {
                self.retreat();
                Err(self.unexpected("an expression"))
            }
        }
    }

    fn word(&mut self, word: String, at: usize) -> Result<Expr, SqlError> {
        let upper = word.to_ascii_uppercase();
        match upper.as_str() {
            "TRUE" => return Ok(Expr::Literal(Value::Bool(true))),
            "FALSE" => return Ok(Expr::Literal(Value::Bool(false))),
            "NULL" => return Ok(Expr::Literal(Value::Null)),
            "UNDEFINED" => return Ok(Expr::Undefined),
            "EXISTS" | "ARRAY" if self.peek() == Some(&Tok::Sym(Sym::LParen)) => {
                self.advance();
                let q = self.subquery()?;
                self.expect_sym(Sym::RParen, ")")?;
                return Ok(if upper == "EXISTS" {
                    Expr::Exists(Box::new(q))
                } else {
                    Expr::ArrayQuery(Box::new(q))
                });
            }
            _ => {}
        }
        if self.peek() == Some(&Tok::Sym(Sym::LParen)) {
            return self.call(upper, at);
        }
        if word.eq_ignore_ascii_case("udf")
            && self.peek() == Some(&Tok::Sym(Sym::Dot))
            && matches!(self.peek_at(1), Some(Tok::Ident(_)))
            && self.peek_at(2) == Some(&Tok::Sym(Sym::LParen))
        {
            self.advance();
            let name = match self.advance() {
                Some(Tok::Ident(name)) => name,
                _ => return Err(self.unexpected("a user-defined function's name")),
            };
            return self.udf_call(name);
        }
        if is_reserved(&word) {
            return Err(SqlError::at(
                at,
                format!("Syntax error: the reserved word '{word}' cannot start an expression."),
            ));
        }
        Ok(Expr::Ident(word, at))
    }

    /// The arguments of `udf.name(...)`, the `(` next.
    fn udf_call(&mut self, name: String) -> Result<Expr, SqlError> {
        self.count_operator()?;
        self.advance();
        let mut args = Vec::new();
        if !self.sym(Sym::RParen) {
            loop {
                args.push(self.expr()?);
                if !self.sym(Sym::Comma) {
                    break;
                }
            }
            self.expect_sym(Sym::RParen, ")")?;
        }
        Ok(Expr::Udf(name, args))
    }

    fn call(&mut self, upper: String, at: usize) -> Result<Expr, SqlError> {
        self.count_operator()?;
        self.advance();
        let aggregate = AggregateKind::from_name(&upper);
        if aggregate.is_some() && !self.aggregates_allowed {
            return Err(SqlError::at(
                at,
                format!("The aggregate {upper} is not allowed here (only in the select list or ORDER BY, and not nested)."),
            ));
        }
        let outer_allowed = self.aggregates_allowed;
        self.aggregates_allowed = false;
        let mut args = Vec::new();
        let arg_start = self.position();
        let mut arg_end = arg_start;
        if !self.sym(Sym::RParen) {
            loop {
                args.push(self.expr()?);
                arg_end = self.position();
                if !self.sym(Sym::Comma) {
                    break;
                }
            }
            self.expect_sym(Sym::RParen, ")")?;
        }
        self.aggregates_allowed = outer_allowed;
        if let Some(kind) = aggregate {
            let [arg] = <[Expr; 1]>::try_from(args).map_err(|args| {
                SqlError::at(at, format!("{upper} takes 1 argument, not {}.", args.len()))
            })?;
            let list = self.aggregates.last_mut().ok_or_else(|| {
                SqlError::at(at, format!("The aggregate {upper} is not allowed here."))
            })?;
            list.push(AggregateCall {
                kind,
                arg,
                span: (arg_start, arg_end),
            });
            return Ok(Expr::Aggregate(list.len() - 1));
        }
        functions::check_arity(&upper, args.len()).map_err(|m| SqlError::at(at, m))?;
        Ok(Expr::Call(upper, args))
    }

    /// A nested `SELECT` (its own aggregates and aggregate permission).
    fn subquery(&mut self) -> Result<super::ast::Query, SqlError> {
        let outer_allowed = self.aggregates_allowed;
        let q = self.query()?;
        self.aggregates_allowed = outer_allowed;
        Ok(q)
    }
}

/// `-n` for a number literal, keeping integers exact.
fn negate(n: &serde_json::Number) -> Value {
    if let Some(i) = n.as_i64() {
        if let Some(neg) = i.checked_neg() {
            return Value::from(neg);
        }
    }
    serde_json::Number::from_f64(-n.as_f64().unwrap_or(0.0))
        .map(Value::Number)
        .unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::super::ast::Projection;
    use super::super::parse_query;
    use super::*;
    use serde_json::json;

    /// The expression of `SELECT VALUE <text> FROM c`.
    fn expr(text: &str) -> Expr {
        let q = parse_query(&format!("SELECT VALUE {text} FROM c"))
            .unwrap_or_else(|e| panic!("{text}: {e}"));
        match q.projection {
            Projection::Value(e) => e,
            other => panic!("{text}: {other:?}"),
        }
    }

    fn err(text: &str) -> SqlError {
        parse_query(&format!("SELECT VALUE {text} FROM c")).unwrap_err()
    }

    fn path(e: &Expr) -> String {
        let (root, steps) = e
            .plain_path()
            .unwrap_or_else(|| panic!("not a path: {e:?}"));
        std::iter::once(root)
            .chain(steps)
            .collect::<Vec<_>>()
            .join(".")
    }

    #[test]
    fn operators_bind_by_precedence_and_associate_left() {
        let Expr::Binary(BinaryOp::Add, a, b) = expr("c.a + c.b * c.c") else {
            panic!()
        };
        assert_eq!(path(&a), "c.a");
        assert!(matches!(*b, Expr::Binary(BinaryOp::Mul, _, _)));
        let Expr::Binary(BinaryOp::Sub, left, right) = expr("1 - 2 - 3") else {
            panic!()
        };
        assert!(matches!(*left, Expr::Binary(BinaryOp::Sub, _, _)));
        assert_eq!(*right, Expr::Literal(json!(3)));
        // Comparisons are looser than arithmetic, bitwise operators between them.
        assert!(matches!(
            expr("1 + 1 = 2"),
            Expr::Binary(BinaryOp::Eq, _, _)
        ));
        assert!(matches!(
            expr("1 | 2 & 3"),
            Expr::Binary(BinaryOp::BitOr, _, _)
        ));
        assert!(matches!(
            expr("'a' || 'b'"),
            Expr::Binary(BinaryOp::Concat, _, _)
        ));
        assert!(matches!(
            expr("c.a ?? 1"),
            Expr::Binary(BinaryOp::Coalesce, _, _)
        ));
        assert!(matches!(expr("c.a ? 1 : 2"), Expr::Ternary(..)));
    }

    #[test]
    fn and_or_chains_are_flat_and_not_applies_to_its_operand() {
        let Expr::Or(terms) = expr("c.a OR c.b OR c.c AND c.d AND c.e") else {
            panic!()
        };
        assert_eq!(terms.len(), 3);
        assert!(matches!(&terms[2], Expr::And(parts) if parts.len() == 3));
        let Expr::Unary(UnaryOp::Not, inner) = expr("NOT c.a = 1") else {
            panic!()
        };
        assert!(matches!(*inner, Expr::Binary(BinaryOp::Eq, _, _)));
    }

    #[test]
    fn in_between_and_like_take_their_negated_forms() {
        assert!(
            matches!(expr("c.a IN (1, 2, 3)"), Expr::In { list, negated: false, .. } if list.len() == 3)
        );
        assert!(matches!(
            expr("c.a NOT IN (1)"),
            Expr::In { negated: true, .. }
        ));
        assert!(matches!(
            expr("c.a BETWEEN 1 AND 2"),
            Expr::Between { negated: false, .. }
        ));
        assert!(matches!(
            expr("c.a NOT BETWEEN 1 AND 2"),
            Expr::Between { negated: true, .. }
        ));
        assert!(matches!(
            expr("c.a LIKE 'x!%' ESCAPE '!'"),
            Expr::Like {
                escape: Some(_),
                negated: false,
                ..
            }
        ));
        assert!(matches!(
            expr("c.a NOT LIKE 'x'"),
            Expr::Like { negated: true, .. }
        ));
        assert!(err("c.a NOT 1").position.is_some());
    }

    #[test]
    fn literals_paths_constructors_and_calls() {
        assert_eq!(expr("-5"), Expr::Literal(json!(-5)));
        assert_eq!(expr("-2.5"), Expr::Literal(json!(-2.5)));
        assert!(matches!(expr("-c.a"), Expr::Unary(UnaryOp::Neg, _)));
        assert_eq!(expr("\"it's\""), Expr::Literal(json!("it's")));
        assert_eq!(expr("undefined"), Expr::Undefined);
        assert_eq!(expr("null"), Expr::Literal(Value::Null));
        assert_eq!(expr("@p"), Expr::Param("@p".into()));
        assert_eq!(path(&expr("c.a.b")), "c.a.b");
        assert_eq!(path(&expr("c['a']")), "c.a");
        let Expr::Path(_, steps) = expr("c.a[0][@k]") else {
            panic!()
        };
        assert!(matches!(&steps[1], Step::Index(Expr::Literal(v)) if v == &json!(0)));
        assert!(matches!(&steps[2], Step::Index(Expr::Param(_))));
        assert!(matches!(expr("[1, c.a, [2]]"), Expr::Array(items) if items.len() == 3));
        assert!(
            matches!(expr("{\"k\": 1, \"l\": c.a}"), Expr::Object(fields) if fields.len() == 2)
        );
        assert!(
            matches!(expr("lower(c.a)"), Expr::Call(name, args) if name == "LOWER" && args.len() == 1)
        );
        assert!(matches!(
            expr("EXISTS(SELECT VALUE 1 FROM x IN c.a)"),
            Expr::Exists(_)
        ));
        assert!(matches!(
            expr("ARRAY(SELECT VALUE 1 FROM x IN c.a)"),
            Expr::ArrayQuery(_)
        ));
        assert!(matches!(
            expr("(SELECT VALUE 1 FROM x IN c.a)"),
            Expr::Scalar(_)
        ));
    }

    #[test]
    fn aggregates_become_indexes_into_the_query_list() {
        let q = parse_query("SELECT VALUE {\"n\": COUNT(1), \"s\": SUM(c.a)} FROM c").unwrap();
        assert_eq!(q.aggregates.len(), 2);
        assert_eq!(q.aggregates[1].kind, AggregateKind::Sum);
        let Projection::Value(Expr::Object(fields)) = &q.projection else {
            panic!()
        };
        assert_eq!(fields[1].1, Expr::Aggregate(1));
        let e = parse_query("SELECT VALUE c.a FROM c WHERE COUNT(1) > 1").unwrap_err();
        assert!(e.message.to_lowercase().contains("aggregate"), "{e}");
    }

    #[test]
    fn nesting_operators_and_bad_syntax_are_refused_with_positions() {
        let deep = format!("{}1{}", "(".repeat(40), ")".repeat(40));
        assert!(err(&deep).message.contains("limit"));
        let long = vec!["1"; 40].join(" + ");
        assert!(err(&long).message.contains("levels deep"));
        let e = err("c.a +");
        assert!(e.position.is_some(), "{e:?}");
        assert!(err("FROB(1)").message.contains("FROB"));
        assert!(err("c.").position.is_some());
        assert!(err("[1, 2").position.is_some());
    }
}

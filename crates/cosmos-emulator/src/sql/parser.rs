//! Parsing query text into a [`Query`]: the clauses (`SELECT`, `FROM`, `JOIN`, `WHERE`,
//! `GROUP BY`, `ORDER BY`, `OFFSET`/`LIMIT`). Expressions are parsed in `parse_expr.rs`.
//!
//! The parser recurses only where the text nests (parentheses, calls, constructors, subqueries,
//! unary operators), counts that nesting against [`MAX_DEPTH`], checks every tree it builds stays
//! within the same height, and counts operators against [`MAX_OPERATORS`].

use super::ast::{
    AggregateCall, From, OrderKey, Projection, Query, SelectItem, Source, Span, Spans, Step,
};
use super::lexer::{tokenize, Sym, Tok, Token};
use super::limits::{MAX_DEPTH, MAX_JOINS, MAX_OPERATORS};
use super::scope_check::check_names;
use super::sql_error::SqlError;

/// Words that cannot be used as names.
const RESERVED: &[&str] = &[
    "SELECT",
    "FROM",
    "WHERE",
    "AND",
    "OR",
    "NOT",
    "IN",
    "BETWEEN",
    "LIKE",
    "ESCAPE",
    "ORDER",
    "BY",
    "GROUP",
    "ASC",
    "DESC",
    "TOP",
    "VALUE",
    "DISTINCT",
    "AS",
    "JOIN",
    "OFFSET",
    "LIMIT",
    "EXISTS",
    "ARRAY",
    "TRUE",
    "FALSE",
    "NULL",
    "UNDEFINED",
];

/// Parses a whole query.
pub(crate) fn parse_query(text: &str) -> Result<Query, SqlError> {
    let mut p = Parser::new(text)?;
    let query = p.query()?;
    p.end()?;
    check_names(&query)?;
    Ok(query)
}

/// Parses a patch condition, `from <alias> [where <predicate>]`, as `SELECT * FROM <alias> ...`.
pub(crate) fn parse_condition(text: &str) -> Result<Query, SqlError> {
    let mut p = Parser::new(text)?;
    if !p.peek_keyword("FROM") {
        return Err(SqlError::at(
            p.position(),
            "The condition must start with \"from <alias>\".",
        ));
    }
    p.aggregates.push(Vec::new());
    let mut query = p.clauses(false, None, Projection::Star)?;
    query.spans = Default::default();
    p.end()?;
    if query.from.as_ref().is_some_and(|f| !f.joins.is_empty()) {
        return Err(SqlError::new("A condition cannot JOIN."));
    }
    query.aggregates = p.aggregates.pop().unwrap_or_default();
    if !query.aggregates.is_empty() {
        return Err(SqlError::new("A condition cannot use aggregates."));
    }
    check_names(&query)?;
    Ok(query)
}

/// The parser's state: tokens, cursor, nesting and operator counts, and the aggregate lists of the
/// queries being parsed (innermost last).
pub(super) struct Parser {
    tokens: Vec<Token>,
    pos: usize,
    text_len: usize,
    pub(super) depth: usize,
    pub(super) operators: usize,
    pub(super) aggregates: Vec<Vec<AggregateCall>>,
    /// Whether aggregates are allowed where the parser is (the select list, ORDER BY).
    pub(super) aggregates_allowed: bool,
}

impl Parser {
    fn new(text: &str) -> Result<Self, SqlError> {
        Ok(Self {
            tokens: tokenize(text)?,
            pos: 0,
            text_len: text.chars().count(),
            depth: 0,
            operators: 0,
            aggregates: Vec::new(),
            aggregates_allowed: false,
        })
    }

    pub(super) fn peek(&self) -> Option<&Tok> {
        self.tokens.get(self.pos).map(|t| &t.tok)
    }

    pub(super) fn peek_at(&self, ahead: usize) -> Option<&Tok> {
        self.tokens.get(self.pos + ahead).map(|t| &t.tok)
    }

    /// Character offset of the next token (the text's end when none).
    pub(super) fn position(&self) -> usize {
        self.tokens.get(self.pos).map_or(self.text_len, |t| t.pos)
    }

    pub(super) fn advance(&mut self) -> Option<Tok> {
        let t = self.tokens.get(self.pos).map(|t| t.tok.clone());
        self.pos += 1;
        t
    }

    pub(super) fn retreat(&mut self) {
        self.pos = self.pos.saturating_sub(1);
    }

    pub(super) fn peek_keyword(&self, word: &str) -> bool {
        matches!(self.peek(), Some(Tok::Ident(w)) if w.eq_ignore_ascii_case(word))
    }

    pub(super) fn keyword(&mut self, word: &str) -> bool {
        let hit = self.peek_keyword(word);
        if hit {
            self.pos += 1;
        }
        hit
    }

    pub(super) fn expect_keyword(&mut self, word: &str) -> Result<(), SqlError> {
        if self.keyword(word) {
            Ok(())
        } else {
            Err(self.unexpected(word))
        }
    }

    pub(super) fn sym(&mut self, sym: Sym) -> bool {
        let hit = self.peek() == Some(&Tok::Sym(sym));
        if hit {
            self.pos += 1;
        }
        hit
    }

    pub(super) fn expect_sym(&mut self, sym: Sym, shown: &str) -> Result<(), SqlError> {
        if self.sym(sym) {
            Ok(())
        } else {
            Err(self.unexpected(&format!("'{shown}'")))
        }
    }

    /// "Expected X, found Y" at the next token.
    pub(super) fn unexpected(&self, wanted: &str) -> SqlError {
        let found = match self.peek() {
            None => "the end of the query".to_owned(),
            Some(Tok::Ident(w)) => format!("'{w}'"),
            Some(Tok::Param(p)) => format!("'{p}'"),
            Some(Tok::Str(s)) => format!("the string {s:?}"),
            Some(Tok::Num(n)) => format!("the number {n}"),
            Some(Tok::Sym(s)) => format!("{s:?}"),
        };
        SqlError::at(
            self.position(),
            format!("Syntax error, incorrect syntax near {found}: expected {wanted}."),
        )
    }

    /// A name that is not a reserved word.
    pub(super) fn name(&mut self, what: &str) -> Result<String, SqlError> {
        match self.peek() {
            Some(Tok::Ident(w)) if !is_reserved(w) => {
                let w = w.clone();
                self.pos += 1;
                Ok(w)
            }
            _ => Err(self.unexpected(what)),
        }
    }

    /// Enters one level of nesting.
    pub(super) fn enter(&mut self) -> Result<(), SqlError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(SqlError::at(
                self.position(),
                format!("The query nests more than {MAX_DEPTH} levels deep, the limit."),
            ));
        }
        Ok(())
    }

    pub(super) fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    /// Counts one operator, call or operand.
    pub(super) fn count_operator(&mut self) -> Result<(), SqlError> {
        self.operators += 1;
        if self.operators > MAX_OPERATORS {
            return Err(SqlError::at(
                self.position(),
                format!("The query has more than {MAX_OPERATORS} operators, the limit."),
            ));
        }
        Ok(())
    }

    fn end(&self) -> Result<(), SqlError> {
        match self.peek() {
            None => Ok(()),
            Some(_) => Err(self.unexpected("the end of the query")),
        }
    }

    /// `SELECT ...` up to the end of this query level.
    pub(super) fn query(&mut self) -> Result<Query, SqlError> {
        self.enter()?;
        self.expect_keyword("SELECT")?;
        self.aggregates.push(Vec::new());
        let distinct = self.keyword("DISTINCT");
        let top = if self.keyword("TOP") {
            Some(self.count_literal("TOP")?)
        } else {
            None
        };
        self.aggregates_allowed = true;
        let mut item_spans = Vec::new();
        let projection = self.projection(&mut item_spans)?;
        self.aggregates_allowed = false;
        let mut query = self.clauses(distinct, top, projection)?;
        query.spans.items = item_spans;
        query.aggregates = self.aggregates.pop().unwrap_or_default();
        if matches!(query.projection, Projection::Star) && query.from.is_none() {
            return Err(SqlError::new(
                "'SELECT *' is only valid with a FROM clause.",
            ));
        }
        if matches!(query.projection, Projection::Star)
            && query.from.as_ref().is_some_and(|f| !f.joins.is_empty())
        {
            return Err(SqlError::new(
                "'SELECT *' is only valid with a single input set; name what to select.",
            ));
        }
        self.leave();
        Ok(query)
    }

    fn clauses(
        &mut self,
        distinct: bool,
        top: Option<super::ast::Expr>,
        projection: Projection,
    ) -> Result<Query, SqlError> {
        let mut spans = Spans::default();
        let from = if self.keyword("FROM") {
            let start = self.position();
            let from = self.from()?;
            spans.from = Some((start, self.position()));
            Some(from)
        } else {
            None
        };
        let filter = if self.keyword("WHERE") {
            let start = self.position();
            let filter = self.expr()?;
            spans.filter = Some((start, self.position()));
            Some(filter)
        } else {
            None
        };
        let mut group_by = Vec::new();
        if self.keyword("GROUP") {
            self.expect_keyword("BY")?;
            loop {
                let start = self.position();
                group_by.push(self.expr()?);
                spans.group_by.push((start, self.position()));
                if !self.sym(Sym::Comma) {
                    break;
                }
            }
        }
        let mut order_by = Vec::new();
        if self.keyword("ORDER") {
            self.expect_keyword("BY")?;
            self.aggregates_allowed = true;
            loop {
                let rank =
                    self.peek_keyword("RANK") && matches!(self.peek_at(1), Some(Tok::Ident(_)));
                if rank {
                    self.advance();
                }
                let start = self.position();
                let expr = self.expr()?;
                spans.order_by.push((start, self.position()));
                let (descending, explicit) = if self.keyword("DESC") {
                    (true, true)
                } else {
                    (false, self.keyword("ASC"))
                };
                order_by.push(OrderKey {
                    expr,
                    descending,
                    rank,
                    explicit,
                });
                if !self.sym(Sym::Comma) {
                    break;
                }
            }
            self.aggregates_allowed = false;
        }
        if self.peek_keyword("OFFSET") {
            spans.offset_at = Some(self.position());
        }
        let (offset, limit) = if self.keyword("OFFSET") {
            let offset = self.count_literal("OFFSET")?;
            self.expect_keyword("LIMIT")?;
            (Some(offset), Some(self.count_literal("LIMIT")?))
        } else {
            (None, None)
        };
        Ok(Query {
            distinct,
            top,
            projection,
            from,
            filter,
            group_by,
            order_by,
            offset,
            limit,
            aggregates: Vec::new(),
            spans,
        })
    }

    /// A TOP/OFFSET/LIMIT count: a non-negative integer literal or a parameter.
    fn count_literal(&mut self, clause: &str) -> Result<super::ast::Expr, SqlError> {
        match self.advance() {
            Some(Tok::Num(n)) if n.as_u64().is_some() => Ok(super::ast::Expr::Literal(n.into())),
            Some(Tok::Param(p)) => Ok(super::ast::Expr::Param(p)),
            _ => {
                self.pos -= 1;
                Err(self.unexpected(&format!(
                    "a non-negative integer or a parameter after {clause}"
                )))
            }
        }
    }

    fn projection(&mut self, spans: &mut Vec<Span>) -> Result<Projection, SqlError> {
        if self.sym(Sym::Star) {
            return Ok(Projection::Star);
        }
        if self.keyword("VALUE") {
            let start = self.position();
            let expr = self.expr()?;
            spans.push((start, self.position()));
            return Ok(Projection::Value(expr));
        }
        let mut items = Vec::new();
        loop {
            let start = self.position();
            let expr = self.expr()?;
            spans.push((start, self.position()));
            let alias = if self.keyword("AS") {
                Some(self.name("an alias after AS")?)
            } else {
                match self.peek() {
                    Some(Tok::Ident(w)) if !is_reserved(w) => Some(self.name("an alias")?),
                    _ => None,
                }
            };
            items.push(SelectItem { expr, alias });
            if !self.sym(Sym::Comma) {
                break;
            }
        }
        Ok(Projection::Items(items))
    }

    fn from(&mut self) -> Result<From, SqlError> {
        let source = self.source(false)?;
        let mut joins = Vec::new();
        while self.keyword("JOIN") {
            if joins.len() >= MAX_JOINS {
                return Err(SqlError::at(
                    self.position(),
                    format!("The query has more than {MAX_JOINS} JOINs, the limit."),
                ));
            }
            joins.push(self.source(true)?);
        }
        Ok(From { source, joins })
    }

    /// `x IN expr` or `name[.path] [[AS] alias]`.
    fn source(&mut self, is_join: bool) -> Result<Source, SqlError> {
        if self.peek() == Some(&Tok::Sym(Sym::LParen)) {
            return Err(SqlError::at(
                self.position(),
                "Subqueries in FROM or JOIN are not supported by this emulator.",
            ));
        }
        let first = self.name(if is_join {
            "a name after JOIN"
        } else {
            "a container name after FROM"
        })?;
        if self.keyword("IN") {
            let expr = self.expr()?;
            return Ok(Source::In { alias: first, expr });
        }
        let mut path = Vec::new();
        loop {
            if self.sym(Sym::Dot) {
                match self.advance() {
                    Some(Tok::Ident(n)) => path.push(Step::Name(n)),
                    _ => {
                        self.pos -= 1;
                        return Err(self.unexpected("a property name after '.'"));
                    }
                }
            } else if self.sym(Sym::LBracket) {
                match self.advance() {
                    Some(Tok::Str(s)) => path.push(Step::Name(s)),
                    Some(Tok::Num(n)) if n.as_u64().is_some() => {
                        path.push(Step::Index(super::ast::Expr::Literal(n.into())))
                    }
                    _ => {
                        self.pos -= 1;
                        return Err(self.unexpected("a property name or index in []"));
                    }
                }
                self.expect_sym(Sym::RBracket, "]")?;
            } else {
                break;
            }
        }
        let alias = if self.keyword("AS") {
            self.name("an alias after AS")?
        } else {
            match self.peek() {
                Some(Tok::Ident(w)) if !is_reserved(w) => self.name("an alias")?,
                _ => match path.last() {
                    Some(Step::Name(n)) => n.clone(),
                    Some(Step::Index(_)) => {
                        return Err(SqlError::at(
                            self.position(),
                            "A source ending in an index needs an alias.",
                        ))
                    }
                    None => first.clone(),
                },
            }
        };
        Ok(Source::Container {
            container: first,
            path,
            alias,
        })
    }
}

/// Whether `word` is a reserved word.
pub(super) fn is_reserved(word: &str) -> bool {
    RESERVED.iter().any(|r| r.eq_ignore_ascii_case(word))
}

#[cfg(test)]
mod tests {
    use super::super::ast::{Expr, Projection, Source};
    use super::*;

    fn q(text: &str) -> Query {
        parse_query(text).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    #[test]
    fn every_clause_is_read_into_the_query() {
        let query = q("SELECT DISTINCT TOP 5 c.id, c.n AS m FROM root c JOIN t IN c.tags WHERE t = 'x' GROUP BY c.id, c.n ORDER BY c.id DESC, c.n OFFSET 1 LIMIT 2");
        assert!(query.distinct);
        assert!(matches!(query.top, Some(Expr::Literal(_))));
        let Projection::Items(items) = &query.projection else {
            panic!()
        };
        assert_eq!(items.len(), 2);
        assert_eq!(items[1].alias.as_deref(), Some("m"));
        let from = query.from.as_ref().unwrap();
        assert_eq!(from.source.alias(), "c");
        assert!(matches!(&from.joins[0], Source::In { alias, .. } if alias == "t"));
        assert!(query.filter.is_some());
        assert_eq!(query.group_by.len(), 2);
        assert_eq!(query.order_by.len(), 2);
        assert!(query.order_by[0].descending && !query.order_by[1].descending);
        assert!(query.offset.is_some() && query.limit.is_some());
        // Spans name where the clauses are (a plan's rewritten query copies them).
        assert_eq!(query.spans.items.len(), 2);
        assert!(query.spans.filter.is_some() && query.spans.from.is_some());
        assert!(query.spans.offset_at.is_some());
    }

    #[test]
    fn sources_bind_documents_paths_and_arrays() {
        let cases = [
            ("SELECT * FROM c", "c"),
            ("SELECT * FROM Families f", "f"),
            ("SELECT * FROM c.children ch", "ch"),
            ("SELECT VALUE x FROM x IN c.tags", "x"),
            ("SELECT VALUE c FROM c AS c", "c"),
        ];
        for (text, alias) in cases {
            assert_eq!(q(text).from.unwrap().source.alias(), alias, "{text}");
        }
        assert!(q("SELECT VALUE 1").from.is_none());
        assert!(matches!(
            q("select value 1 from c").projection,
            Projection::Value(_)
        ));
        assert!(matches!(q("SELECT * FROM c").projection, Projection::Star));
    }

    #[test]
    fn limits_and_malformed_clauses_are_refused() {
        let joins: String = (0..11).map(|i| format!(" JOIN x{i} IN c.a")).collect();
        let e = parse_query(&format!("SELECT VALUE 1 FROM c{joins}")).unwrap_err();
        assert!(e.message.contains("JOIN"), "{e}");
        for bad in [
            "",
            "SELECT",
            "SELECT FROM c",
            "SELECT * FROM",
            "SELECT * FROM c WHERE",
            "SELECT * FROM c ORDER c.id",
            "SELECT * FROM c GROUP c.id",
            "SELECT * FROM c OFFSET 1",
            "SELECT * FROM c WHERE c.a = 1 extra",
            "SELECT * FROM select",
            "SELECT TOP -1 * FROM c",
            "SELECT VALUE d.a FROM c",
        ] {
            assert!(parse_query(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn conditions_are_a_from_and_an_optional_where() {
        let cond = parse_condition("from c where c.a = 1").unwrap();
        assert!(matches!(cond.projection, Projection::Star));
        assert!(cond.filter.is_some());
        assert!(parse_condition("FROM c").unwrap().filter.is_none());
        for bad in [
            "where c.a = 1",
            "from c join t in c.tags",
            "from c where COUNT(1) > 0",
        ] {
            assert!(parse_condition(bad).is_err(), "{bad}");
        }
        // Subqueries may range over arrays inside a condition.
        assert!(parse_condition(
            "from c where EXISTS(SELECT VALUE 1 FROM t IN c.tags JOIN u IN c.tags)"
        )
        .is_ok());
    }
}

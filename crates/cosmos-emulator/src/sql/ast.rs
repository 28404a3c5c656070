//! The query as data: what the parser builds and the evaluator, the planner and the executor read.
//!
//! Trees are shallow by construction: the parser refuses nesting past
//! [`super::limits::MAX_DEPTH`], `AND`/`OR` chains are flat lists, and property paths are a base
//! and a list of steps, so walking or dropping a tree never recurses deeper than that limit.

use serde_json::Value;

/// A whole `SELECT` query.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Query {
    pub distinct: bool,
    pub top: Option<Expr>,
    pub projection: Projection,
    pub from: Option<From>,
    pub filter: Option<Expr>,
    pub group_by: Vec<Expr>,
    pub order_by: Vec<OrderKey>,
    pub offset: Option<Expr>,
    pub limit: Option<Expr>,
    /// The aggregate calls of this query level, in the order they appear; [`Expr::Aggregate`]
    /// holds an index into this list.
    pub aggregates: Vec<AggregateCall>,
    /// Where the clauses are in the text (for the rewritten queries of a plan).
    pub spans: Spans,
}

/// A range of character offsets in the query text.
pub(crate) type Span = (usize, usize);

/// Where each part of a query is in its text.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Spans {
    /// Each select item's expression, or the VALUE expression.
    pub items: Vec<Span>,
    /// What follows FROM, up to the next clause.
    pub from: Option<Span>,
    pub filter: Option<Span>,
    pub group_by: Vec<Span>,
    pub order_by: Vec<Span>,
    /// Where the OFFSET keyword starts.
    pub offset_at: Option<usize>,
}

/// What a query returns per row.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Projection {
    /// `SELECT *`: the single source's value.
    Star,
    /// `SELECT VALUE expr`
    Value(Expr),
    /// `SELECT a, b AS x, ...`: an object with one property per item.
    Items(Vec<SelectItem>),
}

/// One `expr [AS alias]` of a select list.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct SelectItem {
    pub expr: Expr,
    pub alias: Option<String>,
}

/// The `FROM` clause and its `JOIN`s.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct From {
    pub source: Source,
    pub joins: Vec<Source>,
}

/// One source of rows.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Source {
    /// `FROM c`, `FROM root r`, `FROM c.children ch`: the document, or a path inside it, bound to
    /// `alias`. `container` is the name written before any path.
    Container {
        container: String,
        path: Vec<Step>,
        alias: String,
    },
    /// `alias IN expr`: one row per element of the array `expr` yields.
    In { alias: String, expr: Expr },
}

impl Source {
    /// The name this source binds.
    pub(crate) fn alias(&self) -> &str {
        match self {
            Source::Container { alias, .. } | Source::In { alias, .. } => alias,
        }
    }
}

/// One `ORDER BY` key.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct OrderKey {
    pub expr: Expr,
    pub descending: bool,
    /// `ORDER BY RANK expr` (full-text and hybrid search ranking).
    pub rank: bool,
    /// Whether ASC or DESC was written.
    pub explicit: bool,
}

/// An aggregate function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AggregateKind {
    Count,
    Sum,
    Avg,
    Min,
    Max,
}

impl AggregateKind {
    /// The aggregate named `upper` (an upper-cased function name).
    pub(crate) fn from_name(upper: &str) -> Option<Self> {
        Some(match upper {
            "COUNT" => Self::Count,
            "SUM" => Self::Sum,
            "AVG" => Self::Avg,
            "MIN" => Self::Min,
            "MAX" => Self::Max,
            _ => return None,
        })
    }

    /// The name query plans use ("Count", "Sum", "Average", "Min", "Max").
    pub(crate) fn plan_name(self) -> &'static str {
        match self {
            Self::Count => "Count",
            Self::Sum => "Sum",
            Self::Avg => "Average",
            Self::Min => "Min",
            Self::Max => "Max",
        }
    }

    /// The function name in query text.
    pub(crate) fn sql_name(self) -> &'static str {
        match self {
            Self::Count => "COUNT",
            Self::Sum => "SUM",
            Self::Avg => "AVG",
            Self::Min => "MIN",
            Self::Max => "MAX",
        }
    }
}

/// One aggregate call: its kind and argument.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct AggregateCall {
    pub kind: AggregateKind,
    pub arg: Expr,
    /// The argument's place in the text.
    pub span: Span,
}

/// A step of a property path.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Step {
    /// `.name` or `["name"]`
    Name(String),
    /// `[expr]`: an array index or a property name computed at run time.
    Index(Expr),
}

/// A unary operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum UnaryOp {
    Not,
    Neg,
    Plus,
    BitNot,
}

/// A binary operator (AND and OR are [`Expr::And`] / [`Expr::Or`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BinaryOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Concat,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
    ShrZero,
    Coalesce,
}

/// An expression.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Expr {
    /// A JSON literal.
    Literal(Value),
    /// The `undefined` literal.
    Undefined,
    /// `@name`, bound from the request's `parameters`.
    Param(String),
    /// A name bound by `FROM`/`JOIN` (or an outer query's), and where it is in the text.
    Ident(String, usize),
    /// `base.a["b"][0]`
    Path(Box<Expr>, Vec<Step>),
    Array(Vec<Expr>),
    Object(Vec<(String, Expr)>),
    Unary(UnaryOp, Box<Expr>),
    Binary(BinaryOp, Box<Expr>, Box<Expr>),
    /// `a AND b AND ...`, flat.
    And(Vec<Expr>),
    /// `a OR b OR ...`, flat.
    Or(Vec<Expr>),
    Between {
        expr: Box<Expr>,
        low: Box<Expr>,
        high: Box<Expr>,
        negated: bool,
    },
    In {
        expr: Box<Expr>,
        list: Vec<Expr>,
        negated: bool,
    },
    Like {
        expr: Box<Expr>,
        pattern: Box<Expr>,
        escape: Option<Box<Expr>>,
        negated: bool,
    },
    Ternary(Box<Expr>, Box<Expr>, Box<Expr>),
    /// A built-in function (upper-cased name, arity checked by the parser).
    Call(String, Vec<Expr>),
    /// `udf.name(...)`: a user-defined function of the container (name as written).
    Udf(String, Vec<Expr>),
    /// The aggregate at this index of the enclosing query's [`Query::aggregates`].
    Aggregate(usize),
    /// `EXISTS(SELECT ...)`
    Exists(Box<Query>),
    /// `ARRAY(SELECT ...)`
    ArrayQuery(Box<Query>),
    /// `(SELECT ...)`: the first value, or undefined.
    Scalar(Box<Query>),
}

impl Expr {
    /// `alias.a.b` as the list of names, when this expression is such a plain path.
    pub(crate) fn plain_path(&self) -> Option<(&str, Vec<&str>)> {
        match self {
            Expr::Ident(name, _) => Some((name, Vec::new())),
            Expr::Path(base, steps) => {
                let Expr::Ident(name, _) = base.as_ref() else {
                    return None;
                };
                let names = steps
                    .iter()
                    .map(|s| match s {
                        Step::Name(n) => Some(n.as_str()),
                        Step::Index(Expr::Literal(Value::String(n))) => Some(n.as_str()),
                        Step::Index(_) => None,
                    })
                    .collect::<Option<Vec<_>>>()?;
                Some((name, names))
            }
            _ => None,
        }
    }
}

/// The value of a constant expression: a literal, a negated number, or an array or object of
/// constants (the parser bounds the nesting).
pub(crate) fn constant(e: &Expr) -> Option<Value> {
    match e {
        Expr::Literal(v) => Some(v.clone()),
        Expr::Unary(UnaryOp::Neg, inner) => match inner.as_ref() {
            Expr::Literal(Value::Number(n)) => {
                if let Some(i) = n.as_i64() {
                    Some(Value::from(-i))
                } else {
                    n.as_f64()
                        .and_then(|f| serde_json::Number::from_f64(-f))
                        .map(Value::Number)
                }
            }
            _ => None,
        },
        Expr::Array(items) => items
            .iter()
            .map(constant)
            .collect::<Option<Vec<_>>>()
            .map(Value::Array),
        Expr::Object(fields) => fields
            .iter()
            .map(|(k, v)| constant(v).map(|v| (k.clone(), v)))
            .collect::<Option<serde_json::Map<_, _>>>()
            .map(Value::Object),
        _ => None,
    }
}

//! Evaluating an expression against the names a row binds, with the service's rules: `undefined`
//! propagates, only `true` is true, comparisons across types are `undefined`.
//!
//! Values are read by reference wherever the expression only names them (paths, parameters,
//! literals): [`eval_ref`] answers a borrowed value, and a copy is made (and charged by its size)
//! only where a new value is built. Every evaluated node charges the context's [`Meter`], so
//! evaluation stops at the first step past the budget. Recursion follows the tree, whose height
//! the parser bounds.

use std::borrow::Cow;
use std::collections::HashMap;

use serde_json::{Map, Value};

use super::ast::{BinaryOp, Expr, Query, Step, UnaryOp};
use super::functions;
use super::limits::check_result_size;
use super::meter::{match_cost, weight, Meter};
use super::regex_cache::{compiled, like_to_regex};
use super::sql_error::SqlError;
use super::value::{compare, equals, number, Val};

/// The names one row binds (each to a value it borrows), and the row of the enclosing query (for
/// subqueries).
#[derive(Clone, Copy)]
pub(crate) struct Scope<'a> {
    pub names: &'a [&'a str],
    pub values: &'a [&'a Value],
    pub outer: Option<&'a Scope<'a>>,
}

impl<'a> Scope<'a> {
    /// A scope binding nothing.
    pub(crate) const EMPTY: Scope<'static> = Scope {
        names: &[],
        values: &[],
        outer: None,
    };

    /// The value bound to `name`, here or in an enclosing scope.
    pub(crate) fn lookup(&self, name: &str) -> Option<&'a Value> {
        let mut scope = Some(self);
        while let Some(s) = scope {
            if let Some(i) = s.names.iter().position(|n| *n == name) {
                return s.values.get(i).copied();
            }
            scope = s.outer;
        }
        None
    }
}

/// What evaluation needs besides the row: parameters, the current group's aggregate results, and
/// the meter every step charges.
#[derive(Clone, Copy)]
pub(crate) struct Ctx<'a> {
    pub params: &'a HashMap<String, Value>,
    pub aggregates: Option<&'a [Val]>,
    /// The budget of the page (or condition) being evaluated.
    pub work: &'a Meter,
    /// How a subquery (EXISTS, ARRAY, a scalar subquery) is run in the scope of its row: the
    /// executor's `run_subquery`, handed in so evaluation does not import the executor that
    /// calls it.
    pub subquery: RunSubquery,
}

/// Runs a subquery `q` in the scope of the enclosing row, giving what `Want` asks for.
pub(crate) type RunSubquery =
    for<'v> fn(&'v Query, &Scope<'v>, &Ctx<'v>, Want) -> Result<Vec<Value>, SqlError>;

/// How many results a subquery's caller needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Want {
    /// The first (EXISTS, a scalar subquery).
    First,
    /// All (ARRAY).
    All,
}

impl<'a> Ctx<'a> {
    /// The same context with `aggregates` as the current group's results.
    pub(crate) fn with_aggregates<'b>(&'b self, aggregates: &'b [Val]) -> Ctx<'b> {
        Ctx {
            params: self.params,
            aggregates: Some(aggregates),
            work: self.work,
            subquery: self.subquery,
        }
    }
}

/// A value an expression yields: borrowed from the row, the parameters or the query, or built.
pub(crate) type Evaluated<'v> = Option<Cow<'v, Value>>;

/// Evaluates `expr` to a value of its own (copied, and charged by size, when it was borrowed).
pub(crate) fn eval<'v>(expr: &'v Expr, scope: &Scope<'v>, ctx: &Ctx<'v>) -> Result<Val, SqlError> {
    eval_ref(expr, scope, ctx)?
        .map(|v| owned(v, ctx.work))
        .transpose()
}

/// `v` as a value of its own: a borrowed value is copied, charged by its size first.
pub(crate) fn owned(v: Cow<'_, Value>, meter: &Meter) -> Result<Value, SqlError> {
    match v {
        Cow::Owned(v) => Ok(v),
        Cow::Borrowed(v) => {
            meter.charge(weight(v))?;
            Ok(v.clone())
        }
    }
}

fn unresolved(name: &str) -> SqlError {
    SqlError::new(format!("Identifier '{name}' could not be resolved."))
}

/// Evaluates `expr`, borrowing what it names rather than copying it.
pub(crate) fn eval_ref<'v>(
    expr: &'v Expr,
    scope: &Scope<'v>,
    ctx: &Ctx<'v>,
) -> Result<Evaluated<'v>, SqlError> {
    ctx.work.charge(1)?;
    let built = |v: Val| v.map(Cow::Owned);
    Ok(match expr {
        Expr::Literal(v) => Some(Cow::Borrowed(v)),
        Expr::Undefined => None,
        Expr::Param(name) => Some(Cow::Borrowed(ctx.params.get(name).ok_or_else(|| {
            SqlError::new(format!(
                "The parameter {name} is not defined in the request's parameters."
            ))
        })?)),
        Expr::Ident(name, _) => Some(Cow::Borrowed(
            scope.lookup(name).ok_or_else(|| unresolved(name))?,
        )),
        Expr::Path(base, steps) => match eval_ref(base, scope, ctx)? {
            None => None,
            Some(Cow::Borrowed(root)) => walk_ref(root, steps, scope, ctx)?.map(Cow::Borrowed),
            Some(Cow::Owned(root)) => walk_owned(root, steps, scope, ctx)?.map(Cow::Owned),
        },
        Expr::Array(items) => Some(Cow::Owned(array_of(items, scope, ctx)?)),
        Expr::Object(fields) => Some(Cow::Owned(object_of(fields, scope, ctx)?)),
        Expr::Unary(op, inner) => built(unary(*op, eval_ref(inner, scope, ctx)?.as_deref())),
        Expr::Binary(BinaryOp::Coalesce, a, b) => match eval_ref(a, scope, ctx)? {
            Some(v) => Some(v),
            None => eval_ref(b, scope, ctx)?,
        },
        Expr::Binary(op, a, b) => {
            let (a, b) = (eval_ref(a, scope, ctx)?, eval_ref(b, scope, ctx)?);
            built(binary(*op, a.as_deref(), b.as_deref(), ctx.work)?)
        }
        Expr::And(items) => built(all_of(items, true, scope, ctx)?),
        Expr::Or(items) => built(all_of(items, false, scope, ctx)?),
        Expr::Between {
            expr,
            low,
            high,
            negated,
        } => built(negate_if(between(expr, low, high, scope, ctx)?, *negated)),
        Expr::In {
            expr,
            list,
            negated,
        } => {
            let Some(x) = eval_ref(expr, scope, ctx)? else {
                return Ok(None);
            };
            built(negate_if(in_list(&x, list, scope, ctx)?, *negated))
        }
        Expr::Like {
            expr,
            pattern,
            escape,
            negated,
        } => built(negate_if(
            like(expr, pattern, escape.as_deref(), scope, ctx)?,
            *negated,
        )),
        Expr::Ternary(cond, yes, no) => {
            if matches!(
                eval_ref(cond, scope, ctx)?.as_deref(),
                Some(Value::Bool(true))
            ) {
                eval_ref(yes, scope, ctx)?
            } else {
                eval_ref(no, scope, ctx)?
            }
        }
        Expr::Call(name, args) => {
            let values = args_of(args, scope, ctx)?;
            let refs: Vec<Option<&Value>> = values.iter().map(|v| v.as_deref()).collect();
            built(functions::call(name, &refs, ctx.work)?)
        }
        Expr::Udf(name, args) => {
            let values = args_of(args, scope, ctx)?;
            let refs: Vec<Option<&Value>> = values.iter().map(|v| v.as_deref()).collect();
            let mut units = 0;
            let answer = super::udf_hook::call(name, &refs, &mut units);
            ctx.work.charge(units)?;
            answer.map_err(SqlError::new)?.map(Cow::Owned)
        }
        Expr::Aggregate(i) => ctx
            .aggregates
            .and_then(|a| a.get(*i))
            .ok_or_else(|| SqlError::new("An aggregate was used outside an aggregating query."))?
            .as_ref()
            .map(Cow::Borrowed),
        Expr::Exists(q) => Some(Cow::Owned(Value::Bool(
            !(ctx.subquery)(q, scope, ctx, Want::First)?.is_empty(),
        ))),
        Expr::ArrayQuery(q) => Some(Cow::Owned(Value::Array((ctx.subquery)(
            q,
            scope,
            ctx,
            Want::All,
        )?))),
        Expr::Scalar(q) => (ctx.subquery)(q, scope, ctx, Want::First)?
            .into_iter()
            .next()
            .map(Cow::Owned),
    })
}

/// `[...]`: each item's value, undefined items left out.
fn array_of<'v>(items: &'v [Expr], scope: &Scope<'v>, ctx: &Ctx<'v>) -> Result<Value, SqlError> {
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        if let Some(v) = eval(item, scope, ctx)? {
            out.push(v);
        }
    }
    Ok(Value::Array(out))
}

/// `{...}`: each field's value, undefined fields left out.
fn object_of<'v>(
    fields: &'v [(String, Expr)],
    scope: &Scope<'v>,
    ctx: &Ctx<'v>,
) -> Result<Value, SqlError> {
    let mut out = Map::new();
    for (k, e) in fields {
        if let Some(v) = eval(e, scope, ctx)? {
            out.insert(k.clone(), v);
        }
    }
    Ok(Value::Object(out))
}

/// AND (`all == true`) or OR (`all == false`) of `items`: the first item equal to `!all` decides;
/// `all` when every item is `all`; undefined when some item is not a boolean.
fn all_of<'v>(
    items: &'v [Expr],
    all: bool,
    scope: &Scope<'v>,
    ctx: &Ctx<'v>,
) -> Result<Val, SqlError> {
    let mut every = true;
    for item in items {
        match eval_ref(item, scope, ctx)?.as_deref() {
            Some(Value::Bool(b)) if *b != all => return Ok(Some(Value::Bool(!all))),
            Some(Value::Bool(_)) => {}
            _ => every = false,
        }
    }
    Ok(every.then_some(Value::Bool(all)))
}

/// `expr BETWEEN low AND high` (undefined when any side is undefined or they do not compare).
fn between<'v>(
    expr: &'v Expr,
    low: &'v Expr,
    high: &'v Expr,
    scope: &Scope<'v>,
    ctx: &Ctx<'v>,
) -> Result<Option<bool>, SqlError> {
    let (x, lo, hi) = (
        eval_ref(expr, scope, ctx)?,
        eval_ref(low, scope, ctx)?,
        eval_ref(high, scope, ctx)?,
    );
    Ok(match (x.as_deref(), lo.as_deref(), hi.as_deref()) {
        (Some(x), Some(lo), Some(hi)) => match (compare(x, lo), compare(x, hi)) {
            (Some(a), Some(b)) => Some(a.is_ge() && b.is_le()),
            _ => None,
        },
        _ => None,
    })
}

/// `x IN (list)`: true at the first equal item; undefined when no item is equal and some item
/// does not compare.
fn in_list<'v>(
    x: &Value,
    list: &'v [Expr],
    scope: &Scope<'v>,
    ctx: &Ctx<'v>,
) -> Result<Option<bool>, SqlError> {
    let mut answer = Some(false);
    for item in list {
        match eval_ref(item, scope, ctx)?.and_then(|v| equals(x, &v)) {
            Some(true) => return Ok(Some(true)),
            Some(false) => {}
            None => answer = None,
        }
    }
    Ok(answer)
}

/// `expr LIKE pattern [ESCAPE e]`, charged by the match's cost (undefined unless both are
/// strings).
fn like<'v>(
    expr: &'v Expr,
    pattern: &'v Expr,
    escape: Option<&'v Expr>,
    scope: &Scope<'v>,
    ctx: &Ctx<'v>,
) -> Result<Option<bool>, SqlError> {
    let escape = match escape {
        None => None,
        Some(e) => match eval_ref(e, scope, ctx)?.as_deref() {
            Some(Value::String(s)) if s.chars().count() == 1 => s.chars().next(),
            _ => {
                return Err(SqlError::new(
                    "The ESCAPE of LIKE must be a single character.",
                ))
            }
        },
    };
    let (text, pattern) = (eval_ref(expr, scope, ctx)?, eval_ref(pattern, scope, ctx)?);
    Ok(match (text.as_deref(), pattern.as_deref()) {
        (Some(Value::String(s)), Some(Value::String(p))) => {
            ctx.work.charge(match_cost(s, p))?;
            let re = compiled(&like_to_regex(p, escape))
                .map_err(|e| SqlError::new(format!("The LIKE pattern {p:?} is too large: {e}")))?;
            Some(re.is_match(s))
        }
        _ => None,
    })
}

/// A call's arguments, evaluated in order.
fn args_of<'v>(
    args: &'v [Expr],
    scope: &Scope<'v>,
    ctx: &Ctx<'v>,
) -> Result<Vec<Evaluated<'v>>, SqlError> {
    let mut values = Vec::with_capacity(args.len());
    for a in args {
        values.push(eval_ref(a, scope, ctx)?);
    }
    Ok(values)
}

/// Follows `steps` from `v` by reference.
pub(crate) fn walk_ref<'v>(
    mut v: &'v Value,
    steps: &'v [Step],
    scope: &Scope<'v>,
    ctx: &Ctx<'v>,
) -> Result<Option<&'v Value>, SqlError> {
    for step in steps {
        let next = match step {
            Step::Name(name) => v.as_object().and_then(|m| m.get(name)),
            Step::Index(index) => match eval_ref(index, scope, ctx)?.as_deref() {
                Some(Value::String(name)) => v.as_object().and_then(|m| m.get(name)),
                Some(Value::Number(n)) => n
                    .as_u64()
                    .and_then(|i| v.as_array().and_then(|items| items.get(i as usize))),
                _ => None,
            },
        };
        match next {
            Some(n) => v = n,
            None => return Ok(None),
        }
    }
    Ok(Some(v))
}

/// Follows `steps` from a value of its own, keeping only the part reached.
fn walk_owned<'v>(
    mut v: Value,
    steps: &'v [Step],
    scope: &Scope<'v>,
    ctx: &Ctx<'v>,
) -> Result<Val, SqlError> {
    for step in steps {
        let next = match step {
            Step::Name(n) => match v {
                Value::Object(mut m) => m.remove(n),
                _ => None,
            },
            Step::Index(e) => match (v, eval_ref(e, scope, ctx)?.as_deref()) {
                (Value::Array(mut items), Some(Value::Number(n))) => n
                    .as_u64()
                    .filter(|i| (*i as usize) < items.len())
                    .map(|i| items.swap_remove(i as usize)),
                (Value::Object(mut m), Some(Value::String(s))) => m.remove(s),
                _ => None,
            },
        };
        match next {
            Some(n) => v = n,
            None => return Ok(None),
        }
    }
    Ok(Some(v))
}

fn negate_if(v: Option<bool>, negated: bool) -> Val {
    v.map(|b| Value::Bool(b != negated))
}

fn unary(op: UnaryOp, v: Option<&Value>) -> Val {
    match (op, v?) {
        (UnaryOp::Not, Value::Bool(b)) => Some(Value::Bool(!b)),
        (UnaryOp::Plus, Value::Number(n)) => Some(Value::Number(n.clone())),
        (UnaryOp::Neg, Value::Number(n)) => match n.as_i64().and_then(i64::checked_neg) {
            Some(i) => Some(Value::from(i)),
            None => number(-n.as_f64()?),
        },
        (UnaryOp::BitNot, Value::Number(n)) => Some(Value::from(!to_int32(n.as_f64()?))),
        _ => None,
    }
}

/// JavaScript's ToInt32, which the bitwise operators apply.
fn to_int32(f: f64) -> i32 {
    if !f.is_finite() {
        return 0;
    }
    (f.trunc().rem_euclid(4_294_967_296.0) as u64 as u32) as i32
}

/// A binary operator on evaluated operands; `||` is charged for the string it builds and refused
/// past [`MAX_RESULT_BYTES`](super::limits::MAX_RESULT_BYTES).
pub(crate) fn binary(
    op: BinaryOp,
    a: Option<&Value>,
    b: Option<&Value>,
    meter: &Meter,
) -> Result<Val, SqlError> {
    let (Some(a), Some(b)) = (a, b) else {
        return Ok(None);
    };
    let cmp = |f: fn(std::cmp::Ordering) -> bool| compare(a, b).map(|o| Value::Bool(f(o)));
    Ok(match op {
        BinaryOp::Eq => equals(a, b).map(Value::Bool),
        BinaryOp::Ne => equals(a, b).map(|e| Value::Bool(!e)),
        BinaryOp::Lt => cmp(|o| o.is_lt()),
        BinaryOp::Le => cmp(|o| o.is_le()),
        BinaryOp::Gt => cmp(|o| o.is_gt()),
        BinaryOp::Ge => cmp(|o| o.is_ge()),
        BinaryOp::Concat => match (a, b) {
            (Value::String(x), Value::String(y)) => {
                let len = x.len() + y.len();
                check_result_size("||", len)?;
                meter.charge_bytes(len)?;
                let mut out = String::with_capacity(len);
                out.push_str(x);
                out.push_str(y);
                Some(Value::String(out))
            }
            _ => None,
        },
        BinaryOp::Coalesce => Some(a.clone()),
        _ => {
            let (Value::Number(x), Value::Number(y)) = (a, b) else {
                return Ok(None);
            };
            let ints = x.as_i64().zip(y.as_i64());
            let (Some(fx), Some(fy)) = (x.as_f64(), y.as_f64()) else {
                return Ok(None);
            };
            let exact =
                |f: fn(i64, i64) -> Option<i64>| ints.and_then(|(p, q)| f(p, q)).map(Value::from);
            match op {
                BinaryOp::Add => exact(i64::checked_add).or_else(|| number(fx + fy)),
                BinaryOp::Sub => exact(i64::checked_sub).or_else(|| number(fx - fy)),
                BinaryOp::Mul => exact(i64::checked_mul).or_else(|| number(fx * fy)),
                BinaryOp::Div => number(fx / fy),
                BinaryOp::Mod => exact(i64::checked_rem).or_else(|| number(fx % fy)),
                BinaryOp::BitAnd => Some(Value::from(to_int32(fx) & to_int32(fy))),
                BinaryOp::BitOr => Some(Value::from(to_int32(fx) | to_int32(fy))),
                BinaryOp::BitXor => Some(Value::from(to_int32(fx) ^ to_int32(fy))),
                BinaryOp::Shl => Some(Value::from(
                    to_int32(fx).wrapping_shl(to_int32(fy) as u32 & 31),
                )),
                BinaryOp::Shr => Some(Value::from(
                    to_int32(fx).wrapping_shr(to_int32(fy) as u32 & 31),
                )),
                BinaryOp::ShrZero => Some(Value::from(
                    (to_int32(fx) as u32).wrapping_shr(to_int32(fy) as u32 & 31),
                )),
                _ => None,
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::ast::Projection;
    use crate::sql::limits::MAX_RESULT_BYTES;
    use crate::sql::parse_query;
    use crate::sql::sql_error::Limit;
    use serde_json::json;

    /// Evaluates the VALUE expression of `SELECT VALUE <text>` with `c` bound to `doc`.
    fn value(
        text: &str,
        doc: &Value,
        params: &HashMap<String, Value>,
        meter: &Meter,
    ) -> Result<Val, SqlError> {
        let q = parse_query(&format!("SELECT VALUE {text} FROM c")).unwrap();
        let Projection::Value(e) = &q.projection else {
            unreachable!()
        };
        let values = [doc];
        let scope = Scope {
            names: &["c"],
            values: &values,
            outer: None,
        };
        let ctx = Ctx {
            params,
            aggregates: None,
            work: meter,
            subquery: crate::sql::collect::run_subquery,
        };
        eval(e, &scope, &ctx)
    }

    fn v(text: &str) -> Val {
        let doc = json!({"n": 5, "s": "abc", "a": [1, 2, 3], "o": {"k": [10, 20]}});
        let params = HashMap::from([("@p".to_owned(), json!({"x": 1}))]);
        value(text, &doc, &params, &Meter::unlimited()).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    #[test]
    fn expressions_follow_the_type_rules() {
        let table = [
            ("c.n + 1", Some(json!(6))),
            ("c.n / 2", Some(json!(2.5))),
            ("c.n = '5'", None),
            ("c.n > 'a'", None),
            ("c.s || 'd'", Some(json!("abcd"))),
            ("c.s || 1", None),
            ("c.missing ?? c.s", Some(json!("abc"))),
            ("c.o.k[1]", Some(json!(20))),
            ("c['o']['k'][0]", Some(json!(10))),
            ("@p.x", Some(json!(1))),
            ("[c.n, c.missing, 1]", Some(json!([5, 1]))),
            ("{\"a\": c.missing, \"b\": 2}", Some(json!({"b": 2}))),
            ("c.n BETWEEN 1 AND 5", Some(json!(true))),
            ("c.n IN (1, '5')", None),
            ("c.n IN (1, 5)", Some(json!(true))),
            ("c.s LIKE 'a%'", Some(json!(true))),
            ("(c.n > 1 ? 'y' : 'n')", Some(json!("y"))),
            ("NOT c.missing", None),
            ("true AND c.missing", None),
            ("false AND c.missing", Some(json!(false))),
            ("true OR c.missing", Some(json!(true))),
            ("~5", Some(json!(-6))),
            ("1 << 33", Some(json!(2))),
            (
                "EXISTS(SELECT VALUE x FROM x IN c.a WHERE x > 2)",
                Some(json!(true)),
            ),
            (
                "ARRAY(SELECT VALUE x * 2 FROM x IN c.a)",
                Some(json!([2, 4, 6])),
            ),
            ("(SELECT VALUE COUNT(1) FROM x IN c.a)", Some(json!(3))),
        ];
        for (text, want) in table {
            assert_eq!(v(text), want, "{text}");
        }
    }

    #[test]
    fn every_step_is_charged_and_copies_by_their_size() {
        let doc = json!({"big": "x".repeat(64_000), "n": 1});
        let params = HashMap::new();
        let small = Meter::unlimited();
        value("c.n", &doc, &params, &small).unwrap();
        let copied = Meter::unlimited();
        value("c.big", &doc, &params, &copied).unwrap();
        assert!(
            copied.used() > small.used() + 900,
            "{} vs {}",
            copied.used(),
            small.used()
        );
        // Only naming a value does not copy it.
        let named = Meter::unlimited();
        value("IS_DEFINED(c.big)", &doc, &params, &named).unwrap();
        assert!(named.used() < 10, "{}", named.used());
    }

    #[test]
    fn evaluation_stops_at_the_first_step_past_the_budget() {
        let doc = json!({"a": (0..100).collect::<Vec<_>>()});
        let params = HashMap::new();
        let meter = Meter::new(500, std::time::Duration::from_secs(60));
        let e = value(
            "ARRAY(SELECT VALUE [x, y] FROM x IN c.a JOIN y IN c.a)",
            &doc,
            &params,
            &meter,
        )
        .unwrap_err();
        assert_eq!(e.limit, Some(Limit::Work(500)));
        assert!(meter.used() <= 501);
    }

    #[test]
    fn a_concatenation_past_the_result_limit_is_refused_before_it_is_built() {
        let big = "x".repeat(MAX_RESULT_BYTES / 2 + 1);
        let params = HashMap::from([("@s".to_owned(), json!(big))]);
        let e = value("@s || @s", &json!({}), &params, &Meter::unlimited()).unwrap_err();
        assert!(e.message.contains("limit") && e.limit.is_none(), "{e}");
    }
}

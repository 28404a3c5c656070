//! Evaluating an expression against the names a row binds, with the service's rules: `undefined`
//! propagates, only `true` is true, comparisons across types are `undefined`.
//!
//! Recursion follows the tree, whose height the parser bounds.

use std::cell::Cell;
use std::collections::HashMap;

use serde_json::{Map, Value};

use super::ast::{BinaryOp, Expr, Step, UnaryOp};
use super::exec::run_subquery;
use super::functions;
use super::regex_cache::{compiled, like_to_regex};
use super::sql_error::SqlError;
use super::value::{compare, equals, is_true, number, Val};

/// The names one row binds, and the row of the enclosing query (for subqueries).
pub struct Scope<'a> {
    pub names: &'a [String],
    pub values: &'a [Value],
    pub outer: Option<&'a Scope<'a>>,
}

impl<'a> Scope<'a> {
    /// A scope binding nothing.
    pub const EMPTY: Scope<'static> = Scope {
        names: &[],
        values: &[],
        outer: None,
    };

    /// The value bound to `name`, here or in an enclosing scope.
    pub fn lookup(&self, name: &str) -> Option<&Value> {
        let mut scope = Some(self);
        while let Some(s) = scope {
            if let Some(i) = s.names.iter().position(|n| n == name) {
                return s.values.get(i);
            }
            scope = s.outer;
        }
        None
    }
}

/// What evaluation needs besides the row: parameters, the current group's aggregate results, and
/// a work counter the executor bounds.
pub struct Ctx<'a> {
    pub params: &'a HashMap<String, Value>,
    pub aggregates: Option<&'a [Val]>,
    /// Rows bound so far (subqueries included); the executor stops or refuses past its budget.
    pub work: &'a Cell<u64>,
}

impl<'a> Ctx<'a> {
    /// The same context with `aggregates` as the current group's results.
    pub fn with_aggregates<'b>(&'b self, aggregates: &'b [Val]) -> Ctx<'b> {
        Ctx {
            params: self.params,
            aggregates: Some(aggregates),
            work: self.work,
        }
    }
}

/// Evaluates `expr`.
pub fn eval(expr: &Expr, scope: &Scope<'_>, ctx: &Ctx<'_>) -> Result<Val, SqlError> {
    Ok(match expr {
        Expr::Literal(v) => Some(v.clone()),
        Expr::Undefined => None,
        Expr::Param(name) => Some(ctx.params.get(name).cloned().ok_or_else(|| {
            SqlError::new(format!(
                "The parameter {name} is not defined in the request's parameters."
            ))
        })?),
        Expr::Ident(name, _) => {
            Some(scope.lookup(name).cloned().ok_or_else(|| {
                SqlError::new(format!("Identifier '{name}' could not be resolved."))
            })?)
        }
        Expr::Path(base, steps) => match base.as_ref() {
            Expr::Ident(name, _) => {
                let root = scope.lookup(name).ok_or_else(|| {
                    SqlError::new(format!("Identifier '{name}' could not be resolved."))
                })?;
                walk_ref(root, steps, scope, ctx)?.cloned()
            }
            other => match eval(other, scope, ctx)? {
                Some(v) => walk_ref(&v, steps, scope, ctx)?.cloned(),
                None => None,
            },
        },
        Expr::Array(items) => {
            let mut out = Vec::with_capacity(items.len());
            for item in items {
                if let Some(v) = eval(item, scope, ctx)? {
                    out.push(v);
                }
            }
            Some(Value::Array(out))
        }
        Expr::Object(fields) => {
            let mut out = Map::new();
            for (k, e) in fields {
                if let Some(v) = eval(e, scope, ctx)? {
                    out.insert(k.clone(), v);
                }
            }
            Some(Value::Object(out))
        }
        Expr::Unary(op, inner) => unary(*op, eval(inner, scope, ctx)?),
        Expr::Binary(BinaryOp::Coalesce, a, b) => match eval(a, scope, ctx)? {
            Some(v) => Some(v),
            None => eval(b, scope, ctx)?,
        },
        Expr::Binary(op, a, b) => binary(*op, eval(a, scope, ctx)?, eval(b, scope, ctx)?),
        Expr::And(items) => {
            let mut all_true = true;
            for item in items {
                match eval(item, scope, ctx)? {
                    Some(Value::Bool(false)) => return Ok(Some(Value::Bool(false))),
                    Some(Value::Bool(true)) => {}
                    _ => all_true = false,
                }
            }
            all_true.then_some(Value::Bool(true))
        }
        Expr::Or(items) => {
            let mut all_false = true;
            for item in items {
                match eval(item, scope, ctx)? {
                    Some(Value::Bool(true)) => return Ok(Some(Value::Bool(true))),
                    Some(Value::Bool(false)) => {}
                    _ => all_false = false,
                }
            }
            all_false.then_some(Value::Bool(false))
        }
        Expr::Between {
            expr,
            low,
            high,
            negated,
        } => {
            let (x, lo, hi) = (
                eval(expr, scope, ctx)?,
                eval(low, scope, ctx)?,
                eval(high, scope, ctx)?,
            );
            let inside = match (x, lo, hi) {
                (Some(x), Some(lo), Some(hi)) => match (compare(&x, &lo), compare(&x, &hi)) {
                    (Some(a), Some(b)) => Some(a.is_ge() && b.is_le()),
                    _ => None,
                },
                _ => None,
            };
            negate_if(inside, *negated)
        }
        Expr::In {
            expr,
            list,
            negated,
        } => {
            let Some(x) = eval(expr, scope, ctx)? else {
                return Ok(None);
            };
            let mut answer = Some(false);
            for item in list {
                match eval(item, scope, ctx)?.and_then(|v| equals(&x, &v)) {
                    Some(true) => {
                        answer = Some(true);
                        break;
                    }
                    Some(false) => {}
                    None => answer = None,
                }
            }
            negate_if(answer, *negated)
        }
        Expr::Like {
            expr,
            pattern,
            escape,
            negated,
        } => {
            let escape = match escape {
                None => None,
                Some(e) => match eval(e, scope, ctx)? {
                    Some(Value::String(s)) if s.chars().count() == 1 => s.chars().next(),
                    _ => {
                        return Err(SqlError::new(
                            "The ESCAPE of LIKE must be a single character.",
                        ))
                    }
                },
            };
            let hit = match (eval(expr, scope, ctx)?, eval(pattern, scope, ctx)?) {
                (Some(Value::String(s)), Some(Value::String(p))) => {
                    let re = compiled(&like_to_regex(&p, escape)).map_err(|e| {
                        SqlError::new(format!("The LIKE pattern {p:?} is too large: {e}"))
                    })?;
                    Some(re.is_match(&s))
                }
                _ => None,
            };
            negate_if(hit, *negated)
        }
        Expr::Ternary(cond, yes, no) => {
            if is_true(&eval(cond, scope, ctx)?) {
                eval(yes, scope, ctx)?
            } else {
                eval(no, scope, ctx)?
            }
        }
        Expr::Call(name, args) => {
            let mut values = Vec::with_capacity(args.len());
            for a in args {
                values.push(eval(a, scope, ctx)?);
            }
            functions::call(name, &values).map_err(SqlError::new)?
        }
        Expr::Aggregate(i) => ctx
            .aggregates
            .and_then(|a| a.get(*i))
            .cloned()
            .ok_or_else(|| SqlError::new("An aggregate was used outside an aggregating query."))?,
        Expr::Exists(q) => Some(Value::Bool(!run_subquery(q, scope, ctx)?.is_empty())),
        Expr::ArrayQuery(q) => Some(Value::Array(run_subquery(q, scope, ctx)?)),
        Expr::Scalar(q) => run_subquery(q, scope, ctx)?.into_iter().next(),
    })
}

/// Follows `steps` from `v` by reference; only the value reached is cloned by the caller.
fn walk_ref<'v>(
    mut v: &'v Value,
    steps: &[Step],
    scope: &Scope<'_>,
    ctx: &Ctx<'_>,
) -> Result<Option<&'v Value>, SqlError> {
    for step in steps {
        let next = match step {
            Step::Name(name) => v.as_object().and_then(|m| m.get(name)),
            Step::Index(index) => match eval(index, scope, ctx)? {
                Some(Value::String(name)) => v.as_object().and_then(|m| m.get(&name)),
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

fn negate_if(v: Option<bool>, negated: bool) -> Val {
    v.map(|b| Value::Bool(b != negated))
}

fn unary(op: UnaryOp, v: Val) -> Val {
    match (op, v?) {
        (UnaryOp::Not, Value::Bool(b)) => Some(Value::Bool(!b)),
        (UnaryOp::Plus, Value::Number(n)) => Some(Value::Number(n)),
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

/// A binary operator on evaluated operands.
pub fn binary(op: BinaryOp, a: Val, b: Val) -> Val {
    let (a, b) = (a?, b?);
    let cmp = |f: fn(std::cmp::Ordering) -> bool| compare(&a, &b).map(|o| Value::Bool(f(o)));
    match op {
        BinaryOp::Eq => equals(&a, &b).map(Value::Bool),
        BinaryOp::Ne => equals(&a, &b).map(|e| Value::Bool(!e)),
        BinaryOp::Lt => cmp(|o| o.is_lt()),
        BinaryOp::Le => cmp(|o| o.is_le()),
        BinaryOp::Gt => cmp(|o| o.is_gt()),
        BinaryOp::Ge => cmp(|o| o.is_ge()),
        BinaryOp::Concat => match (a, b) {
            (Value::String(x), Value::String(y)) => Some(Value::String(x + &y)),
            _ => None,
        },
        BinaryOp::Coalesce => Some(a),
        _ => {
            let (Value::Number(x), Value::Number(y)) = (&a, &b) else {
                return None;
            };
            let ints = x.as_i64().zip(y.as_i64());
            let (fx, fy) = (x.as_f64()?, y.as_f64()?);
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
    }
}

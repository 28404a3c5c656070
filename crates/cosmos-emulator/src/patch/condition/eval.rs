//! Evaluating a condition against a document, with the query language's three-valued logic:
//! comparing different types, or anything with `undefined`, yields `undefined`, and only `true`
//! passes.

use std::cmp::Ordering;

use serde_json::Value;

use super::parser::{CmpOp, Condition, Expr};

/// Whether the condition holds for `doc`.
pub fn holds(condition: &Condition, doc: &Value) -> Result<bool, String> {
    match &condition.predicate {
        None => Ok(true),
        Some(expr) => Ok(eval(expr, doc)? == Some(Value::Bool(true))),
    }
}

fn eval(expr: &Expr, doc: &Value) -> Result<Option<Value>, String> {
    Ok(match expr {
        Expr::Literal(v) => v.clone(),
        Expr::Path(path) => {
            let mut current = Some(doc);
            for seg in path {
                current = current.and_then(|v| match v {
                    Value::Object(m) => m.get(seg),
                    Value::Array(items) => seg.parse::<usize>().ok().and_then(|i| items.get(i)),
                    _ => None,
                });
            }
            current.cloned()
        }
        Expr::Cmp(op, a, b) => {
            compare(*op, eval(a, doc)?.as_ref(), eval(b, doc)?.as_ref()).map(Value::Bool)
        }
        Expr::And(a, b) => match (eval(a, doc)?, eval(b, doc)?) {
            (Some(Value::Bool(false)), _) | (_, Some(Value::Bool(false))) => {
                Some(Value::Bool(false))
            }
            (Some(Value::Bool(true)), Some(Value::Bool(true))) => Some(Value::Bool(true)),
            _ => None,
        },
        Expr::Or(a, b) => match (eval(a, doc)?, eval(b, doc)?) {
            (Some(Value::Bool(true)), _) | (_, Some(Value::Bool(true))) => Some(Value::Bool(true)),
            (Some(Value::Bool(false)), Some(Value::Bool(false))) => Some(Value::Bool(false)),
            _ => None,
        },
        Expr::Not(a) => match eval(a, doc)? {
            Some(Value::Bool(b)) => Some(Value::Bool(!b)),
            _ => None,
        },
        Expr::Call(name, args) => {
            let values = args
                .iter()
                .map(|a| eval(a, doc))
                .collect::<Result<Vec<_>, _>>()?;
            call(name, &values)?
        }
    })
}

fn compare(op: CmpOp, a: Option<&Value>, b: Option<&Value>) -> Option<bool> {
    let (a, b) = (a?, b?);
    let ordering = match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64()?.partial_cmp(&y.as_f64()?)?,
        (Value::String(x), Value::String(y)) => x.cmp(y),
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::Null, Value::Null) => Ordering::Equal,
        (Value::Array(_), Value::Array(_)) | (Value::Object(_), Value::Object(_)) => {
            return match op {
                CmpOp::Eq => Some(a == b),
                CmpOp::Ne => Some(a != b),
                _ => None,
            }
        }
        _ => return None,
    };
    Some(match op {
        CmpOp::Eq => ordering == Ordering::Equal,
        CmpOp::Ne => ordering != Ordering::Equal,
        CmpOp::Lt => ordering == Ordering::Less,
        CmpOp::Le => ordering != Ordering::Greater,
        CmpOp::Gt => ordering == Ordering::Greater,
        CmpOp::Ge => ordering != Ordering::Less,
    })
}

fn call(name: &str, args: &[Option<Value>]) -> Result<Option<Value>, String> {
    let arity = |n: usize| {
        if args.len() == n {
            Ok(())
        } else {
            Err(format!("{name} takes {n} argument(s), not {}", args.len()))
        }
    };
    let first = args.first().cloned().flatten();
    let second = args.get(1).cloned().flatten();
    let strings = |f: fn(&str, &str) -> bool| match (&first, &second) {
        (Some(Value::String(a)), Some(Value::String(b))) => Some(Value::Bool(f(a, b))),
        _ => None,
    };
    Ok(match name {
        "IS_DEFINED" => {
            arity(1)?;
            Some(Value::Bool(first.is_some()))
        }
        "IS_NULL" | "IS_STRING" | "IS_NUMBER" | "IS_BOOL" | "IS_ARRAY" | "IS_OBJECT" => {
            arity(1)?;
            let v = first.as_ref();
            Some(Value::Bool(match name {
                "IS_NULL" => matches!(v, Some(Value::Null)),
                "IS_STRING" => matches!(v, Some(Value::String(_))),
                "IS_NUMBER" => matches!(v, Some(Value::Number(_))),
                "IS_BOOL" => matches!(v, Some(Value::Bool(_))),
                "IS_ARRAY" => matches!(v, Some(Value::Array(_))),
                _ => matches!(v, Some(Value::Object(_))),
            }))
        }
        "ARRAY_CONTAINS" => {
            arity(2)?;
            match (&first, &second) {
                (Some(Value::Array(items)), Some(v)) => Some(Value::Bool(items.contains(v))),
                _ => None,
            }
        }
        "ARRAY_LENGTH" => {
            arity(1)?;
            match &first {
                Some(Value::Array(items)) => Some(Value::from(items.len())),
                _ => None,
            }
        }
        "LENGTH" => {
            arity(1)?;
            match &first {
                Some(Value::String(s)) => Some(Value::from(s.chars().count())),
                _ => None,
            }
        }
        "STARTSWITH" => {
            arity(2)?;
            strings(|a, b| a.starts_with(b))
        }
        "ENDSWITH" => {
            arity(2)?;
            strings(|a, b| a.ends_with(b))
        }
        "CONTAINS" => {
            arity(2)?;
            strings(|a, b| a.contains(b))
        }
        other => {
            return Err(format!(
                "the function {other} is not supported in patch conditions"
            ))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::super::parser::parse;
    use super::*;
    use serde_json::json;

    #[test]
    fn evaluates_a_table_of_conditions() {
        let doc =
            json!({"n": 5, "s": "abc", "b": true, "z": null, "list": [1, 2], "o": {"k": "v"}});
        let table: &[(&str, bool)] = &[
            ("from c", true),
            ("from c where c.n = 5", true),
            ("from c where c.n = 5.0", true),
            ("from c where c.n > 4 AND c.n <= 5", true),
            ("from c where c.n < 5", false),
            ("from c where c.n != 5", false),
            ("from c where c.n <> 6", true),
            ("from c where c.s = 'abc'", true),
            ("from c where c.s > 'abb'", true),
            ("from c where c.n = '5'", false),
            ("from c where NOT (c.n = '5')", false),
            ("from c where c.missing = 1", false),
            ("from c where NOT (c.missing = 1)", false),
            ("from c where c.missing = 1 OR c.b = true", true),
            ("from c where c.z = null", true),
            ("from c where c.o.k = 'v' AND c['o']['k'] = 'v'", true),
            ("from c where c.list[1] = 2", true),
            ("from c where c.o = c.o", true),
            (
                "from c where IS_DEFINED(c.o) AND NOT IS_DEFINED(c.nope)",
                true,
            ),
            ("from c where ARRAY_CONTAINS(c.list, 2)", true),
            (
                "from c where STARTSWITH(c.s, 'ab') AND LENGTH(c.s) = 3",
                true,
            ),
            ("from c where c.b", true),
            ("from c where c.n", false),
        ];
        for (text, want) in table {
            let cond = parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(holds(&cond, &doc).unwrap(), *want, "{text}");
        }
    }

    #[test]
    fn unknown_functions_and_bad_arity_are_errors() {
        let doc = json!({});
        assert!(holds(&parse("from c where FROB(c.a)").unwrap(), &doc).is_err());
        assert!(holds(&parse("from c where IS_DEFINED(c.a, c.b)").unwrap(), &doc).is_err());
    }
}

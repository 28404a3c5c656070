//! The bounds of full-text calls, checked on the parsed query ([`super::search::prepare`]) before
//! the query reads any item or is planned: each `FullTextScore`, `FullTextContainsAll` and
//! `FullTextContainsAny` names 1 to [`MAX_TERMS`] search terms, `FullTextContains` exactly one,
//! and a term written in the query (a literal, or a parameter's value) is a string. The service
//! documents no number; 100 terms per call is the emulator's bound, so the global statistics
//! query of a ranked query (one `FullTextContains` per term) stays small.

use std::collections::HashMap;

use serde_json::Value;

use super::ast::{constant, Expr};
use super::fulltext::{too_many_terms, MAX_TERMS};
use super::sql_error::SqlError;

/// The name the documentation gives a full-text function (upper-cased) that takes terms.
fn display_name(name: &str) -> Option<&'static str> {
    Some(match name {
        "FULLTEXTSCORE" => "FullTextScore",
        "FULLTEXTCONTAINS" => "FullTextContains",
        "FULLTEXTCONTAINSALL" => "FullTextContainsAll",
        "FULLTEXTCONTAINSANY" => "FullTextContainsAny",
        _ => return None,
    })
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The terms a call names where the query fixes them: `None` for a term computed per item.
fn term_values<'a>(
    terms: &'a [Expr],
    params: &'a HashMap<String, Value>,
) -> Vec<Option<std::borrow::Cow<'a, Value>>> {
    use std::borrow::Cow;
    let one = |e: &'a Expr| match e {
        Expr::Param(p) => params.get(p).map(Cow::Borrowed),
        e => constant(e).map(Cow::Owned),
    };
    if let [only] = terms {
        match only {
            Expr::Array(items) => return items.iter().map(one).collect(),
            Expr::Param(p) => {
                if let Some(Value::Array(items)) = params.get(p) {
                    return items.iter().map(|v| Some(Cow::Borrowed(v))).collect();
                }
            }
            _ => {}
        }
    }
    terms.iter().map(one).collect()
}

/// Checks the call `name(args)` (upper-cased, not yet marked with its language) against the
/// bounds of the module docs; other calls pass.
pub(super) fn check_call(
    name: &str,
    args: &[Expr],
    params: &HashMap<String, Value>,
) -> Result<(), SqlError> {
    let Some(display) = display_name(name) else {
        return Ok(());
    };
    let terms = term_values(args.get(1..).unwrap_or_default(), params);
    if name == "FULLTEXTCONTAINS" && terms.len() != 1 {
        return Err(SqlError::new(format!(
            "FullTextContains takes one search term, not {}.",
            terms.len()
        )));
    }
    if terms.is_empty() || terms.len() > MAX_TERMS {
        return Err(too_many_terms(display, terms.len()));
    }
    if let Some(v) = terms.iter().flatten().find(|v| !v.is_string()) {
        return Err(SqlError::new(format!(
            "{display}'s search terms must be strings, not {}.",
            kind(v)
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::parse_query;
    use serde_json::json;

    fn check(text: &str, params: &HashMap<String, Value>) -> Result<(), SqlError> {
        let q = parse_query(text).unwrap();
        let mut failure = Ok(());
        for e in crate::sql::walk::query_expressions(&q) {
            let mut stack = vec![e];
            while let Some(x) = stack.pop() {
                if let Expr::Call(name, args) = x {
                    if failure.is_ok() {
                        failure = check_call(name, args, params);
                    }
                }
                stack.extend(crate::sql::walk::children(x));
            }
        }
        failure
    }

    fn terms(n: usize) -> String {
        (0..n)
            .map(|i| format!("'t{i}'"))
            .collect::<Vec<_>>()
            .join(", ")
    }

    #[test]
    fn calls_name_one_to_a_hundred_string_terms() {
        let params: HashMap<String, Value> = [
            (
                "@many".to_owned(),
                json!((0..101).map(|i| format!("t{i}")).collect::<Vec<_>>()),
            ),
            ("@few".to_owned(), json!(["a", "b"])),
            ("@one".to_owned(), json!("a")),
            ("@num".to_owned(), json!(3)),
            ("@mixed".to_owned(), json!(["a", 1])),
        ]
        .into_iter()
        .collect();
        let ok = |s: &str| (s.to_owned(), None::<&str>);
        let bad = |s: String, needle: &'static str| (s, Some(needle));
        let cases = [
            ok("SELECT * FROM c WHERE FullTextContains(c.t, 'a')"),
            ok("SELECT * FROM c WHERE FullTextContains(c.t, c.u)"),
            ok("SELECT * FROM c WHERE FullTextContains(c.t, @one)"),
            ok(&format!("SELECT * FROM c WHERE FullTextContainsAll(c.t, {})", terms(100))),
            ok(&format!("SELECT * FROM c WHERE FullTextContainsAny(c.t, [{}])", terms(100))),
            ok("SELECT * FROM c WHERE FullTextContainsAny(c.t, @few)"),
            ok(&format!("SELECT TOP 1 * FROM c ORDER BY RANK FullTextScore(c.t, {})", terms(100))),
            ok("SELECT * FROM c WHERE CONTAINS(c.t, 'a', true)"),
            bad(format!("SELECT * FROM c WHERE FullTextContainsAll(c.t, {})", terms(101)), "1 to 100 search terms (the emulator's limit per call), not 101"),
            bad(format!("SELECT * FROM c WHERE FullTextContainsAny(c.t, [{}])", terms(2000)), "not 2000"),
            bad("SELECT * FROM c WHERE FullTextContainsAny(c.t, @many)".into(), "not 101"),
            bad(format!("SELECT TOP 1 * FROM c ORDER BY RANK FullTextScore(c.t, {})", terms(20_000)), "FullTextScore takes 1 to 100 search terms (the emulator's limit per call), not 20000"),
            bad("SELECT TOP 1 * FROM c ORDER BY RANK FullTextScore(c.t, [])".into(), "not 0"),
            bad("SELECT * FROM c WHERE FullTextContains(c.t, ['a', 'b'])".into(), "one search term, not 2"),
            bad("SELECT * FROM c WHERE FullTextContainsAll(c.t, 'a', 1)".into(), "must be strings, not a number"),
            bad("SELECT * FROM c WHERE FullTextContainsAll(c.t, ['a', null])".into(), "not null"),
            bad("SELECT * FROM c WHERE FullTextContainsAny(c.t, @num)".into(), "not a number"),
            bad("SELECT * FROM c WHERE FullTextContainsAny(c.t, @mixed)".into(), "not a number"),
            bad("SELECT TOP 1 * FROM c ORDER BY RANK FullTextScore(c.t, {'a': 1})".into(), "not an object"),
            bad("SELECT TOP 1 * FROM c ORDER BY RANK FullTextScore(c.t, [['a']])".into(), "not an array"),
        ];
        for (text, want) in cases {
            match (check(&text, &params), want) {
                (Ok(()), None) => {}
                (Err(e), Some(needle)) => assert!(e.to_string().contains(needle), "{e} / {needle}"),
                (got, _) => panic!("{}: {got:?}", &text[..text.len().min(90)]),
            }
        }
    }
}

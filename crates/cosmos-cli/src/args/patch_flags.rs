//! PATCH operations from the command line: `--ops JSON`, or flags such as `--set /a=1 --incr /n=2`,
//! applied in the order they were given.

use clap::ArgMatches;
use serde_json::{json, Value};

/// The operation flags of `cosmos item patch`, by argument id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PatchFlag {
    /// `--set PATH=VALUE`
    Set,
    /// `--incr PATH=N`
    Incr,
    /// `--add PATH=VALUE`
    Add,
    /// `--replace PATH=VALUE`
    Replace,
    /// `--remove PATH`
    Remove,
    /// `--move FROM:TO`
    Move,
}

impl PatchFlag {
    /// Every flag with its clap argument id.
    pub const ALL: [(PatchFlag, &'static str); 6] = [
        (PatchFlag::Set, "set"),
        (PatchFlag::Incr, "incr"),
        (PatchFlag::Add, "add"),
        (PatchFlag::Replace, "replace"),
        (PatchFlag::Remove, "remove"),
        (PatchFlag::Move, "move_"),
    ];

    fn flag(self) -> &'static str {
        match self {
            PatchFlag::Set => "--set",
            PatchFlag::Incr => "--incr",
            PatchFlag::Add => "--add",
            PatchFlag::Replace => "--replace",
            PatchFlag::Remove => "--remove",
            PatchFlag::Move => "--move",
        }
    }
}

/// The operation flags of a parsed `item patch`, in command-line order.
pub fn ordered_flags(matches: &ArgMatches) -> Vec<(PatchFlag, String)> {
    let mut found: Vec<(usize, PatchFlag, String)> = Vec::new();
    for (flag, id) in PatchFlag::ALL {
        let (Ok(Some(values)), Some(indices)) =
            (matches.try_get_many::<String>(id), matches.indices_of(id))
        else {
            continue;
        };
        for (value, index) in values.zip(indices) {
            found.push((index, flag, value.clone()));
        }
    }
    found.sort_by_key(|(index, _, _)| *index);
    found
        .into_iter()
        .map(|(_, flag, value)| (flag, value))
        .collect()
}

/// A value given on the command line: JSON when it parses as JSON, otherwise the text as a string.
fn loose_value(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned()))
}

fn split_path_value(flag: PatchFlag, raw: &str) -> Result<(String, String), String> {
    let (path, value) = raw.split_once('=').ok_or_else(|| {
        format!(
            "{} {raw:?}: expected PATH=VALUE, e.g. {} /count=1",
            flag.flag(),
            flag.flag()
        )
    })?;
    check_path(flag, path)?;
    Ok((path.to_owned(), value.to_owned()))
}

fn check_path(flag: PatchFlag, path: &str) -> Result<(), String> {
    if path.starts_with('/') {
        Ok(())
    } else {
        Err(format!(
            "{} {path:?}: a path starts with '/', e.g. /count",
            flag.flag()
        ))
    }
}

/// One operation, as wire JSON, from one flag.
pub fn op_from_flag(flag: PatchFlag, raw: &str) -> Result<Value, String> {
    Ok(match flag {
        PatchFlag::Set | PatchFlag::Add | PatchFlag::Replace => {
            let (path, value) = split_path_value(flag, raw)?;
            let op = match flag {
                PatchFlag::Set => "set",
                PatchFlag::Add => "add",
                _ => "replace",
            };
            json!({"op": op, "path": path, "value": loose_value(&value)})
        }
        PatchFlag::Incr => {
            let (path, value) = split_path_value(flag, raw)?;
            let n: Value = serde_json::from_str(value.trim())
                .ok()
                .filter(Value::is_number)
                .ok_or_else(|| format!("--incr {raw:?}: {value:?} is not a number"))?;
            json!({"op": "incr", "path": path, "value": n})
        }
        PatchFlag::Remove => {
            check_path(flag, raw)?;
            json!({"op": "remove", "path": raw})
        }
        PatchFlag::Move => {
            let cut = raw.find(":/").ok_or_else(|| {
                format!("--move {raw:?}: expected FROM:TO, e.g. --move /old:/new")
            })?;
            let (from, to) = (&raw[..cut], &raw[cut + 1..]);
            check_path(flag, from)?;
            json!({"op": "move", "from": from, "path": to})
        }
    })
}

/// The PATCH body `{"operations":[...]}` from `--ops` (an array, or an object with `operations`) and
/// the flags, `--ops` first. Refuses an empty list.
pub fn instructions_json(
    ops: Option<&str>,
    flags: &[(PatchFlag, String)],
) -> Result<Value, String> {
    let mut operations: Vec<Value> = match ops {
        None => Vec::new(),
        Some(text) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Array(list)) => list,
            Ok(Value::Object(mut obj)) => match obj.remove("operations") {
                Some(Value::Array(list)) => list,
                _ => return Err("--ops: an object must hold an \"operations\" array".into()),
            },
            Ok(_) => return Err("--ops: expected a JSON array of operations".into()),
            Err(e) => return Err(format!("--ops is not valid JSON: {e}")),
        },
    };
    for (flag, raw) in flags {
        operations.push(op_from_flag(*flag, raw)?);
    }
    if operations.is_empty() {
        return Err(
            "no patch operations: give --ops JSON or flags such as --set /a=1 --incr /n=2".into(),
        );
    }
    Ok(json!({ "operations": operations }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_flag_makes_its_operation() {
        let cases: &[(PatchFlag, &str, Value)] = &[
            (
                PatchFlag::Set,
                "/a=1",
                json!({"op":"set","path":"/a","value":1}),
            ),
            (
                PatchFlag::Set,
                "/name=alice",
                json!({"op":"set","path":"/name","value":"alice"}),
            ),
            (
                PatchFlag::Set,
                "/tags=[\"x\",\"y\"]",
                json!({"op":"set","path":"/tags","value":["x","y"]}),
            ),
            (
                PatchFlag::Set,
                "/s=\"42\"",
                json!({"op":"set","path":"/s","value":"42"}),
            ),
            (
                PatchFlag::Set,
                "/e=",
                json!({"op":"set","path":"/e","value":""}),
            ),
            (
                PatchFlag::Add,
                "/list/-=3",
                json!({"op":"add","path":"/list/-","value":3}),
            ),
            (
                PatchFlag::Replace,
                "/ok=true",
                json!({"op":"replace","path":"/ok","value":true}),
            ),
            (
                PatchFlag::Incr,
                "/n=2",
                json!({"op":"incr","path":"/n","value":2}),
            ),
            (
                PatchFlag::Incr,
                "/n=-0.5",
                json!({"op":"incr","path":"/n","value":-0.5}),
            ),
            (PatchFlag::Remove, "/x", json!({"op":"remove","path":"/x"})),
            (
                PatchFlag::Move,
                "/a:/b",
                json!({"op":"move","from":"/a","path":"/b"}),
            ),
            (
                PatchFlag::Move,
                "/a:b:/c",
                json!({"op":"move","from":"/a:b","path":"/c"}),
            ),
        ];
        for (flag, raw, want) in cases {
            assert_eq!(&op_from_flag(*flag, raw).unwrap(), want, "{flag:?} {raw}");
        }
    }

    #[test]
    fn bad_flags_say_what_is_expected() {
        let cases: &[(PatchFlag, &str, &str)] = &[
            (PatchFlag::Set, "/a", "PATH=VALUE"),
            (PatchFlag::Set, "a=1", "starts with '/'"),
            (PatchFlag::Incr, "/n=two", "not a number"),
            (PatchFlag::Incr, "/n=\"2\"", "not a number"),
            (PatchFlag::Remove, "x", "starts with '/'"),
            (PatchFlag::Move, "/a/b", "FROM:TO"),
            (PatchFlag::Move, "a:/b", "starts with '/'"),
        ];
        for (flag, raw, needle) in cases {
            let e = op_from_flag(*flag, raw).unwrap_err();
            assert!(e.contains(needle), "{flag:?} {raw}: {e}");
        }
    }

    #[test]
    fn ops_json_then_flags() {
        let flags = vec![(PatchFlag::Incr, "/n=1".to_string())];
        let v = instructions_json(Some(r#"[{"op":"set","path":"/a","value":1}]"#), &flags).unwrap();
        assert_eq!(v["operations"].as_array().unwrap().len(), 2);
        assert_eq!(v["operations"][1]["op"], "incr");
        let v = instructions_json(Some(r#"{"operations":[{"op":"remove","path":"/a"}]}"#), &[])
            .unwrap();
        assert_eq!(v["operations"][0]["op"], "remove");
    }

    #[test]
    fn ops_json_refusals() {
        for (ops, needle) in [
            (Some("{"), "not valid JSON"),
            (Some("42"), "expected a JSON array"),
            (Some(r#"{"ops":[]}"#), "\"operations\" array"),
            (Some("[]"), "no patch operations"),
            (None, "no patch operations"),
        ] {
            let e = instructions_json(ops, &[]).unwrap_err();
            assert!(e.contains(needle), "{ops:?}: {e}");
        }
    }
}

//! User-defined functions for queries: a QuickJS runtime made on the first `udf.` call of a
//! query request (none for queries that call none), holding each function the request calls,
//! compiled once, under the same time and memory bounds as a stored procedure. UDFs see nothing
//! but their arguments: no `getContext()`, no collection.

use std::cell::Cell;
use std::collections::HashSet;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Instant;

use rquickjs::{Context, Function, Runtime};
use serde_json::Value;

use super::engine::Bounds;
use super::Script;
use crate::sql::udf_hook::UdfCaller;

/// Interrupt checks one call may make before it counts as more work (units charged per check).
const UNITS_PER_TICK: u64 = 10;
/// Units one call costs at least.
const UNITS_PER_CALL: u64 = 50;

/// The UDFs of one container for one query request.
pub struct Udfs {
    scripts: Vec<Arc<Script>>,
    bounds: Bounds,
    runner: Option<Runner>,
    out_of_memory: Rc<Cell<bool>>,
}

struct Runner {
    context: Context,
    _runtime: Runtime,
    compiled: HashSet<String>,
    ticks: Rc<Cell<u64>>,
    timed_out: Rc<Cell<bool>>,
}

impl Udfs {
    pub fn new(scripts: Vec<Arc<Script>>, bounds: Bounds) -> Self {
        Self {
            scripts,
            bounds,
            runner: None,
            out_of_memory: Rc::new(Cell::new(false)),
        }
    }

    fn runner(&mut self) -> Result<&mut Runner, String> {
        if self.runner.is_none() {
            let heap =
                super::heap::CappedHeap::new(self.bounds.memory_bytes, self.out_of_memory.clone());
            let runtime = Runtime::new_with_alloc(heap)
                .map_err(|e| format!("The UDF runtime could not start: {e}"))?;
            runtime.set_max_stack_size(self.bounds.stack_bytes);
            let ticks = Rc::new(Cell::new(0u64));
            let timed_out = Rc::new(Cell::new(false));
            let deadline = Instant::now() + self.bounds.time;
            {
                let ticks = ticks.clone();
                let timed_out = timed_out.clone();
                runtime.set_interrupt_handler(Some(Box::new(move || {
                    ticks.set(ticks.get() + 1);
                    let late = Instant::now() >= deadline;
                    if late {
                        timed_out.set(true);
                    }
                    late
                })));
            }
            let context = Context::full(&runtime)
                .map_err(|e| format!("The UDF context could not start: {e}"))?;
            self.runner = Some(Runner {
                context,
                _runtime: runtime,
                compiled: HashSet::new(),
                ticks,
                timed_out,
            });
        }
        self.runner
            .as_mut()
            .ok_or_else(|| "The UDF runtime is missing.".to_owned())
    }
}

impl UdfCaller for Udfs {
    fn call(
        &mut self,
        name: &str,
        args: &[Option<&Value>],
        units: &mut u64,
    ) -> Result<Option<Value>, String> {
        let script = self
            .scripts
            .iter()
            .find(|s| s.id == name)
            .cloned()
            .ok_or_else(|| {
                format!("The user-defined function udf.{name} does not exist in this collection.")
            })?;
        let time = self.bounds.time;
        let memory = self.bounds.memory_bytes;
        let runner = self.runner()?;
        let before = runner.ticks.get();
        let args_json = serde_json::to_string(
            &args
                .iter()
                .map(|a| a.cloned().map_or(Value::Null, |v| Value::Array(vec![v])))
                .collect::<Vec<_>>(),
        )
        .map_err(|e| e.to_string())?;
        let compiled = runner.compiled.contains(name);
        let result: Result<Option<String>, String> = runner.context.with(|ctx| {
            let globals = ctx.globals();
            let key = format!("udf:{name}");
            if !compiled {
                let f: rquickjs::Value = ctx
                    .eval(format!("(\n{}\n)", script.source))
                    .map_err(|_| describe(&ctx))?;
                if !f.is_function() {
                    return Err(format!("The body of udf.{name} is not a function."));
                }
                globals.set(key.as_str(), f).map_err(|e| e.to_string())?;
            }
            let f: Function = globals.get(key.as_str()).map_err(|e| e.to_string())?;
            // Each argument comes as [value] (or null for undefined), so undefined survives JSON.
            let wrapped = ctx.json_parse(args_json.clone()).map_err(|_| describe(&ctx))?;
            let unwrap: Function = ctx
                .eval("(function (f, a) { return f.apply(undefined, a.map(function (x) { return x === null ? undefined : x[0]; })); })")
                .map_err(|_| describe(&ctx))?;
            let out: rquickjs::Value = unwrap.call((f, wrapped)).map_err(|_| describe(&ctx))?;
            if out.is_undefined() || out.is_function() {
                return Ok(None);
            }
            let text = ctx.json_stringify(out).map_err(|_| describe(&ctx))?;
            Ok(match text {
                Some(s) => Some(s.to_string().map_err(|e| e.to_string())?),
                None => None,
            })
        });
        runner.compiled.insert(name.to_owned());
        *units += UNITS_PER_CALL + (runner.ticks.get() - before) * UNITS_PER_TICK;
        if runner.timed_out.get() {
            return Err(format!(
                "The user-defined function udf.{name} ran past the query's {} ms for scripts and was stopped.",
                time.as_millis()
            ));
        }
        match result {
            Ok(Some(text)) => serde_json::from_str(&text)
                .map(Some)
                .map_err(|e| format!("udf.{name} returned a value that is not JSON: {e}")),
            Ok(None) => Ok(None),
            Err(_) if self.out_of_memory.get() => Err(format!(
                "The user-defined function udf.{name} used more than {} MiB of memory and was stopped.",
                memory / (1024 * 1024)
            )),
            Err(message) => Err(format!(
                "Encountered exception while executing udf.{name}: {message}"
            )),
        }
    }
}

fn describe(ctx: &rquickjs::Ctx<'_>) -> String {
    let caught = ctx.catch();
    if let Some(e) = caught.as_exception() {
        return e.to_string();
    }
    caught
        .as_string()
        .and_then(|s| s.to_string().ok())
        .unwrap_or_else(|| "the function threw a value".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::ScriptKind;
    use crate::scripts::definition::{check, seal};
    use serde_json::json;

    fn udf(id: &str, body: &str) -> Arc<Script> {
        let map = match json!({"id": id, "body": body}) {
            Value::Object(m) => m,
            _ => unreachable!(),
        };
        let checked = check(ScriptKind::UserDefinedFunction, &map).unwrap();
        Arc::new(seal(
            ScriptKind::UserDefinedFunction,
            map,
            checked,
            [0; 16],
            String::new(),
        ))
    }

    #[test]
    fn udfs_compute_from_their_arguments_and_fail_clearly() {
        let mut udfs = Udfs::new(
            vec![
                udf(
                    "tax",
                    "function (price, rate) { return price * (rate === undefined ? 0.1 : rate); }",
                ),
                udf("boom", "function () { throw new Error('no'); }"),
                udf("nothing", "function () { }"),
            ],
            Bounds::default(),
        );
        let mut units = 0;
        let p = json!(100);
        assert_eq!(
            udfs.call("tax", &[Some(&p), None], &mut units).unwrap(),
            Some(json!(10))
        );
        assert_eq!(
            udfs.call("tax", &[Some(&p), Some(&json!(0.5))], &mut units)
                .unwrap(),
            Some(json!(50))
        );
        assert!(units >= 2 * UNITS_PER_CALL);
        assert_eq!(udfs.call("nothing", &[], &mut units).unwrap(), None);
        let e = udfs.call("boom", &[], &mut units).unwrap_err();
        assert!(e.contains("no"), "{e}");
        let e = udfs.call("missing", &[], &mut units).unwrap_err();
        assert!(e.contains("does not exist"), "{e}");
    }
}

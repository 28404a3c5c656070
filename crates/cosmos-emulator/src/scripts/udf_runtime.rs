//! The UDFs' runtime: one QuickJS runtime for one query request's user-defined functions, holding
//! each function the request calls, compiled once, under the request's time and memory bounds.
//! It answers [`Call`]s with [`Answer`]s, wherever it runs (a thread of the emulator, or of a
//! worker process: [`super::isolation`]).

use std::cell::Cell;
use std::collections::HashSet;
use std::rc::Rc;
use std::sync::mpsc;
use std::time::Instant;

use rquickjs::{Context, Function, Runtime};
use serde::{Deserialize, Serialize};

use super::engine::Bounds;

/// One call, as sent to the UDFs' runtime.
#[derive(Serialize, Deserialize)]
pub(crate) struct Call {
    pub(super) name: String,
    pub(super) source: String,
    pub(super) args_json: String,
}

/// What the UDFs' runtime answers a call.
#[derive(Serialize, Deserialize)]
pub(crate) struct Answer {
    pub(super) result: Result<Option<String>, String>,
    pub(super) ticks: u64,
    pub(super) timed_out: bool,
    pub(super) out_of_memory: bool,
}

/// The UDF thread's runtime.
struct Runner {
    context: Context,
    _runtime: Runtime,
    compiled: HashSet<String>,
    ticks: Rc<Cell<u64>>,
    timed_out: Rc<Cell<bool>>,
    /// Set when a guarded built-in refused a call (the runtime then stops as timed out).
    stop: Rc<Cell<bool>>,
    out_of_memory: Rc<Cell<bool>>,
}

/// The UDF thread: answers calls until the caller hangs up.
pub(crate) fn serve(bounds: Bounds, calls: mpsc::Receiver<Call>, answers: mpsc::Sender<Answer>) {
    let mut runner = match Runner::start(bounds) {
        Ok(r) => r,
        Err(message) => {
            while calls.recv().is_ok() {
                let failed = Answer {
                    result: Err(message.clone()),
                    ticks: 0,
                    timed_out: false,
                    out_of_memory: false,
                };
                if answers.send(failed).is_err() {
                    return;
                }
            }
            return;
        }
    };
    while let Ok(call) = calls.recv() {
        let before = runner.ticks.get();
        let result = runner.call(&call);
        let answer = Answer {
            result,
            ticks: runner.ticks.get() - before,
            timed_out: runner.timed_out.get() || runner.stop.get(),
            out_of_memory: runner.out_of_memory.get(),
        };
        if answers.send(answer).is_err() {
            return;
        }
    }
}

impl Runner {
    fn start(bounds: Bounds) -> Result<Runner, String> {
        let out_of_memory = Rc::new(Cell::new(false));
        let heap = super::heap::CappedHeap::new(bounds.memory_bytes, out_of_memory.clone());
        let runtime = Runtime::new_with_alloc(heap)
            .map_err(|e| format!("The UDF runtime could not start: {e}"))?;
        runtime.set_max_stack_size(bounds.stack_bytes);
        let ticks = Rc::new(Cell::new(0u64));
        let timed_out = Rc::new(Cell::new(false));
        let stop = Rc::new(Cell::new(false));
        let deadline = Instant::now() + bounds.time;
        {
            let ticks = ticks.clone();
            let timed_out = timed_out.clone();
            let stop = stop.clone();
            runtime.set_interrupt_handler(Some(Box::new(move || {
                ticks.set(ticks.get() + 1);
                let late = stop.get() || Instant::now() >= deadline;
                if late {
                    timed_out.set(true);
                }
                late
            })));
        }
        let context =
            Context::full(&runtime).map_err(|e| format!("The UDF context could not start: {e}"))?;
        {
            let stop = stop.clone();
            context.with(|ctx| super::guards::install(&ctx, bounds.memory_bytes, stop))?;
        }
        Ok(Runner {
            context,
            _runtime: runtime,
            compiled: HashSet::new(),
            ticks,
            timed_out,
            stop,
            out_of_memory,
        })
    }

    fn call(&mut self, call: &Call) -> Result<Option<String>, String> {
        let name = call.name.as_str();
        let compiled = self.compiled.contains(name);
        let result = self.context.with(|ctx| {
            let globals = ctx.globals();
            let key = format!("udf:{name}");
            if !compiled {
                let f: rquickjs::Value = ctx
                    .eval(format!("(\n{}\n)", call.source))
                    .map_err(|_| describe(&ctx))?;
                if !f.is_function() {
                    return Err(format!("The body of udf.{name} is not a function."));
                }
                globals.set(key.as_str(), f).map_err(|e| e.to_string())?;
            }
            let f: Function = globals.get(key.as_str()).map_err(|e| e.to_string())?;
            // Each argument comes as [value] (or null for undefined), so undefined survives JSON.
            let wrapped = ctx
                .json_parse(call.args_json.clone())
                .map_err(|_| describe(&ctx))?;
            let unwrap: Function = ctx
                .eval("(function (f, a) { return f.apply(undefined, a.map(function (x) { return x === null ? undefined : x[0]; })); })")
                .map_err(|_| describe(&ctx))?;
            let out: rquickjs::Value = unwrap.call((f, wrapped)).map_err(|_| describe(&ctx))?;
            if out.is_undefined() || out.is_function() {
                return Ok(None);
            }
            // Through the guarded JSON.stringify (guards.js), never the native directly.
            let json: rquickjs::Object = globals.get("JSON").map_err(|e| e.to_string())?;
            let stringify: Function = json.get("stringify").map_err(|e| e.to_string())?;
            let text: rquickjs::Value = stringify.call((out,)).map_err(|_| describe(&ctx))?;
            if text.is_undefined() {
                return Ok(None);
            }
            let text: String = text
                .as_string()
                .ok_or_else(|| "JSON.stringify did not return a string.".to_owned())?
                .to_string()
                .map_err(|e| e.to_string())?;
            Ok(Some(text))
        });
        self.compiled.insert(name.to_owned());
        result
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

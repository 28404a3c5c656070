//! User-defined functions for queries: a QuickJS runtime made on the first `udf.` call of a
//! query request (none for queries that call none), holding each function the request calls,
//! compiled once, under the same time and memory bounds as a stored procedure. UDFs see nothing
//! but their arguments: no `getContext()`, no collection.

use std::cell::Cell;
use std::collections::HashSet;
use std::rc::Rc;
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rquickjs::{Context, Function, Runtime};
use serde_json::Value;

use super::engine::Bounds;
use super::watch::{self, Watch};
use super::worker::{Isolation, UdfProcess};
use super::Script;
use crate::sql::udf_hook::UdfCaller;
use serde::{Deserialize, Serialize};

/// Interrupt checks one call may make before it counts as more work (units charged per check).
const UNITS_PER_TICK: u64 = 10;
/// Units one call costs at least.
const UNITS_PER_CALL: u64 = 50;

/// The UDFs of one container for one query request. They run on a thread of their own (started
/// on the first call, ended when this is dropped); each call is answered by the request's
/// deadline even if that thread is stuck in a native call (it is then left, counted, see
/// [`watch`]).
pub(crate) struct Udfs {
    scripts: Vec<Arc<Script>>,
    bounds: Bounds,
    isolation: Isolation,
    worker: Option<Worker>,
    /// Set once the worker was left behind: every later call fails with it.
    stopped: Option<String>,
}

/// The caller's side of the UDFs' runtime, and when every call of the request must be answered.
struct Worker {
    runtime: Place,
    deadline: Instant,
}

/// Where the UDFs' runtime runs.
enum Place {
    /// A thread of this process.
    Thread {
        calls: mpsc::Sender<Call>,
        answers: mpsc::Receiver<Answer>,
        watch: Watch,
    },
    /// A child process, killed when this is dropped.
    Process(UdfProcess),
}

/// Why a call got no answer.
enum Unanswered {
    TimedOut,
    Failed,
}

impl Place {
    fn ask(&mut self, call: Call, within: Duration) -> Result<Answer, Unanswered> {
        match self {
            Place::Thread {
                calls,
                answers,
                watch,
            } => {
                calls.send(call).map_err(|_| Unanswered::Failed)?;
                answers.recv_timeout(within).map_err(|e| match e {
                    mpsc::RecvTimeoutError::Timeout => {
                        watch.leave("user-defined function");
                        Unanswered::TimedOut
                    }
                    mpsc::RecvTimeoutError::Disconnected => Unanswered::Failed,
                })
            }
            Place::Process(child) => child.ask(&call, within).map_err(|timed_out| {
                if timed_out {
                    Unanswered::TimedOut
                } else {
                    Unanswered::Failed
                }
            }),
        }
    }
}

/// One call, as sent to the UDFs' runtime.
#[derive(Serialize, Deserialize)]
pub(crate) struct Call {
    name: String,
    source: String,
    args_json: String,
}

/// What the UDFs' runtime answers a call.
#[derive(Serialize, Deserialize)]
pub(crate) struct Answer {
    result: Result<Option<String>, String>,
    ticks: u64,
    timed_out: bool,
    out_of_memory: bool,
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

impl Udfs {
    pub(crate) fn new(scripts: Vec<Arc<Script>>, bounds: Bounds, isolation: Isolation) -> Self {
        Self {
            scripts,
            bounds,
            isolation,
            worker: None,
            stopped: None,
        }
    }

    fn worker(&mut self) -> Result<&mut Worker, String> {
        if self.worker.is_none() {
            let bounds = self.bounds;
            let runtime = match &self.isolation {
                Isolation::Thread => start_thread(bounds)?,
                Isolation::Process(program) => Place::Process(UdfProcess::start(program, bounds)?),
            };
            self.worker = Some(Worker {
                runtime,
                deadline: Instant::now() + bounds.time + watch::SLACK,
            });
        }
        self.worker
            .as_mut()
            .ok_or_else(|| "The UDF runtime is missing.".to_owned())
    }
}

/// The UDFs' runtime on a thread of this process.
fn start_thread(bounds: Bounds) -> Result<Place, String> {
    let (watch, running) = Watch::start()?;
    let (calls, from_caller) = mpsc::channel::<Call>();
    let (to_caller, answers) = mpsc::channel::<Answer>();
    std::thread::Builder::new()
        .name("cosmos-script".into())
        .stack_size(bounds.stack_bytes + 4 * 1024 * 1024)
        .spawn(move || {
            let _running = running;
            serve(bounds, from_caller, to_caller);
        })
        .map_err(|e| format!("The UDF runtime could not start: {e}"))?;
    Ok(Place::Thread {
        calls,
        answers,
        watch,
    })
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
        if let Some(message) = &self.stopped {
            return Err(message.clone());
        }
        let time = self.bounds.time;
        let memory = self.bounds.memory_bytes;
        let args_json = serde_json::to_string(
            &args
                .iter()
                .map(|a| a.cloned().map_or(Value::Null, |v| Value::Array(vec![v])))
                .collect::<Vec<_>>(),
        )
        .map_err(|e| e.to_string())?;
        let timed_out = || {
            format!(
                "The user-defined function udf.{name} ran past the query's {} ms for scripts and was stopped.",
                time.as_millis()
            )
        };
        let worker = self.worker()?;
        let call = Call {
            name: name.to_owned(),
            source: script.source.clone(),
            args_json,
        };
        let left = worker.deadline.saturating_duration_since(Instant::now());
        let answer = match worker.runtime.ask(call, left) {
            Ok(answer) => answer,
            Err(Unanswered::TimedOut) => {
                let message = timed_out();
                self.stopped = Some(message.clone());
                self.worker = None;
                return Err(message);
            }
            Err(Unanswered::Failed) => {
                return Err("The UDF runtime failed unexpectedly.".to_owned())
            }
        };
        *units += UNITS_PER_CALL + answer.ticks * UNITS_PER_TICK;
        if answer.timed_out {
            return Err(timed_out());
        }
        match answer.result {
            Ok(Some(text)) => serde_json::from_str(&text)
                .map(Some)
                .map_err(|e| format!("udf.{name} returned a value that is not JSON: {e}")),
            Ok(None) => Ok(None),
            Err(_) if answer.out_of_memory => Err(format!(
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
            Isolation::Thread,
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

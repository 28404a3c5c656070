//! User-defined functions for queries, the caller's side: the UDFs' runtime ([`super::udf_runtime`])
//! is started on the first `udf.` call of a query request (none for queries that call none), on a
//! thread or in a worker process ([`super::isolation`]), under the same time and memory bounds as
//! a stored procedure. UDFs see nothing but their arguments: no `getContext()`, no collection.

use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::engine::Bounds;
use super::isolation::{Isolation, UdfProcess};
use super::udf_runtime::{serve, Answer, Call};
use super::watch::{self, Watch};
use super::Script;
use crate::sql::udf_hook::UdfCaller;

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

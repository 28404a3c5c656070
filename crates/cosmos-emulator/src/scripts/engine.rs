//! Runs one script in a fresh QuickJS runtime on a thread of its own (of this process, or of a
//! child process: [`super::isolation`]), with a time limit, a memory cap and a stack cap, and no reach
//! beyond the server-side API (`prelude.js`). The script's collection operations come back to the
//! caller's thread one at a time through `host`, so the caller keeps the partition (and its
//! transaction) while the script runs.

use std::cell::Cell;
use std::rc::Rc;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use rquickjs::{Context, Function, Runtime};

use super::watch::{self, Watch};
use serde::{Deserialize, Serialize};
use serde_json::Value;

const PRELUDE: &str = include_str!("prelude.js");

/// The characters of `console.log` output one execution records, newlines between lines included.
pub(crate) const MAX_LOG_CHARS: usize = 8192;

/// `lines` cut to [`MAX_LOG_CHARS`] in all (newlines between them included): the lines past the
/// cap are dropped and the one that reaches it is cut. Pure.
pub(crate) fn cap_logs(lines: &[String]) -> Vec<String> {
    let mut room = MAX_LOG_CHARS;
    let mut kept = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if i > 0 {
            if room <= 1 {
                break;
            }
            room -= 1;
        }
        let cut: String = line.chars().take(room).collect();
        room -= cut.chars().count();
        kept.push(cut);
        if room == 0 {
            break;
        }
    }
    kept
}

/// The input as the prelude reads it: with the log cap.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Given<'a> {
    #[serde(flatten)]
    input: &'a Input,
    max_log_chars: usize,
}

/// What one execution may use.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub(crate) struct Bounds {
    /// Wall-clock time before the script is stopped.
    pub time: Duration,
    /// Bytes the script's heap may hold.
    pub memory_bytes: usize,
    /// Bytes of JavaScript stack (bounds recursion).
    pub stack_bytes: usize,
}

impl Default for Bounds {
    fn default() -> Self {
        Self {
            time: Duration::from_secs(5),
            memory_bytes: 64 * 1024 * 1024,
            stack_bytes: 512 * 1024,
        }
    }
}

/// Which role the script runs in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Role {
    /// A stored procedure: called with the parameters; may set the response body.
    Sproc,
    /// A pre-trigger: may read and replace the request's body.
    Pre,
    /// A post-trigger: reads the request's and the response's bodies.
    Post,
}

/// What the script is given.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Input {
    pub kind: Role,
    /// The stored procedure's parameters (empty for triggers).
    pub args: Vec<Value>,
    pub request_body: Value,
    pub has_response_body: bool,
    pub response_body: Value,
    /// `Create`, `Replace`, `Delete` or `Upsert` for a trigger.
    pub operation: String,
    pub self_link: String,
    pub alt_link: String,
    /// Whether `console.log` is recorded.
    pub logging: bool,
    pub max_response_bytes: usize,
}

/// The outcome of a script that ran to its end.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Finished {
    /// The response body, when the script set one.
    pub body: Option<Value>,
    /// The request body as the script left it (a pre-trigger's change).
    pub request_body: Option<Value>,
    pub logs: Vec<String>,
}

/// Why a script did not finish.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) enum Failure {
    /// It threw (or failed to compile): the error as the script's runtime describes it.
    Thrown(String),
    /// It ran past [`Bounds::time`].
    TimedOut,
    /// It tried to hold more than [`Bounds::memory_bytes`].
    OutOfMemory,
    /// It was not started: too many scripts are stuck past their time limits.
    Busy(String),
}

/// An execution's result, with the logs it wrote (also when it failed) and the work it did.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Run {
    pub result: Result<Finished, Failure>,
    pub logs: Vec<String>,
    /// Interrupt checks the runtime made (one every few thousand bytecode steps): the script's
    /// own work, apart from its collection operations.
    pub ticks: u64,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Outcome {
    ok: bool,
    #[serde(default)]
    thrown: Option<String>,
    #[serde(default)]
    has_body: bool,
    #[serde(default)]
    body: Value,
    #[serde(default)]
    request_body: Value,
    #[serde(default)]
    logs: Vec<String>,
}

/// What the script's thread sends its caller.
enum Message {
    /// A collection operation (JSON text) to answer.
    Host(String),
    /// The execution's end.
    Done(Run),
}

/// `input` as the prelude reads it (with the log cap), JSON text.
pub(crate) fn input_json(input: &Input) -> String {
    let given = Given {
        input,
        max_log_chars: MAX_LOG_CHARS,
    };
    serde_json::to_string(&given).unwrap_or_else(|_| "{}".into())
}

/// Runs `source` with `input_json` on a thread of this process. At the deadline (plus
/// [`watch::SLACK`]) a thread stuck in a native call is left to end on its own, counted (see
/// [`watch`]).
pub(crate) fn run_here(
    source: &str,
    input_json: String,
    bounds: Bounds,
    host: &mut dyn FnMut(&str) -> String,
) -> Run {
    let source = source.to_owned();
    supervise(bounds, host, move |to_caller, from_host| {
        execute(&source, input_json, bounds, to_caller, from_host)
    })
}

fn failed(result: Failure) -> Run {
    Run {
        result: Err(result),
        logs: Vec::new(),
        ticks: 0,
    }
}

/// A script that could not be started.
pub(crate) fn failed_to_start(why: &str) -> Run {
    failed(Failure::Thrown(format!(
        "The script could not be started: {why}"
    )))
}

/// A script whose runtime ended without an outcome.
pub(crate) fn runtime_failed() -> Run {
    failed(Failure::Thrown(
        "The script's runtime failed unexpectedly.".into(),
    ))
}

/// A script stopped at its deadline.
pub(crate) fn timed_out() -> Run {
    failed(Failure::TimedOut)
}

/// Runs `work` on a thread of its own and serves its operations until it ends or its time (and
/// the slack) is up.
fn supervise(
    bounds: Bounds,
    host: &mut dyn FnMut(&str) -> String,
    work: impl FnOnce(mpsc::Sender<Message>, mpsc::Receiver<String>) -> Run + Send + 'static,
) -> Run {
    let (watch, running) = match Watch::start() {
        Ok(w) => w,
        Err(message) => return failed(Failure::Busy(message)),
    };
    let (to_caller, from_script) = mpsc::channel::<Message>();
    let (to_script, from_caller) = mpsc::channel::<String>();
    let spawned = std::thread::Builder::new()
        .name("cosmos-script".into())
        .stack_size(bounds.stack_bytes + 4 * 1024 * 1024)
        .spawn(move || {
            let _running = running;
            let done = to_caller.clone();
            let run = work(to_caller, from_caller);
            let _ = done.send(Message::Done(run));
        });
    if let Err(e) = spawned {
        return failed_to_start(&e.to_string());
    }
    let deadline = Instant::now() + bounds.time + watch::SLACK;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match from_script.recv_timeout(left) {
            Ok(Message::Host(request)) => {
                let answer = host(&request);
                let _ = to_script.send(answer);
            }
            Ok(Message::Done(run)) => return run,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                watch.leave("script");
                return timed_out();
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => return runtime_failed(),
        }
    }
}

fn execute(
    source: &str,
    input_json: String,
    bounds: Bounds,
    to_host: mpsc::Sender<Message>,
    from_host: mpsc::Receiver<String>,
) -> Run {
    let ticks = Rc::new(Cell::new(0u64));
    let timed_out = Rc::new(Cell::new(false));
    let fail = |message: String, ticks: u64| Run {
        result: Err(Failure::Thrown(message)),
        logs: Vec::new(),
        ticks,
    };
    let out_of_memory = Rc::new(Cell::new(false));
    let heap = super::heap::CappedHeap::new(bounds.memory_bytes, out_of_memory.clone());
    let runtime = match Runtime::new_with_alloc(heap) {
        Ok(r) => r,
        Err(e) => return fail(format!("The script runtime could not start: {e}"), 0),
    };
    runtime.set_max_stack_size(bounds.stack_bytes);
    let deadline = Instant::now() + bounds.time;
    // Set when a guarded built-in refuses a call that would run past the bounds.
    let stop = Rc::new(Cell::new(false));
    {
        let ticks = ticks.clone();
        let timed_out = timed_out.clone();
        let stop = stop.clone();
        runtime.set_interrupt_handler(Some(Box::new(move || {
            ticks.set(ticks.get() + 1);
            if stop.get() || Instant::now() >= deadline {
                timed_out.set(true);
                return true;
            }
            false
        })));
    }
    let context = match Context::full(&runtime) {
        Ok(c) => c,
        Err(e) => return fail(format!("The script context could not start: {e}"), 0),
    };
    let outcome: Result<String, String> = context.with(|ctx| {
        let globals = ctx.globals();
        let host = Function::new(ctx.clone(), move |request: String| -> String {
            if to_host.send(Message::Host(request)).is_err() {
                return r#"{"accepted":false}"#.to_owned();
            }
            from_host
                .recv()
                .unwrap_or_else(|_| r#"{"accepted":false}"#.to_owned())
        })
        .map_err(|e| e.to_string())?;
        globals.set("__host", host).map_err(|e| e.to_string())?;
        globals
            .set("__input", input_json)
            .map_err(|e| e.to_string())?;
        super::guards::install(&ctx, bounds.memory_bytes, stop.clone())?;
        ctx.eval::<(), _>(PRELUDE).map_err(|e| e.to_string())?;
        let run: Function = globals.get("__run").map_err(|e| e.to_string())?;
        run.call::<_, String>((source.to_owned(),)).map_err(|e| {
            let caught = ctx.catch();
            let described = caught
                .as_exception()
                .map(|x| x.to_string())
                .unwrap_or_else(|| e.to_string());
            described
        })
    });
    let ticks = ticks.get();
    drop(context);
    finish(
        outcome,
        ticks,
        timed_out.get() || stop.get(),
        out_of_memory.get(),
    )
}

/// The run a script's `outcome` (the prelude's JSON, or what it threw) makes: timed out when it
/// was stopped; a refused allocation explains a failure (the script may have caught one and
/// finished). Pure.
fn finish(outcome: Result<String, String>, ticks: u64, stopped: bool, oom: bool) -> Run {
    let fail = |message: String, ticks: u64| Run {
        result: Err(Failure::Thrown(message)),
        logs: Vec::new(),
        ticks,
    };
    let thrown = |message: String| {
        if oom {
            Failure::OutOfMemory
        } else {
            Failure::Thrown(message)
        }
    };
    if stopped {
        return Run {
            result: Err(Failure::TimedOut),
            logs: Vec::new(),
            ticks,
        };
    }
    let text = match outcome {
        Ok(text) => text,
        Err(message) => {
            return Run {
                result: Err(thrown(message)),
                logs: Vec::new(),
                ticks,
            }
        }
    };
    let outcome: Outcome = match serde_json::from_str(&text) {
        Ok(o) => o,
        Err(e) => {
            return fail(
                format!("The script's outcome could not be read: {e}"),
                ticks,
            )
        }
    };
    let logs = cap_logs(&outcome.logs);
    if !outcome.ok {
        return Run {
            result: Err(thrown(outcome.thrown.unwrap_or_default())),
            logs,
            ticks,
        };
    }
    Run {
        result: Ok(Finished {
            body: outcome.has_body.then_some(outcome.body),
            request_body: (!outcome.request_body.is_null()).then_some(outcome.request_body),
            logs: logs.clone(),
        }),
        logs,
        ticks,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_is_timed_out_when_stopped_out_of_memory_when_a_refusal_explains_it() {
        let ok = r#"{"ok":true,"hasBody":true,"body":1,"requestBody":null,"logs":[]}"#;
        let threw = r#"{"ok":false,"thrown":"boom","logs":[]}"#;
        let table: [(Result<&str, &str>, bool, bool, &str); 7] = [
            (Ok(ok), false, false, "finished"),
            (Ok(ok), true, false, "timed out"),
            (Ok(threw), false, false, "thrown boom"),
            (Ok(threw), false, true, "out of memory"),
            (Err("uncaught"), false, false, "thrown uncaught"),
            (Err("uncaught"), false, true, "out of memory"),
            (Ok("not json"), false, false, "unreadable"),
        ];
        for (outcome, stopped, oom, want) in table {
            let run = finish(
                outcome.map(str::to_owned).map_err(str::to_owned),
                7,
                stopped,
                oom,
            );
            assert_eq!(run.ticks, 7);
            let seen = match run.result {
                Ok(_) => "finished".to_owned(),
                Err(Failure::TimedOut) => "timed out".to_owned(),
                Err(Failure::OutOfMemory) => "out of memory".to_owned(),
                Err(Failure::Thrown(m)) if m.contains("could not be read") => {
                    "unreadable".to_owned()
                }
                Err(Failure::Thrown(m)) => format!("thrown {m}"),
                Err(other) => format!("{other:?}"),
            };
            assert_eq!(seen, want, "{outcome:?} stopped {stopped} oom {oom}");
        }
    }

    /// Runs a script on a thread of this process.
    fn run(
        source: &str,
        input: &Input,
        bounds: Bounds,
        host: &mut dyn FnMut(&str) -> String,
    ) -> Run {
        run_here(source, input_json(input), bounds, host)
    }
    use serde_json::json;

    fn input(args: Vec<Value>) -> Input {
        Input {
            kind: Role::Sproc,
            args,
            request_body: Value::Null,
            has_response_body: false,
            response_body: Value::Null,
            operation: String::new(),
            self_link: "dbs/a/colls/b/".into(),
            alt_link: "dbs/d/colls/c".into(),
            logging: true,
            max_response_bytes: 1 << 20,
        }
    }

    fn quick() -> Bounds {
        Bounds {
            time: Duration::from_secs(2),
            memory_bytes: 16 * 1024 * 1024,
            stack_bytes: 256 * 1024,
        }
    }

    fn no_host(_: &str) -> String {
        r#"{"accepted":false}"#.into()
    }

    #[test]
    fn a_procedure_sets_its_body_from_its_parameters_and_logs() {
        let run = run(
            "function (a, b) { console.log('%s and %d', a, b); getContext().getResponse().setBody({sum: a + b}); }",
            &input(vec![json!("x"), json!(2)]),
            quick(),
            &mut no_host,
        );
        let done = run.result.unwrap();
        assert_eq!(done.body, Some(json!({"sum": "x2"})));
        assert_eq!(done.logs, ["x and 2"]);
    }

    #[test]
    fn operations_reach_the_host_and_callbacks_run_after_the_function_returns() {
        let mut seen = Vec::new();
        let mut host = |request: &str| {
            seen.push(serde_json::from_str::<Value>(request).unwrap());
            r#"{"accepted":true,"resource":{"id":"made"},"options":{}}"#.to_owned()
        };
        let run = run(
            "function () { var order = []; var c = getContext().getCollection();
               var ok = c.createDocument(c.getSelfLink(), {id: 'a'}, function (err, doc) { order.push(doc.id); });
               order.push('returned');
               getContext().getResponse().setBody({ok: ok, order: order}); }",
            &input(vec![]),
            quick(),
            &mut host,
        );
        assert_eq!(
            run.result.unwrap().body,
            Some(json!({"ok": true, "order": ["returned", "made"]}))
        );
        assert_eq!(seen[0]["op"], "create");
        assert_eq!(seen[0]["doc"], json!({"id": "a"}));
    }

    #[test]
    fn a_throw_an_endless_loop_and_unbounded_allocation_each_fail_as_such() {
        let thrown = run(
            "function () { throw new Error('boom'); }",
            &input(vec![]),
            quick(),
            &mut no_host,
        );
        assert!(
            matches!(&thrown.result, Err(Failure::Thrown(m)) if m.contains("boom")),
            "{:?}",
            thrown.result
        );
        let looping = run(
            "function () { try { while (true) {} } catch (e) { getContext().getResponse().setBody('caught'); } }",
            &input(vec![]),
            Bounds { time: Duration::from_millis(200), ..quick() },
            &mut no_host,
        );
        assert_eq!(looping.result, Err(Failure::TimedOut));
        assert!(looping.ticks > 0);
        let hungry = run(
            "function () { var a = []; while (true) { a.push('x'.repeat(1024) + a.length); } }",
            &input(vec![]),
            Bounds {
                time: Duration::from_secs(30),
                ..quick()
            },
            &mut no_host,
        );
        assert_eq!(hungry.result, Err(Failure::OutOfMemory));
        let deep = run(
            "function f() { return f() + 1; }",
            &input(vec![]),
            quick(),
            &mut no_host,
        );
        assert!(
            matches!(&deep.result, Err(Failure::Thrown(m)) if m.contains("stack")),
            "{:?}",
            deep.result
        );
        let not_fn = run("42", &input(vec![]), quick(), &mut no_host);
        assert!(matches!(&not_fn.result, Err(Failure::Thrown(m)) if m.contains("not a function")));
    }

    #[test]
    fn a_stuck_thread_is_answered_at_the_deadline_and_counted_until_it_ends() {
        let b = Bounds {
            time: Duration::from_millis(100),
            ..quick()
        };
        let (release, released) = mpsc::channel::<()>();
        let started = Instant::now();
        let run = supervise(b, &mut no_host, move |_, _| {
            let _ = released.recv();
            failed(Failure::Thrown("ended late".into()))
        });
        let took = started.elapsed();
        assert_eq!(run.result, Err(Failure::TimedOut));
        assert!(
            took >= b.time && took < b.time + watch::SLACK + Duration::from_millis(300),
            "{took:?}"
        );
        assert!(watch::stuck() >= 1);
        let left = watch::stuck();
        release.send(()).unwrap();
        let waited = Instant::now();
        while watch::stuck() >= left && waited.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(watch::stuck() < left, "the ended thread is still counted");
    }

    #[test]
    fn the_log_is_cut_at_its_cap_newlines_included() {
        let long = "x".repeat(3 * MAX_LOG_CHARS);
        let cases: Vec<(Vec<String>, Vec<usize>)> = vec![
            (vec![], vec![]),
            (vec!["ab".into(), "c".into()], vec![2, 1]),
            (vec![long.clone()], vec![MAX_LOG_CHARS]),
            (vec![long.clone(), "more".into()], vec![MAX_LOG_CHARS]),
            (vec!["a".into(), long.clone()], vec![1, MAX_LOG_CHARS - 2]),
            (
                vec!["é".repeat(MAX_LOG_CHARS - 1), "zz".into()],
                vec![MAX_LOG_CHARS - 1],
            ),
        ];
        for (lines, want) in cases {
            let kept = cap_logs(&lines);
            let counts: Vec<usize> = kept.iter().map(|l| l.chars().count()).collect();
            assert_eq!(counts, want);
            assert!(kept.join("\n").chars().count() <= MAX_LOG_CHARS);
        }
    }

    #[test]
    fn one_huge_log_line_is_cut_in_the_script_too() {
        let run = run(
            "function () { console.log('y'.repeat(8 * 1024 * 1024)); console.log('next'); }",
            &input(vec![]),
            Bounds {
                time: Duration::from_secs(5),
                memory_bytes: 64 * 1024 * 1024,
                ..quick()
            },
            &mut no_host,
        );
        let done = run.result.unwrap();
        assert_eq!(done.logs.len(), 1);
        assert_eq!(done.logs[0].len(), MAX_LOG_CHARS);
    }

    #[test]
    fn nothing_beyond_the_api_is_reachable() {
        let run = run(
            "function () { getContext().getResponse().setBody([typeof require, typeof std, typeof os, typeof fetch, typeof __host]); }",
            &input(vec![]),
            quick(),
            &mut no_host,
        );
        assert_eq!(
            run.result.unwrap().body,
            Some(json!([
                "undefined",
                "undefined",
                "undefined",
                "undefined",
                "undefined"
            ]))
        );
    }
}

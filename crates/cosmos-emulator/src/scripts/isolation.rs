//! Scripts in processes of their own: the one bound nothing inside a process can give.
//!
//! QuickJS stops a script through its interrupt handler, but a native loop that never returns to
//! the interpreter (a property lookup along a prototype chain of a hundred thousand objects, in a
//! loop of fewer than 10,000 steps between two interrupt checks) holds its thread for as long as
//! it likes, and a thread cannot be stopped from outside. A process can. With [`Isolation::Process`]
//! each stored procedure or trigger execution, and each query request's UDFs, run in a child
//! process of a worker program; at the deadline the child is killed, and the request is answered
//! with nothing left running.
//!
//! The worker program is any binary whose `main` calls [`serve_if_asked`] first: the
//! `cosmos-emulator` and `cosmos` binaries do. A child is told its role by [`ROLE_ENV`] and starts
//! with an empty environment. Parent and child speak JSON lines over the child's standard input
//! and output (the child's standard error is the parent's). A child whose parent goes away reads
//! the end of its input and exits at once; it also exits on its own a few seconds past its
//! script's time limit.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::engine::{self, Bounds, Input, Run};
use super::udf_runtime::{self, Answer, Call};

/// The environment variable that makes a worker program serve one script role.
pub(crate) const ROLE_ENV: &str = "COSMOS_EMULATOR_SCRIPT_WORKER";

/// The role of a stored procedure's or trigger's execution.
const ROLE_SCRIPT: &str = "script";
/// The role of one query request's UDFs.
const ROLE_UDF: &str = "udf";

/// The longest line either side reads: past it, the other side is taken as failed.
const MAX_LINE_BYTES: u64 = 256 * 1024 * 1024;

/// How long past its script's time limit a child waits before it exits on its own.
const CHILD_SLACK: Duration = Duration::from_secs(5);

/// Where scripts run.
#[derive(Clone, Debug, Default)]
pub(crate) enum Isolation {
    /// On threads of the emulator's process: stopped by the runtime's interrupt checks and the
    /// guarded built-ins, and left (counted) when stuck in a native loop.
    #[default]
    Thread,
    /// In child processes of this worker program, killed at the deadline.
    Process(Arc<PathBuf>),
}

/// What the parent sends a script child first.
#[derive(Serialize, Deserialize)]
struct Job {
    source: String,
    input_json: String,
    bounds: Bounds,
}

/// What a script child sends its parent.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
enum FromScript {
    /// A collection operation (JSON text) to answer with one line (a JSON string).
    Host(String),
    /// The execution's end.
    Done(Run),
}

/// Runs `source` with `input` where `isolation` says; each collection operation the script sends
/// (JSON text) is answered by `host` on the calling thread. Returns when the script ends, or at
/// its deadline (plus [`super::watch::SLACK`]) whatever the script is doing.
pub(crate) fn run(
    source: &str,
    input: &Input,
    bounds: Bounds,
    isolation: &Isolation,
    host: &mut dyn FnMut(&str) -> String,
) -> Run {
    let input_json = engine::input_json(input);
    match isolation {
        Isolation::Thread => engine::run_here(source, input_json, bounds, host),
        Isolation::Process(program) => run_script(program, source, input_json, bounds, host),
    }
}

/// When this process was started as a script worker, serves its role and exits; otherwise
/// returns at once. A binary that runs the emulator with scripts in processes calls this first in
/// its `main`, before anything else reads its arguments or environment.
pub fn serve_if_asked() {
    let Some(role) = std::env::var_os(ROLE_ENV) else {
        return;
    };
    let code = match role.to_str() {
        Some(ROLE_SCRIPT) => serve_script(),
        Some(ROLE_UDF) => serve_udfs(),
        _ => {
            eprintln!("cosmos-emulator: unknown script worker role {role:?}");
            2
        }
    };
    std::process::exit(code);
}

/// Whether this process was started as a script worker (and its `main` did not serve the role).
pub(crate) fn started_as_worker() -> bool {
    std::env::var_os(ROLE_ENV).is_some()
}

/// The parent's end of one child: lines to it, lines from it (read on a thread of their own).
/// Dropping it kills the child, reaps it and joins the reading thread.
pub(crate) struct Link {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    reader: Option<JoinHandle<()>>,
}

impl Link {
    fn spawn(program: &Path, role: &str) -> std::io::Result<Link> {
        let mut child = Command::new(program)
            .env_clear()
            .env(ROLE_ENV, role)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()?;
        let (stdin, stdout) = match (child.stdin.take(), child.stdout.take()) {
            (Some(i), Some(o)) => (i, o),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(std::io::Error::other("the worker's pipes are missing"));
            }
        };
        let (to_parent, lines) = mpsc::channel();
        let reader = std::thread::Builder::new()
            .name("cosmos-script-pipe".into())
            .spawn(move || forward_lines(stdout, &to_parent));
        let reader = match reader {
            Ok(r) => r,
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(e);
            }
        };
        Ok(Link {
            child,
            stdin: Some(stdin),
            lines,
            reader: Some(reader),
        })
    }

    fn send(&mut self, line: &str) -> std::io::Result<()> {
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| std::io::Error::other("the worker's input is closed"))?;
        stdin.write_all(line.as_bytes())?;
        stdin.write_all(b"\n")?;
        stdin.flush()
    }

    fn recv(&self, within: Duration) -> Result<String, mpsc::RecvTimeoutError> {
        self.lines.recv_timeout(within)
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
    }
}

/// Sends each line `from` holds to `to` until it ends, fails, holds an over-long line or nobody
/// listens.
fn forward_lines(from: impl Read, to: &mpsc::Sender<String>) {
    let mut from = BufReader::new(from);
    loop {
        let mut line = Vec::new();
        match (&mut from)
            .take(MAX_LINE_BYTES)
            .read_until(b'\n', &mut line)
        {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        if line.last() != Some(&b'\n') {
            return;
        }
        line.pop();
        let Ok(text) = String::from_utf8(line) else {
            return;
        };
        if to.send(text).is_err() {
            return;
        }
    }
}

/// Runs one stored procedure or trigger execution in a child of `program`: each collection
/// operation it sends is answered by `host` here; at the deadline (plus [`watch::SLACK`]) the
/// child is killed.
///
/// [`watch::SLACK`]: super::watch::SLACK
pub(crate) fn run_script(
    program: &Path,
    source: &str,
    input_json: String,
    bounds: Bounds,
    host: &mut dyn FnMut(&str) -> String,
) -> Run {
    let started = std::time::Instant::now();
    let deadline = started + bounds.time + super::watch::SLACK;
    let mut link = match Link::spawn(program, ROLE_SCRIPT) {
        Ok(l) => l,
        Err(e) => return engine::failed_to_start(&e.to_string()),
    };
    let job = Job {
        source: source.to_owned(),
        input_json,
        bounds,
    };
    let sent = serde_json::to_string(&job)
        .map_err(std::io::Error::other)
        .and_then(|line| link.send(&line));
    if sent.is_err() {
        return engine::runtime_failed();
    }
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        let line = match link.recv(left) {
            Ok(line) => line,
            Err(mpsc::RecvTimeoutError::Timeout) => return engine::timed_out(),
            Err(mpsc::RecvTimeoutError::Disconnected) => return engine::runtime_failed(),
        };
        match serde_json::from_str::<FromScript>(&line) {
            Ok(FromScript::Host(request)) => {
                let answer = host(&request);
                let line = serde_json::to_string(&answer).unwrap_or_else(|_| "\"\"".into());
                if link.send(&line).is_err() {
                    return engine::runtime_failed();
                }
            }
            Ok(FromScript::Done(run)) => return run,
            Err(_) => return engine::runtime_failed(),
        }
    }
}

/// One query request's UDFs in a child of a worker program.
pub(crate) struct UdfProcess {
    link: Link,
}

impl UdfProcess {
    /// Starts the child with the bounds every call runs under.
    pub(crate) fn start(program: &Path, bounds: Bounds) -> Result<UdfProcess, String> {
        let mut link = Link::spawn(program, ROLE_UDF)
            .map_err(|e| format!("The UDF runtime could not start: {e}"))?;
        let line = serde_json::to_string(&bounds).map_err(|e| e.to_string())?;
        link.send(&line)
            .map_err(|e| format!("The UDF runtime could not start: {e}"))?;
        Ok(UdfProcess { link })
    }

    /// Sends `call` and waits for its answer at most `within`; `Err(true)` when the time ran out
    /// (the child is then of no further use), `Err(false)` when the child failed.
    pub(crate) fn ask(&mut self, call: &Call, within: Duration) -> Result<Answer, bool> {
        let line = serde_json::to_string(call).map_err(|_| false)?;
        self.link.send(&line).map_err(|_| false)?;
        match self.link.recv(within) {
            Ok(line) => serde_json::from_str(&line).map_err(|_| false),
            Err(mpsc::RecvTimeoutError::Timeout) => Err(true),
            Err(mpsc::RecvTimeoutError::Disconnected) => Err(false),
        }
    }
}

/// The child's input, line by line, on a thread of its own: the end of the input (the parent has
/// gone, or has killed this child) ends the process at once.
fn parent_lines() -> mpsc::Receiver<String> {
    let (to_main, lines) = mpsc::channel();
    let spawned = std::thread::Builder::new()
        .name("cosmos-script-input".into())
        .spawn(move || {
            forward_lines(std::io::stdin(), &to_main);
            std::process::exit(0);
        });
    if spawned.is_err() {
        std::process::exit(3);
    }
    lines
}

/// Ends this child `after` from now, whatever it is doing.
fn exit_after(after: Duration) {
    let _ = std::thread::Builder::new()
        .name("cosmos-script-timer".into())
        .spawn(move || {
            std::thread::sleep(after);
            std::process::exit(4);
        });
}

fn write_line(out: &mut impl Write, line: &str) -> bool {
    out.write_all(line.as_bytes()).is_ok() && out.write_all(b"\n").is_ok() && out.flush().is_ok()
}

/// A script child: reads its job, runs it as the thread isolation would, and bridges its
/// collection operations to the parent.
fn serve_script() -> i32 {
    let from_parent = parent_lines();
    let Ok(first) = from_parent.recv() else {
        return 3;
    };
    let Ok(job) = serde_json::from_str::<Job>(&first) else {
        return 3;
    };
    exit_after(job.bounds.time + CHILD_SLACK);
    let mut out = std::io::stdout().lock();
    let mut host = |request: &str| -> String {
        let asked = serde_json::to_string(&FromScript::Host(request.to_owned()))
            .map(|line| write_line(&mut out, &line))
            .unwrap_or(false);
        let answer = asked
            .then(|| from_parent.recv().ok())
            .flatten()
            .and_then(|line| serde_json::from_str::<String>(&line).ok());
        answer.unwrap_or_else(|| r#"{"accepted":false}"#.to_owned())
    };
    let run = engine::run_here(&job.source, job.input_json, job.bounds, &mut host);
    match serde_json::to_string(&FromScript::Done(run)) {
        Ok(line) if write_line(&mut out, &line) => 0,
        _ => 3,
    }
}

/// A UDF child: reads its bounds, then answers each call in one runtime until its input ends.
fn serve_udfs() -> i32 {
    let from_parent = parent_lines();
    let Ok(first) = from_parent.recv() else {
        return 3;
    };
    let Ok(bounds) = serde_json::from_str::<Bounds>(&first) else {
        return 3;
    };
    exit_after(bounds.time + CHILD_SLACK);
    let (calls, from_caller) = mpsc::channel::<Call>();
    let (to_caller, answers) = mpsc::channel::<Answer>();
    let spawned = std::thread::Builder::new()
        .name("cosmos-script".into())
        .stack_size(bounds.stack_bytes + 4 * 1024 * 1024)
        .spawn(move || udf_runtime::serve(bounds, from_caller, to_caller));
    if spawned.is_err() {
        return 3;
    }
    let mut out = std::io::stdout().lock();
    while let Ok(line) = from_parent.recv() {
        let Ok(call) = serde_json::from_str::<Call>(&line) else {
            return 3;
        };
        if calls.send(call).is_err() {
            return 3;
        }
        let Ok(answer) = answers.recv() else {
            return 3;
        };
        let Ok(line) = serde_json::to_string(&answer) else {
            return 3;
        };
        if !write_line(&mut out, &line) {
            return 3;
        }
    }
    0
}

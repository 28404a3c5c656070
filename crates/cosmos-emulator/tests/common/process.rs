//! The `cosmos-emulator` binary as a child process: an abort or crash ends only the child, and the
//! test sees how it ended.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};

/// A running `cosmos-emulator` on ephemeral ports with regions East US and West US; killed on drop.
pub struct EmulatorProcess {
    child: Child,
    pub endpoint: String,
    pub regions: Vec<(String, String)>,
    /// Where the child's stderr (its log) goes.
    pub log: PathBuf,
}

impl EmulatorProcess {
    /// Starts the binary with `extra` flags and waits until it prints its endpoints; Err holds its
    /// log when it does not come up.
    pub fn start(extra: &[&str]) -> Result<EmulatorProcess, String> {
        Self::start_with_stdout(extra).map(|(process, _)| process)
    }

    /// As [`Self::start`], also returning the rest of its standard output (read it to see what
    /// it prints on the way out; until it is read or dropped the child may block writing).
    pub fn start_with_stdout(
        extra: &[&str],
    ) -> Result<
        (
            EmulatorProcess,
            std::io::Lines<BufReader<std::process::ChildStdout>>,
        ),
        String,
    > {
        let log = std::env::temp_dir().join(format!(
            "cosmos-emulator-{}-{}.log",
            std::process::id(),
            rand::random::<u32>()
        ));
        let log_file = std::fs::File::create(&log).map_err(|e| e.to_string())?;
        let mut child = Command::new(env!("CARGO_BIN_EXE_cosmos-emulator"))
            .args(["--port", "0", "--regions", "East US,West US"])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(log_file)
            .spawn()
            .map_err(|e| e.to_string())?;
        let stdout = BufReader::new(child.stdout.take().ok_or("no stdout")?);
        let mut endpoint = None;
        let mut regions = Vec::new();
        let mut lines = stdout.lines();
        for line in lines.by_ref() {
            let Ok(line) = line else { break };
            let words: Vec<&str> = line.split_whitespace().collect();
            if line.trim_start().starts_with("global endpoint") {
                endpoint = words.get(2).map(|s| s.to_string());
            } else if let Some(url) = words.iter().find(|w| w.starts_with("http://")) {
                if !line.contains("admin API") {
                    regions.push((words[..words.len() - 1].join(" "), url.to_string()));
                }
            }
            if line.starts_with("Press Ctrl-C") {
                break;
            }
        }
        match endpoint {
            Some(endpoint) => Ok((
                EmulatorProcess {
                    child,
                    endpoint,
                    regions,
                    log,
                },
                lines,
            )),
            None => {
                let _ = child.kill();
                let _ = child.wait();
                Err(std::fs::read_to_string(&log).unwrap_or_default())
            }
        }
    }

    /// A region's endpoint.
    pub fn region(&self, name: &str) -> &str {
        &self.regions.iter().find(|(n, _)| n == name).unwrap().1
    }

    /// How the child ended, if it has (an abort shows as a signal).
    pub fn exited(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// The child's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends SIGTERM to the child.
    pub fn terminate(&self) {
        let sent = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(sent.success(), "kill -TERM failed");
    }

    /// Kills the child with SIGKILL (no chance to flush or clean up) and reaps it.
    pub fn kill_hard(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Waits (polling) until the child ends, at most `limit`; its exit status, or None.
    pub fn wait_exit(&mut self, limit: std::time::Duration) -> Option<ExitStatus> {
        let started = std::time::Instant::now();
        while started.elapsed() < limit {
            if let Some(status) = self.exited() {
                return Some(status);
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        None
    }

    /// The child's log so far.
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for EmulatorProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.log);
    }
}

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
        for line in stdout.lines() {
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
            Some(endpoint) => Ok(EmulatorProcess {
                child,
                endpoint,
                regions,
                log,
            }),
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

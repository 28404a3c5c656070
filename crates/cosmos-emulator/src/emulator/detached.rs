//! An emulator on a thread of its own, for benchmarks and examples whose measurements must not
//! share a runtime with the server they measure.

use super::{EmulatorBuilder, StartError};

/// Where a detached emulator serves: it runs until the process ends.
#[derive(Clone, Debug)]
pub struct DetachedEmulator {
    endpoint: String,
    key: String,
}

impl DetachedEmulator {
    /// The global endpoint URL.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// The account key clients sign with.
    pub fn key(&self) -> &str {
        &self.key
    }
}

impl std::fmt::Display for DetachedEmulator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "emulator at {}", self.endpoint)
    }
}

impl EmulatorBuilder {
    /// Starts the emulator on a new thread with a one-worker runtime of its own; returns once it
    /// serves (or could not start). It serves until the process ends.
    pub fn start_detached(self) -> Result<DetachedEmulator, StartError> {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::Builder::new()
            .name("cosmos-emulator".into())
            .spawn(move || {
                let runtime = match tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(1)
                    .enable_all()
                    .build()
                {
                    Ok(runtime) => runtime,
                    Err(e) => {
                        let _ = tx.send(Err(StartError(format!("no runtime: {e}"))));
                        return;
                    }
                };
                runtime.block_on(async move {
                    match self.start().await {
                        Ok(emu) => {
                            let served = DetachedEmulator {
                                endpoint: emu.endpoint().to_owned(),
                                key: emu.key().to_owned(),
                            };
                            if tx.send(Ok(served)).is_ok() {
                                std::future::pending::<()>().await;
                            }
                        }
                        Err(e) => {
                            let _ = tx.send(Err(e));
                        }
                    }
                });
            })
            .map_err(|e| StartError(format!("no thread: {e}")))?;
        rx.recv()
            .map_err(|_| StartError("the emulator's thread ended before it served".into()))?
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_detached_emulator_serves_from_its_own_thread() {
        let emu = EmulatorBuilder::new()
            .regions(["East US"])
            .host(std::net::IpAddr::from([127, 0, 0, 1]))
            .start_detached()
            .expect("started");
        assert!(emu.endpoint().starts_with("http://127.0.0.1:"), "{emu}");
        let port = emu
            .endpoint()
            .trim_start_matches("http://127.0.0.1:")
            .trim_end_matches('/');
        let stream = std::net::TcpStream::connect(format!("127.0.0.1:{port}"));
        assert!(stream.is_ok(), "it accepts connections");
        let bad = EmulatorBuilder::new()
            .regions(Vec::<String>::new())
            .start_detached();
        assert!(bad.unwrap_err().0.contains("at least one region"));
    }
}

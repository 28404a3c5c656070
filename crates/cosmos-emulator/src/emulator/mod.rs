//! The embeddable emulator: [`EmulatorBuilder`] starts it, [`Emulator`] controls it.

mod builder;
pub(crate) mod cli;
mod detached;
mod handle;

pub use builder::{EmulatorBuilder, WELL_KNOWN_KEY};
pub use detached::DetachedEmulator;
pub use handle::Emulator;

/// Why an emulator could not start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StartError(pub String);

impl std::fmt::Display for StartError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the emulator could not start: {}", self.0)
    }
}

impl std::error::Error for StartError {}

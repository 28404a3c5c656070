//! The subcommands of `cosmos`.

pub mod bench;
pub mod bench_chaos;
pub mod changefeed;
pub mod connect;
pub mod container;
pub mod container_throughput;
pub mod database;
pub mod item;
pub mod item_export;
pub mod item_import;
pub mod item_query;
pub mod partition_key;
pub mod printing;
pub mod scripts;
pub mod sign_in;
pub mod transfer;

use cosmos_driver::CosmosError;

use crate::exit_code::{classify, ExitClass};

/// Why a command failed.
#[derive(Debug)]
pub enum CommandError {
    /// Bad usage or an unusable setting, caught before or outside an operation.
    Usage(String),
    /// Bad input (a document or value), refused before any request.
    Input(String),
    /// The operation failed; printed with its status, sub-status and message.
    Cosmos(CosmosError),
    /// Anything else, e.g. a benchmark whose operations failed.
    Failed(String),
    /// Some of many documents were refused: the class of the first, and what to print.
    Rejected(ExitClass, String),
}

impl CommandError {
    /// The class of the failure, for the exit status.
    pub fn class(&self) -> ExitClass {
        match self {
            CommandError::Usage(_) => ExitClass::Usage,
            CommandError::Input(_) => ExitClass::BadInput,
            CommandError::Cosmos(e) => classify(e.kind(), e.status()),
            CommandError::Failed(_) => ExitClass::Failure,
            CommandError::Rejected(class, _) => *class,
        }
    }
}

impl From<String> for CommandError {
    fn from(message: String) -> Self {
        CommandError::Usage(message)
    }
}

impl From<&str> for CommandError {
    fn from(message: &str) -> Self {
        CommandError::Usage(message.to_owned())
    }
}

impl From<CosmosError> for CommandError {
    fn from(e: CosmosError) -> Self {
        CommandError::Cosmos(e)
    }
}

/// A value refused by the protocol's rules (an id, a partition key definition).
impl From<cosmos_driver::protocol::ProtocolError> for CommandError {
    fn from(e: cosmos_driver::protocol::ProtocolError) -> Self {
        CommandError::Cosmos(e.into())
    }
}

//! A test double of the pipeline entry: answers each request from a table and records what was
//! sent.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Mutex;

use bytes::Bytes;
use http::{HeaderMap, HeaderValue};

use super::pipeline_entry::PipelineEntry;
use crate::diagnostics::DiagnosticsContext;
use crate::error::CosmosError;
use crate::operation::CosmosOperation;
use crate::options::OperationOptions;
use crate::protocol::ResponseHeaders;
use crate::protocol::{header_names as h, CosmosStatus};
use crate::response::CosmosResponse;

/// What the double answers to a request.
pub(crate) enum Answer {
    /// A 200 with this body and, when given, this continuation token.
    Page(&'static str, Option<&'static str>),
    /// An error of the given status.
    Fail(u16),
}

/// Answers keyed by `(request path, continuation sent)`.
#[derive(Default)]
pub(crate) struct TableEntry {
    answers: HashMap<(String, Option<String>), Answer>,
    sent: Mutex<Vec<(String, Option<String>)>>,
}

impl TableEntry {
    pub(crate) fn answer(mut self, path: &str, continuation: Option<&str>, answer: Answer) -> Self {
        self.answers
            .insert((path.to_owned(), continuation.map(str::to_owned)), answer);
        self
    }

    /// The `(path, continuation)` of every request, in order.
    pub(crate) fn sent(&self) -> Vec<(String, Option<String>)> {
        self.sent.lock().unwrap().clone()
    }

    fn respond(&self, operation: &CosmosOperation) -> Result<CosmosResponse, CosmosError> {
        let key = (
            operation.to_string(),
            operation.continuation().map(str::to_owned),
        );
        self.sent.lock().unwrap().push(key.clone());
        match self.answers.get(&key) {
            Some(Answer::Page(body, continuation)) => {
                let mut headers = HeaderMap::new();
                if let Some(token) = continuation {
                    headers.insert(h::CONTINUATION, HeaderValue::from_static(token));
                }
                Ok(CosmosResponse::new(
                    CosmosStatus::new(200, 0),
                    ResponseHeaders::new(headers),
                    Bytes::from_static(body.as_bytes()),
                    DiagnosticsContext::default(),
                ))
            }
            Some(Answer::Fail(status)) => Err(CosmosError::invalid_input(format!(
                "status {status} from the double"
            ))
            .with_status(CosmosStatus::new(*status, 0))),
            None => panic!("the double has no answer for {key:?}"),
        }
    }
}

impl PipelineEntry for TableEntry {
    fn send(
        &self,
        operation: &CosmosOperation,
        _options: &OperationOptions,
    ) -> impl Future<Output = Result<CosmosResponse, CosmosError>> + Send {
        std::future::ready(self.respond(operation))
    }
}

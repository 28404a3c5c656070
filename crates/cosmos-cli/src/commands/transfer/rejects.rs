//! Documents an import did not write: one JSON line each, `{"line":N,"id":...,"status":...,
//! "reason":...}`, to the `--rejects` file or else to stderr. The document itself is not copied
//! (it may be megabytes); its line number finds it in the input.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use serde_json::{json, Value};

use crate::exit_code::{classify, ExitClass};

/// One document not written.
#[derive(Debug, Clone, PartialEq)]
pub struct Reject {
    /// The line it starts on in the input.
    pub line: u64,
    /// Its id, when it had one.
    pub id: Option<String>,
    /// The service's status and sub-status, when the service refused it.
    pub status: Option<(u16, u32)>,
    /// Why.
    pub reason: String,
}

impl Reject {
    /// The line written for it.
    pub fn to_json(&self) -> Value {
        let mut v = json!({ "line": self.line, "id": self.id, "reason": self.reason });
        if let Some((status, sub)) = self.status {
            v["status"] = json!(status);
            v["sub_status"] = json!(sub);
        }
        v
    }

    /// The exit class it stands for: a refusal before sending is bad input; the service's answer
    /// is classed by its status.
    pub fn class(&self) -> ExitClass {
        match self.status {
            None => ExitClass::BadInput,
            Some((status, _)) => classify(cosmos_driver::ErrorKind::Service, Some(status)),
        }
    }
}

/// Where rejects go.
pub struct Rejects {
    out: Box<dyn Write + Send>,
    count: u64,
    first_class: Option<ExitClass>,
}

impl Rejects {
    /// Rejects written to `path`, or to stderr when there is none.
    pub fn open(path: Option<&Path>) -> Result<Self, String> {
        let out: Box<dyn Write + Send> = match path {
            Some(p) => Box::new(BufWriter::new(File::create(p).map_err(|e| {
                format!("cannot create the rejects file {}: {e}", p.display())
            })?)),
            None => Box::new(std::io::stderr()),
        };
        Ok(Rejects {
            out,
            count: 0,
            first_class: None,
        })
    }

    /// Writes one reject.
    pub fn write(&mut self, r: &Reject) -> Result<(), String> {
        self.count += 1;
        self.first_class.get_or_insert(r.class());
        writeln!(self.out, "{}", r.to_json()).map_err(|e| format!("cannot write a reject: {e}"))
    }

    /// How many were written.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The class of the first reject, if any.
    pub fn first_class(&self) -> Option<ExitClass> {
        self.first_class
    }

    /// Flushes the file.
    pub fn flush(&mut self) -> Result<(), String> {
        self.out
            .flush()
            .map_err(|e| format!("cannot write the rejects: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_classes() {
        let local = Reject {
            line: 3,
            id: None,
            status: None,
            reason: "no \"id\"".into(),
        };
        assert_eq!(
            local.to_json(),
            json!({"line": 3, "id": null, "reason": "no \"id\""})
        );
        assert_eq!(local.class(), ExitClass::BadInput);
        let conflict = Reject {
            line: 9,
            id: Some("a".into()),
            status: Some((409, 0)),
            reason: "exists".into(),
        };
        assert_eq!(conflict.to_json()["status"], 409);
        assert_eq!(conflict.class(), ExitClass::Conflict);
        let throttled = Reject {
            status: Some((429, 3200)),
            ..conflict
        };
        assert_eq!(throttled.class(), ExitClass::Throttled);
    }
}

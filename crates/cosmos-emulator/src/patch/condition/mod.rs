//! Patch conditions: `from c where <predicate>`, parsed and evaluated against the current item.

mod eval;
mod lexer;
mod parser;

pub use eval::holds;
pub use parser::{parse, CmpOp, Condition, Expr};

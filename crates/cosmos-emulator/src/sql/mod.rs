//! The NoSQL query language: lexer, parser to an AST, evaluator with the service's type rules,
//! executor, and the query plans the SDKs ask for. Queries and PATCH conditions both use it.
//!
//! Every input is bounded ([`limits`]): text size, tokens, nesting, operators, JOINs and the rows
//! one document may produce; nothing recurses deeper than the nesting limit.

pub mod aggregate;
pub mod ast;
pub mod collect;
pub mod eval;
pub mod exec;
pub mod fulltext;
pub mod fulltext_language;
mod fulltext_tokens;
mod functions;
pub mod grouping;
pub mod id_filter;
mod lexer;
pub mod limits;
pub mod meter;
mod parse_expr;
mod parser;
pub mod partition_filter;
pub mod patch_condition;
pub mod plan;
pub mod query_info;
pub mod rank_fusion;
mod regex_cache;
mod scope_check;
pub mod search;
mod search_limits;
pub mod sql_error;
pub mod udf_hook;
pub mod value;
pub mod vector;
mod walk;

#[cfg(test)]
mod query_tests;

pub use parser::{parse_condition, parse_query};
pub use sql_error::SqlError;
pub use walk::{any_in, query_expressions};

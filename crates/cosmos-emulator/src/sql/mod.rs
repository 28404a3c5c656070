//! The NoSQL query language: lexer, parser to an AST, evaluator with the service's type rules,
//! executor, and the query plans the SDKs ask for; and query execution over the store, page by
//! page (`run`). Queries and PATCH conditions both use it.
//!
//! Every input is bounded (`limits`): text size, tokens, nesting, operators, JOINs and the rows
//! one document may produce; nothing recurses deeper than the nesting limit.

pub(crate) mod aggregate;
pub(crate) mod ast;
pub(crate) mod collect;
pub(crate) mod eval;
pub(crate) mod exec;
pub mod fulltext;
pub mod fulltext_language;
mod fulltext_tokens;
mod functions;
pub(crate) mod grouping;
pub(crate) mod id_filter;
pub(crate) mod index_lookup;
pub(crate) mod index_use;
mod lexer;
pub(crate) mod limits;
pub(crate) mod meter;
mod parse_expr;
mod parser;
pub(crate) mod partition_filter;
pub(crate) mod patch;
pub(crate) mod plan;
pub(crate) mod query_info;
pub(crate) mod rank_fusion;
mod regex_cache;
pub(crate) mod run;
mod scope_check;
pub(crate) mod search;
mod search_limits;
pub(crate) mod sql_error;
pub(crate) mod udf_hook;
pub(crate) mod value;
pub(crate) mod vector;
mod walk;

#[cfg(test)]
mod query_tests;

pub(crate) use parser::{parse_condition, parse_query};
pub(crate) use sql_error::SqlError;
pub(crate) use walk::any_in;

//! The bounds every query and patch condition is held to, so no text a client sends can exhaust the
//! stack, the heap or a worker's time.
//!
//! The text limit is the service's documented maximum query length; the others are the emulator's
//! own (the service does not publish nesting or operator limits).

use super::sql_error::SqlError;

/// Largest query or condition text, in bytes (the service allows 512 KB).
pub(crate) const MAX_QUERY_BYTES: usize = 512 * 1024;
/// Most tokens in one text.
pub(crate) const MAX_TOKENS: usize = 200_000;
/// Deepest nesting of expressions (parentheses, function calls, constructors, subqueries, unary
/// and non-associative binary operators); also bounds the evaluator's recursion.
pub(crate) const MAX_DEPTH: usize = 32;
/// Most operators, function calls and operands of AND/OR in one text.
pub(crate) const MAX_OPERATORS: usize = 50_000;
/// Most JOINs in one query (the service allows 10).
pub(crate) const MAX_JOINS: usize = 10;
/// Most rows one document may produce through JOINs before a page is cut.
pub(crate) const MAX_ROWS_PER_DOCUMENT: usize = 100_000;
/// Largest value a string or array function (`REPLACE`, `CONCAT`, `ARRAY_CONCAT`, ...) or `||`
/// may build, in bytes of its JSON text: past it the query answers 400 naming this limit.
pub(crate) const MAX_RESULT_BYTES: usize = 2 * 1024 * 1024;
/// Longest result of `REPLICATE`, in characters (the service's documented limit).
pub(crate) const MAX_REPLICATE_CHARS: usize = 10_000;

/// 400 naming the limit when `what` would build a value of `bytes` bytes, past
/// [`MAX_RESULT_BYTES`].
pub(crate) fn check_result_size(what: &str, bytes: usize) -> Result<(), SqlError> {
    if bytes > MAX_RESULT_BYTES {
        return Err(SqlError::new(format!(
            "{what} would build a value of {bytes} bytes; the limit for the result of a string or array function or operator is {MAX_RESULT_BYTES} bytes."
        )));
    }
    Ok(())
}

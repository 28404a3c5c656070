//! User-defined functions (`udf.name(...)`) as the evaluator sees them: whoever runs a query
//! installs a [`UdfCaller`] for the thread while the query runs (queries run on one thread from
//! start to end); without one, a `udf.` call is an error naming the function.

use std::cell::RefCell;

use serde_json::Value;

/// Calls the user-defined functions of the container being queried.
pub(crate) trait UdfCaller {
    /// Calls `name` with `args` (`None`: undefined); `Ok(None)` when it returns undefined, `Err`
    /// with a message when it does not exist, throws or runs out of its bounds. `units` is the
    /// work the call did, charged to the query.
    fn call(
        &mut self,
        name: &str,
        args: &[Option<&Value>],
        units: &mut u64,
    ) -> Result<Option<Value>, String>;
}

thread_local! {
    static CALLER: RefCell<Option<Box<dyn UdfCaller>>> = const { RefCell::new(None) };
}

/// Keeps a caller installed until dropped.
pub(crate) struct Installed(());

impl Drop for Installed {
    fn drop(&mut self) {
        CALLER.with(|c| c.borrow_mut().take());
    }
}

/// Installs `caller` for the queries this thread runs until the guard drops.
pub(crate) fn install(caller: Box<dyn UdfCaller>) -> Installed {
    CALLER.with(|c| *c.borrow_mut() = Some(caller));
    Installed(())
}

/// Calls a user-defined function through the installed caller.
pub(crate) fn call(
    name: &str,
    args: &[Option<&Value>],
    units: &mut u64,
) -> Result<Option<Value>, String> {
    CALLER.with(|c| match c.try_borrow_mut() {
        Ok(mut slot) => match slot.as_mut() {
            Some(caller) => caller.call(name, args, units),
            None => Err(format!(
                "The user-defined function udf.{name} cannot be called here."
            )),
        },
        Err(_) => Err(format!(
            "The user-defined function udf.{name} cannot be called from inside another."
        )),
    })
}

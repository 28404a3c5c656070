//! Bounds the built-ins that would otherwise run past a script's time limit unseen.
//!
//! QuickJS stops a script through its interrupt handler, which the interpreter calls every few
//! thousand bytecode steps and function calls, and through the heap cap, which any allocation
//! meets. Some built-ins run a native loop over a length the script chooses that neither returns
//! to the interpreter nor allocates: `Array.prototype.copyWithin.call({length: 1e15}, 0, 1)` or
//! `new Array(2 ** 32 - 1).join('')` walk every missing index in C, and no handler, limit or
//! signal stops them short of the process. A missing index is looked up along the whole prototype
//! chain, which a script can make as long as the heap allows, so even a loop over a modest length
//! can run for minutes.
//!
//! Survey of QuickJS-ng (the engine `rquickjs` 0.14 embeds): `every`/`some`/`forEach`/`map`/
//! `filter`, `reduce(Right)`, `find*`, `includes`, `indexOf` and `lastIndexOf` check for
//! interrupts at every index (but only reach the handler every 10,000 checks, so a long chain
//! still holds them); `copyWithin`, `fill`, `join`, `toString`, `toLocaleString`, `reverse`,
//! `shift`, `unshift`, `slice`, `splice`, `concat`, `sort`, `flat`, `flatMap`, `with`,
//! `toReversed`, `toSorted`, `toSpliced`, the array iterators driven by a native
//! (`Iterator.prototype.drop`, `toArray`), `Array.from`, the arguments list of
//! `Function.prototype.apply`, `Reflect.apply` and `Reflect.construct`, typed arrays made from an
//! array-like (constructors, `from`, `set`), `String.raw`, and `JSON.stringify` (holes of every
//! array it meets) do not. String, typed array and regular expression work on real data is
//! bounded by the heap cap, and regular expressions call the interrupt handler while they
//! backtrack; `Atomics.wait` throws (the runtime cannot block).
//!
//! Two ways were weighed. A child process per script, killed at its deadline, bounds anything,
//! but every collection call and every UDF call crosses a pipe, and an embedding of the emulator
//! (its tests, other programs) may have no worker program to start. Wrapping the unbounded
//! built-ins is local and cheap. Both are done: the binaries run scripts in child processes
//! ([`super::isolation`]), and every runtime, in a child or on a thread, runs `guards.js` before the
//! API and the script:
//!
//! - each wrapped function checks, before calling the native, that the length it will walk times
//!   the objects a lookup of a missing index may visit beyond an ordinary chain is at most
//!   [`max_steps`]: the heap cap over 8 bytes, more elements than a real array under the cap can
//!   hold, a native loop of well under a second. Past that the script is stopped as if it ran out
//!   of time (the same 408 as `while (true) {}`), since that is what the call would do;
//! - what cannot be bounded before the call is refused the same way: a receiver with a proxy on
//!   its chain, or whose `length` is an accessor or an object (either could answer the native a
//!   length other than the one checked);
//! - `flat` and `flatMap` run in JavaScript, and the arguments list of `apply`/`construct` and the
//!   value given to `JSON.stringify` are copied in JavaScript (dense arrays, plain objects) before
//!   the native sees them: every step of the copy reaches the interrupt handler;
//! - no prototype may change (`setPrototypeOf`, `__proto__`: a `TypeError`) while one of the
//!   unpolled natives runs, so a getter it calls cannot lengthen the chain it walks;
//! - the wrappers are non-writable and non-configurable, and the originals live only in the
//!   wrappers' closures: `Reflect.apply`, `Function.prototype.call.bind`, property descriptors
//!   and `Array.prototype.toString`'s internal `join` lookup all reach a wrapper; QuickJS offers a
//!   script no second realm. The UDF caller stringifies results through the wrapper too.
//!
//! What remains: a prototype chain of 150,000 objects (it fits in 64 MiB) makes each missed
//! lookup cost milliseconds, and the interrupt handler runs only every 10,000 checks, so plain
//! JavaScript reading a missing property of such an object in a loop overran a 5 s limit by 80 s
//! (debug build) before it was stopped. No wrapper can prevent such chains (`new F()` with a
//! chosen `F.prototype`, `class extends` and `{__proto__: p}` build them natively); a child
//! process per script does (`isolation`: killed at the deadline). On threads, for that and anything
//! not foreseen here, the caller answers at the deadline without waiting for the script's thread
//! (`engine`, `udf`), which is counted and capped (`watch`).

use std::cell::Cell;
use std::rc::Rc;

use rquickjs::{Ctx, Function};

const GUARDS: &str = include_str!("guards.js");

/// The native loop steps one built-in call may take: the heap cap over 8 bytes (no real array
/// under the cap holds more elements), at least 1,024.
pub(super) fn max_steps(memory_bytes: usize) -> u64 {
    (memory_bytes as u64 / 8).max(1024)
}

/// Installs the guards in `ctx`'s global object. `stop` is set when a guard refuses a call: the
/// runtime's interrupt handler then ends the script as timed out.
pub(super) fn install<'js>(
    ctx: &Ctx<'js>,
    memory_bytes: usize,
    stop: Rc<Cell<bool>>,
) -> Result<(), String> {
    let globals = ctx.globals();
    let is_proxy = Function::new(ctx.clone(), |v: rquickjs::Value<'js>| -> bool {
        // SAFETY: `v` is a live value of this context; JS_IsProxy only reads its tag and class.
        unsafe { rquickjs::qjs::JS_IsProxy(v.as_raw()) }
    })
    .map_err(|e| e.to_string())?;
    let exceeded = Function::new(ctx.clone(), move || stop.set(true)).map_err(|e| e.to_string())?;
    globals
        .set("__isProxy", is_proxy)
        .map_err(|e| e.to_string())?;
    globals
        .set("__exceeded", exceeded)
        .map_err(|e| e.to_string())?;
    globals
        .set("__guardSteps", max_steps(memory_bytes) as f64)
        .map_err(|e| e.to_string())?;
    ctx.eval::<(), _>(GUARDS).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_step_bound_follows_the_heap_cap() {
        assert_eq!(max_steps(64 * 1024 * 1024), 8 * 1024 * 1024);
        assert_eq!(max_steps(16 * 1024 * 1024), 2 * 1024 * 1024);
        assert_eq!(max_steps(0), 1024);
    }
}

//! An undo log that makes a list of operations all-or-nothing.
//!
//! Every primitive change records how to reverse it, moving the displaced value into the log
//! rather than copying anything. When an operation fails the log is replayed backwards, which
//! costs in proportion to what the patch touched instead of cloning the whole document up front.

use serde_json::Value;

use super::locate::value_mut;

/// How to reverse one primitive change. `parent` holds the unescaped tokens of the container
/// the change happened in.
#[derive(Debug)]
enum Undo {
    /// A member was added to an object.
    MemberInserted { parent: Vec<String>, key: String },
    /// An existing member's value was overwritten in place.
    MemberReplaced {
        parent: Vec<String>,
        key: String,
        old: Value,
    },
    /// A member was removed from `position` in the object's member order.
    MemberRemoved {
        parent: Vec<String>,
        key: String,
        position: usize,
        old: Value,
    },
    /// An element was inserted into an array.
    ElementInserted { parent: Vec<String>, index: usize },
    /// An element was overwritten.
    ElementReplaced {
        parent: Vec<String>,
        index: usize,
        old: Value,
    },
    /// An element was removed.
    ElementRemoved {
        parent: Vec<String>,
        index: usize,
        old: Value,
    },
}

/// The changes made so far by one patch, newest last.
#[derive(Debug, Default)]
pub(super) struct Journal {
    entries: Vec<Undo>,
}

impl Journal {
    pub(super) fn member_inserted(&mut self, parent: &[String], key: &str) {
        self.entries.push(Undo::MemberInserted {
            parent: parent.to_vec(),
            key: key.to_owned(),
        });
    }

    pub(super) fn member_replaced(&mut self, parent: &[String], key: &str, old: Value) {
        self.entries.push(Undo::MemberReplaced {
            parent: parent.to_vec(),
            key: key.to_owned(),
            old,
        });
    }

    pub(super) fn member_removed(
        &mut self,
        parent: &[String],
        key: &str,
        position: usize,
        old: Value,
    ) {
        self.entries.push(Undo::MemberRemoved {
            parent: parent.to_vec(),
            key: key.to_owned(),
            position,
            old,
        });
    }

    pub(super) fn element_inserted(&mut self, parent: &[String], index: usize) {
        self.entries.push(Undo::ElementInserted {
            parent: parent.to_vec(),
            index,
        });
    }

    pub(super) fn element_replaced(&mut self, parent: &[String], index: usize, old: Value) {
        self.entries.push(Undo::ElementReplaced {
            parent: parent.to_vec(),
            index,
            old,
        });
    }

    pub(super) fn element_removed(&mut self, parent: &[String], index: usize, old: Value) {
        self.entries.push(Undo::ElementRemoved {
            parent: parent.to_vec(),
            index,
            old,
        });
    }

    /// Reverses every recorded change, newest first, restoring `doc` exactly (member order
    /// included). Returns `false` if a recorded location could not be found, which would mean the
    /// document was changed behind the journal's back.
    pub(super) fn rollback(self, doc: &mut Value) -> bool {
        let mut restored = true;
        for undo in self.entries.into_iter().rev() {
            restored &= reverse(doc, undo);
        }
        restored
    }
}

fn reverse(doc: &mut Value, undo: Undo) -> bool {
    match undo {
        Undo::MemberInserted { parent, key } => {
            with_object(doc, &parent, |map| map.shift_remove(&key).is_some())
        }
        Undo::MemberReplaced { parent, key, old } => {
            with_object(doc, &parent, |map| match map.get_mut(&key) {
                Some(slot) => {
                    *slot = old;
                    true
                }
                None => false,
            })
        }
        Undo::MemberRemoved {
            parent,
            key,
            position,
            old,
        } => with_object(doc, &parent, |map| {
            let position = position.min(map.len());
            map.shift_insert(position, key, old);
            true
        }),
        Undo::ElementInserted { parent, index } => with_array(doc, &parent, |items| {
            if index < items.len() {
                items.remove(index);
                true
            } else {
                false
            }
        }),
        Undo::ElementReplaced { parent, index, old } => {
            with_array(doc, &parent, |items| match items.get_mut(index) {
                Some(slot) => {
                    *slot = old;
                    true
                }
                None => false,
            })
        }
        Undo::ElementRemoved { parent, index, old } => with_array(doc, &parent, |items| {
            if index <= items.len() {
                items.insert(index, old);
                true
            } else {
                false
            }
        }),
    }
}

fn with_object(
    doc: &mut Value,
    parent: &[String],
    f: impl FnOnce(&mut serde_json::Map<String, Value>) -> bool,
) -> bool {
    match value_mut(doc, parent) {
        Some(Value::Object(map)) => f(map),
        _ => false,
    }
}

fn with_array(doc: &mut Value, parent: &[String], f: impl FnOnce(&mut Vec<Value>) -> bool) -> bool {
    match value_mut(doc, parent) {
        Some(Value::Array(items)) => f(items),
        _ => false,
    }
}

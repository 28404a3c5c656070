//! Aggregate accumulators: `COUNT`, `SUM`, `AVG`, `MIN`, `MAX` with the service's rules.
//!
//! `undefined` inputs are skipped. `SUM` and `AVG` of anything that is not a number are
//! `undefined`; `MIN`/`MAX` order booleans, numbers, strings and null by the ORDER BY order and are
//! `undefined` when an array or object is met. Over no input, `COUNT` and `SUM` are 0 and the others
//! `undefined`.

use std::cmp::Ordering;

use serde_json::Value;

use super::ast::AggregateKind;
use super::value::{number, order, Val};

/// The running state of one aggregate.
#[derive(Clone, Debug)]
pub(crate) struct Accumulator {
    kind: AggregateKind,
    count: u64,
    int_sum: Option<i64>,
    float_sum: f64,
    invalid: bool,
    extreme: Val,
}

impl Accumulator {
    pub(crate) fn new(kind: AggregateKind) -> Self {
        Self {
            kind,
            count: 0,
            int_sum: Some(0),
            float_sum: 0.0,
            invalid: false,
            extreme: None,
        }
    }

    /// Adds one input.
    pub(crate) fn add(&mut self, v: Val) {
        let Some(v) = v else { return };
        match self.kind {
            AggregateKind::Count => self.count += 1,
            AggregateKind::Sum | AggregateKind::Avg => match &v {
                Value::Number(n) => {
                    self.count += 1;
                    self.int_sum = self
                        .int_sum
                        .zip(n.as_i64())
                        .and_then(|(a, b)| a.checked_add(b));
                    self.float_sum += n.as_f64().unwrap_or(0.0);
                }
                _ => self.invalid = true,
            },
            AggregateKind::Min | AggregateKind::Max => {
                if matches!(v, Value::Array(_) | Value::Object(_)) {
                    self.invalid = true;
                    return;
                }
                let wanted = if self.kind == AggregateKind::Min {
                    Ordering::Less
                } else {
                    Ordering::Greater
                };
                if self.extreme.is_none() || order(Some(&v), self.extreme.as_ref()) == wanted {
                    self.extreme = Some(v);
                }
            }
        }
    }

    /// Bytes, about, the accumulator holds besides itself (the extreme a MIN or MAX keeps).
    pub(crate) fn held(&self) -> usize {
        self.extreme.as_ref().map_or(0, |v| {
            super::meter::heap_size(v) - std::mem::size_of::<Value>()
        })
    }

    /// The result.
    pub(crate) fn result(&self) -> Val {
        if self.invalid {
            return None;
        }
        match self.kind {
            AggregateKind::Count => Some(Value::from(self.count)),
            AggregateKind::Sum => match self.int_sum {
                Some(i) => Some(Value::from(i)),
                None => number(self.float_sum),
            },
            AggregateKind::Avg if self.count == 0 => None,
            AggregateKind::Avg => number(self.float_sum / self.count as f64),
            AggregateKind::Min | AggregateKind::Max => self.extreme.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(kind: AggregateKind, inputs: &[Val]) -> Val {
        let mut acc = Accumulator::new(kind);
        for v in inputs {
            acc.add(v.clone());
        }
        acc.result()
    }

    #[test]
    fn aggregates_follow_the_service_rules() {
        use AggregateKind::*;
        let nums = [Some(json!(1)), None, Some(json!(2.5))];
        let table: Vec<(AggregateKind, Vec<Val>, Val)> = vec![
            (Count, nums.to_vec(), Some(json!(2))),
            (Sum, nums.to_vec(), Some(json!(3.5))),
            (Avg, nums.to_vec(), Some(json!(1.75))),
            (Min, nums.to_vec(), Some(json!(1))),
            (Max, nums.to_vec(), Some(json!(2.5))),
            (Sum, vec![Some(json!(1)), Some(json!("x"))], None),
            (Avg, vec![Some(json!(null))], None),
            (Count, vec![], Some(json!(0))),
            (Sum, vec![], Some(json!(0))),
            (Avg, vec![], None),
            (Min, vec![], None),
            (
                Max,
                vec![Some(json!("a")), Some(json!(9)), Some(json!(true))],
                Some(json!("a")),
            ),
            (
                Min,
                vec![Some(json!("a")), Some(json!(null)), Some(json!(9))],
                Some(json!(null)),
            ),
            (Max, vec![Some(json!(1)), Some(json!([2]))], None),
            (
                Sum,
                vec![Some(json!(9007199254740993i64)), Some(json!(1))],
                Some(json!(9007199254740994i64)),
            ),
        ];
        for (kind, inputs, want) in table {
            assert_eq!(run(kind, &inputs), want, "{kind:?} {inputs:?}");
        }
    }
}

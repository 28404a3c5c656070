//! `--priority` and `--throughput-bucket`: the class a command's requests belong to, one argument
//! group shared by every data command and `cosmos bench`. Both are sent on every request of the
//! command (the driver's client-wide operation defaults).

use clap::{Args, ValueEnum};
use cosmos_driver::{OperationOptions, PriorityLevel, ThroughputBucket};

/// Priority-based execution: under throttling the service sheds low-priority requests first.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Priority {
    /// Shed first.
    Low,
    /// Shed last.
    High,
}

impl Priority {
    /// The flag's spelling (`low`, `high`), as reports name it.
    pub fn name(self) -> &'static str {
        match self {
            Priority::Low => "low",
            Priority::High => "high",
        }
    }

    /// The driver's priority level.
    pub fn level(self) -> PriorityLevel {
        match self {
            Priority::Low => PriorityLevel::Low,
            Priority::High => PriorityLevel::High,
        }
    }
}

/// `--throughput-bucket N`: 1 to 5.
pub fn parse_bucket(text: &str) -> Result<ThroughputBucket, String> {
    text.trim()
        .parse::<u8>()
        .ok()
        .and_then(|id| ThroughputBucket::new(id).ok())
        .ok_or_else(|| format!("a throughput bucket is a number from 1 to 5, not {text:?}"))
}

/// The request class flags.
#[derive(Args, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RequestClassArgs {
    /// Request priority, `low` or `high` (`x-ms-cosmos-priority-level`): when a partition runs
    /// short of throughput, the service throttles low-priority requests first.
    #[arg(long, value_enum, global = true)]
    pub priority: Option<Priority>,
    /// The throughput bucket (1 to 5) the requests count against
    /// (`x-ms-cosmos-throughput-bucket`); a container may cap each bucket at a share of its RU/s
    /// (`cosmos container throughput --bucket ID=PERCENT`).
    #[arg(long = "throughput-bucket", value_name = "1-5", value_parser = parse_bucket, global = true)]
    pub throughput_bucket: Option<ThroughputBucket>,
}

impl RequestClassArgs {
    /// `base` with this class set on it (what is not given stays as `base` has it).
    pub fn apply(&self, base: OperationOptions) -> OperationOptions {
        let with_priority = match self.priority {
            Some(p) => base.with_priority_level(p.level()),
            None => base,
        };
        match self.throughput_bucket {
            Some(b) => with_priority.with_throughput_bucket(b),
            None => with_priority,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_1_to_5_and_the_class_lands_on_the_options() {
        let table: &[(&str, Option<u8>)] = &[
            ("1", Some(1)),
            (" 5", Some(5)),
            ("0", None),
            ("6", None),
            ("-1", None),
            ("two", None),
        ];
        for &(text, want) in table {
            assert_eq!(parse_bucket(text).ok().map(|b| b.id()), want, "{text:?}");
        }
        let class = RequestClassArgs {
            priority: Some(Priority::Low),
            throughput_bucket: parse_bucket("3").ok(),
        };
        let options = class.apply(OperationOptions::new());
        assert_eq!(options.priority_level, Some(PriorityLevel::Low));
        assert_eq!(options.throughput_bucket.map(|b| b.id()), Some(3));
        let none = RequestClassArgs::default().apply(OperationOptions::new());
        assert_eq!((none.priority_level, none.throughput_bucket), (None, None));
    }
}

//! The three kinds of server-side script a container holds.

use super::operation_type::ResourceType;

/// Stored procedures, triggers and user-defined functions: each lives under its container in its
/// own feed (`sprocs`, `triggers`, `udfs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScriptKind {
    /// A stored procedure (`sprocs`), run by `POST` to its own path.
    StoredProcedure,
    /// A pre- or post-trigger (`triggers`), run around writes that name it.
    Trigger,
    /// A user-defined function (`udfs`), called from queries as `udf.name(...)`.
    UserDefinedFunction,
}

impl ScriptKind {
    /// The resource type, as used in the path and the signature.
    pub const fn resource_type(self) -> ResourceType {
        match self {
            ScriptKind::StoredProcedure => ResourceType::StoredProcedure,
            ScriptKind::Trigger => ResourceType::Trigger,
            ScriptKind::UserDefinedFunction => ResourceType::UserDefinedFunction,
        }
    }

    /// The path segment of the feed: `sprocs`, `triggers` or `udfs`.
    pub const fn path_segment(self) -> &'static str {
        self.resource_type().as_path_segment()
    }

    /// What the kind is called in messages.
    pub const fn what(self) -> &'static str {
        match self {
            ScriptKind::StoredProcedure => "stored procedure",
            ScriptKind::Trigger => "trigger",
            ScriptKind::UserDefinedFunction => "user-defined function",
        }
    }

    /// The array holding the resources of a feed page.
    pub const fn feed_field(self) -> &'static str {
        match self {
            ScriptKind::StoredProcedure => "StoredProcedures",
            ScriptKind::Trigger => "Triggers",
            ScriptKind::UserDefinedFunction => "UserDefinedFunctions",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_name_their_feeds() {
        for (kind, segment, field) in [
            (ScriptKind::StoredProcedure, "sprocs", "StoredProcedures"),
            (ScriptKind::Trigger, "triggers", "Triggers"),
            (
                ScriptKind::UserDefinedFunction,
                "udfs",
                "UserDefinedFunctions",
            ),
        ] {
            assert_eq!((kind.path_segment(), kind.feed_field()), (segment, field));
        }
    }
}

//! The three kinds of server-side script a container holds, with their path segment (also the
//! signature's resource type) and their feed's name.

/// Stored procedures, triggers or user-defined functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum ScriptKind {
    /// `/sprocs`
    StoredProcedure,
    /// `/triggers`
    Trigger,
    /// `/udfs`
    UserDefinedFunction,
}

impl ScriptKind {
    /// Every kind.
    pub(crate) const ALL: [ScriptKind; 3] = [
        ScriptKind::StoredProcedure,
        ScriptKind::Trigger,
        ScriptKind::UserDefinedFunction,
    ];

    /// The kind a path segment names.
    pub(crate) fn from_segment(segment: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.segment() == segment)
    }

    /// The path segment, which is also the resource type the signature covers.
    pub(crate) fn segment(self) -> &'static str {
        match self {
            ScriptKind::StoredProcedure => "sprocs",
            ScriptKind::Trigger => "triggers",
            ScriptKind::UserDefinedFunction => "udfs",
        }
    }

    /// The name of the array in a feed of this kind.
    pub(crate) fn feed_name(self) -> &'static str {
        match self {
            ScriptKind::StoredProcedure => "StoredProcedures",
            ScriptKind::Trigger => "Triggers",
            ScriptKind::UserDefinedFunction => "UserDefinedFunctions",
        }
    }

    /// The last byte of a script's resource id, which tells the kinds apart.
    pub(crate) fn rid_marker(self) -> u8 {
        match self {
            ScriptKind::StoredProcedure => 0x80,
            ScriptKind::Trigger => 0x70,
            ScriptKind::UserDefinedFunction => 0x60,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ScriptKind;

    #[test]
    fn segments_name_each_kind_once() {
        for kind in ScriptKind::ALL {
            assert_eq!(ScriptKind::from_segment(kind.segment()), Some(kind));
        }
        assert_eq!(ScriptKind::from_segment("docs"), None);
    }
}

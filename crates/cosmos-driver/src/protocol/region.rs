//! Region names.

use std::fmt;
use std::sync::Arc;

/// The name of an Azure region as the account document spells it (for example `"East US"`).
///
/// Two names are the same region when they match ignoring case, spaces, underscores and hyphens, so
/// `"East US"`, `"eastus"` and `"east-us"` compare equal; the original spelling is kept for display.
/// Cloning is cheap (the name is shared).
#[derive(Clone)]
pub struct Region {
    display: Arc<str>,
    key: Arc<str>,
}

impl Region {
    /// A region from its display name.
    pub fn new(name: impl AsRef<str>) -> Self {
        let display: Arc<str> = Arc::from(name.as_ref().trim());
        let key: String = display
            .chars()
            .filter(|c| !matches!(c, ' ' | '_' | '-'))
            .flat_map(char::to_lowercase)
            .collect();
        Self {
            display,
            key: Arc::from(key),
        }
    }

    /// The name as given.
    pub fn as_str(&self) -> &str {
        &self.display
    }

    /// The normalized comparison key (lowercase, no separators).
    pub fn key(&self) -> &str {
        &self.key
    }
}

impl PartialEq for Region {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl Eq for Region {}

impl std::hash::Hash for Region {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.key.hash(state)
    }
}

impl fmt::Debug for Region {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", &*self.display)
    }
}

impl fmt::Display for Region {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.display)
    }
}

impl From<&str> for Region {
    fn from(s: &str) -> Self {
        Region::new(s)
    }
}

impl From<String> for Region {
    fn from(s: String) -> Self {
        Region::new(s)
    }
}

impl serde::Serialize for Region {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.display)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_of_one_region_are_equal() {
        assert_eq!(Region::new("East US"), Region::new("eastus"));
        assert_eq!(Region::new("East US 2"), Region::new("east-us-2"));
        assert_ne!(Region::new("East US"), Region::new("East US 2"));
        assert_eq!(Region::new(" West Europe ").as_str(), "West Europe");
    }
}

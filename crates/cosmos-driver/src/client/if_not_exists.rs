//! Create-if-not-exists: read the resource; when it is missing, create it; when the create finds
//! it created meanwhile (409), read it again. The answer says whether this call created it.

use std::future::Future;

use crate::error::CosmosError;

/// A resource as a `create_..._if_not_exists` call left it: created by this call, or found.
#[derive(Clone, Debug)]
pub struct IfNotExists<T> {
    value: T,
    created: bool,
}

impl<T> IfNotExists<T> {
    /// Whether this call created the resource (`false`: it existed already, and is answered as it
    /// is, whatever the call asked for).
    pub fn created(&self) -> bool {
        self.created
    }

    /// The resource, as created or as read.
    pub fn value(&self) -> &T {
        &self.value
    }

    /// The resource, taken.
    pub fn into_value(self) -> T {
        self.value
    }
}

/// Where the flow stands after one request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    FirstRead,
    Create,
    ReadAfterConflict,
}

/// What to do after a failed request at `stage` with status `status` (`None`: no answer from the
/// service): the next stage, or give the error back.
fn after_failure(stage: Stage, status: Option<u16>) -> Option<Stage> {
    match (stage, status) {
        (Stage::FirstRead, Some(404)) => Some(Stage::Create),
        (Stage::Create, Some(409)) => Some(Stage::ReadAfterConflict),
        _ => None,
    }
}

/// Runs the flow with `read` and `create`.
pub(super) async fn read_or_create<T, R, RF, C, CF>(
    mut read: R,
    create: C,
) -> Result<IfNotExists<T>, CosmosError>
where
    R: FnMut() -> RF,
    RF: Future<Output = Result<T, CosmosError>>,
    C: FnOnce() -> CF,
    CF: Future<Output = Result<T, CosmosError>>,
{
    let found = |value| IfNotExists {
        value,
        created: false,
    };
    let err = match read().await {
        Ok(value) => return Ok(found(value)),
        Err(e) => e,
    };
    if after_failure(Stage::FirstRead, err.status()) != Some(Stage::Create) {
        return Err(err);
    }
    let err = match create().await {
        Ok(value) => {
            return Ok(IfNotExists {
                value,
                created: true,
            })
        }
        Err(e) => e,
    };
    if after_failure(Stage::Create, err.status()) != Some(Stage::ReadAfterConflict) {
        return Err(err);
    }
    read().await.map(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_missing_resource_is_created_and_only_a_conflict_reads_again() {
        use Stage::*;
        let table: &[(Stage, Option<u16>, Option<Stage>)] = &[
            (FirstRead, Some(404), Some(Create)),
            (FirstRead, Some(403), None),
            (FirstRead, Some(429), None),
            (FirstRead, None, None),
            (Create, Some(409), Some(ReadAfterConflict)),
            (Create, Some(404), None),
            (Create, Some(400), None),
            (Create, None, None),
            (ReadAfterConflict, Some(404), None),
            (ReadAfterConflict, Some(409), None),
        ];
        for (stage, status, next) in table {
            assert_eq!(
                after_failure(*stage, *status),
                *next,
                "{stage:?} {status:?}"
            );
        }
    }
}

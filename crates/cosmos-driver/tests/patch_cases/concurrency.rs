//! Many writers incrementing one item: no update is lost, none is reported that did not land, and
//! with enough attempts every one lands.

use std::collections::BTreeMap;
use std::error::Error as _;
use std::num::NonZeroU8;

use cosmos_driver::patch::PatchInstructions;
use cosmos_driver::{ContainerReference, CosmosDriver, CosmosError, OperationOptions};
use cosmos_emulator::EmulatorBuilder;
use serde_json::json;

use super::support::{create, loop_options, patch, read_doc, setup};

const TASKS: usize = 16;
const PER_TASK: usize = 50;

/// What a run of concurrent increments produced.
#[derive(Debug, Default)]
struct Figures {
    successes: u64,
    exhausted_412s: u64,
    /// Read-modify-write rounds per successful PATCH -> how many PATCHes took that many.
    attempts: BTreeMap<usize, u64>,
}

/// One PATCH's outcome: the rounds it took, or the 412 it gave up with.
async fn increment(
    driver: &CosmosDriver,
    c: &ContainerReference,
    id: &str,
    o: &OperationOptions,
) -> Result<usize, CosmosError> {
    let r = patch(
        driver,
        c,
        id,
        "p",
        &PatchInstructions::new().increment("/n", 1),
        o,
    )
    .await?;
    let lost = r
        .diagnostics()
        .requests()
        .iter()
        .filter(|row| row.status().is_some_and(|s| s.status == 412))
        .count();
    Ok(lost + 1)
}

async fn run(driver: &CosmosDriver, c: &ContainerReference, id: &str, max_attempts: u8) -> Figures {
    create(driver, c, &json!({"id": id, "pk": "p", "n": 0})).await;
    let o = loop_options().with_patch_max_attempts(NonZeroU8::new(max_attempts).unwrap());
    let tasks: Vec<_> = (0..TASKS)
        .map(|_| {
            let (driver, c, id, o) = (driver.clone(), c.clone(), id.to_owned(), o.clone());
            tokio::spawn(async move {
                let mut outcomes = Vec::with_capacity(PER_TASK);
                for _ in 0..PER_TASK {
                    outcomes.push(increment(&driver, &c, &id, &o).await);
                }
                outcomes
            })
        })
        .collect();
    let mut figures = Figures::default();
    for task in tasks {
        for outcome in task.await.expect("the task finishes") {
            match outcome {
                Ok(rounds) => {
                    figures.successes += 1;
                    *figures.attempts.entry(rounds).or_default() += 1;
                }
                Err(e) => {
                    assert!(e.is_precondition_failed(), "only lost races may fail: {e}");
                    assert!(
                        e.message()
                            .contains(&format!("after {max_attempts} read-modify-write attempts")),
                        "{e}"
                    );
                    let last = e
                        .source()
                        .and_then(|s| s.downcast_ref::<CosmosError>())
                        .expect("the last 412");
                    assert!(last.is_precondition_failed());
                    figures.exhausted_412s += 1;
                }
            }
        }
    }
    assert!(
        figures
            .attempts
            .keys()
            .all(|&rounds| rounds <= usize::from(max_attempts)),
        "{figures:?}"
    );
    figures
}

fn print(label: &str, f: &Figures) {
    println!(
        "{label}: {} PATCH calls, {} succeeded, {} gave up with 412; rounds per success: {:?}",
        TASKS * PER_TASK,
        f.successes,
        f.exhausted_412s,
        f.attempts
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_increments_are_never_lost_nor_invented() {
    let (_emu, driver, c) = setup(EmulatorBuilder::new()).await;

    let default_limit = run(&driver, &c, "counter-default", 5).await;
    print(
        "16 tasks x 50 increments, default limit (5 rounds)",
        &default_limit,
    );
    let (stored, _) = read_doc(&driver, &c, "counter-default", "p").await;
    assert_eq!(
        stored["n"],
        json!(default_limit.successes),
        "the counter equals the PATCH calls that succeeded"
    );
    assert_eq!(
        default_limit.successes + default_limit.exhausted_412s,
        (TASKS * PER_TASK) as u64
    );

    let high_limit = run(&driver, &c, "counter-high", 255).await;
    print("16 tasks x 50 increments, limit 255 rounds", &high_limit);
    let (stored, _) = read_doc(&driver, &c, "counter-high", "p").await;
    assert_eq!(high_limit.exhausted_412s, 0, "{high_limit:?}");
    assert_eq!(
        stored["n"],
        json!(TASKS * PER_TASK),
        "all 800 increments landed"
    );
}

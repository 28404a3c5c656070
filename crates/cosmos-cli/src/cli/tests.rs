//! The command line's definition, parsed as a user types it.

use std::time::Duration;

use super::*;
use crate::args::hedging::HedgingChoice;
use crate::args::patch_flags::{ordered_flags, PatchFlag};
use clap::{CommandFactory, FromArgMatches};

fn parse(args: &[&str]) -> Result<(Cli, clap::ArgMatches), clap::Error> {
    let matches = Cli::command()
        .try_get_matches_from(std::iter::once("cosmos").chain(args.iter().copied()))?;
    Ok((Cli::from_arg_matches(&matches)?, matches))
}

#[test]
fn definition_is_consistent() {
    Cli::command().debug_assert();
}

#[test]
fn patch_flags_keep_command_line_order() {
    let (_, m) = parse(&[
        "item",
        "patch",
        "--db",
        "d",
        "--container",
        "c",
        "--pk",
        "p",
        "id1",
        "--incr",
        "/n=2",
        "--set",
        "/a=1",
        "--remove",
        "/x",
        "--incr",
        "/m=1",
        "--move",
        "/a:/b",
    ])
    .unwrap();
    let (_, item) = m.subcommand().unwrap();
    let (_, patch) = item.subcommand().unwrap();
    let flags = ordered_flags(patch);
    let kinds: Vec<PatchFlag> = flags.iter().map(|(k, _)| *k).collect();
    assert_eq!(
        kinds,
        [
            PatchFlag::Incr,
            PatchFlag::Set,
            PatchFlag::Remove,
            PatchFlag::Incr,
            PatchFlag::Move
        ]
    );
    assert_eq!(flags[3].1, "/m=1");
}

#[test]
fn target_flags_go_anywhere() {
    let (cli, _) = parse(&[
        "item",
        "get",
        "--endpoint",
        "http://127.0.0.1:8081/",
        "--db",
        "d",
        "--container",
        "c",
        "--pk",
        "p",
        "id1",
        "--key",
        "k",
        "--diagnostics",
        "--preferred-regions",
        "West US,East US",
    ])
    .unwrap();
    let Command::Item { target, action, .. } = cli.command else {
        panic!("not an item command")
    };
    assert_eq!(target.endpoint.as_deref(), Some("http://127.0.0.1:8081/"));
    assert!(target.diagnostics);
    assert_eq!(target.preferred_regions, ["West US", "East US"]);
    assert!(matches!(action, ItemAction::Get { ref id, .. } if id == "id1"));
}

#[test]
fn bench_defaults_and_choices() {
    let (cli, _) = parse(&["bench"]).unwrap();
    let Command::Bench(b) = cli.command else {
        panic!("not bench")
    };
    assert_eq!((b.rate(), b.concurrency, b.items), (500, 64, 1000));
    assert_eq!(
        (b.duration, b.warmup),
        (Duration::from_secs(20), Duration::from_secs(2))
    );
    assert!(b.hedging.is_empty() && b.ops.is_none() && b.profile.is_none());
    assert_eq!(b.workload, WorkloadKind::Read);
    let (cli, _) = parse(&[
        "bench",
        "--hedging",
        "off",
        "--hedging",
        "20ms",
        "--workload",
        "patch-counter",
        "--ops",
        "100",
    ])
    .unwrap();
    let Command::Bench(b) = cli.command else {
        panic!("not bench")
    };
    assert_eq!(
        b.hedging,
        [
            HedgingChoice::Off,
            HedgingChoice::Threshold(Duration::from_millis(20))
        ]
    );
    assert_eq!(b.workload, WorkloadKind::PatchCounter);
    assert_eq!(b.ops, Some(100));

    let (cli, _) = parse(&[
        "bench",
        "--workload",
        "bulk-insert",
        "--items",
        "100000",
        "--enforce-throughput",
        "--throughput",
        "10000",
    ])
    .unwrap();
    let Command::Bench(b) = cli.command else {
        panic!("not bench")
    };
    assert_eq!(b.workload, WorkloadKind::BulkInsert);
    assert_eq!(b.workload.name(), "bulk-insert");
    assert_eq!((b.items, b.throughput), (100_000, Some(10_000)));
    assert!(b.enforce_throughput);
    assert!(parse(&["bench", "--throughput", "100"]).is_err());

    let (cli, _) = parse(&[
        "bench",
        "--workload",
        "vector",
        "--items",
        "500",
        "--dimensions",
        "64",
        "--top",
        "5",
    ])
    .unwrap();
    let Command::Bench(b) = cli.command else {
        panic!("not bench")
    };
    assert_eq!(b.workload.name(), "vector");
    assert_eq!((b.items, b.dimensions, b.top), (500, 64, 5));
    let (cli, _) = parse(&["bench", "--workload", "vector"]).unwrap();
    let Command::Bench(b) = cli.command else {
        panic!("not bench")
    };
    assert_eq!((b.dimensions, b.top), (256, 10), "the defaults");
    for bad in [
        ["--dimensions", "0"],
        ["--dimensions", "4097"],
        ["--top", "0"],
        ["--top", "1001"],
    ] {
        assert!(
            parse(&["bench", "--workload", "vector", bad[0], bad[1]]).is_err(),
            "{bad:?}"
        );
    }
    assert!(parse(&[
        "bench",
        "--enforce-throughput",
        "--endpoint",
        "http://127.0.0.1:1"
    ])
    .is_err());
}

#[test]
fn bad_values_are_refused_by_name() {
    for (args, needle) in [
        (&["bench", "--hedging", "maybe"][..], "--hedging"),
        (&["bench", "--duration", "20"][..], "unit"),
        (&["bench", "--concurrency", "0"][..], "concurrency"),
        (
            &["bench", "--duration", "5s", "--ops", "10"][..],
            "cannot be used with",
        ),
        (
            &[
                "item",
                "get",
                "--db",
                "d",
                "--container",
                "c",
                "--pk",
                "a",
                "--pk-json",
                "1",
                "x",
            ][..],
            "cannot be used with",
        ),
    ] {
        let e = parse(args).err().expect("refused").to_string();
        assert!(e.contains(needle), "{args:?}: {e}");
    }
}

#[test]
fn script_commands_parse() {
    let (cli, _) = parse(&[
        "trigger",
        "create",
        "--db",
        "d",
        "--container",
        "c",
        "stamp",
        "--body",
        "@t.js",
        "--type",
        "pre",
    ])
    .unwrap();
    let Command::Trigger {
        action:
            TriggerAction::Create {
                at,
                source,
                definition: kind,
            },
        ..
    } = cli.command
    else {
        panic!("not trigger create")
    };
    assert_eq!((at.id.as_str(), source.body.as_str()), ("stamp", "@t.js"));
    assert_eq!(
        (kind.trigger_type, kind.operation),
        (TriggerTypeArg::Pre, TriggerOperationArg::All)
    );
    let (cli, _) = parse(&[
        "sproc",
        "execute",
        "--db",
        "d",
        "--container",
        "c",
        "--pk",
        "p",
        "bulk",
        "--params",
        "[1]",
        "--log",
    ])
    .unwrap();
    let Command::Sproc {
        action: SprocAction::Kind(SprocExtra::Execute(e)),
        ..
    } = cli.command
    else {
        panic!("not sproc execute")
    };
    assert_eq!(
        (e.id.as_str(), e.params.as_str(), e.log),
        ("bulk", "[1]", true)
    );
    assert!(parse(&["udf", "list", "--db", "d", "--container", "c"]).is_ok());
    assert!(parse(&[
        "trigger",
        "create",
        "--db",
        "d",
        "--container",
        "c",
        "t",
        "--body",
        "x"
    ])
    .is_err());
}

#[test]
fn emulator_takes_the_emulator_flags() {
    let (cli, _) = parse(&[
        "emulator",
        "--port",
        "9000",
        "--profile",
        "slow-primary",
        "--multi-write",
    ])
    .unwrap();
    let Command::Emulator(e) = cli.command else {
        panic!("not emulator")
    };
    assert_eq!((e.port, e.multi_write), (9000, true));
    assert_eq!(e.profile.as_deref(), Some("slow-primary"));
}

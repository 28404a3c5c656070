//! `cosmos`: items, the emulator, and the tail-latency benchmark.

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches};
use cosmos_cli::args::patch_flags::ordered_flags;
use cosmos_cli::cli::{Cli, Command};
use cosmos_cli::commands::{self, printing, CommandError};

fn report(result: Result<(), CommandError>, diagnostics: bool) -> ExitCode {
    let Err(e) = result else {
        return ExitCode::SUCCESS;
    };
    match &e {
        CommandError::Usage(message)
        | CommandError::Input(message)
        | CommandError::Failed(message)
        | CommandError::Rejected(_, message) => {
            eprintln!("error: {message}")
        }
        CommandError::Cosmos(error) => printing::print_error(error, diagnostics),
    }
    ExitCode::from(e.class().code())
}

/// The matches of `item patch`, whose operation flags keep their command-line order.
fn patch_matches(matches: &clap::ArgMatches) -> Option<&clap::ArgMatches> {
    let (_, item) = matches.subcommand().filter(|(name, _)| *name == "item")?;
    let (_, patch) = item.subcommand().filter(|(name, _)| *name == "patch")?;
    Some(patch)
}

async fn run(cli: Cli, matches: &clap::ArgMatches) -> ExitCode {
    match cli.command {
        Command::Emulator(args) => report(
            cosmos_emulator::run(args)
                .await
                .map_err(CommandError::Failed),
            false,
        ),
        Command::Bench(args) => report(commands::bench::run_checked(&args).await, false),
        Command::Db { target, action } => report(
            commands::database::run(&target, &action).await,
            target.diagnostics,
        ),
        Command::Container { target, action } => report(
            commands::container::run(&target, &action).await,
            target.diagnostics,
        ),
        Command::Item {
            target,
            class,
            action,
        } => {
            let flags = patch_matches(matches)
                .map(ordered_flags)
                .unwrap_or_default();
            report(
                commands::item::run(&target, &class, &action, &flags).await,
                target.diagnostics,
            )
        }
        Command::Sproc { target, action } => report(
            commands::scripts::run_sproc(&target, &action).await,
            target.diagnostics,
        ),
        Command::Trigger { target, action } => report(
            commands::scripts::run_trigger(&target, &action).await,
            target.diagnostics,
        ),
        Command::Udf { target, action } => report(
            commands::scripts::run_udf(&target, &action).await,
            target.diagnostics,
        ),
        Command::Changefeed { target, action } => report(
            commands::changefeed::run(&target, &action).await,
            target.diagnostics,
        ),
        Command::Completions { .. } => ExitCode::SUCCESS,
    }
}

fn main() -> ExitCode {
    // A child started to run one script of `cosmos emulator` serves it and exits here.
    cosmos_emulator::serve_script_worker_if_asked();
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .init();
    let matches = Cli::command().get_matches();
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    if let Command::Completions { shell } = cli.command {
        clap_complete::generate(shell, &mut Cli::command(), "cosmos", &mut std::io::stdout());
        return ExitCode::SUCCESS;
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(run(cli, &matches))
}

//! `cosmos-emulator`: runs the multi-region Cosmos DB emulator until Ctrl-C or SIGTERM.

use std::time::Duration;

use clap::Parser;
use cosmos_emulator::EmulatorArgs;

/// A multi-region Azure Cosmos DB (NoSQL) emulator.
#[derive(Parser)]
#[command(name = "cosmos-emulator", version, about)]
struct Cli {
    #[command(flatten)]
    args: EmulatorArgs,
}

/// How long the runtime's remaining tasks and blocking threads (a script stuck in a native call,
/// say) may hold the process once the stop has drained what it could.
const EXIT_WAIT: Duration = Duration::from_millis(500);

fn main() {
    // A child started to run one script serves it and exits here.
    cosmos_emulator::serve_script_worker_if_asked();
    // Logs go to standard error beside the start's messages; standard output carries the
    // endpoints banner (a reader may stop reading it once the emulator is up).
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .init();
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("cosmos-emulator: cannot start the async runtime: {e}");
            std::process::exit(1);
        }
    };
    let outcome = runtime.block_on(cosmos_emulator::run(cli.args));
    // Dropping the runtime would wait for every blocking thread; the stop has had its grace.
    runtime.shutdown_timeout(EXIT_WAIT);
    if let Err(message) = outcome {
        eprintln!("cosmos-emulator: {message}");
        std::process::exit(1);
    }
    std::process::exit(0);
}

//! `cosmos-emulator`: runs the multi-region Cosmos DB emulator until Ctrl-C.

use clap::Parser;
use cosmos_emulator::EmulatorArgs;

/// A multi-region Azure Cosmos DB (NoSQL) emulator.
#[derive(Parser)]
#[command(name = "cosmos-emulator", version, about)]
struct Cli {
    #[command(flatten)]
    args: EmulatorArgs,
}

#[tokio::main]
async fn main() {
    // Logs go to standard error beside the start's messages; standard output carries the
    // endpoints banner (a reader may stop reading it once the emulator is up).
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .init();
    let cli = Cli::parse();
    if let Err(message) = cosmos_emulator::run(cli.args).await {
        eprintln!("cosmos-emulator: {message}");
        std::process::exit(1);
    }
}

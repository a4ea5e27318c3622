//! The `textorigin` command line. Each command is a module of [`cmd`]: its flags,
//! converted into the library's typed options at this edge, and a call into the
//! library. Errors become messages here (anyhow, and only here).

// Flags' doc comments are clap's help text, where `<l>` is meant literally.
#![allow(rustdoc::invalid_html_tags)]

mod args;
mod cmd;
mod log;

use std::process::ExitCode;

use anyhow::Result;
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "textorigin",
    version,
    about = "Tells, for every document, where each piece of its text came from",
    long_about = "Tells, for every document, where each piece of its text came from.\n\n\
        Documents are processed in order. Each one's k-word shingles are fingerprinted, a \
        subset is selected and looked up in a fixed-size table of earlier shingles; the \
        hits tell which earlier document each copied passage came from, which words are \
        new and which document it copied the most from (its dominant origin).\n\n\
        A data directory (--data, or $TEXTORIGIN_DATA) holds the table file and a RocksDB \
        store of documents and results."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
#[allow(clippy::large_enum_variant)] // One value a process, parsed once: its size costs nothing.
enum Command {
    Ingest(cmd::ingest::Args),
    Query(cmd::query::Args),
    Show(cmd::show::Args),
    Report(cmd::report::Args),
    List(cmd::list::Args),
    Stats(cmd::stats::Args),
    Export(cmd::export::Args),
    Neardups(cmd::neardups::Args),
    Quotes(cmd::quotes::Args),
    Eval(cmd::eval::Args),
    NeardupEval(cmd::neardup_eval::Args),
    QuoteEval(cmd::quote_eval::Args),
    Serve(cmd::serve::Args),
    Check(cmd::check::Args),
    Failed(cmd::failed::Args),
    BenchDaemon(cmd::bench_daemon::Args),
    Upgrade(cmd::upgrade::Args),
    Rebuild(cmd::rebuild::Args),
    Repair(cmd::repair::Args),
    Backup(cmd::backup::Args),
    Restore(cmd::restore::Args),
    Bench(cmd::bench::Args),
    Cluster(cmd::cluster::Args),
}

fn run(command: Command) -> Result<ExitCode> {
    let ok = |r: Result<()>| r.map(|()| ExitCode::SUCCESS);
    match command {
        Command::Ingest(a) => cmd::ingest::run(a),
        Command::Query(a) => ok(cmd::query::run(a)),
        Command::Show(a) => ok(cmd::show::run(a)),
        Command::Report(a) => ok(cmd::report::run(a)),
        Command::List(a) => ok(cmd::list::run(a)),
        Command::Stats(a) => ok(cmd::stats::run(a)),
        Command::Export(a) => ok(cmd::export::run(a)),
        Command::Neardups(a) => ok(cmd::neardups::run(a)),
        Command::Quotes(a) => ok(cmd::quotes::run(a)),
        Command::Eval(a) => ok(cmd::eval::run(a)),
        Command::NeardupEval(a) => ok(cmd::neardup_eval::run(a)),
        Command::QuoteEval(a) => ok(cmd::quote_eval::run(a)),
        Command::Serve(a) => ok(cmd::serve::run(a)),
        Command::Check(a) => cmd::check::run(a),
        Command::Failed(a) => ok(cmd::failed::run(a)),
        Command::BenchDaemon(a) => ok(cmd::bench_daemon::run(a)),
        Command::Upgrade(a) => ok(cmd::upgrade::run(a)),
        Command::Rebuild(a) => cmd::rebuild::run(a),
        Command::Repair(a) => cmd::repair::run(a),
        Command::Backup(a) => ok(cmd::backup::run(a)),
        Command::Restore(a) => ok(cmd::restore::run(a)),
        Command::Bench(a) => ok(cmd::bench::run(a)),
        Command::Cluster(a) => cmd::cluster::run(a),
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        // The daemon outlives the reader of its log: a closed pipe is a failed write.
        Command::Serve(_) => {
            textorigin_store::sys::ignore_sigpipe();
            // As many malloc arenas as cores (glibc's default is 8 a core, which the
            // HTTP server's threads filled with freed memory).
            let _ = textorigin_store::sys::cap_malloc_arenas(
                std::thread::available_parallelism().map_or(2, |n| n.get()).max(2),
            );
        }
        // Die quietly when the reader of our output goes away (`textorigin list | head`).
        _ => textorigin_store::sys::default_sigpipe(),
    }
    let (log_file, default_filter) = match &cli.command {
        Command::Serve(a) => match cmd::serve::log_file(a) {
            Ok(f) => (f, log::DAEMON_DEFAULT),
            Err(e) => {
                eprintln!("error: {}", textorigin_server::view::text::safe_lines(&format!("{e:#}")));
                return ExitCode::FAILURE;
            }
        },
        Command::Cluster(a) if a.is_service() => (None, log::CLUSTER_DEFAULT),
        _ => (None, "warn"),
    };
    if let Err(e) = log::init(log_file.as_deref(), default_filter) {
        eprintln!(
            "error: cannot open log file {}: {e}",
            log_file.as_ref().map(|p| p.display().to_string()).unwrap_or_default()
        );
        return ExitCode::FAILURE;
    }
    match run(cli.command) {
        Ok(code) => code,
        Err(e) => {
            // A name or a reason in the message may hold escape sequences.
            eprintln!("error: {}", textorigin_server::view::text::safe_lines(&format!("{e:#}")));
            ExitCode::FAILURE
        }
    }
}

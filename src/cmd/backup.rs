use std::path::PathBuf;

use anyhow::Result;
use textorigin_store::storage::datadir::backup::{self, Manifest, Progress};

use super::Format;
use crate::args::DataArg;

/// Copy a data directory to DEST, consistently, also while `serve` writes to it: the
/// store's records as of one moment and the newest table checkpoint (no table file:
/// `restore` makes it, as recovery after a crash does). DEST must not exist; a backup
/// interrupted at any moment leaves no DEST. The spool's files waiting to be applied
/// are not part of it (they are their producers' until admitted).
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    data: DataArg,
    /// The new directory the backup is written to.
    dest: PathBuf,
    #[command(flatten)]
    format: Format,
}

pub fn run(a: Args) -> Result<()> {
    let pb = super::progress_bytes(0);
    let m = backup::backup(&a.data.dir, &a.dest, &mut |p| show(&pb, p))?;
    pb.finish_and_clear();
    a.format.print(&m, |m| {
        format!(
            "backed up {} documents of {} to {} (schema {}, {} records, {})\nrestore: textorigin restore {} --data NEW_DIR\n",
            m.documents,
            a.data.dir.display(),
            a.dest.display(),
            m.schema,
            m.records,
            checkpoint_line(m),
            a.dest.display()
        )
    })
}

/// What a backup's table checkpoint means for its restore.
pub fn checkpoint_line(m: &Manifest) -> String {
    match m.table_checkpoint {
        Some(seq) => format!("table checkpoint at #{seq}: a restore replays {} documents", m.documents - seq),
        None => format!("no table checkpoint: a restore replays all {} documents", m.documents),
    }
}

/// Draws how far a backup or a restore is.
pub fn show(pb: &indicatif::ProgressBar, p: Progress) {
    match p {
        Progress::Table(done, of) => {
            if pb.length() != Some(of) {
                pb.set_length(of);
                pb.set_style(super::bytes_style());
                pb.set_message("table checkpoint");
            }
            pb.set_position(done);
        }
        Progress::Store(bytes) => {
            if pb.length().is_some() {
                pb.unset_length();
                let style = indicatif::ProgressStyle::with_template("{spinner} {msg}: {bytes} copied, {bytes_per_sec}");
                pb.set_style(style.expect("valid template"));
                pb.set_message("store records");
            }
            pb.set_position(bytes);
        }
        Progress::Replay(done, of) => {
            if pb.length() != Some(of) {
                pb.set_length(of);
                pb.set_style(
                    indicatif::ProgressStyle::with_template(
                        "{spinner} replaying [{bar:30}] {pos}/{len} documents eta {eta}",
                    )
                    .expect("valid template")
                    .progress_chars("=> "),
                );
            }
            pb.set_position(done);
        }
    }
}

use std::path::PathBuf;

use anyhow::Result;
use textorigin_store::storage::datadir::backup;

use super::Format;
use crate::args::DataArg;

/// Make a new data directory (--data, which must not exist or be empty) from a backup
/// made by `backup`: its store copied, its table restored from the backup's checkpoint
/// and the documents after it replayed (each replayed result compared with the stored
/// one). The backup is left as it is. Run `check` on the result, then `serve` on it.
#[derive(clap::Args)]
pub struct Args {
    /// The backup's directory.
    backup: PathBuf,
    #[command(flatten)]
    data: DataArg,
    #[command(flatten)]
    format: Format,
}

#[derive(serde::Serialize)]
struct Restored {
    backup: backup::Manifest,
    /// The documents the restored store holds, counted there.
    documents: u64,
    from_checkpoint: u64,
    replayed: u64,
    mismatches: u64,
}

pub fn run(a: Args) -> Result<()> {
    let pb = super::progress_bytes(0);
    let restored = backup::restore(&a.backup, &a.data.dir, &mut |p| super::backup::show(&pb, p))?;
    pb.finish_and_clear();
    let (manifest, r, documents) = (restored.manifest, restored.recovery, restored.documents);
    if r.mismatches > 0 {
        anyhow::bail!(
            "{} replayed results differ from the stored ones (a determinism bug); {} holds the restored directory",
            r.mismatches,
            a.data.dir.display()
        );
    }
    if documents != manifest.documents {
        eprintln!(
            "warning: the backup's manifest says {} documents, its store holds {documents}: the manifest was changed",
            manifest.documents
        );
    }
    let v = Restored {
        backup: manifest,
        documents,
        from_checkpoint: r.from_checkpoint,
        replayed: r.replayed,
        mismatches: 0,
    };
    a.format.print(&v, |v| {
        format!(
            "restored {} documents into {} (the table {}, {} replayed{})\ncheck it: textorigin check --data {}\n",
            v.documents,
            a.data.dir.display(),
            match v.from_checkpoint {
                0 => "from empty".to_string(),
                seq => format!("from the checkpoint at #{seq}"),
            },
            v.replayed,
            if v.backup.files.is_empty() {
                "; its files not verified: a backup of an earlier build"
            } else {
                "; every file verified"
            },
            a.data.dir.display()
        )
    })
}

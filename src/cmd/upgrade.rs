use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use textorigin_core::config::Overrides;
use textorigin_store::intake::Policy;
use textorigin_store::storage::datadir::{backup, db_path, DataDir};
use textorigin_store::storage::store::{Store, SCHEMA_VERSION};

use crate::args::DataArg;

/// Upgrade a data directory's store to this build's schema (also done by ingest and
/// serve). A store of an older schema is first backed up (as `backup` does) to
/// DIR.schema-N.backup beside it, or to --backup DEST: schema steps rewrite records,
/// and a copy of the backup is a data directory an older build reads. With no daemon
/// running.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    data: DataArg,
    /// Where the backup of an older store goes (default: DIR.schema-N.backup beside the
    /// data directory; it must not exist).
    #[arg(long, value_name = "DEST", conflicts_with = "no_backup")]
    backup: Option<PathBuf>,
    /// Upgrade without a backup (make one first with `textorigin backup`, or have one).
    #[arg(long)]
    no_backup: bool,
}

pub fn run(a: Args) -> Result<()> {
    let dir = &a.data.dir;
    let found = match Store::open_to_copy(&db_path(dir)) {
        Ok(store) => Some(store.schema_version()?),
        Err(_) => None, // no store yet, or damaged: the open below says which
    };
    let older = found.filter(|&v| v < SCHEMA_VERSION);
    if let (Some(v), false) = (older, a.no_backup) {
        if !textorigin_store::storage::datadir::writer_gone(dir) {
            anyhow::bail!("data directory {} is in use by another textorigin process: stop it first", dir.display());
        }
        let dest = a.backup.clone().unwrap_or_else(|| default_backup(dir, v));
        let pb = super::progress_bytes(0);
        let m = backup::backup(dir, &dest, &mut |p| super::backup::show(&pb, p))
            .with_context(|| format!("backing up schema {v} before the upgrade (--no-backup skips it)"))?;
        pb.finish_and_clear();
        eprintln!(
            "kept a backup of schema {v} ({} documents) in {}: a copy of it (`cp -a`) is a data directory of schema {v} for an older build (its table rebuilt at the start), `textorigin restore` makes one for this build; remove it once this build suits you",
            m.documents,
            dest.display()
        );
    }
    DataDir::open_write(dir, &Overrides::default(), Policy::default())?.close()?;
    match older {
        Some(v) => eprintln!("store upgraded from schema {v} to {SCHEMA_VERSION}"),
        None => eprintln!("store is at schema {SCHEMA_VERSION}"),
    }
    Ok(())
}

/// `DIR.schema-N.backup` beside data directory `dir`.
fn default_backup(dir: &Path, schema: u32) -> PathBuf {
    let name = dir.file_name().map_or_else(|| "data".into(), |n| n.to_string_lossy().into_owned());
    dir.with_file_name(format!("{name}.schema-{schema}.backup"))
}

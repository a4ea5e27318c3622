//! Who may write what in the log (`docs/SCALE-OUT.md`, "Who may write what"): a NATS
//! user for each process of a deployment, allowed to publish only to the subjects its
//! process writes, and the log servers' `authorization` block that says so.
//!
//! [`write()`] makes both at once: the users' passwords are drawn from the operating
//! system's random source and written each in a file of its own, readable by its owner
//! only ([`Credentials`], given to a process with `--nats-credentials`, never on its
//! command line), and beside them `nats-auth.conf`, which the servers' configuration
//! includes. Every process may read every stream of the deployment (the processes
//! read each other's records; nothing of a deployment is secret from its own
//! processes); a process publishes only its own records:
//!
//! | user | publishes to | stream management |
//! | --- | --- | --- |
//! | `init` | `txo.meta` | creates the streams |
//! | `submit` | `txo.docs`, `txo.items.*` | none |
//! | `w<s>` | `txo.hits.<s>`, `txo.lookups.<s>`, `txo.positions.w<s>` | none |
//! | `agg` (`agg<p>`) | `txo.feedback.<p>`, `txo.results.<p>`, `txo.positions.agg[<p>]` | none |
//! | `trim` | nothing | purges streams and deletes their messages (`cluster trim`); reads for `cluster status` |
//!
//! No user may delete a stream, nor update one's configuration.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::wire;

/// The file of the servers' `authorization` block, beside the credentials.
pub const SERVER_FILE: &str = "nats-auth.conf";

/// A NATS user's name and password, as a credentials file holds them (TOML: `user`,
/// `password`).
#[derive(Clone, serde::Serialize, serde::Deserialize)]
pub struct Credentials {
    pub user: String,
    pub password: String,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials").field("user", &self.user).finish_non_exhaustive()
    }
}

/// Errors of reading or writing credentials.
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    #[error("credentials file {}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    #[error("credentials file {}: {reason} (it holds `user = \"NAME\"` and `password = \"...\"`, as `textorigin cluster credentials` writes it)", path.display())]
    Format { path: PathBuf, reason: String },
    #[error(
        "credentials file {} can be read by other users of this machine (mode {mode:o}): make it its owner's only (chmod 600)",
        path.display()
    )]
    Readable { path: PathBuf, mode: u32 },
}

impl Credentials {
    /// Reads a credentials file, refusing one that others than its owner can read.
    pub fn read(path: &Path) -> Result<Credentials, AuthError> {
        let io = |source| AuthError::Io { path: path.to_path_buf(), source };
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(path).map_err(io)?.permissions().mode() & 0o777;
            if mode & 0o077 != 0 {
                return Err(AuthError::Readable { path: path.to_path_buf(), mode });
            }
        }
        let text = std::fs::read_to_string(path).map_err(io)?;
        let c: Credentials =
            toml::from_str(&text).map_err(|e| AuthError::Format { path: path.to_path_buf(), reason: e.to_string() })?;
        if c.user.is_empty() || c.password.is_empty() {
            let reason = "the user or the password is empty".to_string();
            return Err(AuthError::Format { path: path.to_path_buf(), reason });
        }
        Ok(c)
    }
}

/// One user of the log: its name and the subjects it may publish to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Role {
    pub user: String,
    pub publish: Vec<String>,
}

/// What every user may ask of JetStream: read any stream's description and messages,
/// and read them in order through consumers of its own (an ordered consumer is made,
/// pulled from and dropped by its reader).
const READ: &[&str] = &[
    "$JS.API.INFO",
    "$JS.API.STREAM.INFO.*",
    "$JS.API.STREAM.MSG.GET.*",
    "$JS.API.DIRECT.GET.>",
    "$JS.API.CONSUMER.CREATE.>",
    "$JS.API.CONSUMER.MSG.NEXT.>",
    "$JS.API.CONSUMER.INFO.>",
    "$JS.API.CONSUMER.DELETE.>",
];

/// The users of a deployment of `shards` workers and `partitions` partitions.
pub fn roles(shards: u32, partitions: u32) -> Vec<Role> {
    let own = |user: String, subjects: Vec<String>| Role { user, publish: subjects };
    let sub = wire::subject;
    let mut out = vec![
        own("init".into(), vec![sub(wire::META), "$JS.API.STREAM.CREATE.*".into()]),
        own("submit".into(), vec![sub(wire::DOCS), sub(wire::KEYS), format!("{}.*", sub("TXO_ITEMS"))]),
    ];
    for s in 0..shards {
        let name = wire::process_name(Some(s));
        out.push(own(
            name.clone(),
            vec![sub(&wire::hits_stream(s)), sub(&wire::lookups_stream(s)), wire::position_subject(&name)],
        ));
    }
    for p in 0..partitions {
        let name = wire::partition_name_of(partitions, p);
        out.push(own(
            name.clone(),
            vec![sub(&wire::feedback_stream(p)), sub(&wire::results_stream(p)), wire::position_subject(&name)],
        ));
    }
    out.push(own("trim".into(), vec!["$JS.API.STREAM.PURGE.*".into(), "$JS.API.STREAM.MSG.DELETE.*".into()]));
    out
}

/// The name of the credentials file of `user` in the folder [`write()`] wrote.
pub fn file_of(dir: &Path, user: &str) -> PathBuf {
    dir.join(format!("{user}.credentials"))
}

/// Writes into `dir` (made if need be, readable by its owner only) a credentials file
/// for each user of [`roles`] and the servers' [`SERVER_FILE`], with new passwords.
/// Returns the files written.
pub fn write(dir: &Path, shards: u32, partitions: u32) -> Result<Vec<PathBuf>, AuthError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| AuthError::Io { path, source }
    };
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let mut users = String::new();
    let mut written = Vec::new();
    for role in roles(shards, partitions) {
        let password = password().map_err(io(Path::new("/dev/urandom")))?;
        let c = Credentials { user: role.user.clone(), password };
        let path = file_of(dir, &role.user);
        let text = format!(
            "# The NATS user of textorigin's process {} (`textorigin cluster credentials`).\n{}",
            role.user,
            toml::to_string(&c).expect("two strings")
        );
        private_file(&path, &text).map_err(io(&path))?;
        written.push(path);
        let allow = READ.iter().map(|s| s.to_string()).chain(role.publish).collect::<Vec<_>>();
        users.push_str(&format!(
            "    {{ user: {}, password: {}, permissions: {{ publish: {{ allow: {} }}, subscribe: {{ allow: [\"_INBOX.>\"] }} }} }}\n",
            quoted(&c.user),
            quoted(&c.password),
            list(&allow)
        ));
    }
    let conf = format!(
        "# The users of textorigin's deployment of {shards} shard(s) and {partitions} partition(s), and what each may\n\
         # publish (`textorigin cluster credentials`; docs/SCALE-OUT.md, \"Who may write what\").\n\
         # Include it from each log server's configuration: include \"{SERVER_FILE}\"\n\
         authorization {{\n  users = [\n{users}  ]\n}}\n"
    );
    let path = dir.join(SERVER_FILE);
    private_file(&path, &conf).map_err(io(&path))?;
    written.push(path);
    Ok(written)
}

fn quoted(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

fn list(items: &[String]) -> String {
    format!("[{}]", items.iter().map(|s| quoted(s)).collect::<Vec<_>>().join(", "))
}

/// 32 random bytes, in hex.
fn password() -> std::io::Result<String> {
    let mut bytes = [0u8; 32];
    std::io::Read::read_exact(&mut std::fs::File::open("/dev/urandom")?, &mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Writes `text` to `path`, readable and writable by its owner only (from its creation:
/// a file made first and narrowed after could be opened by another user meanwhile).
fn private_file(path: &Path, text: &str) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut f = options.open(path)?;
    // An existing file keeps its mode through `mode`: narrowed too.
    #[cfg(unix)]
    f.set_permissions(std::os::unix::fs::PermissionsExt::from_mode(0o600))?;
    f.write_all(text.as_bytes())?;
    f.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_process_publishes_its_own_subjects_only() {
        let roles = roles(2, 2);
        let names: Vec<&str> = roles.iter().map(|r| r.user.as_str()).collect();
        assert_eq!(names, ["init", "submit", "w0", "w1", "agg0", "agg1", "trim"]);
        let w1 = &roles[3];
        assert_eq!(w1.publish, ["txo.hits.1", "txo.lookups.1", "txo.positions.w1"]);
        let agg0 = &roles[4];
        assert_eq!(agg0.publish, ["txo.feedback.0", "txo.results.0", "txo.positions.agg0"]);
        for r in &roles {
            assert!(r.publish.iter().all(|s| !s.contains("STREAM.DELETE") && !s.contains("STREAM.UPDATE")), "{r:?}");
        }
        assert_eq!(super::roles(1, 1)[3].user, "agg");
    }

    #[test]
    fn credentials_are_written_private_and_read_back() {
        let tmp = tempfile::tempdir().unwrap();
        let files = write(tmp.path(), 1, 1).unwrap();
        assert_eq!(files.len(), 6);
        let c = Credentials::read(&file_of(tmp.path(), "w0")).unwrap();
        assert_eq!(c.user, "w0");
        assert_eq!(c.password.len(), 64);
        let conf = std::fs::read_to_string(tmp.path().join(SERVER_FILE)).unwrap();
        assert!(conf.contains(&format!("password: \"{}\"", c.password)), "{conf}");
        // Another user's password differs.
        assert_ne!(Credentials::read(&file_of(tmp.path(), "agg")).unwrap().password, c.password);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let path = file_of(tmp.path(), "w0");
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
            let e = Credentials::read(&path).unwrap_err().to_string();
            assert!(e.contains("chmod 600"), "{e}");
        }
    }
}

//! The scale-out equality gate: `scripts/cluster.sh` (real `nats-server` processes,
//! shard workers and an aggregator as separate processes, SIGKILLs with `--chaos`)
//! against `ingest` + `export` of the same corpus and configuration on one node.

use std::path::{Path, PathBuf};
use std::process::{Child, Command};

use serde_json::Value;

use crate::util::{bin, fixture, json, ok, root, without_sources};

mod density;
mod large;
mod names;
mod templates;
mod trim;

/// A table small enough that the sample corpus evicts.
/// A deployment analyses exact copies in full (`cluster::deploy::settle`): so does the
/// node it is compared with.
const CONFIG: &str = "table_size = \"64KiB\"\ndensity = \"paper\"\nexact_copies = false\n";

/// The sample corpus `times` over, in `tmp`: the mail's dates a year later at each
/// repetition, so that the stream stays in publication order (out of order, see
/// [`shuffled`]).
fn corpus(tmp: &Path, times: usize) -> Vec<PathBuf> {
    let mail = std::fs::read_to_string(fixture("mail-sample.jsonl")).unwrap();
    (0..times)
        .flat_map(|r| {
            let later = tmp.join(format!("mail-sample-{r}.jsonl"));
            std::fs::write(
                &later,
                mail.replace("\"published_at\": \"2002-", &format!("\"published_at\": \"{}-", 2002 + r)),
            )
            .unwrap();
            [fixture("gcc-sample.jsonl"), later]
        })
        .collect()
}

/// The documents of `files` (the sample corpus: ChangeLog entries of 1988-1998, mail
/// of 2002) in a fixed order far from their dates, in `tmp`: late originals take
/// entries over and revise the results of their copies, and of those that copied from
/// them.
fn shuffled(tmp: &Path, files: &[PathBuf]) -> Vec<PathBuf> {
    let lines: Vec<String> = files
        .iter()
        .flat_map(|f| std::fs::read_to_string(f).unwrap().lines().map(str::to_string).collect::<Vec<_>>())
        .collect();
    let n = lines.len();
    assert!(!n.is_multiple_of(7919), "the shuffle is a permutation");
    let mut keyed: Vec<(usize, String)> =
        lines.into_iter().enumerate().map(|(i, l)| ((i * 7919 + 13) % n, l)).collect();
    keyed.sort();
    let path = tmp.join("shuffled.jsonl");
    std::fs::write(&path, keyed.into_iter().map(|(_, l)| l + "\n").collect::<String>()).unwrap();
    vec![path]
}

/// `files` (the sample corpus) with a site for each document (`site`, a field of its
/// metadata): the ChangeLog file of each entry (whose licence and editor lines every
/// entry of a file repeats), the mailing lists for the mail. In `tmp`.
fn with_sites(tmp: &Path, files: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = String::new();
    for file in files {
        for line in std::fs::read_to_string(file).unwrap().lines() {
            let mut doc: Value = serde_json::from_str(line).unwrap();
            doc["site"] = doc.get("file").cloned().unwrap_or_else(|| Value::from("lists"));
            out += &(doc.to_string() + "\n");
        }
    }
    let path = tmp.join("sites.jsonl");
    std::fs::write(&path, out).unwrap();
    vec![path]
}

/// A one-node run with every revision made before its cause is stored, as the sharded
/// deployment makes them.
const UNBOUNDED_REVISIONS: &[&str] = &["--revision-budget", "1000000000", "--revision-budget-bytes", "1TiB"];

/// A temporary directory holding a configuration file of [`CONFIG`]: (the directory,
/// the file).
fn with_config() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let config = tmp.path().join("config.toml");
    std::fs::write(&config, CONFIG).unwrap();
    (tmp, config)
}

/// `textorigin cluster ARGS` against the log servers `url`, without failpoints.
fn cluster_command(url: &str, args: &[&str]) -> Command {
    let mut c = Command::new(assert_cmd::cargo::cargo_bin("textorigin"));
    c.arg("cluster").args(args).env("TEXTORIGIN_NATS", url).env_remove("TEXTORIGIN_FAILPOINTS");
    c
}

/// Export lines as JSON values without where each came from (paths and ways differ).
fn export_values(text: &str) -> Vec<Value> {
    without_sources(text)
}

/// One node: the export and `stats --json` (`--force`: a corpus given `times` over is
/// stored `times` over, as `cluster submit` admits it).
fn single(tmp: &Path, config: &Path, times: usize) -> (Vec<Value>, Value) {
    single_of(tmp, config, &corpus(tmp, times), &[])
}

/// [`single`] of the corpus `files`, with `ingest` given `args` too; its data
/// directory is `tmp/single`.
fn single_of(tmp: &Path, config: &Path, files: &[PathBuf], args: &[&str]) -> (Vec<Value>, Value) {
    let dir = tmp.join("single");
    let out = bin()
        .arg("ingest")
        .arg("--force")
        .arg("--data")
        .arg(&dir)
        .arg("--config")
        .arg(config)
        .args(args)
        .args(files)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    (export_values(&ok(&dir, &["export"])), json(&dir, &["stats", "--json"]))
}

/// `scripts/cluster.sh` with `args`: the export, the union of the shard tables and the
/// script's report on standard error.
fn cluster(tmp: &Path, config: &Path, times: usize, args: &[&str]) -> (Vec<Value>, Value, String) {
    cluster_of(tmp, config, &corpus(tmp, times), args)
}

/// [`cluster`] of the corpus `files`.
fn cluster_of(tmp: &Path, config: &Path, files: &[PathBuf], args: &[&str]) -> (Vec<Value>, Value, String) {
    let (export, union) = (tmp.join("cluster.jsonl"), tmp.join("union.json"));
    let script = root().join("scripts/cluster.sh");
    let out = Command::new("bash")
        .arg(script)
        .args(args)
        .arg("--config")
        .arg(config)
        .arg("--out")
        .arg(&export)
        .arg("--union")
        .arg(&union)
        .args(files)
        .env("TEXTORIGIN_BIN", assert_cmd::cargo::cargo_bin("textorigin"))
        .env("TMPDIR", tmp)
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "cluster.sh {args:?} failed:\n{report}");
    let union = serde_json::from_str(&std::fs::read_to_string(union).unwrap()).unwrap();
    (export_values(&std::fs::read_to_string(export).unwrap()), union, report)
}

fn assert_equal(single: &(Vec<Value>, Value), cluster: &(Vec<Value>, Value, String), what: &str) {
    let ((want, stats), (got, union, _)) = (single, cluster);
    assert_eq!(got.len(), want.len(), "{what}: documents");
    for (g, w) in got.iter().zip(want) {
        assert_eq!(g, w, "{what}: document {}", w["id"]);
    }
    assert_eq!(
        union["table_digest"], stats["table_digest"],
        "{what}: the union of the shards is the single-node table"
    );
    for counter in ["lookups", "hits", "inserts", "evictions", "occupied"] {
        assert_eq!(union[counter], stats["table"][counter], "{what}: {counter}");
    }
    assert_eq!(union["documents"], stats["documents"], "{what}: documents");
}

#[test]
fn one_two_and_four_shards_equal_one_node_prepared_by_the_workers_or_at_submission() {
    let (tmp, config) = with_config();
    let one = single(tmp.path(), &config, 1);
    assert!(one.1["table"]["evictions"].as_u64().unwrap() > 0, "the gate runs with evictions");
    assert!(one.0.iter().any(|d| d["quotations"].as_array().is_some_and(|q| !q.is_empty())), "and with quotations");
    for shards in ["1", "2", "4"] {
        let c = cluster(tmp.path(), &config, 1, &["--shards", shards, "--servers", "1"]);
        assert_equal(&one, &c, &format!("{shards} shard(s)"));
        // The workers probed documents ahead of earlier ones' feedback (`shard::Ahead`).
        let ahead: u64 =
            c.2.lines().filter_map(|l| l.split(" replayed, ").nth(1)?.split(' ').next()?.parse::<u64>().ok()).sum();
        assert!(ahead > 0, "no document probed ahead:\n{}", c.2);
        // Every process says its CPU (what scripts/cluster-cpu.sh reads).
        let said = c.2.lines().filter(|l| l.contains("; cpu ") || l.contains("log server n0: cpu ")).count();
        assert_eq!(said, shards.parse::<usize>().unwrap() + 2, "{}", c.2);
    }
    // Documents prepared once, at submission: the workers read only their shingles.
    for shards in ["2", "4"] {
        let c = cluster(tmp.path(), &config, 1, &["--shards", shards, "--servers", "1", "--prepared"]);
        assert_equal(&one, &c, &format!("{shards} shards, prepared at submission"));
    }
}

/// Of a run's partitions, summed: the documents analysed after every
/// outcome before them, and the outcomes read when an analysis asked for a result.
fn outcome_reads(report: &str) -> (u64, u64) {
    let counts = report.lines().filter_map(|l| {
        let rest = l.split("; outcomes: every one before ").nth(1)?;
        let (in_full, rest) = rest.split_once(" document(s), ")?;
        Some((in_full.parse::<u64>().ok()?, rest.split(' ').next()?.parse::<u64>().ok()?))
    });
    counts.fold((0, 0), |(a, b), (x, y)| (a + x, b + y))
}

/// Partitions of documents arriving in date order read another partition's outcome
/// when an analysis asks for a result it holds (an origin's blocks, a near-duplicate
/// candidate's text), never waiting for every outcome before a document in turn.
#[test]
fn partitions_of_documents_in_date_order_wait_only_for_the_outcomes_they_read() {
    let (tmp, config) = with_config();
    let one = single(tmp.path(), &config, 1);
    for args in [&["--shards", "2", "--partitions", "2"][..], &["--shards", "1", "--partitions", "4"]] {
        let c = cluster(tmp.path(), &config, 1, &[args, &["--servers", "1"]].concat());
        assert_equal(&one, &c, &format!("{args:?}, in date order"));
        let (in_full, on_demand) = outcome_reads(&c.2);
        assert_eq!(in_full, 0, "{args:?}: no document waited for every outcome before it:\n{}", c.2);
        assert!(on_demand > 0, "{args:?}: outcomes read on demand:\n{}", c.2);
    }
}

#[test]
fn dated_documents_arriving_shuffled_take_over_and_revise_as_on_one_node() {
    let (tmp, config) = with_config();
    let files = shuffled(tmp.path(), &corpus(tmp.path(), 1));
    let one = single_of(tmp.path(), &config, &files, UNBOUNDED_REVISIONS);
    // The export holds each document's revision records (without the way in).
    let revised = one.0.iter().filter(|d| d["revisions"].as_array().is_some_and(|r| !r.is_empty())).count();
    assert!(revised >= 5, "the shuffled corpus revises results: {revised} revised");
    for args in [
        &["--shards", "1"][..],
        &["--shards", "2"],
        &["--shards", "4", "--prepared"],
        // Partitions: each stores its documents, the export reads them as one.
        &["--shards", "2", "--partitions", "2"],
        &["--shards", "1", "--partitions", "4"],
    ] {
        let c = cluster_of(tmp.path(), &config, &files, &[args, &["--servers", "1"]].concat());
        assert_equal(&one, &c, &format!("{args:?}, dates shuffled"));
        // A partition applies every outcome before a document that may take over.
        if args.contains(&"--partitions") {
            assert!(outcome_reads(&c.2).0 > 0, "{args:?}: documents after every outcome:\n{}", c.2);
        }
    }
}

#[test]
fn killing_workers_the_aggregator_and_log_servers_changes_nothing() {
    let (tmp, paper) = with_config();
    // The corpus eight times over (every document after the first round a copy), so
    // that the run outlasts several kills (four times over once took 2 s, one kill),
    // shuffled: its dates take entries over and revise results all along; each
    // document on a site (one node's default labels their template lines).
    let files = shuffled(tmp.path(), &with_sites(tmp.path(), &corpus(tmp.path(), 8)));
    // One node's default density on a table where it rises six times in the first 800
    // documents (a worker killed then restarts from a slot with a raise pending), and
    // the same without templates, which a deployment prepared at submission labels none.
    let adaptive = tmp.path().join("adaptive.toml");
    std::fs::write(&adaptive, "table_size = \"128KiB\"\nexact_copies = false\n").unwrap();
    let untemplated = tmp.path().join("untemplated.toml");
    std::fs::write(&untemplated, "table_size = \"128KiB\"\ntemplates = \"off\"\nexact_copies = false\n").unwrap();
    let one = [&paper, &adaptive, &untemplated].map(|config| {
        let dir = tempfile::tempdir_in(tmp.path()).unwrap();
        let one = single_of(dir.path(), config, &files, UNBOUNDED_REVISIONS);
        (config, one)
    });
    // Two shards on three log servers (each kind of process killed), one and four
    // shards on one (workers and the aggregator killed, more often: one server makes
    // the run shorter), two shards with two partitions (each partition restarts from
    // its checkpoint slot and the log), and four shards with four partitions on three
    // servers, documents prepared at submission (issue 58's gate: readers whose
    // consumers a killed server took along read on within seconds); all but the first
    // with one node's default density, all but the last with its site templates.
    for (shards, servers, chaos, partitions, prepared, (config, one)) in [
        ("2", "3", "1", "1", false, &one[0]),
        ("1", "1", "0.3", "1", false, &one[1]),
        ("4", "1", "0.3", "1", false, &one[1]),
        ("2", "1", "1", "2", false, &one[1]),
        ("4", "3", "2", "4", true, &one[2]),
    ] {
        let mut args = vec!["--shards", shards, "--servers", servers, "--chaos", chaos, "--partitions", partitions];
        args.extend(prepared.then_some("--prepared"));
        let c = cluster_of(tmp.path(), config, &files, &args);
        let kinds: &[&str] =
            if servers == "3" { &["killed w", "killed log server", "killed agg"] } else { &["killed w", "killed agg"] };
        for killed in kinds {
            assert!(c.2.contains(killed), "{shards} shard(s): the run saw a kill of each kind ({killed}):\n{}", c.2);
        }
        let what = format!("{shards} shard(s), {partitions} partition(s), {servers} log server(s), chaos, {config:?}");
        assert_equal(one, &c, &what);
    }
    // The log is trimmed meanwhile (`cluster trim` after every kill) once every process
    // has checkpointed, which kills may prevent (seen: 21 kills in 23 s and no trim);
    // `a_trim_outlives_a_restart_of_every_log_server` restarts after a trim for sure.
}

/// The scripts signal a process only while it is their own child: the number of one
/// that ended is free for the kernel to give to another process or thread, and kill(2)
/// of a thread's number signals its whole process (the likely end of CI stop 46: a
/// cleanup's SIGKILL of every number the chaos run had started took the test binary).
#[test]
fn the_scripts_signal_only_their_own_children() {
    let mut stranger = Command::new("sleep").arg("60").spawn().unwrap();
    let script = format!(
        "source {:?}; sleep 60 & own=$!; kill_child 9 {} ; kill_child 9 $own; wait $own || echo \"own: $?\"",
        root().join("scripts/children.sh"),
        stranger.id()
    );
    let out = Command::new("bash").arg("-c").arg(script).output().unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    let alive = stranger.try_wait().unwrap().is_none();
    let _ = stranger.kill();
    let _ = stranger.wait();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(alive, "a process that is not the script's child was signalled");
    assert_eq!(said.trim(), "own: 137", "the script's own child is killed");
}

#[test]
fn the_aggregators_data_directory_refuses_commands_that_would_run_the_table_on_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("agg");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("cluster"), "shards=2 k=8\n").unwrap();
    for args in [vec!["ingest", "--table-size", "1MiB"], vec!["rebuild"]] {
        let mut c = bin();
        c.args(&args).arg("--data").arg(&dir);
        if args[0] == "ingest" {
            c.arg(fixture("gcc-sample.jsonl"));
        }
        let out = c.output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains("sharded deployment's aggregator"), "{args:?}: {err}");
    }
    assert!(!dir.join("db").exists(), "nothing was created");
}

/// `nats-server`s with JetStream on free loopback ports (one, or a cluster of three
/// whose streams are replicated), killed when dropped.
struct Nats {
    confs: Vec<PathBuf>,
    children: Vec<Child>,
    url: String,
}

impl Nats {
    fn start(dir: &Path, servers: usize) -> Nats {
        let port = || std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let (clients, routes): (Vec<u16>, Vec<u16>) = (0..servers).map(|_| (port(), port())).unzip();
        let route_list = routes.iter().map(|p| format!("nats-route://127.0.0.1:{p}")).collect::<Vec<_>>().join(", ");
        let confs: Vec<PathBuf> = (0..servers)
            .map(|i| {
                let conf = dir.join(format!("n{i}.conf"));
                let mut text = format!(
                    "server_name: n{i}\nlisten: 127.0.0.1:{}\njetstream {{ store_dir: {:?} }}\n",
                    clients[i],
                    dir.join(format!("n{i}"))
                );
                if servers > 1 {
                    text +=
                        &format!("cluster {{ name: txo, listen: 127.0.0.1:{}, routes: [{route_list}] }}\n", routes[i]);
                }
                std::fs::write(&conf, text).unwrap();
                conf
            })
            .collect();
        let url = clients.iter().map(|p| format!("nats://127.0.0.1:{p}")).collect::<Vec<_>>().join(",");
        let mut nats = Nats { confs, children: Vec::new(), url };
        nats.restart();
        nats
    }

    /// Starts every server (again).
    fn restart(&mut self) {
        self.children = self
            .confs
            .iter()
            .map(|conf| {
                Command::new("nats-server")
                    .arg("-c")
                    .arg(conf)
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::null())
                    .spawn()
                    .expect("nats-server (scripts/test.sh installs it)")
            })
            .collect();
    }

    /// SIGKILLs every server (a power loss of the log).
    fn kill(&mut self) {
        for c in &mut self.children {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for Nats {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Waits until every child has exited successfully (`what` failed otherwise).
fn finish(children: &mut [Child], secs: u64, what: &str) {
    let started = std::time::Instant::now();
    for child in children.iter_mut() {
        loop {
            let failed = match child.try_wait().unwrap() {
                Some(status) if status.success() => break,
                Some(_) => "a process failed".to_string(),
                None if started.elapsed() > std::time::Duration::from_secs(secs) => format!("no end after {secs} s"),
                None => {
                    std::thread::sleep(std::time::Duration::from_millis(50));
                    continue;
                }
            };
            children.iter_mut().for_each(|c| drop(c.kill()));
            panic!("{what}: {failed}");
        }
    }
}

/// A deployment of one shard driven by hand against the log servers `url`: the
/// aggregator's data directory, the worker's checkpoints and its image, in `tmp`.
struct OneShard {
    url: String,
    agg: PathBuf,
    state: PathBuf,
    image: PathBuf,
}

impl OneShard {
    /// `cluster init` of one shard with `config` (and `args`).
    fn init(tmp: &Path, url: &str, config: &Path, args: &[&str]) -> OneShard {
        let d = OneShard {
            url: url.to_string(),
            agg: tmp.join("agg"),
            state: tmp.join("w0"),
            image: tmp.join("shard-0.img"),
        };
        let mut init = d.cluster(&["init", "--shards", "1"]);
        let out = init.args(args).arg("--config").arg(config).arg("--data").arg(&d.agg).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        d
    }

    fn cluster(&self, args: &[&str]) -> Command {
        cluster_command(&self.url, args)
    }

    /// `cluster submit --json` of `files`: the last document's id.
    fn submit(&self, files: &[PathBuf]) -> String {
        let out = self.cluster(&["submit", "--json"]).args(files).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice::<Value>(&out.stdout).unwrap()["last"].as_u64().unwrap().to_string()
    }

    /// The worker until document `until`, checkpointing `every` seconds.
    fn worker(&self, until: &str, every: &str) -> Child {
        self.worker_command(until, every).spawn().unwrap()
    }

    /// The command of [`OneShard::worker`].
    fn worker_command(&self, until: &str, every: &str) -> Command {
        let mut c = self.cluster(&["worker", "--shard", "0", "--checkpoint-secs", every, "--until", until, "--state"]);
        c.arg(&self.state).arg("--image").arg(&self.image);
        c
    }

    /// The worker and the aggregator until document `until`, checkpointing `every`
    /// seconds.
    fn run(&self, until: &str, every: &str) -> [Child; 2] {
        let aggregator = self
            .cluster(&["aggregate", "--checkpoint-secs", every, "--until", until, "--data"])
            .arg(&self.agg)
            .spawn()
            .unwrap();
        [self.worker(until, every), aggregator]
    }

    /// [`OneShard::run`] of a deployment of partitions, partition `p` on the data
    /// directory `data[p]`, their standard error piped.
    fn run_partitions(&self, until: &str, every: &str, data: [&Path; 2]) -> Vec<Child> {
        let mut children = vec![self.worker(until, every)];
        for (p, dir) in data.into_iter().enumerate() {
            let mut c = self.cluster(&["aggregate", "--partition", &p.to_string(), "--until", until]);
            c.args(["--checkpoint-secs", every, "--data"]).arg(dir).stderr(std::process::Stdio::piped());
            children.push(c.spawn().unwrap());
        }
        children
    }

    /// The worker and the aggregator until document `until`, a checkpoint slot at every
    /// document, then the worker again from its slot (which it says) and the aggregator
    /// to document `last`: the outcome.
    fn restarted_at(&self, until: &str, last: &str) -> (Vec<Value>, Value, String) {
        finish(&mut self.run(until, "0"), 120, "the documents before the restart");
        let aggregator = self.cluster(&["aggregate", "--until", last, "--data"]).arg(&self.agg).spawn().unwrap();
        let mut worker = self.worker_command(last, "30");
        worker.stderr(std::process::Stdio::piped());
        let mut children = [worker.spawn().unwrap(), aggregator];
        finish(&mut children, 300, "the rest after the restart");
        let mut said = String::new();
        std::io::Read::read_to_string(&mut children[0].stderr.take().unwrap(), &mut said).unwrap();
        assert!(said.contains(&format!("from checkpoint #{until},")), "{said}");
        self.outcome()
    }

    /// The export and the union of the shard, as [`cluster`] gives them.
    fn outcome(&self) -> (Vec<Value>, Value, String) {
        let union = self.cluster(&["union", "--json"]).arg(&self.image).output().unwrap().stdout;
        (export_values(&ok(&self.agg, &["export"])), serde_json::from_slice(&union).unwrap(), String::new())
    }
}

/// A partition stores a document without waiting for the log to acknowledge its
/// feedback, keeping the feedback with it: killed after storing one whose
/// feedback the log then lost, its restart appends the feedback again (the worker waits
/// for it) and the deployment ends with one node's export. Its book goes on from where
/// its store kept it, through a stop and the kill.
#[test]
#[cfg(feature = "failpoints")]
fn a_partition_killed_after_storing_a_document_whose_feedback_the_log_lost_sends_it_again() {
    let (tmp, config) = with_config();
    let one = single(tmp.path(), &config, 1);
    let nats = Nats::start(tmp.path(), 1);
    let d = OneShard::init(tmp.path(), &nats.url, &config, &["--partitions", "2"]);
    let last = d.submit(&corpus(tmp.path(), 1));
    let partition = |p: &str| {
        let mut c = d.cluster(&["aggregate", "--partition", p, "--until", &last, "--data"]);
        c.arg(&d.agg);
        c
    };
    let worker = d.cluster(&["worker", "--shard", "0", "--until", &last, "--image"]).arg(&d.image).spawn().unwrap();
    let first = partition("0").spawn().unwrap();
    // Partition 1 writes a checkpoint slot after each of its first five documents (and
    // says its position), then stops after #300, one of its documents, writing its book.
    for (until, every) in [("10", "0"), ("300", "30")] {
        let mut c = d.cluster(&["aggregate", "--partition", "1", "--until", until, "--checkpoint-secs", every]);
        let out = c.arg("--data").arg(&d.agg).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    // Its next document (#302): its feedback lost, the process killed once it is stored.
    let control = tmp.path().join("failpoints");
    std::fs::write(&control, "feedback.lost=error\npartition.after-store=abort\n").unwrap();
    let out = partition("1").env("TEXTORIGIN_FAILPOINTS", &control).output().unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && said.contains("failpoint partition.after-store: abort"), "{said}");
    let second = partition("1").stderr(std::process::Stdio::piped()).spawn().unwrap();
    let mut children = [worker, first, second];
    finish(&mut children, 300, "the deployment after partition 1's restart");
    assert_equal(&one, &d.outcome(), "a partition killed after a document whose feedback the log lost");
    // Its book, written to its store when it stopped, went on from #301 after the
    // kill: the restart read no place before it again.
    let mut said = String::new();
    std::io::Read::read_to_string(&mut children[2].stderr.take().unwrap(), &mut said).unwrap();
    assert!(said.contains("places read from #301"), "{said}");
    // `cluster status`: each partition done with its last document, partition 1 where
    // its oldest slot would restart it (partition 0 wrote none), and needing the whole
    // log as long as partition 0 has not said which store beside its own is partition
    // 0's.
    let out = d.cluster(&["status", "--json", "--interval", "0.1"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let rows = serde_json::from_slice::<Value>(&out.stdout).unwrap()["processes"].clone();
    let of = |name: &str| rows.as_array().unwrap().iter().find(|r| r["process"] == name).cloned().unwrap();
    for (p, whole_log) in [("agg0", false), ("agg1", true), ("w0", false)] {
        assert_eq!(of(p)["whole_log"], Value::Bool(whole_log), "{p}");
        assert_eq!(of(p)["lag"], 0, "{p}: {rows}");
    }
    assert_eq!(of("agg0")["checkpoint"], Value::Null, "{rows}");
    let slot = of("agg1")["checkpoint"].as_u64();
    assert!(slot.is_some_and(|s| s <= 10 && s % 2 == 0), "a slot after one of its first documents: {rows}");
    // `cluster trim` waits for the processes' first slots (the worker's, partition 0's).
    let out = d.cluster(&["trim", "--json"]).output().unwrap();
    let trimmed = serde_json::from_slice::<Value>(&out.stdout).unwrap();
    assert!(trimmed["waiting_for"].is_string() && trimmed["dropped"] == 0, "{trimmed}");
}

#[test]
#[cfg(feature = "failpoints")]
fn a_submission_cut_off_between_a_document_and_its_shingles_is_completed_by_the_next_and_none_admitted_twice() {
    let (tmp, config) = with_config();
    let whole = std::fs::read_to_string(fixture("gcc-sample.jsonl")).unwrap();
    let (first, rest) = whole.split_once('\n').unwrap();
    let (a, b) = (tmp.path().join("a.jsonl"), tmp.path().join("b.jsonl"));
    std::fs::write(&a, format!("{first}\n")).unwrap();
    std::fs::write(&b, rest).unwrap();
    let nats = Nats::start(tmp.path(), 1);
    let agg = tmp.path().join("agg");
    let cluster = |args: &[&str]| cluster_command(&nats.url, args);
    let out = cluster(&["init", "--shards", "2", "--prepared", "--config"])
        .arg(&config)
        .arg("--data")
        .arg(&agg)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // The first submission dies after its document, before the document's shingles.
    let control = tmp.path().join("failpoints");
    std::fs::write(&control, "submit.after-doc=abort\n").unwrap();
    let out = cluster(&["submit"]).arg(&a).env("TEXTORIGIN_FAILPOINTS", &control).output().unwrap();
    assert!(!out.status.success(), "the submission should have aborted");
    let submit = |args: &[&str], files: &[&Path]| {
        let out = cluster(&[&["submit", "--json"], args].concat()).args(files).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };
    let last = submit(&[], &[&b])["last"].as_u64().unwrap().to_string();
    // Both files again: every document was admitted before, document 1's key copied
    // from the document by the submission after the one cut off before the key.
    let again = submit(&[], &[&a, &b]);
    let total = whole.lines().count();
    assert_eq!((again["admitted"].as_u64(), again["before"].as_u64()), (Some(0), Some(total as u64)), "{again}");
    assert_eq!(again["last"].to_string(), last);
    // Every process must finish: a shard whose stream misses document 1 would wait.
    let images: Vec<PathBuf> = (0..2).map(|s| tmp.path().join(format!("shard-{s}.img"))).collect();
    let mut children: Vec<Child> = (0..2)
        .map(|s| {
            cluster(&["worker", "--shard", &s.to_string(), "--until", &last, "--image"])
                .arg(&images[s])
                .spawn()
                .unwrap()
        })
        .collect();
    children.push(cluster(&["aggregate", "--until", &last, "--data"]).arg(&agg).spawn().unwrap());
    finish(&mut children, 120, "the deployment (a shard missing shingles would wait)");
    // `cluster status`: every process done with the last document, none behind, none
    // moving now.
    let out = cluster(&["status", "--json", "--interval", "0.2"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let status: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(status["documents"].to_string(), last);
    let processes = status["processes"].as_array().unwrap();
    let names: Vec<&str> = processes.iter().map(|p| p["process"].as_str().unwrap()).collect();
    assert_eq!(names, ["w0", "w1", "agg"]);
    for p in processes {
        assert_eq!((p["done"].to_string(), p["lag"].as_u64(), p["rate"].as_f64()), (last.clone(), Some(0), Some(0.0)));
    }
    let text = String::from_utf8(cluster(&["status", "--interval", "0.1"]).output().unwrap().stdout).unwrap();
    assert!(text.contains("documents in the log") && text.contains("agg"), "{text}");
    let dir = tmp.path().join("single");
    let out =
        bin().arg("ingest").arg("--data").arg(&dir).arg("--config").arg(&config).arg(&a).arg(&b).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(export_values(&ok(&agg, &["export"])), export_values(&ok(&dir, &["export"])));
    let union: Value =
        serde_json::from_slice(&cluster(&["union", "--json"]).args(&images).output().unwrap().stdout).unwrap();
    assert_eq!(union["table_digest"], json(&dir, &["stats", "--json"])["table_digest"]);
    // `--force` admits them again, as `ingest --force` stores them again.
    let forced = submit(&["--force"], &[&a]);
    assert_eq!((forced["admitted"].as_u64(), forced["last"].as_u64()), (Some(1), Some(total as u64 + 1)), "{forced}");
}

#[test]
fn the_aggregators_table_file_holds_no_buckets_and_init_refuses_a_directory_with_documents() {
    let tmp = tempfile::tempdir().unwrap();
    let nats = Nats::start(tmp.path(), 1);
    let init = |dir: &Path| {
        bin()
            .args(["cluster", "init", "--shards", "2", "--data"])
            .arg(dir)
            .env("TEXTORIGIN_NATS", &nats.url)
            .output()
            .unwrap()
    };
    let agg = tmp.path().join("agg");
    let out = init(&agg);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // The default configuration: a 256 MiB table, all of it the workers'.
    let stats = json(&agg, &["stats", "--json"]);
    let index = stats["indexes"]["bytes"].as_u64().unwrap();
    let len = std::fs::metadata(agg.join("table")).unwrap().len();
    assert!(len < index + (1 << 20), "the aggregator's table file is {len} bytes, its index {index}");
    // `stats` says whose the table is, rather than show the empty one of its file.
    assert_eq!(stats["sharded"], true);
    let text = ok(&agg, &["stats"]);
    assert!(text.contains("the deployment's shard workers'") && !text.contains("fill:"), "{text}");
    // An init cut off before it wrote the file `cluster`: the store still says so.
    std::fs::remove_file(agg.join("cluster")).unwrap();
    let out = bin().arg("ingest").arg("--data").arg(&agg).arg(fixture("gcc-sample.jsonl")).output().unwrap();
    assert!(
        !out.status.success() && String::from_utf8_lossy(&out.stderr).contains("sharded deployment's aggregator"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let single = tmp.path().join("single");
    ok(&single, &["ingest", &fixture("gcc-sample.jsonl").to_string_lossy()]);
    assert!(json(&single, &["stats", "--json"]).get("sharded").is_none());
    assert!(ok(&single, &["stats"]).contains("fill:"));
    let out = init(&single);
    assert!(
        !out.status.success() && String::from_utf8_lossy(&out.stderr).contains("holds documents"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_deployment_keeps_numeric_ids_and_the_date_field_as_one_node_does() {
    let (tmp, config) = with_config();
    let input = tmp.path().join("numbers.jsonl");
    let lines = [
        r#"{"id": 12, "date": "2021-03-04", "text": "The council approved the new bridge over the river on Monday."}"#,
        r#"{"id": 13, "date": "2021-03-05", "text": "Engineers expect the work on the new bridge over the river to take two years."}"#,
        r#"{"id": "x", "published_at": "2021-03-06", "text": "A bakery on Main Street reopened after the flood with a new oven."}"#,
    ];
    std::fs::write(&input, lines.join("\n") + "\n").unwrap();
    let (got, one) = corpora(tmp.path(), &config, &input);
    assert_eq!(got, one);
    let first: Value = serde_json::from_str(got.lines().next().unwrap()).unwrap();
    assert_eq!((first["id"].clone(), first["date"].as_str()), (serde_json::json!(12), Some("2021-03-04")));
    let third: Value = serde_json::from_str(got.lines().nth(2).unwrap()).unwrap();
    assert_eq!((third["id"].as_str(), third["published_at"].as_str()), (Some("x"), Some("2021-03-06")));
}

/// A deployment reads its inputs' HTML as its configuration says (`html = "all"`: the
/// whole page), as one node does: `cluster submit` read every page for its main
/// content whatever the setting.
#[test]
fn a_deployment_reads_html_as_its_configuration_says() {
    let tmp = tempfile::tempdir().unwrap();
    let config = tmp.path().join("config.toml");
    std::fs::write(&config, format!("{CONFIG}html = \"all\"\n")).unwrap();
    let (got, one) = corpora(tmp.path(), &config, &fixture("site"));
    assert!(got.contains("Report a Bug"), "the whole page, its footer too");
    assert_eq!(got, one);
}

/// `export --format corpus` of `input` through a deployment of one shard and through
/// `ingest` on one node, both with `config`: (the deployment's, the node's).
fn corpora(tmp: &Path, config: &Path, input: &Path) -> (String, String) {
    let nats = Nats::start(tmp, 1);
    let d = OneShard::init(tmp, &nats.url, config, &[]);
    let last = d.submit(&[input.to_path_buf()]);
    finish(&mut d.run(&last, "0"), 120, "the deployment");
    let dir = tmp.join("single");
    let out = bin().arg("ingest").arg("--data").arg(&dir).arg("--config").arg(config).arg(input).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let corpus = |dir: &Path| ok(dir, &["export", "--format", "corpus"]);
    (corpus(&d.agg), corpus(&dir))
}

/// Regression (issue 81): four forged records on `txo.positions.*` claiming a
/// checkpoint no process had reached made the routine `cluster trim` drop documents the
/// processes still needed. A position is believed only as far as its process has gone,
/// and a worker's only if it is of this deployment.
#[test]
fn a_position_its_process_did_not_write_trims_nothing() {
    use textorigin_cluster::wire::{decode, encode, Position};
    let (tmp, config) = with_config();
    let nats = Nats::start(tmp.path(), 1);
    let d = OneShard::init(tmp.path(), &nats.url, &config, &[]);
    let last = d.submit(&[fixture("gcc-sample.jsonl")]);
    finish(&mut d.run(&last, "0"), 120, "the deployment");
    let trim = || {
        let out = d.cluster(&["trim", "--json"]).output().unwrap();
        (out.status.success(), serde_json::from_slice::<Value>(&out.stdout).unwrap())
    };
    let (trimmed, said) = trim();
    assert!(trimmed && said["refused"].is_null() && said["kept_from"].as_u64() > Some(1), "{said}");
    let log = textorigin_cluster::log::Log::connect(&nats.url, 1).unwrap();
    let real = log.latest("TXO_POSITIONS", "txo.positions.w0").unwrap().expect("w0's position");
    let position: Position = decode(&real, "position").unwrap();
    let beyond = last.parse::<u64>().unwrap() + 300;
    for forged in [Position { seq: beyond, ..position }, Position { identity: position.identity ^ 1, ..position }] {
        log.put_latest("txo.positions.w0", &encode(&forged)).unwrap();
        let (trimmed, said) = trim();
        assert!(!trimmed && said["dropped"] == 0 && said["refused"].is_string(), "{forged:?}: {said}");
    }
    let out = d.cluster(&["trim"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("nothing trimmed: w0's position is of another deployment"), "{text}");
    log.put_latest("txo.positions.w0", &real).unwrap();
    assert!(trim().0, "the real position back");
}

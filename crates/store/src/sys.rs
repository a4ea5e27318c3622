//! The only `unsafe` code of the workspace, each use with its argument
//! (`docs/ARCHITECTURE.md`, Safety): mapping the table file, finding and punching its
//! holes, the prefetch hint, the SIGPIPE disposition of the command line, standard
//! error sent to /dev/null after a hang-up, the clock tick of the kernel's CPU accounting,
//! the free space of a file system, and the daemon's cap on malloc arenas.
#![allow(unsafe_code)]

use std::fs::File;
use std::path::Path;

use memmap2::{Mmap, MmapMut};

use crate::storage::dirty::Dirty;

/// A table file's bytes: a read-only mapping of the file (readers), or the writer's
/// copy in process memory.
///
/// The writer keeps the table in anonymous memory (huge pages where the kernel gives
/// them) filled from the file when it opens, and writes it back with `pwrite` when it
/// flushes. A shared mapping of the file cost two page faults and a file-system call
/// for the first write to every 4 KiB page (ext4's `page_mkwrite`): with the buckets
/// visited at random that was most of the table's time (measured on 3,000 mail
/// messages: the table stage 0.72 s, 0.05 s in memory). Recovery never reads the table
/// file of a writer that died (it restores a checkpoint slot), so the file only has to
/// be right when the writer flushes: at a checkpoint and when it closes. Only what
/// changed is written back ([`Dirty`]); a new table file is sparse, so its disk use and
/// the cost of reading it back follow what was written to it.
pub enum Map {
    Ro(Mmap),
    Rw(Owned),
    /// A reader's private copy: written in memory, never back to the file (`query`
    /// applies the documents a checkpoint lacks to it).
    Private(MmapMut),
}

/// The writer's copy of a table file and the file it goes back to.
pub struct Owned {
    mem: MmapMut,
    file: File,
    /// The chunks changed since the file, and each checkpoint slot, were last written.
    dirty: Dirty,
}

impl Map {
    pub fn read_only(file: &File) -> std::io::Result<Map> {
        // SAFETY: the file is written only by the single writer (guarded by the data
        // directory's lock), with `pwrite`; a reader may see a table in motion, never
        // memory outside the fixed-size file.
        Ok(Map::Ro(unsafe { Mmap::map(file)? }))
    }

    /// A private, writable copy of `file` that shares its pages until they are written
    /// (`MAP_PRIVATE`): what a reader changes stays in its memory.
    pub fn private(file: &File) -> std::io::Result<Map> {
        // SAFETY: as `read_only`; the pages this process writes are its own copies.
        Ok(Map::Private(unsafe { memmap2::MmapOptions::new().map_copy(file)? }))
    }

    /// The writer's copy of `file`: its first `header` bytes always read, the rest only
    /// when `zero_body` is false (a table that never applied a document is zero there),
    /// and then only where the file has data (its holes are zero in memory too, pages
    /// never touched). Huge pages are asked for the first `huge` bytes only (the
    /// buckets, whose part in use is a prefix): a region written at random (the derived
    /// indexes) would take 2 MiB of memory for every page it touches.
    pub fn read_write(
        file: &File,
        header: usize,
        huge: usize,
        zero_body: impl FnOnce(&[u8]) -> bool,
    ) -> std::io::Result<Map> {
        use std::os::unix::fs::FileExt;
        let len = usize::try_from(file.metadata()?.len()).map_err(std::io::Error::other)?;
        let mut mem = MmapMut::map_anon(len)?;
        // Best effort: without transparent huge pages the copy works the same, slower.
        let _ = mem.advise_range(memmap2::Advice::HugePage, 0, huge.min(len));
        let header = header.min(len);
        file.read_exact_at(&mut mem[..header], 0)?;
        let mut loaded = std::iter::once(0..header).collect::<Vec<_>>();
        if !zero_body(&mem[..header]) {
            for r in data_ranges(file, header, len)? {
                file.read_exact_at(&mut mem[r.clone()], r.start as u64)?;
                loaded.push(r);
            }
        }
        Ok(Map::Rw(Owned { mem, file: file.try_clone()?, dirty: Dirty::new(len, &loaded) }))
    }

    pub fn bytes(&self) -> &[u8] {
        match self {
            Map::Ro(m) => m,
            Map::Rw(o) => &o.mem,
            Map::Private(m) => m,
        }
    }

    /// The bytes in `r`, for writing: marks them changed.
    #[inline]
    pub fn range_mut(&mut self, r: std::ops::Range<usize>) -> Option<&mut [u8]> {
        match self {
            Map::Ro(_) => None,
            Map::Rw(o) => {
                o.dirty.mark(r.clone());
                Some(&mut o.mem[r])
            }
            Map::Private(m) => Some(&mut m[r]),
        }
    }

    /// The first `n` bytes (the header), for writing.
    pub fn header_mut(&mut self, n: usize) -> Option<&mut [u8]> {
        self.range_mut(0..n)
    }

    /// The writer's copy with what changed in it (for a checkpoint), None for a reader.
    pub fn tracked(&mut self) -> Option<(&[u8], &mut Dirty)> {
        match self {
            Map::Ro(_) | Map::Private(_) => None,
            Map::Rw(o) => Some((&o.mem, &mut o.dirty)),
        }
    }

    /// Hints the CPU to fetch the cache line of byte `at` (ignored out of bounds).
    #[inline]
    pub fn prefetch(&self, at: usize) {
        #[cfg(target_arch = "x86_64")]
        {
            let b = self.bytes();
            if at < b.len() {
                // SAFETY: prefetch is a hint that never faults, and the pointer is in
                // bounds of the mapping (checked above).
                unsafe {
                    use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
                    _mm_prefetch::<_MM_HINT_T0>(b.as_ptr().add(at).cast());
                }
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = at;
    }

    /// Writes the writer's copy back to the file (the first `header` bytes, and the
    /// chunks changed since the last write-back) and syncs it (fdatasync).
    pub fn flush(&mut self, header: usize) -> std::io::Result<()> {
        match self {
            Map::Ro(_) | Map::Private(_) => Ok(()),
            Map::Rw(o) => {
                use std::os::unix::fs::FileExt;
                o.dirty.mark(0..header.min(o.mem.len()));
                for (i, r) in o.dirty.file_ranges().into_iter().enumerate() {
                    if i > 0 {
                        crate::failpoint::hit("table.flush.between-writes")?;
                    }
                    o.file.write_all_at(&o.mem[r.clone()], r.start as u64)?;
                }
                o.file.sync_data()?;
                o.dirty.file_written();
                Ok(())
            }
        }
    }

    /// Writes byte ranges (counters) back to the file, unsynced, where readers of the
    /// file see them.
    pub fn publish(&self, ranges: &[std::ops::Range<usize>]) -> std::io::Result<()> {
        match self {
            Map::Ro(_) | Map::Private(_) => Ok(()),
            Map::Rw(o) => {
                use std::os::unix::fs::FileExt;
                ranges.iter().try_for_each(|r| o.file.write_all_at(&o.mem[r.clone()], r.start as u64))
            }
        }
    }
}

/// The byte ranges of `file` within `from..to` that hold data (not holes), by
/// `lseek(SEEK_DATA/SEEK_HOLE)`; the whole range on a file system without holes.
pub fn data_ranges(file: &File, from: usize, to: usize) -> std::io::Result<Vec<std::ops::Range<usize>>> {
    use std::os::fd::AsRawFd;
    let seek = |at: usize, whence: libc::c_int| -> std::io::Result<Option<usize>> {
        let at = libc::off_t::try_from(at).map_err(std::io::Error::other)?;
        // SAFETY: plain syscall on an owned, open descriptor; it moves only the file
        // offset, which no reader of this descriptor relies on (reads are positioned).
        let r = unsafe { libc::lseek(file.as_raw_fd(), at, whence) };
        if r >= 0 {
            return Ok(Some(r as usize));
        }
        match std::io::Error::last_os_error() {
            e if e.raw_os_error() == Some(libc::ENXIO) => Ok(None), // no data after `at`
            e => Err(e),
        }
    };
    let mut out = Vec::new();
    let mut at = from;
    while at < to {
        let start = match seek(at, libc::SEEK_DATA) {
            Ok(Some(s)) => s,
            Ok(None) => break,
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) && out.is_empty() => {
                return Ok(std::iter::once(from..to).collect())
            }
            Err(e) => return Err(e),
        };
        if start >= to {
            break;
        }
        let end = seek(start, libc::SEEK_HOLE)?.unwrap_or(to).min(to);
        out.push(start..end);
        at = end;
    }
    Ok(out)
}

/// Makes `range` of `file` a hole (reads give zeros; no blocks held), or writes zeros
/// there on a file system that cannot punch holes.
pub fn punch_hole(file: &File, range: std::ops::Range<u64>) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::FileExt;
    let off = |x: u64| libc::off_t::try_from(x).map_err(std::io::Error::other);
    let (at, len) = (off(range.start)?, off(range.end - range.start)?);
    // SAFETY: plain syscall on an owned, open descriptor.
    let rc =
        unsafe { libc::fallocate(file.as_raw_fd(), libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE, at, len) };
    if rc == 0 {
        return Ok(());
    }
    match std::io::Error::last_os_error() {
        e if matches!(e.raw_os_error(), Some(libc::EOPNOTSUPP) | Some(libc::ENOSYS)) => {
            file.write_all_at(&vec![0; (range.end - range.start) as usize], range.start)
        }
        e => Err(e),
    }
}

/// Bytes free for an unprivileged writer on the file system holding `path`.
pub fn free_bytes(path: &Path) -> std::io::Result<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).map_err(std::io::Error::other)?;
    let mut st = std::mem::MaybeUninit::<libc::statvfs>::zeroed();
    // SAFETY: `c` is a NUL-terminated path that lives through the call, and `st` points
    // to memory of the size statvfs(3) writes, which it fills when it returns 0.
    if unsafe { libc::statvfs(c.as_ptr(), st.as_mut_ptr()) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: statvfs returned 0, so it wrote the whole structure.
    let st = unsafe { st.assume_init() };
    Ok(st.f_bavail.saturating_mul(st.f_frsize))
}

/// Caps glibc's malloc arenas at `n`, unless `MALLOC_ARENA_MAX` says otherwise: by
/// default glibc makes up to 8 arenas a core as threads allocate, and the HTTP server's
/// thread per connection left each holding freed memory (16 clients' submissions and
/// queries for 60 s: 419 MB after the load against 209 MB with 2 arenas;
/// `docs/PERFORMANCE.md`). Call before any thread starts; false where it does nothing.
pub fn cap_malloc_arenas(n: usize) -> bool {
    if std::env::var_os("MALLOC_ARENA_MAX").is_some() {
        return false;
    }
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let n = libc::c_int::try_from(n.max(1)).unwrap_or(libc::c_int::MAX);
        // SAFETY: mallopt(3) takes two integers and touches no memory of ours; before
        // other threads exist it races with no allocation.
        unsafe { libc::mallopt(libc::M_ARENA_MAX, n) == 1 }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        let _ = n;
        false
    }
}

/// Restores the default SIGPIPE disposition, so that a command whose reader goes away
/// (`textorigin list | head`) dies quietly instead of failing on a write error.
/// Call before any thread starts.
pub fn default_sigpipe() {
    // SAFETY: resetting a signal disposition to its default is async-signal-safe and,
    // before other threads exist, races with nothing.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// Ignores SIGPIPE, so that a write to a closed pipe (a logger that went away) is an
/// error the writer handles rather than the end of the process: for `serve`, which
/// must outlive the reader of its log. Call before any thread starts.
pub fn ignore_sigpipe() {
    // SAFETY: as for `default_sigpipe`: a disposition set before other threads exist.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
}

/// Points standard error at `/dev/null`: after SIGHUP (its terminal closed) a write to
/// it fails with EIO, and `eprintln!` would panic in the middle of a run that is
/// stopping cleanly.
pub fn stderr_to_null() -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let null = std::fs::OpenOptions::new().write(true).open("/dev/null")?;
    // SAFETY: dup2(2) takes two descriptors and touches no memory of ours; `null` is
    // open for the call, and descriptor 2 is replaced atomically (a write racing with
    // it goes to the terminal or to /dev/null, never to another file).
    if unsafe { libc::dup2(null.as_raw_fd(), 2) } == 2 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Asks a child process to stop (SIGTERM), as a service manager would.
pub fn terminate(child: &std::process::Child) -> std::io::Result<()> {
    let pid = libc::pid_t::try_from(child.id()).map_err(|_| std::io::Error::other("a pid out of range"))?;
    // SAFETY: kill(2) takes plain integers and touches no memory of ours; the pid is
    // that of a child we have not waited for, so it cannot name another process.
    if unsafe { libc::kill(pid, libc::SIGTERM) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// This process's CPU seconds so far, user and system, every thread's (dead ones
/// included), as the kernel accounts them: `/proc/self/stat`'s `utime` and `stime`,
/// in clock ticks. None where there is no such file (not Linux).
pub fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The command name, in parentheses, may hold spaces: the fields after it from the
    // third (`state`) on; `utime` and `stime` are the 14th and 15th.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    // SAFETY: sysconf reads a constant of the system; no memory is passed.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    (hz > 0).then(|| ticks as f64 / hz as f64)
}

#[cfg(test)]
mod tests {
    #[test]
    fn cpu_seconds_count_this_process_work() {
        let before = super::cpu_seconds().expect("Linux accounts CPU in /proc");
        let started = std::time::Instant::now();
        let mut x = 0u64;
        while started.elapsed() < std::time::Duration::from_millis(300) {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
        }
        let after = super::cpu_seconds().unwrap();
        // 0.3 s busy on this thread; the clock tick (1/100 s) and a busy machine allow less.
        assert!(after - before >= 0.1, "{before} -> {after} ({x})");
    }
}

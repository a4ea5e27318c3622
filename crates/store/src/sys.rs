//! The only `unsafe` code of the workspace, each use with its argument
//! (`docs/ARCHITECTURE.md`, Safety): mapping the table file, preallocating it, the
//! prefetch hint, and the SIGPIPE disposition of the command line.
#![allow(unsafe_code)]

use std::fs::File;

use memmap2::{Mmap, MmapMut};

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
/// be right when the writer flushes: at a checkpoint and when it closes.
pub enum Map {
    Ro(Mmap),
    Rw(Owned),
}

/// The writer's copy of a table file and the file it goes back to.
pub struct Owned {
    mem: MmapMut,
    file: File,
    /// Bytes after the header were changed since the last write-back.
    dirty: bool,
}

impl Map {
    pub fn read_only(file: &File) -> std::io::Result<Map> {
        // SAFETY: the file is written only by the single writer (guarded by the data
        // directory's lock), with `pwrite`; a reader may see a table in motion, never
        // memory outside the fixed-size file.
        Ok(Map::Ro(unsafe { Mmap::map(file)? }))
    }

    /// The writer's copy of `file`: its first `header` bytes always read, the rest only
    /// when `zero_body` is false (a table that never applied a document is zero there).
    pub fn read_write(file: &File, header: usize, zero_body: impl FnOnce(&[u8]) -> bool) -> std::io::Result<Map> {
        use std::os::unix::fs::FileExt;
        let len = usize::try_from(file.metadata()?.len()).map_err(std::io::Error::other)?;
        let mut mem = MmapMut::map_anon(len)?;
        // Best effort: without transparent huge pages the copy works the same, slower.
        let _ = mem.advise(memmap2::Advice::HugePage);
        let header = header.min(len);
        file.read_exact_at(&mut mem[..header], 0)?;
        if !zero_body(&mem[..header]) {
            file.read_exact_at(&mut mem[header..], header as u64)?;
        }
        Ok(Map::Rw(Owned { mem, file: file.try_clone()?, dirty: false }))
    }

    pub fn bytes(&self) -> &[u8] {
        match self {
            Map::Ro(m) => m,
            Map::Rw(o) => &o.mem,
        }
    }

    /// All the bytes, for writing: marks the body changed.
    pub fn bytes_mut(&mut self) -> Option<&mut [u8]> {
        match self {
            Map::Ro(_) => None,
            Map::Rw(o) => {
                o.dirty = true;
                Some(&mut o.mem)
            }
        }
    }

    /// The first `n` bytes (the header), for writing.
    pub fn header_mut(&mut self, n: usize) -> Option<&mut [u8]> {
        match self {
            Map::Ro(_) => None,
            Map::Rw(o) => Some(&mut o.mem[..n]),
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
    /// rest when it changed) and syncs it (fdatasync).
    pub fn flush(&mut self, header: usize) -> std::io::Result<()> {
        match self {
            Map::Ro(_) => Ok(()),
            Map::Rw(o) => {
                use std::os::unix::fs::FileExt;
                let n = if o.dirty { o.mem.len() } else { header.min(o.mem.len()) };
                o.file.write_all_at(&o.mem[..n], 0)?;
                o.file.sync_data()?;
                o.dirty = false;
                Ok(())
            }
        }
    }

    /// Writes byte ranges (counters) back to the file, unsynced, where readers of the
    /// file see them.
    pub fn publish(&self, ranges: &[std::ops::Range<usize>]) -> std::io::Result<()> {
        match self {
            Map::Ro(_) => Ok(()),
            Map::Rw(o) => {
                use std::os::unix::fs::FileExt;
                ranges.iter().try_for_each(|r| o.file.write_all_at(&o.mem[r.clone()], r.start as u64))
            }
        }
    }
}

/// Reserves the file's blocks so that writes through the mapping cannot hit a full disk
/// (a sparse mapped file turns a full disk into SIGBUS).
pub fn preallocate(file: &File, len: u64) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let len = libc::off_t::try_from(len).map_err(|_| std::io::Error::other("table size too large"))?;
    // SAFETY: plain syscall on an owned, open descriptor.
    let rc = unsafe { libc::posix_fallocate(file.as_raw_fd(), 0, len) };
    match rc {
        0 => Ok(()),
        libc::EOPNOTSUPP | libc::EINVAL => file.set_len(len as u64), // filesystems without fallocate
        e => Err(std::io::Error::from_raw_os_error(e)),
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

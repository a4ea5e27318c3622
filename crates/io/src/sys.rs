//! The only `unsafe` code of the workspace, each use with its argument
//! (`docs/ARCHITECTURE.md`, Safety): mapping the table file, preallocating it, the
//! prefetch hint, and the SIGPIPE disposition of the command line.
#![allow(unsafe_code)]

use std::fs::File;

use memmap2::{Mmap, MmapMut};

/// A mapping of a whole file, read-only or read-write.
pub enum Map {
    Ro(Mmap),
    Rw(MmapMut),
}

impl Map {
    pub fn read_only(file: &File) -> std::io::Result<Map> {
        // SAFETY: the file is only written through a mapping of this process or of
        // the single writer (guarded by the data directory's lock); a reader may see
        // a table in motion, never memory outside the fixed-size file.
        Ok(Map::Ro(unsafe { Mmap::map(file)? }))
    }

    pub fn read_write(file: &File) -> std::io::Result<Map> {
        // SAFETY: as above; the writer holds the data directory's lock, and the file
        // is preallocated and never resized while mapped.
        let m = unsafe { MmapMut::map_mut(file)? };
        // Buckets are visited at random: reading ahead around a fault only wastes work.
        m.advise(memmap2::Advice::Random)?;
        Ok(Map::Rw(m))
    }

    pub fn bytes(&self) -> &[u8] {
        match self {
            Map::Ro(m) => m,
            Map::Rw(m) => m,
        }
    }

    pub fn bytes_mut(&mut self) -> Option<&mut [u8]> {
        match self {
            Map::Ro(_) => None,
            Map::Rw(m) => Some(m),
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

    pub fn flush(&self) -> std::io::Result<()> {
        match self {
            Map::Ro(_) => Ok(()),
            Map::Rw(m) => m.flush(),
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

//! Where an export writes: a file or standard output, gzip-compressed or not.

use std::io::Write;

use anyhow::Result;

/// The output, gzip-compressed or not; [`Out::finish`] ends a gzip stream.
pub(crate) enum Out {
    Plain(std::io::BufWriter<Box<dyn Write>>),
    Gzip(flate2::write::GzEncoder<std::io::BufWriter<Box<dyn Write>>>),
}

impl Out {
    pub(crate) fn new(to: Box<dyn Write>, gzip: bool) -> Out {
        let buffered = std::io::BufWriter::new(to);
        match gzip {
            true => Out::Gzip(flate2::write::GzEncoder::new(buffered, flate2::Compression::default())),
            false => Out::Plain(buffered),
        }
    }

    pub(crate) fn finish(self) -> Result<()> {
        let mut inner = match self {
            Out::Plain(w) => w,
            Out::Gzip(g) => g.finish()?,
        };
        Ok(inner.flush()?)
    }
}

impl Write for Out {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Out::Plain(w) => w.write(buf),
            Out::Gzip(g) => g.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Out::Plain(w) => w.flush(),
            Out::Gzip(g) => g.flush(),
        }
    }
}

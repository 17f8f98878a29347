//! The byte streams the codec reads and writes: `std::io`'s with `std`; without it, a minimal
//! equivalent over byte slices and vectors, which cannot fail, so that `from_bytes` and
//! `to_bytes` run the same decoders and encoders in both builds.

#[cfg(feature = "std")]
pub(crate) use std::io::{Error, Read, Result, Write};

/// Whether a read should simply be retried.
#[cfg(feature = "std")]
pub(crate) fn interrupted(e: &Error) -> bool {
    e.kind() == std::io::ErrorKind::Interrupted
}

#[cfg(not(feature = "std"))]
pub(crate) use bare::{Read, Result, Write, interrupted};

#[cfg(not(feature = "std"))]
mod bare {
    use alloc::vec::Vec;

    /// No stream of these can fail.
    #[derive(Debug)]
    pub(crate) enum Error {}

    pub(crate) type Result<T> = core::result::Result<T, Error>;

    pub(crate) fn interrupted(e: &Error) -> bool {
        match *e {}
    }

    /// `std::io::Read::read`, for the codec's needs.
    pub(crate) trait Read {
        fn read(&mut self, buf: &mut [u8]) -> Result<usize>;

        /// This stream, then `next`.
        fn chain<R: Read>(self, next: R) -> Chain<Self, R>
        where
            Self: Sized,
        {
            Chain {
                first: self,
                second: next,
                first_done: false,
            }
        }
    }

    /// `std::io::Chain`: one stream, then another.
    pub(crate) struct Chain<A, B> {
        first: A,
        second: B,
        first_done: bool,
    }

    impl<A: Read, B: Read> Read for Chain<A, B> {
        fn read(&mut self, buf: &mut [u8]) -> Result<usize> {
            if !self.first_done {
                let n = self.first.read(buf)?;
                if n > 0 || buf.is_empty() {
                    return Ok(n);
                }
                self.first_done = true;
            }
            self.second.read(buf)
        }
    }

    /// `std::io::Write::write_all`, for the codec's needs.
    pub(crate) trait Write {
        fn write_all(&mut self, buf: &[u8]) -> Result<()>;
    }

    impl Read for &[u8] {
        fn read(&mut self, buf: &mut [u8]) -> Result<usize> {
            let n = buf.len().min(self.len());
            let (head, tail) = self.split_at(n);
            buf[..n].copy_from_slice(head);
            *self = tail;
            Ok(n)
        }
    }

    impl<R: Read + ?Sized> Read for &mut R {
        fn read(&mut self, buf: &mut [u8]) -> Result<usize> {
            (**self).read(buf)
        }
    }

    impl Write for Vec<u8> {
        fn write_all(&mut self, buf: &[u8]) -> Result<()> {
            self.extend_from_slice(buf);
            Ok(())
        }
    }

    impl<W: Write + ?Sized> Write for &mut W {
        fn write_all(&mut self, buf: &[u8]) -> Result<()> {
            (**self).write_all(buf)
        }
    }

    impl From<Error> for crate::error::Error {
        fn from(e: Error) -> crate::error::Error {
            match e {}
        }
    }
}

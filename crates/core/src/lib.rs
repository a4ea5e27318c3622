//! textorigin's core: the algorithms, pure.
//!
//! Implements *Detecting the Origin of Text Segments Efficiently* (Abdel-Hamid,
//! Behzadi, Christoph, Henzinger, WWW 2009) and the papers beside it
//! (`../shared/papers/`): documents are tokenized ([`text`]), fingerprinted ([`rabin`]),
//! a subset of their k-shingles is selected ([`select`]) and sent to the bucketed table
//! ([`table`], over any byte memory); the hits are turned into an origin for every
//! selected shingle ([`estimate`]) and into per-document results ([`engine`]), whose
//! copied blocks are aligned against their origins' texts to exact edges ([`align`]).
//! Near-duplicate sketches and verdicts are in [`neardup`], qSign quotation signatures,
//! probes and scoring in [`quote`], the bounded derived indexes both search (document
//! frequencies, signatures, near-duplicate keys) in [`index`]; [`reference`](mod@reference) is the
//! brute-force oracle; [`config`] the typed configuration; [`shard`] splits the table
//! into bucket ranges whose union is the single-node table (scale-out); [`testdata`]
//! is the one seeded generator of generated test data.
//!
//! **Architecture Invariant: the core is pure.** It depends on no file system, clock,
//! RocksDB or memory map (Cargo enforces it: see `Cargo.toml`), uses only seeded
//! randomness and no `unsafe`. The same inputs give the same bytes on every machine.

#![forbid(unsafe_code)]

pub mod align;
pub mod config;
pub mod engine;
pub mod estimate;
pub mod hash;
pub mod index;
pub mod locate;
pub mod memory;
pub mod neardup;
pub mod quote;
pub mod rabin;
pub mod reference;
pub mod select;
pub mod settings;
pub mod shard;
pub mod spans;
pub mod table;
pub mod terms;
pub mod testdata;
pub mod text;

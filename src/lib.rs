//! textorigin: tells, for every document that arrives, where each piece of its text
//! came from.
//!
//! The library implements *Detecting the Origin of Text Segments Efficiently*
//! (Abdel-Hamid, Behzadi, Christoph, Henzinger, WWW 2009): documents are tokenized
//! ([`text`]), fingerprinted ([`rabin`]), a subset of their k-shingles is selected
//! ([`select`]) and sent to a fixed-size bucketed hash table in a memory-mapped file
//! ([`table`]); the hits are turned into an origin for every selected shingle
//! ([`estimate`]) and into per-document results ([`engine`]). Documents, texts and
//! results live in RocksDB ([`store`]); [`datadir`] keeps the two consistent.
//! [`reference`] is the brute-force oracle the engine is tested against.
//! See `docs/ARCHITECTURE.md` for the map.

pub mod bench;
pub mod checkpoint;
pub mod config;
pub mod daemon;
pub mod daemonbench;
pub mod datadir;
pub mod engine;
pub mod estimate;
pub mod eval;
pub mod failpoint;
pub mod html;
pub mod input;
pub mod inspect;
pub mod ndeval;
pub mod neardup;
pub mod qeval;
pub mod quote;
pub mod rabin;
pub mod reference;
pub mod select;
pub mod store;
pub mod table;
pub mod text;

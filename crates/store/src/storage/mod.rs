//! Storage: the table file and its checkpoints, the RocksDB store, the data directory,
//! and where its table's phases run (its own table, or a sharded deployment's).

pub mod checkpoint;
pub mod datadir;
pub mod dirty;
pub mod migrations;
pub mod recompute;
pub mod search;
pub mod stage;
pub mod store;
pub mod table_file;

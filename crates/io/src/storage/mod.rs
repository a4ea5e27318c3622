//! Storage: the table file and its checkpoints, the RocksDB store, the data directory.

pub mod checkpoint;
pub mod datadir;
pub mod store;
pub mod table_file;

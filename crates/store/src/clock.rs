//! The wall clock, read in one place: the time since the Unix epoch that records carry
//! (arrival times, failure and status times, the made-at of a backup) and that names
//! temporary files and new identities. A clock set before the epoch reads as the epoch.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The time since the Unix epoch (zero for a clock set before it).
pub fn since_epoch() -> Duration {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default()
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    since_epoch().as_millis() as u64
}

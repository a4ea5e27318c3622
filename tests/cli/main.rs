//! Integration tests: the real `textorigin` binary on real files in temporary data
//! directories, one module per concern (ripgrep's layout: one test binary, one helper
//! module). Failpoint tests need `--features failpoints` (scripts/test.sh sets it).

mod util;

mod attacks;
mod backup;
mod browser;
mod cluster;
mod compare;
mod daemon;
mod damage;
mod dates;
mod density;
mod engine;
mod exact;
mod faults;
mod features;
mod golden;
mod hostile;
mod html;
mod http;
mod inputs;
mod languages;
mod neardups;
mod outputs;
mod quotes;
mod readme;
mod service;
mod store;
mod web;

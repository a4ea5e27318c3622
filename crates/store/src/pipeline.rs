//! Ordered parallel work: a producer thread yields inputs, worker threads (`prep-N`)
//! transform them, and the calling thread consumes the results strictly in input
//! order. Bounded queues give backpressure: at most a few inputs per worker are in
//! flight, so memory stays bounded whatever the input's length.
//!
//! Batch `ingest` prepares documents this way (tokens, fingerprints, selection, sketch,
//! sentences on the workers; the table and the store on the calling thread), so
//! preparation overlaps with applying and both cores work; recovery prepares the
//! documents it replays the same way (stored text, tokens, selection, index additions).

use std::collections::BTreeMap;

/// Inputs in flight per worker.
const PER_WORKER: usize = 8;

/// Worker threads for the daemon's preparation and recovery: one a core, 1 to 8.
pub fn worker_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, 8)
}

/// A worker panicked: the results after its input are missing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("a preparation thread died")]
pub struct WorkerDied;

/// Runs `work` on `threads` workers (each with its own clone of `state`) over
/// `inputs`, and `consume` on the calling thread with the results in input order.
/// `consume` returns false to stop early; the producer and the workers then stop too.
/// A worker (or the reader, taking `inputs`) that panics stops the pipeline: consumption stops soon after (some results
/// before the failed input may not be consumed) and the call returns [`WorkerDied`]:
/// never a hang, never a missing result taken for the end of the input.
pub fn ordered_map<T, U, S>(
    threads: usize,
    state: &S,
    inputs: impl Iterator<Item = T> + Send,
    work: impl Fn(&mut S, T) -> U + Sync,
    mut consume: impl FnMut(U) -> bool,
) -> Result<(), WorkerDied>
where
    T: Send,
    U: Send,
    S: Clone + Send,
{
    let threads = threads.max(1);
    let died = std::sync::atomic::AtomicBool::new(false);
    let (job_tx, job_rx) = crossbeam_channel::bounded::<(usize, T)>(threads * PER_WORKER);
    let (out_tx, out_rx) = crossbeam_channel::bounded::<(usize, U)>(threads * PER_WORKER);
    std::thread::scope(|scope| {
        let died_reading = &died;
        std::thread::Builder::new()
            .name("read".into())
            .spawn_scoped(scope, move || {
                let read = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    for job in inputs.enumerate() {
                        if job_tx.send(job).is_err() {
                            break; // the workers are gone: stop reading
                        }
                    }
                }));
                if read.is_err() {
                    // Reported by the panic hook; the inputs after it are missing.
                    died_reading.store(true, std::sync::atomic::Ordering::SeqCst);
                }
            })
            .expect("spawn the reader thread");
        for t in 0..threads {
            let (job_rx, out_tx, mut state, work, died) = (job_rx.clone(), out_tx.clone(), state.clone(), &work, &died);
            std::thread::Builder::new()
                .name(format!("prep-{t}"))
                .spawn_scoped(scope, move || {
                    for (i, input) in job_rx {
                        let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(&mut state, input)));
                        let Ok(out) = out else {
                            died.store(true, std::sync::atomic::Ordering::SeqCst);
                            break; // the panic was reported by the panic hook
                        };
                        if out_tx.send((i, out)).is_err() {
                            break; // the consumer stopped
                        }
                    }
                })
                .expect("spawn a preparation thread");
        }
        drop((job_rx, out_tx));
        let mut pending = BTreeMap::new();
        let mut next = 0;
        'receive: for (i, u) in &out_rx {
            pending.insert(i, u);
            while let Some(u) = pending.remove(&next) {
                next += 1;
                if !consume(u) {
                    break 'receive;
                }
            }
            if died.load(std::sync::atomic::Ordering::SeqCst) {
                break;
            }
        }
        drop(out_rx); // unblocks the workers, which unblock the reader
    });
    if died.into_inner() {
        Err(WorkerDied)
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_in_input_order_whatever_the_workers_timing() {
        let mut got = Vec::new();
        ordered_map(
            3,
            &0u64,
            0..500u64,
            |calls, x| {
                *calls += 1;
                if x % 7 == 0 {
                    std::thread::sleep(std::time::Duration::from_micros(200));
                }
                x * 2
            },
            |y| {
                got.push(y);
                true
            },
        )
        .unwrap();
        assert_eq!(got, (0..500).map(|x| x * 2).collect::<Vec<_>>());
    }

    #[test]
    fn stopping_early_stops_the_producer() {
        let produced = std::sync::atomic::AtomicUsize::new(0);
        let mut seen = 0;
        ordered_map(
            2,
            &(),
            (0..1_000_000).inspect(|_| {
                produced.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }),
            |_, x| x,
            |_| {
                seen += 1;
                seen < 10
            },
        )
        .unwrap();
        assert_eq!(seen, 10);
        assert!(produced.into_inner() < 1000, "the reader kept reading after the stop");
    }

    #[test]
    fn a_panicking_reader_is_an_error_not_a_crash() {
        let mut got = Vec::new();
        let r = ordered_map(
            2,
            &(),
            (0..100u32).inspect(|&x| assert!(x != 40, "reader fails on 40")),
            |_, x| x,
            |y| {
                got.push(y);
                true
            },
        );
        assert_eq!(r, Err(WorkerDied));
        assert!(got.len() <= 40 && got.iter().enumerate().all(|(i, &y)| y == i as u32), "{got:?}");
    }

    #[test]
    fn a_panicking_worker_is_an_error_not_a_hang() {
        let mut got = Vec::new();
        let r = ordered_map(
            2,
            &(),
            0..100u32,
            |_, x| {
                assert!(x != 40, "worker fails on 40");
                x
            },
            |y| {
                got.push(y);
                true
            },
        );
        assert_eq!(r, Err(WorkerDied));
        assert!(got.len() <= 40 && got.iter().enumerate().all(|(i, &y)| y == i as u32), "{got:?}");
    }
}

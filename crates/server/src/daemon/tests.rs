//! The daemon's unit tests.

use super::*;

/// Regression: a batch held up to 64 files whatever their size.
#[test]
fn the_backoff_doubles_to_its_bound_and_starts_again() {
    let mut b = Backoff::default();
    let secs: Vec<u64> = (0..6).map(|_| b.next().as_secs()).collect();
    assert_eq!(secs, [1, 2, 4, 8, 10, 10]);
    b.reset();
    assert_eq!(b.next(), Duration::from_secs(1));
}

#[test]
fn batches_are_bounded_in_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let sizes = [40 << 20, 30 << 20, 1 << 10, 100 << 20, 5];
    let files: Vec<PathBuf> = sizes
        .iter()
        .enumerate()
        .map(|(i, &len)| {
            let p = dir.path().join(format!("{i}"));
            std::fs::File::create(&p).unwrap().set_len(len).unwrap(); // sparse
            p
        })
        .collect();
    // As the daemon does: each round lists what is left and takes the next batch.
    let mut rest = files.clone();
    let mut batches = Vec::new();
    while !rest.is_empty() {
        let b = next_batch(rest.clone().into_iter(), 64);
        rest.retain(|p| !b.contains(p));
        batches.push(b.iter().map(|p| p.file_name().unwrap().to_string_lossy().into_owned()).collect::<Vec<_>>());
    }
    assert_eq!(batches, [vec!["0"], vec!["1", "2"], vec!["3"], vec!["4"]]);
    assert_eq!(next_batch(files.into_iter().rev(), 2).len(), 1, "at most `max` files, then the bytes");
}

//! The bytes of text under analysis at once, one budget for the daemon's intake and
//! the HTTP queries (one 64 MB query took the daemon to 4.2 GB beside its
//! ingestion). The spool's reader takes a document's bytes before it passes the
//! document on and gives them back once it is applied, waiting when they are not
//! free; a query takes its body's bytes or is answered 503 at once. What one
//! document or query takes is clamped to the whole budget, so a document larger than
//! it is analysed alone, never waited for forever.

use std::sync::{Arc, Condvar, Mutex, PoisonError};

/// The budget: its total, the bytes taken, and whether it lets every taker through.
#[derive(Debug)]
pub struct MemoryBudget {
    total: u64,
    taken: Mutex<(u64, bool)>,
    freed: Condvar,
}

/// Bytes taken from a [`MemoryBudget`], given back when dropped.
#[derive(Debug)]
pub struct Grant {
    budget: Arc<MemoryBudget>,
    bytes: u64,
}

impl MemoryBudget {
    pub fn new(total: u64) -> Arc<MemoryBudget> {
        Arc::new(MemoryBudget { total: total.max(1), taken: Mutex::new((0, false)), freed: Condvar::new() })
    }

    /// The budget's size.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Bytes taken now.
    pub fn taken(&self) -> u64 {
        self.taken.lock().unwrap_or_else(PoisonError::into_inner).0
    }

    /// While `on`, every taker gets through at once with nothing taken: a pipeline that
    /// stops (a stop asked for, a fatal error) lets its reader go, which may be waiting
    /// for bytes that items the pipeline will never apply hold.
    pub fn let_through(&self, on: bool) {
        self.taken.lock().unwrap_or_else(PoisonError::into_inner).1 = on;
        self.freed.notify_all();
    }

    /// Takes `bytes` (at most the total), waiting until they are free.
    pub fn take(self: &Arc<Self>, bytes: u64) -> Grant {
        let bytes = bytes.min(self.total);
        let mut taken = self.taken.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            if taken.1 {
                return Grant { budget: Arc::clone(self), bytes: 0 };
            }
            if taken.0 + bytes <= self.total {
                taken.0 += bytes;
                return Grant { budget: Arc::clone(self), bytes };
            }
            taken = self.freed.wait(taken).unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// Takes `bytes` (at most the total) if they are free now.
    pub fn try_take(self: &Arc<Self>, bytes: u64) -> Option<Grant> {
        let bytes = bytes.min(self.total);
        let mut taken = self.taken.lock().unwrap_or_else(PoisonError::into_inner);
        (taken.0 + bytes <= self.total).then(|| {
            taken.0 += bytes;
            Grant { budget: Arc::clone(self), bytes }
        })
    }
}

impl Drop for Grant {
    fn drop(&mut self) {
        let mut taken = self.budget.taken.lock().unwrap_or_else(PoisonError::into_inner);
        taken.0 -= self.bytes;
        self.budget.freed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grants_are_bounded_by_the_total_and_given_back_when_dropped() {
        let b = MemoryBudget::new(100);
        let a = b.take(60);
        assert!(b.try_take(50).is_none(), "60 + 50 > 100");
        let c = b.try_take(40).expect("60 + 40 fit");
        assert_eq!(b.taken(), 100);
        drop(a);
        assert_eq!(b.taken(), 40);
        let huge = b.try_take(1 << 40);
        assert!(huge.is_none(), "clamped to the total, still 40 taken");
        drop(c);
        let whole = b.try_take(1 << 40).expect("alone, a request over the total takes the whole");
        assert_eq!(b.taken(), 100);
        // A waiter is woken when bytes are given back.
        let waiter = {
            let b = Arc::clone(&b);
            std::thread::spawn(move || b.take(30).bytes)
        };
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert!(!waiter.is_finished(), "waits while the budget is taken");
        drop(whole);
        assert_eq!(waiter.join().unwrap(), 30);
        assert_eq!(b.taken(), 0, "the waiter's grant was dropped with its thread's result");
        // A pipeline that stops lets a waiting reader through, taking nothing.
        let held = b.take(100);
        let waiter = {
            let b = Arc::clone(&b);
            std::thread::spawn(move || b.take(30).bytes)
        };
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert!(!waiter.is_finished());
        b.let_through(true);
        assert_eq!(waiter.join().unwrap(), 0, "through at once, nothing taken");
        b.let_through(false);
        assert!(b.try_take(1).is_none(), "the bytes held are still held");
        drop(held);
        assert_eq!(b.taken(), 0);
    }
}

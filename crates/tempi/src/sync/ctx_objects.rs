//! The [`Ctx`] calls that create synchronisation objects from inside a thread. The kernel only
//! hands out ids (`Ctx::create_lock_raw` and the like); the objects wrapping them are built
//! here, so the kernel never names them.

use super::{Condvar, LockSpec, Mutex, SemSpec, Semaphore};
use crate::error::Error;
use crate::kernel::Ctx;

impl Ctx<'_> {
    /// Create a mutex on this thread's CPU (see [`crate::sync`]).
    ///
    /// ```
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.spawn(tempi::ThreadSpec::new("t"), |cx| {
    ///     let m = cx.create_mutex(5, tempi::sync::LockSpec::new("m").protocol("bp")).unwrap();
    ///     assert_eq!(*m.lock(cx).unwrap(), 5);
    /// }).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn create_mutex<T>(&self, value: T, spec: LockSpec) -> Result<Mutex<T>, Error> {
        let word = spec.word.clone();
        let id = self.create_lock_raw(spec)?;
        Ok(Mutex::new(id, self.cpu(), self.runtime(), word, value))
    }

    /// Create a condition variable on this thread's CPU.
    ///
    /// ```
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.spawn(tempi::ThreadSpec::new("t"), |cx| {
    ///     let cv = cx.create_condvar().unwrap();
    ///     cv.notify_one(cx).unwrap(); // nobody waits: nothing happens
    /// }).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn create_condvar(&self) -> Result<Condvar, Error> {
        let id = self.create_cond_raw()?;
        Ok(Condvar::new(id, self.cpu(), self.runtime()))
    }

    /// Create a counting semaphore on this thread's CPU.
    ///
    /// ```
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.spawn(tempi::ThreadSpec::new("t"), |cx| {
    ///     let s = cx.create_semaphore(tempi::sync::SemSpec::new("slots", 2)).unwrap();
    ///     s.procure(cx).unwrap();
    ///     s.vacate(cx).unwrap();
    /// }).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn create_semaphore(&self, spec: SemSpec) -> Result<Semaphore, Error> {
        let id = self.create_sem_raw(spec)?;
        Ok(Semaphore::new(id, self.cpu(), self.runtime()))
    }
}

//! Submitting a job to another CPU's admission in real time, where each CPU has its own
//! kernel on its own dispatcher OS thread.
//!
//! The test must run on the target CPU, at that CPU's instant, against what its admitted jobs
//! have really used (their execution-time clocks are that kernel's), and the accepted job
//! must start there. The admission is built only on public runtime calls, so the request
//! crosses by the cross-CPU spawn: the submitter creates a short *submission thread* on the
//! target CPU (named `submit:` and the job's name), which makes the test there and starts
//! the job locally. The submission thread is due when the submitter's own job is, or at the
//! job's deadline if that is earlier or the submitter has none: the submission is the
//! submitter's work, done on the target, so it must not wait behind the target's jobs due
//! before the submitter while the submitter waits for its answer (as a job due at the
//! requested deadline would behind one admitted for that same instant). Its few microseconds
//! are the submitter's calls that the admission test assumes take no time
//! ([`Config::job_overhead`](crate::Config::job_overhead) is the margin they come out of), and
//! it is not itself a deadline miss unless the submitter's job is late already (a 1 ns
//! deadline, as a submitter in virtual time has, would be missed by every real submission and
//! count in the run's misses); the submitter joins it and takes its answer — the admitted
//! job, or a [`Nack`](super::Nack) naming the job and the idle time that CPU had before its
//! deadline, so the submitter can resubmit a smaller job, or to another CPU. The submitter
//! blocks until the answer, as in virtual time, where the test is made at once. Both the
//! request and the answer use the run's cross-CPU queues (a full queue is
//! [`AdmissionError::Runtime`] with [`Error::QueueFull`](crate::Error::QueueFull)).
//!
//! A submission thread takes a thread slot of the target CPU while it lives and appears in
//! the run's outcome; it allocates its body, as any spawn (and so any admission) does.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::{Admission, AdmissionError};
use crate::kernel::Ctx;
use crate::thread::{ThreadOutcome, ThreadSpec};
use crate::time::Time;

impl Admission {
    /// Run `f` on this admission's CPU, in a submission thread named `submit:{name}` due at
    /// `deadline` or at the caller's job's deadline, whichever comes first, and wait for its result. For a caller of another real-time CPU.
    pub(super) fn on_target<R, F>(&self, cx: &Ctx<'_>, name: &str, deadline: Time, f: F) -> Result<R, AdmissionError>
    where
        R: Send + 'static,
        F: FnOnce(&Ctx<'_>) -> R + Send + 'static,
    {
        let answer: Arc<Mutex<Option<R>>> = Arc::new(Mutex::new(None));
        let slot = answer.clone();
        let mut f = Some(f);
        // The submission is the caller's work done on the target: it is as urgent as the
        // caller's job (when that is due first), not as the job it asks for, which would
        // leave it waiting behind the target's jobs due at or before that deadline while
        // the caller, and its own deadline, wait for the answer.
        let due = cx.job().deadline.map_or(deadline, |d| d.min(deadline));
        let relative = (due - cx.now()).max(Duration::from_nanos(1));
        let spec = ThreadSpec::new(format!("submit:{name}")).cpu(self.cpu).deadline(relative).first_deadline_at(due);
        let thread = cx
            .spawn(spec, move |cx| {
                if let Some(f) = f.take() {
                    let r = f(cx);
                    *slot.lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
                }
            })
            .map_err(AdmissionError::Runtime)?;
        let outcome = cx.join(thread).map_err(AdmissionError::Runtime)?;
        let r = answer.lock().unwrap_or_else(|e| e.into_inner()).take();
        r.ok_or(AdmissionError::Unanswered {
            cpu: self.cpu,
            outcome: match outcome {
                ThreadOutcome::Completed => "completed".to_string(),
                ThreadOutcome::Panicked(m) => format!("panicked: {m}"),
                ThreadOutcome::Killed => "killed".to_string(),
                ThreadOutcome::NotStarted(m) => format!("not started: {m}"),
            },
        })
    }

    /// Whether a call from `cx` is a submission from another real-time CPU.
    pub(super) fn is_remote(&self, cx: &Ctx<'_>) -> bool {
        self.mode == crate::clock::ClockMode::Real && cx.cpu() != self.cpu
    }
}

//! The runtime calls as types: one per request a thread makes, each naming the answer the
//! kernel owes it ([`Call::Answer`]) and how it is answered while its thread unwinds
//! ([`UserCall::while_unwinding`]). `Ctx` sends them (`Ctx::invoke`, `Ctx::exchange`) and gets
//! that answer back, typed; see `protocol.rs` for the protocol as a whole.
//!
//! Must not: touch kernel state or a thread's `Ctx`.

use crate::error::Error;
use crate::objects::LockError;
use crate::plain::ThreadId;
use crate::plain::{CondId, LockId, SemId};
use crate::policy::sched::Urgency;
use crate::thread::{ThreadOutcome, ThreadSpec};
use crate::time::Time;

use crate::kernel::thread_side::protocol::{
    Answer, Body, CondAnswer, Control, ControlOp, ControlResult, LockAnswer, MsgAnswer, MsgOp, Op, Report, Request,
    SemAnswer, Setup, Value,
};

/// The kernel answered a call with another call's kind of answer. The kernel builds each
/// answer from its request's own family (see `protocol.rs`), so this is a broken kernel,
/// never a user's error.
#[cold]
#[inline(never)]
pub(crate) fn answer_of_another_kind() -> ! {
    unreachable!("the kernel answered a call with another call's kind of answer")
}

/// A request and the type of its answer.
pub(crate) trait Call: Sized {
    /// What the kernel answers this call with (the interrupts aside).
    type Answer;
    fn request(self) -> Request;
    /// This call's answer read from the wire; `None` for an answer of another call's kind,
    /// which the kernel never sends (see `protocol.rs`).
    fn answer(a: Answer) -> Option<Self::Answer>;
}

/// A call a thread body makes, which may happen while the thread unwinds: it is then
/// answered without suspending the thread (see `ctx.rs`, "Runtime calls while unwinding").
pub(crate) trait UserCall: Call {
    fn while_unwinding(self) -> WhileUnwinding<Self::Answer>;
}

/// How a call made while unwinding is answered.
pub(crate) enum WhileUnwinding<A> {
    /// A releasing call: the request is made once the unwind is over; this answers it now.
    Defer(Request, A),
    /// A call that would wait or create: answered at once, and never made.
    Answer(A),
}

/// The `Go` answer, of the calls that return nothing.
#[inline(always)]
fn go(a: Answer) -> Option<()> {
    settled(a).and_then(|s| matches!(s, Value::Go).then_some(()))
}

/// A settled answer. Both arms move what they hold out of `a`, so no drop glue runs for it.
#[inline(always)]
fn settled(a: Answer) -> Option<Value> {
    match a {
        Answer::Value(s) => Some(s),
        Answer::Setup(owned) => {
            drop(owned);
            None
        }
    }
}

/// The answer of a call that yields what `settled` reads from a settled answer, or fails
/// with an error.
fn fallible<T>(a: Answer, read: impl FnOnce(Value) -> Option<T>) -> Option<Result<T, Error>> {
    match a {
        Answer::Value(Value::Failed(f)) => Some(Err(f.error())),
        Answer::Value(s) => read(s).map(Ok),
        Answer::Setup(owned) => match *owned {
            Report::Failed(e) => Some(Err(e)),
            _ => None,
        },
    }
}

/// The answer of a call that yields an owned value, or fails with an error.
fn owned<T>(a: Answer, read: impl FnOnce(Report) -> Option<T>) -> Option<Result<T, Error>> {
    match a {
        Answer::Value(Value::Failed(f)) => Some(Err(f.error())),
        Answer::Value(_) => None,
        Answer::Setup(answer) => match *answer {
            Report::Failed(e) => Some(Err(e)),
            answer => read(answer).map(Ok),
        },
    }
}

macro_rules! unit_calls {
    ($($(#[$m:meta])* $name:ident $(($($tt:ty),*))? => $plain:expr, $unwinding:ident;)*) => {$(
        $(#[$m])*
        #[derive(Clone, Copy)]
        pub(crate) struct $name $(($(pub(crate) $tt),*))?;

        impl Call for $name {
            type Answer = ();
            #[inline(always)]
            fn request(self) -> Request {
                #[allow(unused_variables)]
                let call = self;
                Request::Op($plain(call))
            }
            #[inline(always)]
            fn answer(a: Answer) -> Option<()> {
                go(a)
            }
        }

        unit_calls!(@unwinding $name $unwinding);
    )*};
    (@unwinding $name:ident defer) => {
        impl UserCall for $name {
            fn while_unwinding(self) -> WhileUnwinding<()> {
                WhileUnwinding::Defer(self.request(), ())
            }
        }
    };
    (@unwinding $name:ident skip) => {
        impl UserCall for $name {
            #[inline(always)]
            fn while_unwinding(self) -> WhileUnwinding<()> {
                WhileUnwinding::Answer(())
            }
        }
    };
    (@unwinding $name:ident none) => {};
}

unit_calls! {
    /// Spend this much CPU time, in ns.
    Work(u64) => |c: Work| Op::Work(c.0), skip;
    Yield => |_| Op::Yield, skip;
    SleepUntil(Time) => |c: SleepUntil| Op::SleepUntil(c.0), skip;
    SetPriority(i32) => |c: SetPriority| Op::SetPriority(c.0), defer;
    /// Let the kernel do what is due (a timer, a request from another CPU, a preemption).
    Checkpoint => |_| Op::Checkpoint, skip;
    ClearPoison(LockId) => |c: ClearPoison| Op::ClearPoison(c.0), defer;
    /// Release a global lock and become preemptible again. Answered quietly, as `Unlock`.
    GlobalUnlock(u32, Time, Time) => |c: GlobalUnlock| Op::GlobalUnlock { global: c.0, acquired: c.1, released: c.2 }, defer;
    Adopt(LockId) => |c: Adopt| Op::Adopt(c.0), skip;
    /// Release a lock (and poison it). Answered quietly: never with an interrupt, since the
    /// answer comes back into a guard's destructor.
    Unlock(LockId, bool) => |c: Unlock| Op::Unlock { lock: c.0, poison: c.1 }, defer;
    /// The current job ended (`true`: abandoned). Only the job loop reports a job's end,
    /// never a destructor.
    JobDone(bool) => |c: JobDone| Op::JobDone { aborted: c.0 }, none;
}

#[derive(Clone, Copy)]
pub(crate) struct Lock {
    pub(crate) lock: LockId,
    pub(crate) deadline: Option<Time>,
    pub(crate) try_only: bool,
    pub(crate) restartable: bool,
}

impl Call for Lock {
    type Answer = LockAnswer;
    #[inline(always)]
    fn request(self) -> Request {
        let Lock { lock, deadline, try_only, restartable } = self;
        Request::Op(Op::Lock { lock, deadline, try_only, restartable })
    }
    #[inline(always)]
    fn answer(a: Answer) -> Option<LockAnswer> {
        match settled(a)? {
            Value::Lock(l) => Some(l),
            _ => None,
        }
    }
}

impl UserCall for Lock {
    fn while_unwinding(self) -> WhileUnwinding<LockAnswer> {
        WhileUnwinding::Answer(LockAnswer::Refused(LockError::WouldBlock))
    }
}

#[derive(Clone, Copy)]
pub(crate) struct GlobalLock {
    pub(crate) global: u32,
    pub(crate) try_only: bool,
}

impl Call for GlobalLock {
    type Answer = LockAnswer;
    #[inline(always)]
    fn request(self) -> Request {
        Request::Op(Op::GlobalLock { global: self.global, try_only: self.try_only })
    }
    #[inline(always)]
    fn answer(a: Answer) -> Option<LockAnswer> {
        match settled(a)? {
            Value::Lock(l) => Some(l),
            _ => None,
        }
    }
}

impl UserCall for GlobalLock {
    fn while_unwinding(self) -> WhileUnwinding<LockAnswer> {
        WhileUnwinding::Answer(LockAnswer::Refused(LockError::WouldBlock))
    }
}

#[derive(Clone, Copy)]
pub(crate) struct CondWait {
    pub(crate) cond: CondId,
    pub(crate) lock: LockId,
    pub(crate) deadline: Option<Time>,
}

impl Call for CondWait {
    type Answer = CondAnswer;
    fn request(self) -> Request {
        let CondWait { cond, lock, deadline } = self;
        Request::Op(Op::CondWait { cond, lock, deadline })
    }
    fn answer(a: Answer) -> Option<CondAnswer> {
        match settled(a)? {
            Value::Cond(r) => Some(r),
            _ => None,
        }
    }
}

impl UserCall for CondWait {
    fn while_unwinding(self) -> WhileUnwinding<CondAnswer> {
        WhileUnwinding::Answer(Err(LockError::WouldBlock))
    }
}

/// The answer of a notification or a vacate: its outcome.
fn status(a: Answer) -> Option<Result<(), LockError>> {
    match settled(a)? {
        Value::Status(r) => Some(r),
        _ => None,
    }
}

#[derive(Clone, Copy)]
pub(crate) struct CondSignal {
    pub(crate) cond: CondId,
    pub(crate) all: bool,
}

impl Call for CondSignal {
    type Answer = Result<(), LockError>;
    fn request(self) -> Request {
        Request::Op(Op::CondSignal { cond: self.cond, all: self.all })
    }
    fn answer(a: Answer) -> Option<Self::Answer> {
        status(a)
    }
}

impl UserCall for CondSignal {
    fn while_unwinding(self) -> WhileUnwinding<Self::Answer> {
        WhileUnwinding::Defer(self.request(), Ok(()))
    }
}

#[derive(Clone, Copy)]
pub(crate) struct Procure {
    pub(crate) sem: SemId,
    pub(crate) deadline: Option<Time>,
    pub(crate) try_only: bool,
}

impl Call for Procure {
    type Answer = SemAnswer;
    fn request(self) -> Request {
        let Procure { sem, deadline, try_only } = self;
        Request::Op(Op::Procure { sem, deadline, try_only })
    }
    fn answer(a: Answer) -> Option<SemAnswer> {
        match settled(a)? {
            Value::Sem(r) => Some(r),
            _ => None,
        }
    }
}

impl UserCall for Procure {
    fn while_unwinding(self) -> WhileUnwinding<SemAnswer> {
        WhileUnwinding::Answer(Err(LockError::WouldBlock))
    }
}

#[derive(Clone, Copy)]
pub(crate) struct Vacate(pub(crate) SemId);

impl Call for Vacate {
    type Answer = Result<(), LockError>;
    fn request(self) -> Request {
        Request::Op(Op::Vacate(self.0))
    }
    fn answer(a: Answer) -> Option<Self::Answer> {
        status(a)
    }
}

impl UserCall for Vacate {
    fn while_unwinding(self) -> WhileUnwinding<Self::Answer> {
        WhileUnwinding::Defer(self.request(), Ok(()))
    }
}

/// The caller's effective urgency.
#[derive(Clone, Copy)]
pub(crate) struct UrgencyQuery;

impl Call for UrgencyQuery {
    type Answer = Urgency;
    fn request(self) -> Request {
        Request::Op(Op::Urgency)
    }
    fn answer(a: Answer) -> Option<Urgency> {
        match settled(a)? {
            Value::Urgency(u) => Some(u),
            _ => None,
        }
    }
}

impl UserCall for UrgencyQuery {
    fn while_unwinding(self) -> WhileUnwinding<Urgency> {
        WhileUnwinding::Answer(Urgency::LOWEST)
    }
}

/// Switch the caller's preemption on or off; answered with the previous setting.
#[derive(Clone, Copy)]
pub(crate) struct Preemption(pub(crate) bool);

impl Call for Preemption {
    type Answer = bool;
    fn request(self) -> Request {
        Request::Op(Op::Preemption(self.0))
    }
    fn answer(a: Answer) -> Option<bool> {
        match settled(a)? {
            Value::Flag(old) => Some(old),
            _ => None,
        }
    }
}

impl UserCall for Preemption {
    /// Made once the unwind is over (a guard restoring the setting from a destructor); the
    /// previous setting is not known then: `true`, the default, is answered.
    fn while_unwinding(self) -> WhileUnwinding<bool> {
        WhileUnwinding::Defer(self.request(), true)
    }
}

/// A message call (see `messaging/messages.rs`); its fields travel in the thread's mail cell.
#[derive(Clone, Copy)]
pub(crate) struct MsgCall(pub(crate) MsgOp);

impl Call for MsgCall {
    type Answer = MsgAnswer;
    #[inline(always)]
    fn request(self) -> Request {
        Request::Op(Op::Msg(self.0))
    }
    #[inline(always)]
    fn answer(a: Answer) -> Option<MsgAnswer> {
        match settled(a)? {
            Value::Msg(r) => Some(r),
            _ => None,
        }
    }
}

impl UserCall for MsgCall {
    fn while_unwinding(self) -> WhileUnwinding<MsgAnswer> {
        match self.0 {
            // What a handler poisoned by this unwind held is refused, and a handler it left
            // with messages queued handed on, once it is over.
            MsgOp::SettleHandlers => WhileUnwinding::Defer(self.request(), Ok(())),
            _ => WhileUnwinding::Answer(Err(crate::plain::MsgError::Unwinding)),
        }
    }
}

#[derive(Clone, Copy)]
pub(crate) struct Join(pub(crate) ThreadId);

impl Call for Join {
    type Answer = Result<ThreadOutcome, Error>;
    fn request(self) -> Request {
        Request::Op(Op::Join(self.0))
    }
    fn answer(a: Answer) -> Option<Self::Answer> {
        match a {
            Answer::Value(Value::Joined { killed: false }) => Some(Ok(ThreadOutcome::Completed)),
            Answer::Value(Value::Joined { killed: true }) => Some(Ok(ThreadOutcome::Killed)),
            a => owned(a, |answer| match answer {
                Report::Joined(outcome) => Some(outcome),
                _ => None,
            }),
        }
    }
}

impl UserCall for Join {
    fn while_unwinding(self) -> WhileUnwinding<Self::Answer> {
        WhileUnwinding::Answer(Err(Error::Unwinding))
    }
}

#[derive(Clone, Copy)]
pub(crate) struct Release(pub(crate) ThreadId);

impl Call for Release {
    type Answer = Result<(), Error>;
    fn request(self) -> Request {
        Request::Op(Op::Release(self.0))
    }
    fn answer(a: Answer) -> Option<Self::Answer> {
        fallible(a, |s| matches!(s, Value::Released).then_some(()))
    }
}

impl UserCall for Release {
    fn while_unwinding(self) -> WhileUnwinding<Self::Answer> {
        WhileUnwinding::Defer(self.request(), Ok(()))
    }
}

macro_rules! thread_calls {
    ($($(#[$m:meta])* $name:ident ($($tt:ty),*) => $plain:expr;)*) => {$(
        $(#[$m])*
        #[derive(Clone, Copy)]
        pub(crate) struct $name($(pub(crate) $tt),*);

        impl Call for $name {
            type Answer = Result<(), Error>;
            fn request(self) -> Request {
                Request::Op($plain(self))
            }
            fn answer(a: Answer) -> Option<Self::Answer> {
                fallible(a, |s| matches!(s, Value::Go).then_some(()))
            }
        }

        impl UserCall for $name {
            fn while_unwinding(self) -> WhileUnwinding<Self::Answer> {
                WhileUnwinding::Defer(self.request(), Ok(()))
            }
        }
    )*};
}

thread_calls! {
    /// End a thread at its next task boundary.
    Kill(ThreadId) => |c: Kill| Op::Kill(c.0);
    /// Set another thread's base priority.
    SetPriorityOf(ThreadId, i32) => |c: SetPriorityOf| Op::SetPriorityOf(c.0, c.1);
}

pub(crate) struct Spawn(pub(crate) ThreadSpec, pub(crate) Body);

impl Call for Spawn {
    type Answer = Result<ThreadId, Error>;
    fn request(self) -> Request {
        Request::Setup(Box::new(Setup::Spawn(self.0, self.1)))
    }
    fn answer(a: Answer) -> Option<Self::Answer> {
        fallible(a, |s| match s {
            Value::Spawned(id) => Some(id),
            _ => None,
        })
    }
}

impl UserCall for Spawn {
    fn while_unwinding(self) -> WhileUnwinding<Self::Answer> {
        WhileUnwinding::Answer(Err(Error::Unwinding))
    }
}

impl<V: ControlResult> Call for Control<V> {
    type Answer = Result<V, Error>;
    fn request(self) -> Request {
        match self.op {
            ControlOp::Set(op) => Request::Op(Op::Set(op)),
            op => Request::Setup(Box::new(Setup::Control(op))),
        }
    }
    fn answer(a: Answer) -> Option<Self::Answer> {
        match a {
            Answer::Value(Value::Set(value)) => V::from_value(value.into()).map(Ok),
            a => owned(a, |answer| match answer {
                Report::Control(value) => V::from_value(value),
                _ => None,
            }),
        }
    }
}

impl<V: ControlResult> UserCall for Control<V> {
    fn while_unwinding(self) -> WhileUnwinding<Self::Answer> {
        WhileUnwinding::Answer(Err(Error::Unwinding))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::thread_side::protocol::ControlValue;
    use crate::plain::SetId;

    #[test]
    fn calls_read_only_their_own_kind_of_answer() {
        assert_eq!(Lock::answer(LockAnswer::Retry.into()), Some(LockAnswer::Retry));
        assert_eq!(Lock::answer(Answer::GO), None);
        assert_eq!(Work::answer(Answer::GO), Some(()));
        assert_eq!(Work::answer(LockAnswer::Granted.into()), None);
        assert_eq!(Procure::answer(Answer::Value(Value::Sem(Ok(2)))), Some(Ok(2)));
        assert_eq!(Procure::answer(Answer::Value(Value::Status(Ok(())))), None);
        assert_eq!(
            Vacate::answer(Answer::Value(Value::Status(Err(LockError::Overflow)))),
            Some(Err(LockError::Overflow))
        );
        assert_eq!(CondWait::answer(Answer::Value(Value::Cond(Ok(true)))), Some(Ok(true)));
        assert_eq!(Join::answer(Report::Joined(ThreadOutcome::Killed).into()), Some(Ok(ThreadOutcome::Killed)));
        assert_eq!(Join::answer(Report::Failed(Error::JoinSelf).into()), Some(Err(Error::JoinSelf)));
        assert_eq!(Join::answer(Answer::GO), None);
        assert_eq!(Release::answer(Answer::Value(Value::Released)), Some(Ok(())));
        assert_eq!(Release::answer(Report::Joined(ThreadOutcome::Completed).into()), None);
    }

    #[test]
    fn calls_failures_that_own_nothing_come_back_settled() {
        let full = Error::QueueFull { cpu: 1, capacity: 4 };
        assert!(matches!(Answer::failed(full.clone()), Answer::Value(Value::Failed(_))));
        assert_eq!(Release::answer(Answer::failed(full.clone())), Some(Err(full.clone())));
        assert_eq!(Kill::answer(Answer::failed(full.clone())), Some(Err(full)));
        assert_eq!(Join::answer(Answer::failed(Error::JoinSelf)), Some(Err(Error::JoinSelf)));
        assert_eq!(Join::answer(Answer::joined(ThreadOutcome::Killed)), Some(Ok(ThreadOutcome::Killed)));
        assert_eq!(Join::answer(Answer::joined(ThreadOutcome::Completed)), Some(Ok(ThreadOutcome::Completed)));
        let panicked = ThreadOutcome::Panicked("boom".into());
        assert!(matches!(Answer::joined(panicked.clone()), Answer::Setup(_)));
        assert_eq!(Join::answer(Answer::joined(panicked.clone())), Some(Ok(panicked)));
        assert_eq!(Release::answer(Answer::joined(ThreadOutcome::Completed)), None);
        let held = Error::GlobalLockHeld { thread: ThreadId::new(3, 0), call: "join" };
        assert_eq!(Join::answer(Answer::failed(held.clone())), Some(Err(held)));
        assert_eq!(Control::<bool>::answer(Answer::failed(Error::Unwinding)), Some(Err(Error::Unwinding)));
        // An error that owns a string still travels boxed, and reads back the same.
        let owning = Error::InvalidConfig("too many".into());
        assert!(matches!(Answer::failed(owning.clone()), Answer::Setup(_)));
        assert_eq!(Spawn::answer(Answer::failed(owning.clone())), Some(Err(owning)));
    }

    #[test]
    fn calls_control_answers_carry_the_type_their_operation_yields() {
        let set = |v| Control::<SetId>::answer(Report::Control(v).into());
        assert_eq!(set(ControlValue::Set(SetId { word: 7, runtime: 1 })), Some(Ok(SetId { word: 7, runtime: 1 })));
        assert_eq!(set(ControlValue::Bool(true)), None);
        assert_eq!(Control::<bool>::answer(Report::Failed(Error::Unwinding).into()), Some(Err(Error::Unwinding)));
        assert!(matches!(
            Control::create_set("s".into()).while_unwinding(),
            WhileUnwinding::Answer(Err(Error::Unwinding))
        ));
        assert!(matches!(Unlock(crate::plain::LockId(0), false).while_unwinding(), WhileUnwinding::Defer(_, ())));
    }
}
